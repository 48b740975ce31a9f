package cluster_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// benchURL is a URL of a realistic length (about 60 bytes).
func benchURL(host, i int) string {
	return fmt.Sprintf("https://www.host%06d.example.com/section/page-%08d.html", host, i)
}

// backends are the frontiers the benchmarks compare in one run: the
// embedded Pebble frontier, the cluster frontier on one redis-server, on
// a 6-node Redis Cluster, and on that cluster with WAIT 1 on writes.
func backends(b *testing.B) []struct {
	name string
	f    frontier.API
} {
	b.Helper()
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	emb, err := frontier.Open(db, frontier.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { emb.Close() })
	srv := redistest.Start(b)
	sc := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 64})
	b.Cleanup(func() { sc.Close() })
	rc := redistest.StartCluster(b)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs, PoolSize: 64})
	b.Cleanup(func() { cc.Close() })
	mk := func(c redis.UniversalClient, o cluster.Options) frontier.API {
		o.Prefix = prefix()
		f, err := cluster.New(context.Background(), c, o)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	return []struct {
		name string
		f    frontier.API
	}{
		{"embedded", emb},
		{"redis", mk(sc, cluster.Options{})},
		{"cluster", mk(cc, cluster.Options{})},
		{"cluster-wait1", mk(cc, cluster.Options{WaitReplicas: 1})},
	}
}

// BenchmarkFrontier: discovered URLs put in batches of 100 (10 hosts),
// then the crawler's cycle from 16 goroutines: Get (8 queues, 1 URL per
// queue) and one Ack per URL, over 1,000 queues of 20 URLs (so b.N at most
// 20,000). URLs/s for each backend in the same run.
func BenchmarkFrontier(b *testing.B) {
	for _, be := range backends(b) {
		b.Run("put/"+be.name, func(b *testing.B) {
			ctx := context.Background()
			n := 0
			for b.Loop() {
				items := make([]frontier.Item, 100)
				for i := range items {
					items[i] = frontier.Item{Info: frontier.URLInfo{URL: benchURL(n%1000*10+i%10, n+i)}}
				}
				n += len(items)
				if _, err := be.f.Put(ctx, items); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "URLs/s")
		})
		b.Run("get-ack/"+be.name, func(b *testing.B) {
			ctx := context.Background()
			// 1,000 more queues of fresh URLs to serve.
			var items []frontier.Item
			for h := range 1000 {
				for i := range 20 {
					items = append(items, frontier.Item{Info: frontier.URLInfo{URL: benchURL(900000+h, i), CrawlID: "cycle"}})
				}
			}
			for i := 0; i < len(items); i += 1000 {
				if _, err := be.f.Put(ctx, items[i:i+1000]); err != nil {
					b.Fatal(err)
				}
			}
			var mu sync.Mutex
			done, empty := 0, 0
			b.ResetTimer()
			var wg sync.WaitGroup
			per := max(b.N/16, 1)
			for range 16 {
				wg.Go(func() {
					misses := 0
					for k := 0; k < per && misses < 1000; {
						ls, err := be.f.Get(ctx, frontier.GetParams{CrawlID: "cycle", MaxQueues: 8, MaxURLsPerQueue: 1})
						if err != nil {
							b.Error(err)
							return
						}
						if len(ls) == 0 {
							// Other workers hold the heads: ask again.
							misses++
							mu.Lock()
							empty++
							mu.Unlock()
							continue
						}
						for _, l := range ls {
							if err := be.f.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
								b.Error(err)
								return
							}
						}
						k += len(ls)
						mu.Lock()
						done += len(ls)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "URLs/s")
			b.ReportMetric(float64(empty)/float64(max(done, 1)), "empty-Gets/URL")
		})
	}
}

// BenchmarkMemory measures Redis memory per URL: COURTESY_BENCH_URLS URLs
// (default 200,000) over hosts of COURTESY_BENCH_PER_HOST URLs each
// (default 100), put as discovered (queued), then acknowledged as
// completed (seen only). It reports used_memory deltas per URL.
// COURTESY_BENCH_LISTPACK sets Redis's listpack thresholds for hashes and
// sorted sets (default 128 entries).
func BenchmarkMemory(b *testing.B) {
	total := envInt("COURTESY_BENCH_URLS", 200_000)
	perHost := envInt("COURTESY_BENCH_PER_HOST", 100)
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 32})
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if lp := envInt("COURTESY_BENCH_LISTPACK", 0); lp > 0 {
		// The deployment's choice (redis.conf): hashes and sorted sets
		// up to lp entries keep the compact listpack encoding.
		for _, k := range []string{"hash-max-listpack-entries", "zset-max-listpack-entries"} {
			if err := c.ConfigSet(ctx, k, strconv.Itoa(lp)).Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	f, err := cluster.New(ctx, c, cluster.Options{})
	if err != nil {
		b.Fatal(err)
	}
	used := func() int64 {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		b.Fatal("no used_memory")
		return 0
	}
	for b.Loop() {
		base := used()
		start := time.Now()
		load := func(known bool) {
			const batch = 2000
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8)
			for lo := 0; lo < total; lo += batch {
				items := make([]frontier.Item, 0, batch)
				for i := lo; i < min(lo+batch, total); i++ {
					items = append(items, frontier.Item{Info: frontier.URLInfo{URL: benchURL(i/perHost, i)}, Known: known})
				}
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					if _, err := f.Put(ctx, items); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
		}
		load(false)
		putTook := time.Since(start)
		queued := used() - base
		start = time.Now()
		load(true)
		ackTook := time.Since(start)
		seen := used() - base
		s := f.Stats("", "")
		if s.Completed != uint64(total) {
			b.Fatalf("stats %+v, want %d completed", s, total)
		}
		b.ReportMetric(float64(queued)/float64(total), "B/queued-URL")
		b.ReportMetric(float64(seen)/float64(total), "B/seen-URL")
		b.ReportMetric(float64(total)/putTook.Seconds(), "put-URLs/s")
		b.ReportMetric(float64(total)/ackTook.Seconds(), "ack-URLs/s")
		b.Logf("%d URLs, %d per host: queued %d B (%.1f B/URL), completed %d B (%.1f B/URL); put %v, ack %v",
			total, perHost, queued, float64(queued)/float64(total), seen, float64(seen)/float64(total), putTook.Round(time.Millisecond), ackTook.Round(time.Millisecond))
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkAck: the latency of one acknowledgement (completed), from one
// goroutine, with and without WAIT 1, on the cluster and on one server.
func BenchmarkAck(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			var leases []frontier.Lease
			for lo := 0; len(leases) < b.N; lo += 1000 {
				items := make([]frontier.Item, 1000)
				for i := range items {
					items[i] = frontier.Item{Info: frontier.URLInfo{URL: benchURL(800000+(lo+i)%500, lo+i), CrawlID: "ack"}}
				}
				if _, err := be.f.Put(ctx, items); err != nil {
					b.Fatal(err)
				}
				ls, err := be.f.Get(ctx, frontier.GetParams{CrawlID: "ack"})
				if err != nil {
					b.Fatal(err)
				}
				leases = append(leases, ls...)
			}
			b.ResetTimer()
			for i := range b.N {
				if err := be.f.Ack(ctx, leases[i].URLInfo, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
