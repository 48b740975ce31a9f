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
}
