package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestSharedPause: SetActive on one process pauses every process that
// reads the flag after it; resuming does too.
func TestSharedPause(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rc.Close() })
	o := cluster.Options{Prefix: prefix()}
	a, b := newClusterFrontier(t, rc, o), newClusterFrontier(t, rc, o)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/1"}}}); err != nil {
		t.Fatal(err)
	}
	a.SetActive(false)
	if b.Active() {
		t.Fatal("B active after A paused the frontier")
	}
	if ls, err := b.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 0 {
		t.Fatalf("B served while paused: %v, %v", ls, err)
	}
	if err := b.SetActiveContext(ctx, true); err != nil {
		t.Fatal(err)
	}
	// A cached "paused" when it set it; a fresh frontier reads Redis.
	c := newClusterFrontier(t, rc, o)
	if !c.Active() {
		t.Fatal("a new process sees the frontier paused after B resumed it")
	}
	if ls, err := c.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 1 {
		t.Fatalf("Get after resuming: %v, %v", ls, err)
	}
}

// TestDeleteCrawlWithoutIndex: DeleteCrawl finds a crawl's queues by
// their keys, so it removes queues whose index entries were lost, and
// leaves other crawls alone.
func TestDeleteCrawlWithoutIndex(t *testing.T) {
	a, _, _, rc := twoNodes(t)
	ctx := context.Background()
	var items []frontier.Item
	for _, h := range []string{"a", "b", "c"} {
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: "http://" + h + ".example/1", CrawlID: "gone"}},
			frontier.Item{Info: frontier.URLInfo{URL: "http://" + h + ".example/1", CrawlID: "kept"}})
	}
	if _, err := a.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	// Lose the index of crawl "gone" (as a node dying between a queue
	// script and its index update would).
	keys, err := rc.Keys(ctx, "*{i\x1fgone\x1f*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("index keys of crawl gone: %q, %v", keys, err)
	}
	if err := rc.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	n, err := a.DeleteCrawl(ctx, "gone")
	if err != nil || n != 3 {
		t.Fatalf("DeleteCrawl: %d, %v; want 3", n, err)
	}
	left, err := rc.Keys(ctx, "*gone*").Result()
	if err != nil || len(left) != 0 {
		t.Fatalf("keys of the deleted crawl left: %q, %v", left, err)
	}
	kept, err := rc.Keys(ctx, "*{q\x1fkept\x1f*").Result()
	if err != nil || len(kept) == 0 {
		t.Fatalf("keys of the other crawl: %q, %v", kept, err)
	}
	for _, k := range kept {
		if strings.Contains(k, "gone") {
			t.Fatalf("unexpected key %q", k)
		}
	}
	if s := a.Stats("kept", ""); s.Size != 3 || s.Queues != 3 {
		t.Fatalf("stats of the other crawl %+v", s)
	}
}

// TestOptionsDefaultDelay: Options.DefaultDelay spaces a queue's
// servings in a crawl without a default delay of its own, and the crawl's
// own (SetDelay with no key) wins over it.
func TestOptionsDefaultDelay(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rc.Close() })
	clk := frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	f := newClusterFrontier(t, rc, cluster.Options{Prefix: prefix(), Now: clk.Now, DefaultDelay: time.Minute})
	ctx := context.Background()
	serve := func() int {
		t.Helper()
		ls, err := f.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if err := f.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		return len(ls)
	}
	var items []frontier.Item
	for i := range 4 {
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: fmt.Sprintf("http://x.example/%d", i)}})
	}
	if _, err := f.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	if n := serve(); n != 1 {
		t.Fatalf("first Get served %d", n)
	}
	clk.Advance(30 * time.Second)
	if n := serve(); n != 0 {
		t.Fatalf("served %d within the default delay", n)
	}
	clk.Advance(31 * time.Second)
	if n := serve(); n != 1 {
		t.Fatalf("served %d after the default delay", n)
	}
	if err := f.SetDelay(ctx, "", "", time.Second); err != nil {
		t.Fatal(err)
	}
	// The queue was indexed under the old delay: it is served then, and
	// spaced by the new one after.
	clk.Advance(61 * time.Second)
	if n := serve(); n != 1 {
		t.Fatalf("served %d at the time indexed under the old delay", n)
	}
	clk.Advance(2 * time.Second)
	if n := serve(); n != 1 {
		t.Fatalf("served %d after the crawl's own delay", n)
	}
}

// TestCompletedHashesOnly: by default a completed URL is kept as its hash
// only: ListURLs and a filtered CountURLs or PurgeURLs do not see it, the
// counters and an unfiltered PurgeURLs do, and its data is gone.
func TestCompletedHashesOnly(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rc.Close() })
	clk := frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	f := newClusterFrontier(t, rc, cluster.Options{Prefix: prefix(), Now: clk.Now})
	ctx := context.Background()
	if _, err := f.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://a.example/1"}}, {Info: frontier.URLInfo{URL: "http://a.example/2"}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Ack(ctx, frontier.URLInfo{URL: "http://a.example/1"}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	var listed []string
	if err := f.ListURLs(ctx, frontier.ListParams{}, func(e frontier.URLEntry) error { listed = append(listed, e.URL); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != "http://a.example/2" {
		t.Fatalf("listed %q, want the queued URL only", listed)
	}
	for _, c := range []struct {
		p    frontier.ListParams
		want uint64
	}{{frontier.ListParams{}, 2}, {frontier.ListParams{Filter: "/1"}, 0}, {frontier.ListParams{Filter: "/2"}, 1}} {
		if n, err := f.CountURLs(ctx, c.p); err != nil || n != c.want {
			t.Errorf("CountURLs(%+v) = %d, %v; want %d", c.p, n, err, c.want)
		}
	}
	data, err := rc.Keys(ctx, "*}:d").Result()
	if err != nil || len(data) != 1 {
		t.Fatalf("data keys %q, %v", data, err)
	}
	if n, err := rc.HLen(ctx, data[0]).Result(); err != nil || n != 1 {
		t.Fatalf("data of %d URLs kept (%v), want the queued one only", n, err)
	}
	if n, err := f.PurgeURLs(ctx, frontier.ListParams{Filter: "/1"}, clk.Now()); err != nil || n != 0 {
		t.Fatalf("filtered purge: %d, %v; want nothing (no URL to match)", n, err)
	}
	if n, err := f.PurgeURLs(ctx, frontier.ListParams{}, clk.Now()); err != nil || n != 2 {
		t.Fatalf("purge: %d, %v; want both", n, err)
	}
}
