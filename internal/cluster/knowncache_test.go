package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestConformanceKnownCache: the suite again with the known-URL cache on:
// one process sees the same answers as without it.
func TestConformanceKnownCache(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	frontiertest.Run(t, func(t *testing.T, now func() time.Time) frontier.API {
		return newClusterFrontier(t, c, cluster.Options{Now: now, KeepCompletedURLs: true, KnownCache: 1000})
	})
}

// commandCounter counts the commands a client sends, pipelined or not.
type commandCounter struct{ n atomic.Int64 }

func (h *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestKnownCache: a discovered URL this process saw stored, found known
// or acknowledged is answered Skipped without a command to Redis; after
// DeleteQueue, DeleteCrawl or PurgeURLs on this process it is asked again
// (and stored again).
func TestKnownCache(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	var cnt commandCounter
	c.AddHook(&cnt)
	ctx := context.Background()
	item := func(u string) []frontier.Item { return []frontier.Item{{Info: frontier.URLInfo{URL: u}}} }
	put := func(t *testing.T, f *cluster.Frontier, u string) (frontier.Status, int64) {
		t.Helper()
		before := cnt.n.Load()
		st, err := f.Put(ctx, item(u))
		if err != nil {
			t.Fatal(err)
		}
		return st[0], cnt.n.Load() - before
	}
	const u = "http://a.example/page"

	tests := []struct {
		name  string
		clear func(t *testing.T, f *cluster.Frontier) // nil: none
	}{
		{name: "delete queue", clear: func(t *testing.T, f *cluster.Frontier) {
			if _, err := f.DeleteQueue(ctx, "", "a.example"); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "delete crawl", clear: func(t *testing.T, f *cluster.Frontier) {
			if _, err := f.DeleteCrawl(ctx, ""); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "purge", clear: func(t *testing.T, f *cluster.Frontier) {
			if _, err := f.PurgeURLs(ctx, frontier.ListParams{Key: "a.example"}, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newClusterFrontier(t, c, cluster.Options{KnownCache: 100})
			if st, n := put(t, f, u); st != frontier.OK || n == 0 {
				t.Fatalf("first Put: %v with %d commands, want OK from Redis", st, n)
			}
			if st, n := put(t, f, u); st != frontier.Skipped || n != 0 {
				t.Fatalf("second Put: %v with %d commands, want Skipped with none", st, n)
			}
			if s := f.Stats("", ""); s.Size != 1 {
				t.Fatalf("Stats %+v, want one URL", s)
			}
			tc.clear(t, f)
			if st, n := put(t, f, u); st != frontier.OK || n == 0 {
				t.Fatalf("Put after %s: %v with %d commands, want OK from Redis", tc.name, st, n)
			}
			if s := f.Stats("", ""); s.Size != 1 {
				t.Fatalf("Stats after %s and Put %+v, want the URL queued again", tc.name, s)
			}
		})
	}

	t.Run("known elsewhere and acknowledged", func(t *testing.T) {
		p := prefix()
		other := newClusterFrontier(t, c, cluster.Options{Prefix: p})
		f := newClusterFrontier(t, c, cluster.Options{Prefix: p, KnownCache: 100})
		if st, _ := put(t, other, u); st != frontier.OK {
			t.Fatalf("other process's Put: %v", st)
		}
		// Redis says known once; then the cache does.
		if st, n := put(t, f, u); st != frontier.Skipped || n == 0 {
			t.Fatalf("Put of a URL another process stored: %v with %d commands, want Skipped from Redis", st, n)
		}
		if st, n := put(t, f, u); st != frontier.Skipped || n != 0 {
			t.Fatalf("again: %v with %d commands, want Skipped with none", st, n)
		}
		// A URL acknowledged by this process is known too.
		const v = "http://a.example/other"
		if st, _ := put(t, other, v); st != frontier.OK {
			t.Fatalf("Put %s: %v", v, st)
		}
		ls, err := f.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1, Lease: time.Minute})
		if err != nil || len(ls) != 1 {
			t.Fatalf("Get: %v, %v", ls, err)
		}
		if err := f.Ack(ctx, ls[0].URLInfo, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if st, n := put(t, f, ls[0].URL); st != frontier.Skipped || n != 0 {
			t.Fatalf("Put of the URL acknowledged here: %v with %d commands, want Skipped with none", st, n)
		}
		// Without the cache every Put asks Redis.
		if st, n := put(t, other, u); st != frontier.Skipped || n == 0 {
			t.Fatalf("Put without the cache: %v with %d commands, want Skipped from Redis", st, n)
		}
	})
}

func TestKnownCacheValidate(t *testing.T) {
	for _, n := range []int{-1, cluster.MaxKnownCache + 1} {
		if err := (cluster.Options{KnownCache: n}).Validate(); err == nil {
			t.Errorf("Validate with KnownCache %d: no error", n)
		}
	}
	if err := (cluster.Options{KnownCache: cluster.MaxKnownCache}).Validate(); err != nil {
		t.Errorf("Validate with KnownCache %d: %v", cluster.MaxKnownCache, err)
	}
}
