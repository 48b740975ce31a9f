package cli

// Real processes: three `courtesy crawl --redis-cluster` children (this
// test binary, COURTESY_CLI_HELPER=1) join one crawl on a real 6-node
// Redis Cluster and share one politeness gate.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/redistest"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
)

// clusterDelay is the per-host delay of the cluster crawl test: every
// node must keep it between two requests to a host, whoever made them.
const clusterDelay = 150 * time.Millisecond

// slowDelay is the flag for the tests whose nodes must all take part: the
// crawl then outlasts a node that is slow to start.
var slowDelay = []string{"--delay", "800ms"}

func startClusterCrawl(t *testing.T, data, addrs, crawlID, webAddr string, seeds []string, flags ...string) *crawlProc {
	t.Helper()
	return startClusterCrawlEnv(t, nil, data, addrs, crawlID, webAddr, seeds, flags...)
}

// startClusterCrawlEnv is startClusterCrawl with more environment
// variables for the child.
func startClusterCrawlEnv(t *testing.T, env []string, data, addrs, crawlID, webAddr string, seeds []string, flags ...string) *crawlProc {
	t.Helper()
	p := &crawlProc{data: data, done: make(chan error, 1)}
	args := append([]string{"crawl", "--redis-cluster", addrs, "--crawl-id", crawlID, "--data", data,
		"--resolve", "*.test=" + webAddr, "--delay", clusterDelay.String(), "--workers", "8",
		"--max-duration", "3m", "--log-level", "info"}, flags...)
	args = append(args, seeds...)
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(append(os.Environ(), "COURTESY_CLI_HELPER=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		p.done <- p.cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill() // an error once it has exited
		<-exited
	})
	return p
}

// TestCrawlRedisCluster: three crawl nodes on one crawl of a small
// synthetic web, sharing a real Redis Cluster: every reachable page is
// fetched once and logged by exactly one node, `courtesy cluster status`
// lists the nodes as crawl nodes while they run, every node exits 0 when
// the shared crawl is drained, and the web saw one polite crawler: no
// overlapping requests to a host, no gap under the delay (end to start),
// nothing disallowed and nothing before robots.txt.
func TestCrawlRedisCluster(t *testing.T) {
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	web, webAddr, mem, seeds := sharedWeb(t)
	var procs []*crawlProc
	for _, name := range []string{"a", "b", "c"} {
		// Every node is given the seeds: adding them is idempotent. The
		// delay makes the crawl outlast a slow node start on a loaded
		// machine (see TestCrawlRedisClusterPlainServer).
		procs = append(procs, startClusterCrawl(t, filepath.Join(t.TempDir(), name), addrs, "shared", webAddr, seeds, slowDelay...))
	}
	// While they crawl, the membership lists them as crawl nodes.
	crawlNode := regexp.MustCompile(`(?m)^\S+\s+crawl\s+live\s.*\sshared\s`)
	listed := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		code, out, _ := run(t, "", "cluster", "status", "--redis-cluster", rc.Addrs[0])
		if code == 0 {
			if listed = len(crawlNode.FindAllString(out, -1)); listed == len(procs) {
				break
			}
		}
	}
	if listed != len(procs) {
		t.Errorf("cluster status listed %d live crawl nodes of crawl shared, want %d", listed, len(procs))
	}
	for _, p := range procs {
		p.wait(t, 3*time.Minute)
	}
	checkShared(t, web, mem, procs, 0)
	// Each node logs its frontier's Redis work by operation at exit.
	work := regexp.MustCompile(regexp.QuoteMeta(frontierWorkMsg) + `.* lease=\d+/\d+ .*peek=\d+/\d+`)
	for _, p := range procs {
		if !work.MatchString(p.errb.String()) {
			t.Errorf("%s: no frontier work line in its log:\n%s", p.data, p.errb.String())
		}
	}
	// The union of the crawl.logs has each URL once.
	seen := map[string]string{}
	for _, p := range procs {
		ok, _ := logged(t, p.data)
		for u := range ok {
			if other, dup := seen[u]; dup {
				t.Errorf("%s logged by %s and %s", u, other, p.data)
			}
			seen[u] = p.data
		}
	}
	rep := report.AnalyzeEntries(web, mem.Entries(), report.Options{MinDelay: clusterDelay})
	if rep.Overlaps != 0 || rep.DelayViolations != 0 || rep.MinDelayViolations != 0 || rep.Disallowed != 0 || rep.BeforeRobots != 0 {
		t.Errorf("politeness report: %d overlaps, %d Crawl-delay violations, %d gaps under %s, %d disallowed, %d before robots.txt; examples %+v",
			rep.Overlaps, rep.DelayViolations, rep.MinDelayViolations, clusterDelay, rep.Disallowed, rep.BeforeRobots, rep.Examples)
	}
	for _, h := range rep.Hosts {
		if h.Gaps > 0 && h.MinGapEndToStart < clusterDelay {
			t.Errorf("host %s: smallest end-to-start gap %s, under the delay %s", h.Host, h.MinGapEndToStart, clusterDelay)
		}
	}
	t.Logf("report: %d requests, %d pages, %d hosts, smallest gap end-to-start %s", rep.Requests, rep.Pages, rep.HostsRequested, rep.MinGapEndToStart)
}

// TestCrawlRedisClusterMaxPages: --max-pages counts the whole shared
// crawl, not each node's pages: three nodes with --max-pages 12 and a
// 400 ms delay (at most 10 pages a second over the web's 4 hosts) stop
// near 12 completed URLs in all, well under the 36 three separate counts
// would allow, and each exits 0.
func TestCrawlRedisClusterMaxPages(t *testing.T) {
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	_, webAddr, mem, seeds := sharedWeb(t)
	var procs []*crawlProc
	for _, name := range []string{"a", "b", "c"} {
		procs = append(procs, startClusterCrawl(t, filepath.Join(t.TempDir(), name), addrs, "capped", webAddr, seeds,
			"--max-pages", "12", "--delay", "400ms"))
	}
	total := 0
	for _, p := range procs {
		select {
		case err := <-p.done:
			if err != nil {
				t.Fatalf("crawl %s: %v\nstderr:\n%s", p.data, err, tail(p.errb.String(), 40))
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("crawl %s did not stop within 3 minutes", p.data)
		}
		_, lines := logged(t, p.data)
		total += lines
	}
	if total < 12 || total >= 30 {
		t.Errorf("the nodes logged %d URLs in all with --max-pages 12 each: want 12 or more (the limit) and under 30 (one limit for the whole crawl)", total)
	}
	t.Logf("%d URLs logged in all, %d requests", total, len(mem.Entries()))
}

// TestCrawlRedisClusterNodeKilled: one of three crawl nodes is killed
// with SIGKILL in the middle of the crawl and never restarted; with a 3 s
// lease the other two take its leased URLs over and finish the crawl:
// every reachable page is fetched, the URLs fetched twice are at most the
// killed node's fetches in flight (one per host: the gate lets no more),
// and the web still saw one polite crawler.
func TestCrawlRedisClusterNodeKilled(t *testing.T) {
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	web, webAddr, mem, seeds := sharedWeb(t)
	var procs []*crawlProc
	for _, name := range []string{"a", "b", "c"} {
		procs = append(procs, startClusterCrawl(t, filepath.Join(t.TempDir(), name), addrs, "killed", webAddr, seeds, "--lease", "3s"))
	}
	total := 0
	for _, s := range web.Sites() {
		total += len(web.Reachable(s))
	}
	deadline := time.Now().Add(time.Minute)
	for len(fetchCounts(mem)) < total/3 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pages fetched in a minute", len(fetchCounts(mem)), total)
		}
		time.Sleep(20 * time.Millisecond)
	}
	victim := procs[0]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	if before := len(fetchCounts(mem)); before >= total {
		t.Fatalf("the crawl was over (%d of %d pages) before the node was killed", before, total)
	}
	for _, p := range procs[1:] {
		p.wait(t, 3*time.Minute)
	}
	// The killed node's crawl.log may lack its last lines: the survivors'
	// logs and the web's own log show what was fetched.
	counts := fetchCounts(mem)
	for _, s := range web.Sites() {
		for _, u := range web.Reachable(s) {
			if counts[u] == 0 {
				t.Errorf("reachable page %s never fetched", u)
			}
		}
	}
	dups := 0
	for _, n := range counts {
		if n > 1 {
			dups++
		}
	}
	if dups > len(web.Sites()) {
		t.Errorf("%d URLs fetched twice or more; the killed node had at most %d in flight (one per host)", dups, len(web.Sites()))
	}
	rep := report.AnalyzeEntries(web, mem.Entries(), report.Options{MinDelay: clusterDelay})
	if rep.Overlaps != 0 || rep.DelayViolations != 0 || rep.MinDelayViolations != 0 || rep.Disallowed != 0 || rep.BeforeRobots != 0 {
		t.Errorf("politeness report: %d overlaps, %d Crawl-delay violations, %d gaps under %s, %d disallowed, %d before robots.txt; examples %+v",
			rep.Overlaps, rep.DelayViolations, rep.MinDelayViolations, clusterDelay, rep.Disallowed, rep.BeforeRobots, rep.Examples)
	}
	t.Logf("%d of %d pages fetched, %d URLs fetched twice or more, %d requests", len(counts), total, dups, rep.Requests)
}

// TestCrawlRedisClusterPlainServer: --redis-cluster with the one address
// of a plain (non-cluster) Redis server works too: two nodes share the
// crawl, fetch every reachable page once and politely.
func TestCrawlRedisClusterPlainServer(t *testing.T) {
	srv := redistest.Start(t)
	web, webAddr, mem, seeds := sharedWeb(t)
	var procs []*crawlProc
	for _, name := range []string{"a", "b"} {
		// A delay long enough that the crawl outlasts the second node's
		// start on a loaded machine (it once took 5 s, and the first node
		// had fetched everything alone): each host's pages then take 9 s.
		procs = append(procs, startClusterCrawl(t, filepath.Join(t.TempDir(), name), srv.Addr, "plain", webAddr, seeds, slowDelay...))
	}
	for _, p := range procs {
		p.wait(t, 3*time.Minute)
	}
	checkShared(t, web, mem, procs, 0)
	if o := overlaps(mem); len(o) != 0 {
		t.Errorf("%d page requests overlapped another on the same host: %v", len(o), o)
	}
}

// TestCrawlRedisClusterUsage: --redis-cluster with --frontier, or with a
// lease that is not positive, is a usage error.
func TestCrawlRedisClusterUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--frontier", "127.0.0.1:1"}, "not both"},
		{[]string{"--lease", "0s"}, "--lease must be positive"},
	} {
		args := append([]string{"crawl", "--redis-cluster", "127.0.0.1:1", "--data", t.TempDir()}, tc.args...)
		code, _, errOut := run(t, "", append(args, "http://a.test/")...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestCrawlRedisClusterIndexLost: a node stops part-way (--max-duration),
// then the crawl's index of queues goes wrong the ways a failover or a
// node's death between a queue's update and its index's can leave it. A
// node joining afterwards must find the queues and finish the crawl:
//   - index lost (an empty crawl to the totals): it repairs at start;
//   - index ahead of the queues, saying nothing is queued: it repairs
//     before it calls the crawl drained;
//   - index ahead of the queues, saying each queue has a URL in flight
//     and none ready: it repairs after half a minute of URLs queued that
//     nothing serves.
func TestCrawlRedisClusterIndexLost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		inFlight  bool // the stale index says one URL of each queue is in flight
		deleteAll bool
		logLine   string
	}{
		{name: "lost", deleteAll: true, logLine: "frontier index repaired"},
		{name: "ahead, empty", logLine: "frontier index repaired before drain"},
		{name: "ahead, in flight", inFlight: true, logLine: "frontier index repaired while idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			web, webAddr, mem, seeds := sharedWeb(t)
			a := startClusterCrawl(t, filepath.Join(t.TempDir(), "a"), srv.Addr, "lost", webAddr, seeds, "--max-duration", "800ms", "--lease", "3s")
			select {
			case <-a.done:
			case <-time.After(time.Minute):
				t.Fatalf("the first node did not stop\nstderr:\n%s", tail(a.errb.String(), 40))
			}
			total := 0
			for _, s := range web.Sites() {
				total += len(web.Reachable(s))
			}
			if got := len(fetchCounts(mem)); got == 0 || got >= total {
				t.Fatalf("the first node fetched %d of %d pages; the test needs some left", got, total)
			}
			staleIndex(t, srv.Addr, tc.deleteAll, tc.inFlight)
			b := startClusterCrawl(t, filepath.Join(t.TempDir(), "b"), srv.Addr, "lost", webAddr, nil, "--lease", "3s")
			b.wait(t, 2*time.Minute)
			if !strings.Contains(b.errb.String(), tc.logLine) {
				t.Errorf("the second node did not log %q\nstderr:\n%s", tc.logLine, tail(b.errb.String(), 40))
			}
			checkShared(t, web, mem, []*crawlProc{a, b}, 8)
		})
	}
}

// staleIndex damages the crawl index on the Redis server at addr: it
// deletes it, or replaces every queue's entry by one from the future (a
// version 1,000 ahead) that says the queue is empty or has one URL in
// flight, with none ready and shard totals to match.
func staleIndex(t *testing.T, addr string, deleteAll, inFlight bool) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	keys, err := c.Keys(ctx, "*{i\x1f*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("index keys %q, %v", keys, err)
	}
	if deleteAll {
		if err := c.Del(ctx, keys...).Err(); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, k := range keys {
		if !strings.HasSuffix(k, ":q") {
			continue
		}
		shard := strings.TrimSuffix(k, "q")
		entries, err := c.HGetAll(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var size, inflight, active, completed int64
		for queue, v := range entries {
			var ver, n, fl, done, retired int64
			if _, err := fmt.Sscan(v, &ver, &n, &fl, &done, &retired); err != nil {
				t.Fatalf("index entry %q: %v", v, err)
			}
			n, fl = 0, 0
			if inFlight {
				n, fl = 1, 1
				size++
				inflight++
				active++
			}
			completed += done
			if err := c.HSet(ctx, k, queue, fmt.Sprintf("%d %d %d %d 0", ver+1000, n, fl, done)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Del(ctx, shard+"r", shard+"p").Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.HSet(ctx, shard+"s", "size", size, "inflight", inflight, "active", active, "completed", completed).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
