package frontier

import (
	"context"
	"fmt"
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
