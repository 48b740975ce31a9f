package cli

// The distributed crawl's failure tests: real `courtesy crawl
// --redis-cluster` and `courtesy serve --redis-cluster` processes (this
// test binary, COURTESY_CLI_HELPER=1) on a real 6-node Redis Cluster
// (Debian's redis-server, through redistest), crawling the realistic
// synthetic web; crawl nodes and Redis masters die, nodes are added, and
// the web's own request log judges the result.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/redistest"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// chaosWeb is the realistic web of the failure tests: 36 sites of 10
// pages, with the realistic profile's 404s, persistent 500s, transient
// 503s (some with Retry-After), redirect chains, duplicate bodies and
// slow pages (up to 3 s).
var chaosWeb = testweb.Config{Seed: 14, Sites: 36, PagesPerSite: 10, Profile: testweb.ProfileRealistic}

// chaosLease is the crawl nodes' --lease in the failure tests: longer
// than any fetch of the web (3 s at most) plus an acknowledgement delayed
// by a failover (about 3 s), so that only a dead node's URLs are served
// twice; short enough that they come back within the test.
const chaosLease = 8 * time.Second

// chaosWorkers is each node's --workers.
const chaosWorkers = 8

// TestCrawlRedisClusterChaos: three crawl nodes and one serve node share
// one crawl of the realistic web on a 6-node Redis Cluster. A quarter of
// the way in, one crawl node is killed with SIGKILL and never restarted;
// a little later the Redis master holding the crawl's first index shard
// (and a third of the queues and politeness keys) is killed, and its
// replica takes over. The two surviving nodes must finish the crawl and
// exit 0, and:
//   - the web saw one polite crawler: no overlapping requests to a host,
//     no gap under the delay (end to start), no Crawl-delay violation,
//     nothing disallowed, nothing before robots.txt;
//   - every reachable page was fetched;
//   - the only URLs fetched by two nodes are the killed node's, in flight
//     when it died (leased within one lease before), at most twice its
//     workers (fetching, or fetched and not yet acknowledged);
//   - the union of the crawl.logs has every URL once apart from those;
//   - every node's WARC files read cleanly with warcio and hold a
//     response for each URL the node logged 200;
//   - the serve node's stats and count, over URLFrontier, work during the
//     crawl and agree with the crawl.logs at the end.
func TestCrawlRedisClusterChaos(t *testing.T) {
	started := time.Now()
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	const crawlID = "chaos"
	w := newClusterWeb(t, chaosWeb, 3)
	total := len(w.reachable())
	cfg := clusterCrawlConfig(t)
	_, serveAddr := serveProcess(t, t.TempDir(), "--redis-cluster", addrs)

	var procs []*crawlProc
	for i, name := range []string{"a", "b", "c"} {
		procs = append(procs, startClusterCrawl(t, filepath.Join(t.TempDir(), name), addrs, crawlID, w.addrs[i], w.seeds,
			"--lease", chaosLease.String(), "--workers", fmt.Sprint(chaosWorkers), "--config", cfg))
	}

	// A quarter in: node a dies with SIGKILL, for good.
	w.waitFetched(t, total/4, 90*time.Second)
	if st, err := serveStats(t, serveAddr, crawlID); err != nil || st["completed"]+st["size"]+st["in_process"] == 0 {
		t.Errorf("serve node's stats during the crawl: %v, %v; want URLs queued, in process or completed", st, err)
	}
	const victim = 0
	if err := procs[victim].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-procs[victim].done
	killedAt := time.Now()
	atKill := w.fetched()

	// A little later: the master of the crawl's first index shard dies.
	w.waitFetched(t, atKill+total/10, 90*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	master, err := rc.MasterFor(ctx, "courtesy:frontier:{i\x1f"+crawlID+"\x1f0}:r")
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Kill(master); err != nil {
		t.Fatal(err)
	}
	masterKilledAt := time.Now()
	atMasterKill := w.fetched()
	promoted, err := rc.WaitFailover(ctx, master)
	if err != nil {
		t.Fatal(err)
	}
	failover := time.Since(masterKilledAt)
	// The serve node answers through the failover.
	if _, err := serveStats(t, serveAddr, crawlID); err != nil {
		t.Errorf("serve node's stats after the failover: %v", err)
	}

	for _, p := range procs[1:] {
		p.wait(t, 3*time.Minute)
	}
	finished := time.Since(killedAt)
	if atMasterKill >= total {
		t.Fatalf("the crawl was over (%d of %d pages) before the master was killed", atMasterKill, total)
	}

	rep := w.politenessReport(t)
	refetched, recent := w.checkRefetches(t, victim, killedAt, chaosLease, chaosWorkers)
	union, ok := checkLogs(t, procs, victim, recent, chaosWorkers)
	records := checkWARCs(t, procs, victim, ok, recent)

	st, err := serveStats(t, serveAddr, crawlID)
	if err != nil {
		t.Fatal(err)
	}
	if st["size"] != 0 || st["in_process"] != 0 || st["completed"] != int64(len(union)) {
		t.Errorf("serve node's stats at the end: %v; want nothing queued or in process and %d completed (the URLs of the crawl.logs)", st, len(union))
	}
	if n := serveCount(t, serveAddr, crawlID); n != int64(len(union)) {
		t.Errorf("serve node's count at the end: %d, want %d", n, len(union))
	}
	for i, p := range procs[1:] {
		t.Logf("node %d stderr:\n%s", i+1, tail(p.errb.String(), 25))
	}
	t.Logf("%d reachable pages; node killed at %d fetched, master %s killed at %d, %s later (replica %s promoted in %s), crawl finished %s after the node's kill; %d requests, %d URLs logged, %d refetched %v, %d WARC responses; smallest gap end-to-start %s; %s in all",
		total, atKill, master, atMasterKill, masterKilledAt.Sub(killedAt).Round(time.Millisecond), promoted, failover.Round(time.Millisecond), finished.Round(time.Millisecond), rep.Requests, len(union), len(refetched), refetched, records,
		rep.MinGapEndToStart, time.Since(started).Round(time.Millisecond))
}

// slowListener serves a web's handler after a fixed delay per page
// request and counts the page requests in flight.
type slowListener struct {
	next     http.Handler
	delay    time.Duration
	inFlight atomic.Int64
}

func (s *slowListener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		s.next.ServeHTTP(w, r)
		return
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	time.Sleep(s.delay)
	s.next.ServeHTTP(w, r)
}

// TestCrawlRedisClusterKilledMidFetch: a crawl node killed with SIGKILL
// in the middle of a fetch leaves its politeness permit for the host in
// Redis. The permit must expire with the node's --lease, not with the
// gate's own 2-minute default: node 0 crawls a site whose answers take
// 1 s to it, and is killed while it waits for one; node 1 then joins the
// crawl. It must take the site over one lease (3 s) after the death, not
// minutes later, finish the crawl, and keep the delay after the dead
// node's request.
func TestCrawlRedisClusterKilledMidFetch(t *testing.T) {
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	web, err := testweb.New(testweb.Config{Seed: 3, Sites: 1, PagesPerSite: 30, Plain: true, NoExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	mem := &testweb.Memory{}
	mems := []*testweb.Memory{{}, {}}
	slow := &slowListener{next: web.LoggedHandler(teeRecorder{mem, mems[0]}), delay: time.Second}
	srv0 := httptest.NewServer(slow)
	t.Cleanup(srv0.Close)
	srv1 := httptest.NewServer(web.LoggedHandler(teeRecorder{mem, mems[1]}))
	t.Cleanup(srv1.Close)
	w := &clusterWeb{web: web, mem: mem, mems: mems, seeds: web.Sites()[0].SeedPages,
		addrs: []string{strings.TrimPrefix(srv0.URL, "http://"), strings.TrimPrefix(srv1.URL, "http://")}}
	const lease = 3 * time.Second
	cfg := clusterCrawlConfig(t)
	start := func(i int, name string) *crawlProc {
		return startClusterCrawl(t, filepath.Join(t.TempDir(), name), addrs, "midfetch", w.addrs[i], w.seeds,
			"--lease", lease.String(), "--config", cfg)
	}
	// Node 0 alone, so that it surely fetches (started together, node 1
	// could crawl the whole site while a loaded machine starts node 0);
	// once it has fetched a page and waits for another, it dies, and node
	// 1 joins the crawl.
	procs := []*crawlProc{start(0, "a")}
	deadline := time.Now().Add(90 * time.Second)
	for len(mems[0].Entries()) < 2 || slow.inFlight.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("node 0 never had a page request in flight (%d requests)", len(mems[0].Entries()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := procs[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-procs[0].done
	killedAt := time.Now()
	procs = append(procs, start(1, "b"))
	procs[1].wait(t, 3*time.Minute)

	var resumed time.Time
	for _, e := range mems[1].Entries() {
		if e.Target != "/robots.txt" && e.Start.After(killedAt) && (resumed.IsZero() || e.Start.Before(resumed)) {
			resumed = e.Start
		}
	}
	// One lease, plus the delay and generous slack for a loaded machine:
	// far below the 2 minutes of the gate's default permit.
	if bound := lease + 15*time.Second; resumed.IsZero() || resumed.Sub(killedAt) > bound {
		t.Errorf("node 1 took the site over %s after node 0 died (first request at %s); want within %s",
			resumed.Sub(killedAt).Round(time.Millisecond), resumed.Format(time.StampMilli), bound)
	}
	rep := w.politenessReport(t)
	t.Logf("node 1 resumed the site %s after the kill; %d requests, smallest gap end-to-start %s",
		resumed.Sub(killedAt).Round(time.Millisecond), rep.Requests, rep.MinGapEndToStart)
}

// joinBound is how soon a node added to a running crawl must have a
// line in its crawl.log: the start of a race-enabled process on a loaded
// machine, its first Get, one fetch and its acknowledgement.
const joinBound = 20 * time.Second

// TestCrawlRedisClusterNodeAdded: two crawl nodes start a crawl of the
// realistic web; a fifth of the way in, a third node joins with the same
// flags. It must take work within seconds (a line in its crawl.log within
// joinBound of its start), and the crawl must end as a crawl by one node
// would: every reachable page fetched once, by one node, logged once and
// in that node's WARC files (read by warcio), and the web saw one polite
// crawler.
func TestCrawlRedisClusterNodeAdded(t *testing.T) {
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	const crawlID = "added"
	w := newClusterWeb(t, chaosWeb, 3)
	total := len(w.reachable())
	cfg := clusterCrawlConfig(t)
	flags := []string{"--lease", chaosLease.String(), "--workers", fmt.Sprint(chaosWorkers), "--config", cfg}
	var procs []*crawlProc
	for i, name := range []string{"a", "b"} {
		procs = append(procs, startClusterCrawl(t, filepath.Join(t.TempDir(), name), addrs, crawlID, w.addrs[i], w.seeds, flags...))
	}
	w.waitFetched(t, total/5, 90*time.Second)
	// The new node is given no seeds: it joins the crawl as it is.
	added := startClusterCrawl(t, filepath.Join(t.TempDir(), "c"), addrs, crawlID, w.addrs[2], nil, flags...)
	addedAt := time.Now()
	atAdd := w.fetched()
	procs = append(procs, added)
	var firstLine time.Duration
	for deadline := addedAt.Add(joinBound); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(added.data, "crawl.log")); err == nil && bytes.IndexByte(b, '\n') > 0 {
			firstLine = time.Since(addedAt)
			break
		}
	}
	if firstLine == 0 {
		t.Errorf("the added node logged no URL within %s of its start (%d of %d pages fetched when it started, %d now)", joinBound, atAdd, total, w.fetched())
	}
	for _, p := range procs {
		p.wait(t, 3*time.Minute)
	}
	var firstRequest time.Duration
	for _, e := range w.mems[2].Entries() {
		if d := e.Start.Sub(addedAt); firstRequest == 0 || d < firstRequest {
			firstRequest = d
		}
	}
	rep := w.politenessReport(t)
	w.checkRefetches(t, -1, time.Time{}, 0, 0)
	union, ok := checkLogs(t, procs, -1, nil, 0)
	records := checkWARCs(t, procs, -1, ok, nil)
	var split []int
	for _, p := range procs {
		_, n := logged(t, p.data)
		split = append(split, n)
	}
	t.Logf("%d reachable pages, %d fetched when the node was added; its first request %s and first crawl.log line %s after its start; crawl.log lines per node %v, %d URLs logged, %d WARC responses, %d requests; smallest gap end-to-start %s",
		total, atAdd, firstRequest.Round(time.Millisecond), firstLine.Round(time.Millisecond), split, len(union), records, rep.Requests, rep.MinGapEndToStart)
}
