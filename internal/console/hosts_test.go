package console

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// synthHosts is a synthetic frontier of n hosts (benchmarks, tests).
func synthHosts(n int) func(func(HostRow) bool) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]HostRow, n)
	base := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for i := range rows { // names are unique while n is not a multiple of the prime 7919
		rows[i] = HostRow{Host: fmt.Sprintf("site-%07d.test", (i*7919)%n), Queued: uint64(r.IntN(1000)),
			InFlight: uint64(r.IntN(2)), Fetched: uint64(r.IntN(5000))}
		if r.IntN(10) == 0 {
			rows[i].BlockedUntil = base.Add(time.Duration(r.IntN(3600)) * time.Second)
		}
		if r.IntN(100) == 0 {
			rows[i].Retired = "dns"
		}
	}
	return func(fn func(HostRow) bool) {
		for _, r := range rows {
			if !fn(r) {
				return
			}
		}
	}
}

// TestHostPageMatchesFullSort checks the bounded-heap pages and the
// cached-sort pages against a plain sort of every row.
func TestHostPageMatchesFullSort(t *testing.T) {
	t.Parallel()
	src := synthHosts(20_000)
	x := newHostIndex(src, time.Hour, time.Now)
	snap := x.snapshot()
	for _, col := range sortKeys {
		for _, desc := range []bool{false, true} {
			for _, q := range []HostQuery{{Offset: 0, Limit: 50}, {Offset: 4990, Limit: 20}, {Offset: 9000, Limit: 500}, {Search: "00", Offset: 100, Limit: 30}} {
				q.Sort, q.Desc = col, desc
				name := fmt.Sprintf("%s desc=%v %+v", col, desc, q)
				if err := q.check(); err != nil {
					t.Fatal(err)
				}
				got, total := snap.page(q)
				var all []int32
				for i := range snap.rows {
					if strings.Contains(snap.lower[i], q.Search) {
						all = append(all, int32(i))
					}
				}
				slices.SortFunc(all, snap.less(col, desc))
				if total != len(all) {
					t.Fatalf("%s: total %d, want %d", name, total, len(all))
				}
				end := min(q.Offset+q.Limit, len(all))
				if len(got) != end-q.Offset {
					t.Fatalf("%s: %d rows, want %d", name, len(got), end-q.Offset)
				}
				for i, r := range got {
					if want := snap.rows[all[q.Offset+i]]; r != want {
						t.Fatalf("%s: row %d = %+v, want %+v", name, i, r, want)
					}
				}
			}
		}
	}
}

func TestHostIndexRefresh(t *testing.T) {
	clk := newClock()
	n := 1
	src := func(fn func(HostRow) bool) {
		for i := range n {
			fn(HostRow{Host: fmt.Sprintf("h%d.test", i)})
		}
	}
	x := newHostIndex(src, time.Second, clk.Now)
	if got := len(x.snapshot().rows); got != 1 {
		t.Fatalf("first snapshot: %d rows", got)
	}
	n = 2
	if got := len(x.snapshot().rows); got != 1 {
		t.Errorf("fresh snapshot rebuilt: %d rows", got)
	}
	clk.Advance(2 * time.Second)
	x.snapshot() // stale: starts a rebuild in the background
	deadline := time.Now().Add(5 * time.Second)
	for len(x.snapshot().rows) != 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := len(x.snapshot().rows); got != 2 {
		t.Errorf("stale snapshot not rebuilt: %d rows", got)
	}
	x.dropIdle()
	if x.mu.snap == nil {
		t.Error("a snapshot in use was dropped")
	}
	clk.Advance(2 * idleDrop)
	x.dropIdle()
	if x.mu.snap != nil {
		t.Error("an idle snapshot was kept")
	}
}
