package console

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/courtesy-crawler/courtesy/internal/browsertest"
)

// TestBrowserClusterNodes shows a cluster's heartbeats in Debian's
// chromium: one row per node with its fields, live nodes first, the dead
// one flagged, the counts, and the crawls' totals under the table.
func TestBrowserClusterNodes(t *testing.T) {
	now := time.Now()
	src := fixedCluster{
		fixedNodes: fixedNodes{nodes: []Node{
			{ID: "host-a-111-0a0a", Role: "crawl", Host: "host-a", PID: 111, Version: "v-test", CrawlID: "shared", CPU: 0.5,
				CPUSeconds: 75, RSS: 64 << 20, Goroutines: 80, PagesPerSec: 12.5, InFlight: 3, LastSeen: now.Add(-9 * time.Second),
				LastError: "redis: i/o timeout", Dead: true},
			{ID: "host-b-222-0b0b", Role: "serve", Addr: "10.0.0.5:7071", Host: "10.0.0.5:7071", PID: 222, Version: "v-test",
				CPU: 0.1, CPUSeconds: 3, RSS: 32 << 20, Goroutines: 20, LastSeen: now},
			{ID: "host-c-333-0c0c", Role: "crawl", Host: "host-c", PID: 333, Version: "v-test", CrawlID: "shared", CPU: 1.25,
				CPUSeconds: 90, RSS: 128 << 20, Goroutines: 120, PagesPerSec: 20, InFlight: 4, LastSeen: now},
		}},
		totals: []CrawlTotals{{CrawlID: "shared", Queued: 1234, InFlight: 7, Completed: 5678, Queues: 40, ActiveQueues: 38, RetiredQueues: 2}},
	}
	s, err := New(Config{Token: testToken}, Sources{Nodes: src})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Run(ctx)

	b := browsertest.Start(t)
	errs := browsertest.ListenErrors(b)
	browsertest.Run(t, b, "nodes view", chromedp.Navigate(srv.URL+"/#nodes"), chromedp.WaitVisible(chromedp.CSS("#crawls-table tbody tr td")))
	rows, err := chromedp.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#nodes-table tbody tr")].map(tr => tr.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("nodes table rows %q, want 3", rows)
	}
	for i, want := range [][]string{
		{"host-b-222-0b0b", "serve", "10.0.0.5:7071", "222", "v-test", "alive"},
		{"host-c-333-0c0c", "crawl", "host-c", "333", "shared", "1.25", "128.0 MiB", "1 min 30 s", "alive"},
		{"host-a-111-0a0a", "crawl", "dead (", "redis: i/o timeout"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[i], w) {
				t.Errorf("nodes row %d %q lacks %q", i, rows[i], w)
			}
		}
	}
	if got := browsertest.Text(t, b, "#nodes-summary"); !strings.HasPrefix(got, "2 live, 1 dead") {
		t.Errorf("nodes summary %q", got)
	}
	if got := browsertest.Text(t, b, "#crawls-table tbody"); !strings.Contains(got, "shared") || !strings.Contains(got, "5,678") {
		t.Errorf("crawls totals %q", got)
	}
	if e := errs.Take(); len(e) > 0 {
		t.Errorf("browser errors: %q", e)
	}
}
