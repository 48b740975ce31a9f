package console

import (
	"testing"
	"time"
)

// BenchmarkHostsPage answers hosts-table pages over a synthetic frontier
// of a million hosts (the snapshot is built once, before the timer). The
// bar is 100 ms per page; "full-sort" is the peer: sorting every row for
// each page, which the bounded heap avoids.
func BenchmarkHostsPage(b *testing.B) {
	const n = 1_000_000
	x := newHostIndex(synthHosts(n), time.Hour, time.Now)
	snap := x.snapshot()
	if len(snap.rows) != n {
		b.Fatalf("%d rows", len(snap.rows))
	}
	cases := []struct {
		name string
		q    HostQuery
	}{
		{"first-page-by-host", HostQuery{Sort: "host", Limit: 50}},
		{"top-queued", HostQuery{Sort: "queued", Desc: true, Limit: 50}},
		{"page-100-by-fetched", HostQuery{Sort: "fetched", Offset: 4950, Limit: 50}},
		{"search", HostQuery{Search: "12345", Sort: "queued", Desc: true, Limit: 50}},
		{"deep-page-cached-sort", HostQuery{Sort: "blocked_until", Offset: 500_000, Limit: 50}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			if err := q.check(); err != nil {
				b.Fatal(err)
			}
			snap.page(q) // a deep page sorts its column once per snapshot
			b.ResetTimer()
			for b.Loop() {
				if rows, _ := snap.page(q); len(rows) == 0 {
					b.Fatal("empty page")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
		})
	}
	b.Run("peer-full-sort", func(b *testing.B) {
		for b.Loop() {
			snap.sortedBy("queued", true)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
	})
	b.Run("snapshot-build", func(b *testing.B) {
		for b.Loop() {
			x.build()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/build")
	})
}
