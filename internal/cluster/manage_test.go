package cluster_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
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
