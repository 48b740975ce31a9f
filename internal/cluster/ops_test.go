package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// opsOf returns a frontier's operation counts by name.
func opsOf(f *cluster.Frontier) map[string]cluster.OpCount {
	m := map[string]cluster.OpCount{}
	for _, o := range f.Ops() {
		m[o.Op] = o
	}
	return m
}

// TestOps: the per-operation counts of a put, a get and an ack on one
// server (one round trip per pipeline).
func TestOps(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	clk := frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	f := newClusterFrontier(t, c, cluster.Options{Now: clk.Now, IndexShards: 4})
	ctx := context.Background()
	round := func(crawl string) {
		t.Helper()
		items := []frontier.Item{disc("http://a.example/1"), disc("http://a.example/2"), disc("http://b.example/1")}
		for i := range items {
			items[i].Info.CrawlID = crawl
		}
		if _, err := f.Put(ctx, items); err != nil {
			t.Fatal(err)
		}
		ls, err := f.Get(ctx, frontier.GetParams{CrawlID: crawl, MaxQueues: 1, MaxURLsPerQueue: 1})
		if err != nil || len(ls) != 1 {
			t.Fatalf("Get: %v %v", ls, err)
		}
		if err := f.Ack(ctx, ls[0].URLInfo, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	// The first round loads the scripts (NOSCRIPT, then EVAL: counted
	// too) and reads the shared pause flag (cached for a second); the
	// second, on another crawl, is what every later one costs.
	round("warm")
	before := opsOf(f)
	round("")
	got := opsOf(f)
	for op, o := range got {
		b := before[op]
		got[op] = cluster.OpCount{Op: op, Commands: o.Commands - b.Commands, RoundTrips: o.RoundTrips - b.RoundTrips}
		if got[op].Commands == 0 {
			delete(got, op)
		}
	}
	want := map[string]cluster.OpCount{
		"put":         {Op: "put", Commands: 3, RoundTrips: 2}, // two queues, then the ack
		"put index":   {Op: "put index", Commands: 3, RoundTrips: 2},
		"peek":        {Op: "peek", Commands: 4, RoundTrips: 1},
		"lease":       {Op: "lease", Commands: 1, RoundTrips: 1},
		"lease index": {Op: "lease index", Commands: 1, RoundTrips: 1},
		"register":    {Op: "register", Commands: 1, RoundTrips: 1},
		"delay":       {Op: "delay", Commands: 1, RoundTrips: 1}, // the crawl's default delay, once
	}
	for op, w := range want {
		if got[op] != w {
			t.Errorf("%s: %+v, want %+v", op, got[op], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("ops %v, want only %v", got, want)
	}
}

func disc(u string) frontier.Item { return frontier.Item{Info: frontier.URLInfo{URL: u}} }
