package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

var prefixN atomic.Int64

func prefix() string { return fmt.Sprintf("t%d:", prefixN.Add(1)) }

// TestConformanceEmbedded: the embedded Pebble frontier passes the suite
// the cluster frontier is held to.
func TestConformanceEmbedded(t *testing.T) {
	frontiertest.Run(t, func(t *testing.T, now func() time.Time) frontier.API {
		db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		f, err := frontier.Open(db, frontier.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

func newClusterFrontier(t *testing.T, c redis.UniversalClient, o cluster.Options) *cluster.Frontier {
	t.Helper()
	if o.Prefix == "" {
		o.Prefix = prefix()
	}
	f, err := cluster.New(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestConformanceSingle: the cluster frontier on one plain redis-server,
// keeping completed URLs as the URLFrontier service needs
// (TestCompletedHashesOnly covers the default).
func TestConformanceSingle(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	frontiertest.Run(t, func(t *testing.T, now func() time.Time) frontier.API {
		return newClusterFrontier(t, c, cluster.Options{Now: now, KeepCompletedURLs: true})
	})
}

// TestConformanceCluster: the cluster frontier on a real Redis Cluster.
func TestConformanceCluster(t *testing.T) {
	rc := redistest.StartCluster(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs})
	t.Cleanup(func() { c.Close() })
	frontiertest.Run(t, func(t *testing.T, now func() time.Time) frontier.API {
		return newClusterFrontier(t, c, cluster.Options{Now: now, IndexShards: 8, KeepCompletedURLs: true})
	})
	// A pipeline counts one round trip per master it reaches: the peek
	// of 8 index shards reaches the 3 masters at most.
	t.Run("OpsRoundTrips", func(t *testing.T) {
		f := newClusterFrontier(t, c, cluster.Options{IndexShards: 8})
		ctx := context.Background()
		if _, err := f.Get(ctx, frontier.GetParams{MaxQueues: 1, MaxURLsPerQueue: 1}); err != nil {
			t.Fatal(err)
		}
		before := opsOf(f)["peek"]
		if _, err := f.Get(ctx, frontier.GetParams{MaxQueues: 1, MaxURLsPerQueue: 1}); err != nil {
			t.Fatal(err)
		}
		after := opsOf(f)["peek"]
		if n, rt := after.Commands-before.Commands, after.RoundTrips-before.RoundTrips; n != 8 || rt < 1 || rt > 3 {
			t.Errorf("peek of an empty crawl: %d commands, %d round trips; want 8 and 1-3", n, rt)
		}
	})
}

// TestConformanceReadyCache: the cluster frontier with Get's ready cache
// (Options.ReadyCache) on one redis-server: the suite's clock, which it
// moves, is the cache's too.
func TestConformanceReadyCache(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	frontiertest.Run(t, func(t *testing.T, now func() time.Time) frontier.API {
		return newClusterFrontier(t, c, cluster.Options{Now: now, KeepCompletedURLs: true, ReadyCache: 50 * time.Millisecond})
	})
}
