package cli

// The harness of the distributed crawl's failure tests
// (crawlcluster_failure_test.go): one synthetic web served on one listener
// per crawl node, so that every request the web gets is known to come from
// one node, and the checks every failure test makes on what the nodes
// left (politeness report, coverage, refetches, crawl.logs, WARC files
// read by warcio).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// teeRecorder records each request with several recorders.
type teeRecorder []testweb.Recorder

func (t teeRecorder) Record(e *testweb.Entry) {
	for _, r := range t {
		r.Record(e)
	}
}

// clusterWeb is a synthetic web served once per crawl node: node i
// resolves *.test to addrs[i], whose requests go to both mem (the whole
// crawl, for the politeness report) and mems[i] (that node's).
type clusterWeb struct {
	web   *testweb.Web
	mem   *testweb.Memory
	addrs []string
	mems  []*testweb.Memory
	seeds []string
}

// newClusterWeb builds the web of cfg (plain, no external links, as the
// crawl is scoped to its seeds' hosts anyway) and serves it on nodes
// listeners.
func newClusterWeb(t *testing.T, cfg testweb.Config, nodes int) *clusterWeb {
	t.Helper()
	cfg.Plain, cfg.NoExternal = true, true
	web, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &clusterWeb{web: web, mem: &testweb.Memory{}}
	for range nodes {
		m := &testweb.Memory{}
		srv := httptest.NewServer(web.LoggedHandler(teeRecorder{w.mem, m}))
		t.Cleanup(srv.Close)
		w.addrs = append(w.addrs, strings.TrimPrefix(srv.URL, "http://"))
		w.mems = append(w.mems, m)
	}
	for _, s := range web.Sites() {
		w.seeds = append(w.seeds, s.SeedPages...)
	}
	return w
}

// reachable is every page a complete crawl fetches.
func (w *clusterWeb) reachable() []string {
	var out []string
	for _, s := range w.web.Sites() {
		out = append(out, w.web.Reachable(s)...)
	}
	return out
}

// fetched counts the distinct reachable pages answered 2xx so far.
func (w *clusterWeb) fetched() int {
	ok := map[string]bool{}
	for _, e := range w.mem.Entries() {
		if e.Method == "GET" && e.Status >= 200 && e.Status < 300 && e.Target != "/robots.txt" {
			ok["http://"+hostOnly(e.Host)+e.Target] = true
		}
	}
	return len(ok)
}

// waitFetched waits until n reachable pages are fetched, at most d.
func (w *clusterWeb) waitFetched(t *testing.T, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for w.fetched() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pages fetched in %s", w.fetched(), n, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clusterCrawlConfig writes the crawl configuration of the failure tests:
// short retry delays, so that the realistic web's 500 and 503 pages are
// retried within the test's time (2 retries, 1 s then 2 s later), and a
// short politeness backoff after a 5xx answer (from 500 ms, doubling to
// 4 s; by default 5 s to 1 h, which would keep a host with three broken
// pages waiting for minutes). Retry-After is still honoured as sent.
func clusterCrawlConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crawl.yaml")
	const yaml = "crawl:\n  retry-delay: 1s\n  max-retry-delay: 2s\npoliteness:\n  backoff-base: 500ms\n  backoff-max: 4s\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// politenessReport judges the whole crawl's requests and fails the test
// on any politeness problem or any reachable page not fetched.
func (w *clusterWeb) politenessReport(t *testing.T) *report.Report {
	t.Helper()
	rep := report.AnalyzeEntries(w.web, w.mem.Entries(), report.Options{MinDelay: clusterDelay, Coverage: true})
	if rep.Overlaps != 0 || rep.DelayViolations != 0 || rep.MinDelayViolations != 0 || rep.Disallowed != 0 || rep.BeforeRobots != 0 {
		t.Errorf("politeness report: %d overlaps, %d Crawl-delay violations, %d gaps under %s, %d disallowed, %d before robots.txt; examples %+v",
			rep.Overlaps, rep.DelayViolations, rep.MinDelayViolations, clusterDelay, rep.Disallowed, rep.BeforeRobots, rep.Examples)
	}
	if c := rep.Coverage; c == nil || c.Reachable == 0 || c.Fetched != c.Reachable {
		t.Errorf("coverage %+v: every reachable page must be fetched", c)
	}
	return rep
}

// nodeEntry is one request the web got, with the node that made it.
type nodeEntry struct {
	testweb.Entry
	node int
}

// requestsByURL returns every page request (robots.txt left out) by URL,
// in start order, with the node that made it.
func (w *clusterWeb) requestsByURL() map[string][]nodeEntry {
	by := map[string][]nodeEntry{}
	for i, m := range w.mems {
		for _, e := range m.Entries() {
			if e.Method != "GET" || e.Target == "/robots.txt" {
				continue
			}
			u := "http://" + hostOnly(e.Host) + e.Target
			by[u] = append(by[u], nodeEntry{e, i})
		}
	}
	for _, es := range by {
		sort.Slice(es, func(a, b int) bool { return es[a].Start.Before(es[b].Start) })
	}
	return by
}

// retryable reports whether a crawler asks for a URL again after this
// answer: a server error or 429 (crawl.MaxRetries times at most).
func retryableStatus(status int) bool { return status >= 500 || status == 429 }

// resumeSlack is how much later than one lease after a node's death its
// URLs may be fetched again: the host's delay, the Get that finds them,
// and a loaded test machine.
const resumeSlack = 15 * time.Second

// maxTries is the requests one URL gets at most from a live crawl: the
// first and crawl.Config's default MaxRetries (2).
const maxTries = 3

// checkRefetches fails the test on any URL the web served twice that was
// not in flight at the killed node (index victim, -1 for none) when it
// died at killedAt. A refetch is a request for a URL after an answer that
// a crawler does not retry (not 5xx, not 429); each must follow the
// victim's request, made within one lease before the kill (an older
// lease had run out, and the URL was no longer the victim's), and be made
// by another node after the kill; there may be at most twice workers of
// them (heldLeases: the victim's fetches in flight and its fetched URLs
// not yet acknowledged). No URL may get more than maxTries
// requests, besides the victim's. It returns the refetched URLs and the
// URLs the victim requested within one lease before its death (those
// that may be in two crawl.logs).
func (w *clusterWeb) checkRefetches(t *testing.T, victim int, killedAt time.Time, lease time.Duration, workers int) (refetched, recent map[string]bool) {
	t.Helper()
	refetched, recent = map[string]bool{}, map[string]bool{}
	for u, es := range w.requestsByURL() {
		tries := 0
		for k, e := range es {
			if e.node == victim && !e.Start.Before(killedAt.Add(-lease)) {
				recent[u] = true
			}
			if e.node != victim {
				tries++
			}
			if k == 0 || retryableStatus(es[k-1].Status) {
				continue
			}
			refetched[u] = true
			prev := es[k-1]
			if victim < 0 || prev.node != victim || e.node == victim || prev.Start.Before(killedAt.Add(-lease)) || e.Start.Before(killedAt) {
				t.Errorf("%s fetched again after a %d answer, not a URL in flight at a killed node; requests (start..end relative to the kill, status, node): %s",
					u, prev.Status, w.requestsOf(u, killedAt))
			} else if late := e.Start.Sub(killedAt); late > lease+resumeSlack {
				// The URL comes back one lease after the death; its host's
				// politeness permit must not hold it much longer.
				t.Errorf("%s fetched again %s after the kill, more than a lease (%s) and %s later", u, late.Round(time.Millisecond), lease, resumeSlack)
			}
		}
		if tries > maxTries {
			t.Errorf("%s: %d requests by live nodes, more than %d tries: %s", u, tries, maxTries, w.requestsOf(u, killedAt))
		}
	}
	if len(refetched) > heldLeases(workers) {
		t.Errorf("%d URLs fetched again; the killed node held at most %d leases", len(refetched), heldLeases(workers))
	}
	return refetched, recent
}

// requestsOf describes the requests for u, times relative to at.
func (w *clusterWeb) requestsOf(u string, at time.Time) string {
	var parts []string
	for i, m := range w.mems {
		for _, e := range m.Entries() {
			if e.Method == "GET" && "http://"+hostOnly(e.Host)+e.Target == u {
				parts = append(parts, fmt.Sprintf("[%+.3fs..%+.3fs %d node %d]", e.Start.Sub(at).Seconds(), e.End.Sub(at).Seconds(), e.Status, i))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// clusterLog reads a node's crawl.log. A node killed with SIGKILL may
// leave its last line cut: with torn set, a last line without its newline
// is dropped (the URL was not acknowledged: its line is written before).
func clusterLog(t *testing.T, data string, torn bool) []crawllog.Entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	if torn && len(b) > 0 && b[len(b)-1] != '\n' {
		b = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	var out []crawllog.Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		e, err := crawllog.Parse(sc.Text())
		if err != nil {
			t.Fatalf("%s crawl.log: %v", data, err)
		}
		out = append(out, e)
	}
	return out
}

// heldLeases is how many URLs a crawl node with workers workers holds
// leased at most: those being fetched and as many fetched ones waiting
// for their acknowledgement (the dispatcher's freeWorkers), all of them
// served again when the node dies.
func heldLeases(workers int) int { return 2 * workers }

// checkLogs reads every node's crawl.log (the victim's, index victim, may
// be torn; -1 for none) and fails the test unless each node logs a URL
// once, and a URL in two nodes' logs is in the victim's log and one of
// recent (the URLs it requested within a lease before its death: its
// line may be written and its acknowledgement lost), at most
// heldLeases(workers) of them. It returns the union of the logged URLs and each node's 200 URLs.
func checkLogs(t *testing.T, procs []*crawlProc, victim int, recent map[string]bool, workers int) (map[string]int, []map[string]bool) {
	t.Helper()
	union := map[string]int{}
	ok := make([]map[string]bool, len(procs))
	var victimLogged map[string]bool
	for i, p := range procs {
		ok[i] = map[string]bool{}
		mine := map[string]bool{}
		if i == victim {
			victimLogged = mine
		}
		for _, e := range clusterLog(t, p.data, i == victim) {
			if e.Prerequisite() {
				// A robots.txt fetch: no frontier URL (a node logs each
				// fetch, and robots.txt may be fetched again), but a 200
				// must have its record like any other.
				if e.Status == 200 {
					ok[i][e.URL] = true
				}
				continue
			}
			if mine[e.URL] {
				t.Errorf("node %d logged %s twice", i, e.URL)
			}
			mine[e.URL] = true
			union[e.URL]++
			if e.Status == 200 {
				ok[i][e.URL] = true
			}
		}
	}
	twice := 0
	for u, n := range union {
		if n > 1 {
			twice++
			if !recent[u] || !victimLogged[u] {
				t.Errorf("%s is in %d nodes' crawl.logs, but not the killed node's URL in flight", u, n)
			}
		}
	}
	if twice > heldLeases(workers) {
		t.Errorf("%d URLs in two crawl.logs; the killed node held at most %d leases", twice, heldLeases(workers))
	}
	return union, ok
}

// warcioRecord is what tools/warcio/read.mjs prints for one record.
type warcioRecord struct {
	Type            string  `json:"type"`
	URI             *string `json:"uri"`
	Status          *int    `json:"status"`
	BlockDigestOK   *bool   `json:"blockDigestOK"`
	PayloadDigestOK *bool   `json:"payloadDigestOK"`
}

// warcioResponses reads every finished WARC file of a node with warcio.js
// (an implementation independent of ours: tools/warcio) and returns the
// target URIs of its response records. It fails the test on any warcio
// error or warning and on any digest warcio recomputes differently.
func warcioResponses(t *testing.T, data string) map[string]int {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): run scripts/install-test-deps", err)
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "tools", "warcio"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "warcio", "package.json")); err != nil {
		t.Fatalf("npm package warcio missing in tools/warcio (%v): run scripts/install-test-deps", err)
	}
	files, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("%s: no finished WARC file", data)
	}
	out := map[string]int{}
	for _, path := range files {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "read.mjs"), path)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		cancel()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("warcio on %s: %v\n%s", path, err, stderr.String())
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r warcioRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("warcio output %q: %v", sc.Text(), err)
			}
			if (r.BlockDigestOK != nil && !*r.BlockDigestOK) || (r.PayloadDigestOK != nil && !*r.PayloadDigestOK) {
				t.Errorf("%s: %s record %v: digest differs from warcio's", path, r.Type, r.URI)
			}
			// A page whose payload another page had already (the
			// realistic web's duplicates) is a revisit record.
			if (r.Type == "response" || r.Type == "revisit") && r.URI != nil {
				out[*r.URI]++
			}
		}
	}
	return out
}

// checkWARCs reads every node's WARC files with warcio (the victim's,
// index victim, after warc.Recover: a killed node leaves *.open files,
// which the crawler recovers at its next start) and fails the test unless
// every URL a node logged 200 has a response record in its files; the
// one exception is a URL the victim had in flight (recent) that another
// node crawled again: its line can precede its record on disk.
func checkWARCs(t *testing.T, procs []*crawlProc, victim int, ok []map[string]bool, recent map[string]bool) (records int) {
	t.Helper()
	for i, p := range procs {
		if i == victim {
			rs, err := warc.Recover(context.Background(), filepath.Join(p.data, "warc"))
			if err != nil {
				t.Fatalf("recovering the killed node's WARC files: %v", err)
			}
			for _, r := range rs {
				t.Logf("killed node's %s recovered: %d records kept, %d bytes cut", filepath.Base(r.Path), r.Records, r.Cut)
			}
		}
		resp := warcioResponses(t, p.data)
		for u := range ok[i] {
			if resp[u] > 0 {
				continue
			}
			// The acker writes a group's crawl.log lines and WARC records
			// side by side and acknowledges the group once both are on
			// disk; a kill between the two leaves a line without its
			// record for a URL in flight, never acknowledged, which the
			// next start's repair drops and another node crawls again.
			if i == victim && recent[u] && loggedElsewhere(ok, i, u) {
				t.Logf("killed node logged %s 200 without its record (in flight at the kill; crawled again by another node)", u)
				continue
			}
			t.Errorf("node %d logged %s 200, but warcio finds no response record for it", i, u)
		}
		for _, n := range resp {
			records += n
		}
	}
	return records
}

// loggedElsewhere reports whether a node other than i logged u 200.
func loggedElsewhere(ok []map[string]bool, i int, u string) bool {
	for j, m := range ok {
		if j != i && m[u] {
			return true
		}
	}
	return false
}

// serveStats runs `courtesy frontier stats` against a serve node and
// returns its fields (size, in_process, queues, completed, ...).
func serveStats(t *testing.T, addr, crawlID string) (map[string]int64, error) {
	t.Helper()
	code, out, errOut := run(t, "", "frontier", "--address", addr, "--crawl", crawlID, "--timeout", "60s", "stats")
	if code != 0 {
		return nil, fmt.Errorf("frontier stats: exit %d: %s", code, errOut)
	}
	fields := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			fields[k] = n
		}
	}
	return fields, nil
}

// serveCount runs `courtesy frontier count` against a serve node.
func serveCount(t *testing.T, addr, crawlID string) int64 {
	t.Helper()
	code, out, errOut := run(t, "", "frontier", "--address", addr, "--crawl", crawlID, "--timeout", "60s", "count")
	if code != 0 {
		t.Fatalf("frontier count: exit %d: %s", code, errOut)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("frontier count printed %q", out)
	}
	return n
}
