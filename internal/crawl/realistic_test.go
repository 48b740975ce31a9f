package crawl

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// TestRealisticWebErrorsKeepHosts crawls testweb's realistic profile
// (404s, persistent 500s, transient 503s, redirect chains, duplicates,
// slow pages): no host is retired for its pages' errors, every reachable
// page of every site is fetched, each persistent 500 is tried
// MaxRetries+1 times and has one final line in crawl.log, and the crawl,
// whose last work is a retry waiting out its backoff, says it waits and
// finishes, counting the failed URLs. Real time, bounded with generous
// limits; nothing is judged on speed.
func TestRealisticWebErrorsKeepHosts(t *testing.T) {
	web, mem, r := startWeb(t, testweb.Config{Seed: 11, Sites: 5, PagesPerSite: 60, Plain: true, NoExternal: true, Profile: testweb.ProfileRealistic})
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Delay: 20 * time.Millisecond, Workers: 16, MaxDuration: 4 * time.Minute,
		MaxRetries: 2, RetryDelay: 2 * time.Second, ProgressInterval: time.Millisecond}
	c, err := New(cfg, Options{Logger: logger, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, seedsOf(web))
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Finished || len(sum.Retired) != 0 {
		t.Fatalf("summary: finished %v, retired %v; want finished, none retired", sum.Finished, sum.Retired)
	}

	// What the web answered, per URL.
	statuses := map[string][]int{}
	for _, e := range mem.Entries() {
		if !strings.HasSuffix(e.Target, "/robots.txt") {
			u := "http://" + e.Host + e.Target
			statuses[u] = append(statuses[u], e.Status)
		}
	}
	failed := map[string]bool{}
	for u, ss := range statuses {
		all500 := true
		for _, s := range ss {
			all500 = all500 && s == 500
		}
		if all500 {
			failed[u] = true
			if len(ss) != cfg.MaxRetries+1 {
				t.Errorf("%s answered 500 and was asked %d times, want %d", u, len(ss), cfg.MaxRetries+1)
			}
		}
	}
	if len(failed) == 0 {
		t.Fatal("no page answered 500: the test proves nothing")
	}
	if sum.Failed != int64(len(failed)) {
		t.Errorf("summary counts %d failed URLs, the web answered only 500 to %d", sum.Failed, len(failed))
	}
	// Every host with a broken page was crawled to the end.
	for _, s := range web.Sites() {
		reach := web.Reachable(s)
		if len(reach) == 0 {
			continue
		}
		for _, u := range reach {
			ok := false
			for _, st := range statuses[u] {
				ok = ok || st == 200
			}
			if !ok {
				t.Errorf("%s: reachable page %s never answered 200 (answers %v)", s.Host, u, statuses[u])
			}
		}
	}

	// crawl.log: one line per URL, the final 500 after its tries.
	f, err := os.Open(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string][]crawllog.Entry{}
	sc := crawllog.NewScanner(f)
	for {
		e, err := sc.Next()
		if err != nil {
			break
		}
		lines[e.URL] = append(lines[e.URL], e)
	}
	for u := range failed {
		es := lines[u]
		if len(es) != 1 || es[0].Status != 500 || !strings.Contains(strings.Join(es[0].Annotations, ","), crawllog.Tries(cfg.MaxRetries+1)) {
			t.Errorf("%s: crawl.log lines %+v, want one final 500 after %d tries", u, es, cfg.MaxRetries+1)
		}
	}
	if !regexp.MustCompile(`waiting: \d+ hosts in backoff, next at \d\d:\d\d:\d\d`).MatchString(logs.String()) {
		t.Errorf("no waiting line while only retries were left")
	}
	t.Logf("%d URLs asked, %d failed (500), %d pages, %v", len(statuses), len(failed), sum.Pages, sum.Duration)
}
