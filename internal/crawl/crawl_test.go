package crawl

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// startWeb serves a testweb on loopback, recording every request, and
// returns it with a resolver sending every *.test host there.
func startWeb(t *testing.T, cfg testweb.Config) (*testweb.Web, *testweb.Memory, *resolve.Resolver) {
	t.Helper()
	web, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mem := &testweb.Memory{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: web.LoggedHandler(mem)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	r, err := resolve.New([]string{"*.test=" + ln.Addr().String(), "*=" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	return web, mem, r
}

func seedsOf(web *testweb.Web) []string {
	var seeds []string
	for _, s := range web.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	return seeds
}

// openVisitWindow returns a REGP Visit-time window (UTC) open from an hour
// before now to three hours after.
func openVisitWindow(now time.Time) string {
	now = now.UTC()
	return now.Add(-time.Hour).Format("15:04") + "-" + now.Add(3*time.Hour).Format("15:04")
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// runCrawl runs one crawl of seeds with cfg through res, bounded by two
// minutes, and fails the test on an error.
func runCrawl(t *testing.T, cfg Config, res *resolve.Resolver, seeds ...string) *Summary {
	t.Helper()
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, seeds)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// logEntries reads and parses the crawl.log of the crawl in dir.
func logEntries(t *testing.T, dir string) []crawllog.Entry {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []crawllog.Entry
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		e, err := crawllog.Parse(line)
		if err != nil {
			t.Fatalf("bad crawl.log line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestCrawlTestwebPoliteness crawls the hazard web and judges it with the
// testweb politeness report.
func TestCrawlTestwebPoliteness(t *testing.T) {
	// regp-window.test's Visit-time window is opened around now, so the
	// crawl can drain it whatever the time of day (the report still counts
	// visits outside the window).
	web, mem, r := startWeb(t, testweb.Config{Seed: 7, Sites: 6, PagesPerSite: 15, SlowDelay: 500 * time.Millisecond, EndlessTime: 2 * time.Second,
		VisitTime: openVisitWindow(time.Now())})
	dir := t.TempDir()
	const delay = 100 * time.Millisecond
	cfg := Config{
		DataDir: dir, Delay: delay, MaxDuration: 150 * time.Second, Workers: 16,
		UserAgent:  "courtesy-test/1.0 (+http://example.test/bot)",
		Politeness: politeness.Config{Robots: politeness.RobotsConfig{RetryBase: 200 * time.Millisecond, RetryMax: time.Second}},
		RetryDelay: 200 * time.Millisecond,
	}
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, seedsOf(web))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary: pages %d completed %d queued %d hosts %d robots-denied %d errors %d dups %d finished %v retired %v traps %v",
		sum.Pages, sum.Completed, sum.Queued, sum.Hosts, sum.RobotsDenied, sum.Errors, sum.Duplicates, sum.Finished, sum.Retired, sum.Traps.Hits)
	if sum.Pages < 50 {
		t.Errorf("only %d pages fetched", sum.Pages)
	}
	rep := report.AnalyzeEntries(web, mem.Entries(), report.Options{MinDelay: delay})
	var sb strings.Builder
	rep.WriteText(&sb, false)
	t.Logf("report:\n%s", sb.String())
	delayViol, minDelayViol := rep.DelayViolations, rep.MinDelayViolations
	checks := []struct {
		name string
		n    int
	}{
		{"overlapping requests", rep.Overlaps},
		{"gaps below robots delay", delayViol},
		{"gaps below configured delay", minDelayViol},
		{"disallowed requests", rep.Disallowed},
		{"requests before robots.txt", rep.BeforeRobots},
		{"requests to robots-5xx sites", rep.Robots5xx},
		{"requests to robots-401/403 sites", rep.Robots401403},
		{"private pages", rep.PrivateFetched},
		{"nofollow-only pages", rep.NofollowFetched},
	}
	for _, ck := range checks {
		if ck.n != 0 {
			t.Errorf("%s: %d, want 0", ck.name, ck.n)
		}
	}
	if rep.OrphansFound != rep.OrphansTotal || rep.OrphansTotal == 0 {
		t.Errorf("orphan sitemap pages found: %d of %d", rep.OrphansFound, rep.OrphansTotal)
	}
	// Every trap kind stopped within its threshold: no site beyond the
	// URL limit, no trap URL deeper than the depth limit.
	lim := c.tr.Limits()
	for kind, n := range rep.Traps {
		if n > lim.MaxURLsPerSite {
			t.Errorf("trap %s: %d URLs fetched, over the %d URLs-per-site limit", kind, n, lim.MaxURLsPerSite)
		}
	}
	if rep.Traps[testweb.TrapSession] > 0 || rep.Traps[testweb.TrapDirList] > 0 || rep.Traps[testweb.TrapWildcard] > 0 {
		t.Errorf("session-id, dir-listing or wildcard trap URLs fetched: %v", rep.Traps)
	}
	if rep.Traps[testweb.TrapGrowing] > lim.MaxSegmentRepeats+1 {
		t.Errorf("growing-path trap: %d URLs fetched, want at most %d", rep.Traps[testweb.TrapGrowing], lim.MaxSegmentRepeats+1)
	}
	if rep.Traps[testweb.TrapNearDup] > lim.MaxDuplicatesPerSite+1 {
		t.Errorf("near-duplicate trap: %d URLs fetched, want at most %d", rep.Traps[testweb.TrapNearDup], lim.MaxDuplicatesPerSite+1)
	}
	// robots Host and REGP Mirror-site (docs/crawl.md "Host rewriting"):
	// the names robots.txt sends the crawler away from get their
	// robots.txt and nothing else; the Host target and both mirrors are
	// crawled, the mirrors sharing mirrored.test's pages without overlap.
	if rep.NonCanonical != 0 {
		t.Errorf("%d requests to non-canonical hosts past their robots.txt, want 0", rep.NonCanonical)
	}
	for _, s := range web.Sites() {
		for _, h := range s.NonCanonical {
			if hs := rep.Host(h); hs == nil || hs.RobotsRequests == 0 || hs.Requests != hs.RobotsRequests {
				t.Errorf("%s: %+v, want only robots.txt requests", h, hs)
			}
		}
	}
	if hs := rep.Host("canonical.test"); hs == nil || hs.Requests <= hs.RobotsRequests {
		t.Errorf("canonical.test (the Host target) not crawled: %+v", hs)
	}
	if len(rep.MirrorLoad) != 1 {
		t.Fatalf("mirror load %+v, want one site", rep.MirrorLoad)
	}
	for i, n := range rep.MirrorLoad[0].Pages {
		if n == 0 {
			t.Errorf("mirror %s served no page: %+v", rep.MirrorLoad[0].Mirrors[i], rep.MirrorLoad[0])
		}
	}
	if ml := rep.MirrorLoad[0]; ml.Overlap != 0 {
		t.Errorf("%d paths fetched from both mirrors, want 0: %+v", ml.Overlap, ml)
	}
	mirrorPathsOnce(t, web, mem.Entries())
	if len(sum.Retired) == 0 || sum.Retired["robots-503.test"] == "" {
		t.Errorf("hosts whose robots.txt answered 503 not retired: %v", sum.Retired)
	}
	if !sum.Finished {
		t.Errorf("crawl did not drain its frontier")
	}
	// Every WARC file reads cleanly with verified digests.
	if len(sum.WARCFiles) == 0 {
		t.Fatal("no WARC file")
	}
	records := 0
	for _, p := range sum.WARCFiles {
		readWARC(t, p, func(*warc.Record) { records++ })
	}
	if records < int(sum.Pages) {
		t.Errorf("%d WARC records for %d pages", records, sum.Pages)
	}
}

// mirrorPathsOnce checks, from the requests the testweb recorded, that
// no path of a site with REGP Mirror-site lines was asked of two of its
// names (the site and its mirrors), whatever the answer: every name of a
// path converges on the one mirror its path picks (hostmap.go), so the
// seen-test stays exact and the load is spread as declared.
func mirrorPathsOnce(t *testing.T, web *testweb.Web, entries []testweb.Entry) {
	t.Helper()
	for _, s := range web.Sites() {
		if len(s.Mirrors) == 0 {
			continue
		}
		names := append([]string{s.Host}, s.Mirrors...)
		on := map[string][]string{} // path → names asked for it
		for _, e := range entries {
			h := testweb.NormalizeHost(e.Host)
			if !slices.Contains(names, h) || e.Target == "/robots.txt" {
				continue
			}
			if !slices.Contains(on[e.Target], h) {
				on[e.Target] = append(on[e.Target], h)
			}
		}
		if len(on) == 0 {
			t.Errorf("%s: no page of the site or its mirrors fetched", s.Host)
		}
		for path, hosts := range on {
			if len(hosts) > 1 {
				t.Errorf("%s%s fetched from %v, want one of them", s.Host, path, hosts)
			}
		}
	}
}

// readWARC calls fn with every record of the WARC file at path, digests
// verified; any read error fails the test.
func readWARC(t *testing.T, path string, fn func(*warc.Record)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := warc.NewReader(f, warc.ReaderOptions{VerifyDigests: true})
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := rd.ReadRecord()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fn(rec)
	}
}
