package frontier

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// BenchmarkPutDiscovered measures inserts with the seen-test, in batches of
// 1,000 as the crawler sends a page's outlinks; one URL in five is a repeat.
func BenchmarkPutDiscovered(b *testing.B) {
	f, _ := benchFrontier(b)
	ctx := context.Background()
	items := make([]Item, 0, 1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i
		if i%5 == 0 {
			j = i / 2
		}
		items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("http://www.site%d.example/a/%d.html", j%1000, j)}})
		if len(items) == cap(items) {
			if _, err := f.Put(ctx, items); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
}

// BenchmarkAck measures the acknowledgement of leased URLs as the crawler
// makes it: Gets lease one URL from each of 256 hosts (untimed), then one
// Put of 256 Known items marks them completed (timed); ns/op is per URL.
// In records=flushed the URL records were flushed to sstables before the
// timer starts, as in a crawl where a URL is acknowledged long after it
// was discovered; in records=recent they were just written (the newest
// still in the memtable, the rest flushed by Pebble as it filled). Run it
// with TMPDIR on a tmpfs to measure CPU rather than fsync latency, and with
// -benchtime=Nx (N URLs are stored first). cpu-ns/op is the process's CPU
// time (user and system, all goroutines) during the timed Puts, which a
// loaded machine disturbs less than ns/op.
func BenchmarkAck(b *testing.B) {
	b.Run("records=flushed", func(b *testing.B) { benchmarkAck(b, true) })
	b.Run("records=recent", func(b *testing.B) { benchmarkAck(b, false) })
}

func benchmarkAck(b *testing.B, flush bool) {
	const hosts, batch = 1000, 256
	f, db := benchFrontier(b)
	ctx := context.Background()
	items := make([]Item, 0, 1000)
	for i := range b.N + batch {
		items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("http://www.site%d.example/a/%d.html", i%hosts, i)}})
		if len(items) == cap(items) || i == b.N+batch-1 {
			if _, err := f.Put(ctx, items); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
	if flush {
		if err := db.Pebble().Flush(); err != nil {
			b.Fatal(err)
		}
	}
	acks := make([]Item, 0, batch)
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		ls, err := f.Get(ctx, GetParams{MaxQueues: min(batch, b.N-done), MaxURLsPerQueue: 1, Lease: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		if len(ls) == 0 {
			b.Fatalf("nothing leased after %d acks", done)
		}
		acks = acks[:0]
		for _, l := range ls {
			acks = append(acks, Item{Info: l.URLInfo, Known: true})
		}
		b.StartTimer()
		c0 := cpuclock.Process()
		st, err := f.Put(ctx, acks)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuclock.Process() - c0
		for _, s := range st {
			if s != OK {
				b.Fatalf("ack status %v", s)
			}
		}
		done += len(acks)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// benchFrontier opens a frontier on a fresh store, closed when b ends.
func benchFrontier(b *testing.B) (*Frontier, *kv.DB) {
	b.Helper()
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	f, err := Open(db, Options{})
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); db.Close() })
	return f, db
}

// BenchmarkGetCrawl models the crawler's use of Get: 2,000
// queues of 50 URLs each, flushed to sstables; each Get asks for up to 8
// queues (the crawl loop gathers up to 8 free workers) with
// MaxURLsPerQueue 1; the injected clock advances 1 ms per Get and every
// queue has a 200 ms delay, so queues are served round robin; after each
// Get the leased queues are blocked for 200 ms and their URLs acknowledged
// (completed) in one Put, as the crawler does. ns/op is wall time per
// iteration (Get, block and ack); get-cpu-ns/op is the CPU time of the
// Gets alone (the benchmark's OS thread, Linux only), cpu-ns/op the
// process's CPU time during the Gets (so also Pebble's background work and
// the garbage collector), and store-reads/op the queue reads that went to
// Pebble.
// Run it with -benchtime=10000x (at most 12,500: 100,000 URLs are stored
// first) and TMPDIR on a tmpfs.
//
// In bytes=1MiB the read-aheads of only about a fifth of the queues fit
// (Options.ReadAheadBytes): the overflow case of a crawl of many hosts.
func BenchmarkGetCrawl(b *testing.B) {
	for _, k := range []int{-1, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("readahead=%d", k), func(b *testing.B) { benchmarkGetCrawl(b, k, 0) })
	}
	b.Run("readahead=16/bytes=1MiB", func(b *testing.B) { benchmarkGetCrawl(b, 16, 1<<20) })
}

func benchmarkGetCrawl(b *testing.B, readAhead, aheadBytes int) {
	const hosts, perHost, perGet = 2000, 50, 8
	if b.N*perGet > hosts*perHost {
		b.Fatalf("b.N = %d: at most %d (use -benchtime=10000x)", b.N, hosts*perHost/perGet)
	}
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	clk := newClock()
	opts := Options{Now: clk.Now, DefaultDelay: 200 * time.Millisecond, ReadAhead: readAhead, ReadAheadBytes: aheadBytes}
	f, err := Open(db, opts)
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); db.Close() })
	ctx := context.Background()
	items := make([]Item, 0, 1000)
	for i := range perHost {
		for h := range hosts {
			items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("http://www.site%d.example/p/%d.html", h, i), Depth: min(i, 3)}})
			if len(items) == cap(items) {
				if _, err := f.Put(ctx, items); err != nil {
					b.Fatal(err)
				}
				items = items[:0]
			}
		}
	}
	if err := db.Pebble().Flush(); err != nil {
		b.Fatal(err)
	}
	reads0 := f.storeReads.Load()
	acks := make([]Item, 0, perGet)
	var cpu, getCPU time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var ls []Lease
		for try := 0; len(ls) == 0; try++ {
			if try == 1000 {
				b.Fatal("nothing leased for 1,000 Gets")
			}
			clk.Advance(time.Millisecond)
			c0, t0 := cpuclock.Process(), threadCPU()
			ls, err = f.Get(ctx, GetParams{MaxQueues: perGet, MaxURLsPerQueue: 1, Lease: 10 * time.Minute})
			getCPU += threadCPU() - t0
			cpu += cpuclock.Process() - c0
			if err != nil {
				b.Fatal(err)
			}
		}
		acks = acks[:0]
		for _, l := range ls {
			if err := f.BlockQueueUntil(ctx, "", l.Key, clk.Now().Add(200*time.Millisecond)); err != nil {
				b.Fatal(err)
			}
			acks = append(acks, Item{Info: l.URLInfo, Known: true})
		}
		if _, err := f.Put(ctx, acks); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(getCPU.Nanoseconds())/float64(b.N), "get-cpu-ns/op")
	b.ReportMetric(float64(f.storeReads.Load()-reads0)/float64(b.N), "store-reads/op")
}
