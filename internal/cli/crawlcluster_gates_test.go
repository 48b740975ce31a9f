package cli

// The negative control of the distributed crawl's politeness checks:
// crawl nodes whose politeness gates are not shared.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/redistest"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
)

// localGatesEnv makes a child `courtesy crawl --redis-cluster` of this
// test binary keep its politeness gate to itself (clusterLocalGates).
// Only the test binary's helper mode reads it; the courtesy binary has no
// such switch.
const localGatesEnv = "COURTESY_TEST_LOCAL_GATES"

func init() {
	if os.Getenv("COURTESY_CLI_HELPER") == "1" && os.Getenv(localGatesEnv) == "1" {
		clusterLocalGates = true
	}
}

// TestCrawlRedisClusterLocalGatesCaught: three crawl nodes share the
// frontier on a Redis Cluster but not their politeness (a broken
// deployment, clusterLocalGates): each keeps its own gate and does not
// hold a host's queue in the frontier after a fetch. The frontier still
// serves one URL per host at a time, but a host's next URL often goes to
// another node, whose gate has not seen the host's last request and
// starts at once: the web's politeness report, the same that finds
// nothing in the other cluster tests, must find gaps under the delay.
// Four sites of 30 pages make such hand-overs between nodes frequent.
// (Unshared gates alone are not caught, and need not be: the queue holds,
// shared in Redis, keep the delay by themselves; docs/distributed.md.)
func TestCrawlRedisClusterLocalGatesCaught(t *testing.T) {
	rc := redistest.StartCluster(t)
	addrs := strings.Join(rc.Addrs[:3], ",")
	w := newClusterWeb(t, testweb.Config{Seed: 7, Sites: 4, PagesPerSite: 30}, 3)
	var procs []*crawlProc
	for i, name := range []string{"a", "b", "c"} {
		procs = append(procs, startClusterCrawlEnv(t, []string{localGatesEnv + "=1"}, filepath.Join(t.TempDir(), name), addrs, "local-gates", w.addrs[i], w.seeds))
	}
	for _, p := range procs {
		p.wait(t, 3*time.Minute)
	}
	rep := report.AnalyzeEntries(w.web, w.mem.Entries(), report.Options{MinDelay: clusterDelay, Coverage: true})
	if rep.MinDelayViolations+rep.Overlaps == 0 {
		t.Errorf("nodes with unshared gates: the report found no gap under %s and no overlap in %d requests (smallest gap end-to-start %s): it would not catch a broken cluster",
			clusterDelay, rep.Requests, rep.MinGapEndToStart)
	}
	// The crawl itself is complete: only politeness is broken.
	if c := rep.Coverage; c == nil || c.Fetched != c.Reachable {
		t.Errorf("coverage %+v: every reachable page must still be fetched", c)
	}
	t.Logf("unshared gates: %d requests, %d gaps under %s, %d overlaps, %d Crawl-delay violations; smallest gap end-to-start %s",
		rep.Requests, rep.MinDelayViolations, clusterDelay, rep.Overlaps, rep.DelayViolations, rep.MinGapEndToStart)
}
