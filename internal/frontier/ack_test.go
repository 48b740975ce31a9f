package frontier

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// checkConsistent compares the store with itself and with the in-memory
// counters: every queue entry has a queued URL record pointing at it (same
// queue, position and creation time when the entry carries one), every
// queued record has its entry, and each queue's queued and completed
// counters match the records.
func checkConsistent(t *testing.T, fx *fixture) {
	t.Helper()
	type qref struct{ cid, qid uint32 }
	records := map[seenKey]urlRecord{}
	err := scan(fx.f.db, []byte(prefixURL), func(k, v []byte) error {
		if len(k) != len(prefixURL)+4+hashLen {
			return fmt.Errorf("url key %x", k)
		}
		r, err := decodeURLRecord(v)
		if err != nil {
			return err
		}
		var h urlHash
		copy(h[:], k[len(prefixURL)+4:])
		records[seenKey{binary.BigEndian.Uint32(k[len(prefixURL):]), h}] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	queued, completed := map[qref]uint64{}, map[qref]uint64{}
	entries := map[seenKey]bool{}
	err = scan(fx.f.db, []byte(prefixEntry), func(k, v []byte) error {
		pos, err := decodeEntryKey(k)
		if err != nil {
			return err
		}
		e, err := decodeEntry(v)
		if err != nil {
			return err
		}
		cid := binary.BigEndian.Uint32(k[len(prefixEntry):])
		qid := binary.BigEndian.Uint32(k[len(prefixEntry)+4:])
		sk := seenKey{cid, e.hash}
		if entries[sk] {
			t.Errorf("%s: two queue entries", e.url)
		}
		entries[sk] = true
		r, ok := records[sk]
		switch {
		case !ok:
			t.Errorf("%s: queue entry without a URL record", e.url)
		case r.state != stateQueued || r.qid != qid || r.pos != pos:
			t.Errorf("%s: entry in queue %d at %+v, record %+v", e.url, qid, pos, r)
		case e.hasCreated && e.created != r.created:
			t.Errorf("%s: entry created %d, record %d", e.url, e.created, r.created)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for sk, r := range records {
		q := qref{sk.cid, r.qid}
		switch r.state {
		case stateQueued:
			queued[q]++
			if !entries[sk] {
				t.Errorf("queued record %+v without its entry", r)
			}
		case stateCompleted:
			completed[q]++
		}
	}
	fx.f.mu.Lock()
	defer fx.f.mu.Unlock()
	for _, c := range fx.f.mu.crawls {
		for _, q := range c.queues {
			ref := qref{c.cid, q.rec.qid}
			if q.rec.queued != queued[ref] || q.rec.completed != completed[ref] {
				t.Errorf("queue %s: counters queued %d completed %d, records %d and %d",
					q.key, q.rec.queued, q.rec.completed, queued[ref], completed[ref])
			}
		}
	}
}

// leaseOf returns the in-memory lease on u in its default queue, or nil.
func (fx *fixture) leaseOf(u string) *lease {
	fx.t.Helper()
	fx.f.mu.Lock()
	defer fx.f.mu.Unlock()
	q := fx.f.findLocked("", DefaultKey(u))
	if q == nil {
		return nil
	}
	return q.leased[hashURL(u)]
}

func known(u string, refetch time.Time) Item {
	return Item{Info: URLInfo{URL: u}, Known: true, RefetchFrom: refetch}
}

// TestAckFromLease checks that an acknowledgement of a leased URL takes the
// URL record from the lease (no store read), that every other case reads it
// as before, and that the counters, the queue entries and the creation time
// come out the same either way.
func TestAckFromLease(t *testing.T) {
	const a, b = "http://h.test/a", "http://h.test/b"
	long := GetParams{Lease: time.Hour}
	short := GetParams{Lease: 10 * time.Second}
	tests := []struct {
		name string
		// setup runs after a and b were put (at t0) and the clock moved a
		// minute on; act runs next, its URL record reads counted.
		setup func(fx *fixture)
		act   func(fx *fixture)
		// reads is the number of URL records the acks of act read.
		reads uint64
		// completed and size are the stats afterwards; served is what a
		// Get an hour later returns.
		completed, size uint64
		served          []string
	}{
		{
			name:  "leased, completed",
			setup: func(fx *fixture) { fx.get(long) },
			act:   func(fx *fixture) { fx.ack(a, time.Time{}); fx.ack(b, time.Time{}) },
			reads: 0, completed: 2, size: 0,
		},
		{
			name:  "leased, refetch, leased again, completed",
			setup: func(fx *fixture) { fx.get(long) },
			act: func(fx *fixture) {
				fx.ack(a, fx.clk.Now().Add(time.Second))
				fx.ack(b, time.Time{})
				fx.clk.Advance(time.Second)
				if got := fx.get(long); !slices.Equal(got, []string{a}) {
					fx.t.Fatalf("refetch get = %v", got)
				}
				fx.ack(a, time.Time{})
			},
			reads: 0, completed: 2, size: 0,
		},
		{
			name:  "not leased",
			act:   func(fx *fixture) { fx.put(known(a, time.Time{})) },
			reads: 1, completed: 1, size: 1, served: []string{b},
		},
		{
			name: "lease expired and reclaimed",
			setup: func(fx *fixture) {
				fx.get(short)
				fx.clk.Advance(11 * time.Second)
				fx.f.Stats("", "") // reclaims expired leases
			},
			act:   func(fx *fixture) { fx.ack(a, time.Time{}) },
			reads: 1, completed: 1, size: 1, served: []string{b},
		},
		{
			name: "lease expired, not yet reclaimed",
			setup: func(fx *fixture) {
				fx.get(short)
				fx.clk.Advance(11 * time.Second)
			},
			act:   func(fx *fixture) { fx.ack(a, time.Time{}) },
			reads: 0, completed: 1, size: 1, served: []string{b},
		},
		{
			name: "lease expired and re-leased",
			setup: func(fx *fixture) {
				fx.get(short)
				fx.clk.Advance(11 * time.Second)
				if got := fx.get(long); len(got) != 2 {
					fx.t.Fatalf("re-lease = %v", got)
				}
			},
			act:   func(fx *fixture) { fx.ack(a, time.Time{}); fx.ack(b, time.Time{}) },
			reads: 0, completed: 2, size: 0,
		},
		{
			name:  "released",
			setup: func(fx *fixture) { fx.get(long); fx.f.Release(URLInfo{URL: a}) },
			act:   func(fx *fixture) { fx.ack(a, time.Time{}) },
			reads: 1, completed: 1, size: 1, served: []string{b},
		},
		{
			name:  "acked twice in one group",
			setup: func(fx *fixture) { fx.get(long) },
			act:   func(fx *fixture) { fx.put(known(a, time.Time{}), known(a, time.Time{})) },
			reads: 0, completed: 1, size: 1, served: []string{b},
		},
		{
			name:  "acked, refetch and completed in one group",
			setup: func(fx *fixture) { fx.get(long) },
			act: func(fx *fixture) {
				fx.put(known(a, fx.clk.Now().Add(time.Minute)), known(a, time.Time{}), known(b, fx.clk.Now().Add(time.Minute)))
			},
			reads: 0, completed: 1, size: 1, served: []string{b},
		},
		{
			name:  "acked twice in two groups",
			setup: func(fx *fixture) { fx.get(long) },
			act:   func(fx *fixture) { fx.ack(a, time.Time{}); fx.ack(a, time.Time{}) },
			reads: 1, completed: 1, size: 1, served: []string{b},
		},
		{
			name:  "re-put by another path while leased, then acked",
			setup: func(fx *fixture) { fx.get(long) },
			act: func(fx *fixture) {
				fx.put(known(a, fx.clk.Now().Add(time.Hour))) // ends the lease
				fx.ack(a, time.Time{})                        // the holder's late ack
			},
			reads: 1, completed: 1, size: 1, served: []string{b},
		},
		{
			name:  "acked under another key",
			setup: func(fx *fixture) { fx.get(long) },
			act: func(fx *fixture) {
				fx.put(Item{Info: URLInfo{URL: a, Key: "other"}, Known: true})
				fx.ack(b, time.Time{})
			},
			reads: 1, completed: 2, size: 0,
		},
		{
			name:  "discovered again and acked in one group",
			setup: func(fx *fixture) { fx.get(long) },
			act:   func(fx *fixture) { fx.put(disc(a), known(a, time.Time{}), disc(b)) },
			reads: 0, completed: 1, size: 1, served: []string{b},
		},
		{
			name:  "queue deleted, then acked",
			setup: func(fx *fixture) { fx.get(long) },
			act: func(fx *fixture) {
				if _, err := fx.f.DeleteQueue(context.Background(), "", "h.test"); err != nil {
					fx.t.Fatal(err)
				}
				fx.ack(a, time.Time{})
			},
			reads: 1, completed: 1, size: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			t0 := fx.clk.Now()
			fx.put(disc(a), disc(b))
			fx.clk.Advance(time.Minute)
			if tc.setup != nil {
				tc.setup(fx)
			}
			before := fx.f.recordReads.Load()
			tc.act(fx)
			if got := fx.f.recordReads.Load() - before; got != tc.reads {
				t.Errorf("URL records read = %d, want %d", got, tc.reads)
			}
			if s := fx.f.Stats("", ""); s.Completed != tc.completed || s.Size != tc.size {
				t.Errorf("stats = %+v, want %d completed, size %d", s, tc.completed, tc.size)
			}
			checkConsistent(t, fx)
			st, err := fx.f.Lookup(context.Background(), "", a)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Created.Equal(t0) && tc.name != "queue deleted, then acked" {
				t.Errorf("created = %v, want %v (the first put)", st.Created, t0)
			}
			fx.reopen()
			if s := fx.f.Stats("", ""); s.Completed != tc.completed || s.Size != tc.size {
				t.Errorf("stats after reopen = %+v", s)
			}
			fx.clk.Advance(time.Hour)
			if got := fx.get(long); !slices.Equal(got, tc.served) {
				t.Errorf("served after an hour = %v, want %v", got, tc.served)
			}
		})
	}
}

// TestAckLeaseFromStaleRead leases a URL from a Get that runs while the
// committer applies a Known put of that (unleased) URL: the Get reads the
// store from before the put, so the lease's position is already deleted.
// Its ack must read the record instead of trusting the lease.
func TestAckLeaseFromStaleRead(t *testing.T) {
	const a = "http://h.test/a"
	fx := newFixture(t)
	fx.put(disc(a))
	var leased []Lease
	fx.f.testHookBeforeApply = func() {
		fx.f.testHookBeforeApply = nil
		ls, err := fx.f.Get(context.Background(), GetParams{Lease: time.Hour})
		if err != nil {
			t.Error(err)
		}
		leased = ls
	}
	// Due now: the Get inside the hook sees the old entry, not this one.
	fx.put(known(a, fx.clk.Now()))
	if len(leased) != 1 || leased[0].URL != a {
		t.Fatalf("Get while applying = %+v, want a lease on a", leased)
	}
	l := fx.leaseOf(a)
	if l == nil || l.hasRec {
		t.Fatalf("lease = %+v, want one without a record", l)
	}
	before := fx.f.recordReads.Load()
	fx.ack(a, time.Time{})
	if got := fx.f.recordReads.Load() - before; got != 1 {
		t.Errorf("URL records read = %d, want 1", got)
	}
	if s := fx.f.Stats("", ""); s.Completed != 1 || s.Size != 0 {
		t.Errorf("stats = %+v, want 1 completed, nothing queued", s)
	}
	checkConsistent(t, fx)
	fx.clk.Advance(time.Hour)
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("completed URL served again: %v", got)
	}
}

// TestResumePreviousBuild opens a data directory written by the build
// before the created trailer (testdata/datadir-2026-11-21; how it was made:
// testdata/datadir-2026-11-21.md):
// its entries decode, their leases read the URL record on ack, and entries
// written since carry the trailer.
func TestResumePreviousBuild(t *testing.T) {
	src := filepath.Join("testdata", "datadir-2026-11-21")
	fx := &fixture{t: t, dir: t.TempDir(), clk: newClock()}
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range files {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fx.dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t0 := fx.clk.Now()
	fx.clk.Advance(time.Hour)
	fx.open()
	t.Cleanup(fx.close)

	if s := fx.f.Stats("", ""); s.Completed != 1 || s.Size != 3 || s.Queues != 2 {
		t.Fatalf("stats = %+v, want 1 completed, 3 queued over 2 queues", s)
	}
	checkConsistent(t, fx)
	if st := fx.put(disc("http://a.test/1"), disc("http://a.test/2"), disc("http://b.test/1")); !slices.Equal(st, []Status{Skipped, Skipped, Skipped}) {
		t.Errorf("seen-test of the previous build's URLs = %v", st)
	}
	got := fx.get(GetParams{Lease: time.Hour})
	slices.Sort(got)
	if !slices.Equal(got, []string{"http://a.test/3", "http://b.test/1"}) {
		t.Fatalf("get = %v, want a.test/3 and b.test/1 (a.test/2 is due later)", got)
	}
	for _, u := range got {
		if l := fx.leaseOf(u); l == nil || l.hasRec {
			t.Errorf("lease of %s from an old entry = %+v, want no record", u, l)
		}
	}
	before := fx.f.recordReads.Load()
	fx.ack("http://a.test/3", time.Time{})
	fx.ack("http://b.test/1", time.Time{})
	if n := fx.f.recordReads.Load() - before; n != 2 {
		t.Errorf("records read for old leases = %d, want 2", n)
	}

	// a.test/2 was rescheduled by the previous build; retried now, its new
	// entry carries the trailer, and its next ack needs no read.
	fx.clk.Advance(time.Minute)
	ls, err := fx.f.Get(context.Background(), GetParams{Lease: time.Hour})
	if err != nil || len(ls) != 1 || ls[0].URL != "http://a.test/2" || ls[0].Depth != 1 || !slices.Equal(ls[0].Metadata["hop"], []string{"L"}) {
		t.Fatalf("get = %+v, %v; want a.test/2 with depth 1 and its metadata", ls, err)
	}
	fx.ack("http://a.test/2", fx.clk.Now())
	if got := fx.get(GetParams{Lease: time.Hour}); !slices.Equal(got, []string{"http://a.test/2"}) {
		t.Fatalf("retry get = %v", got)
	}
	if l := fx.leaseOf("http://a.test/2"); l == nil || !l.hasRec {
		t.Errorf("lease of a new entry = %+v, want its record", l)
	}
	before = fx.f.recordReads.Load()
	fx.ack("http://a.test/2", time.Time{})
	if n := fx.f.recordReads.Load() - before; n != 0 {
		t.Errorf("records read for a new lease = %d, want 0", n)
	}
	st, err := fx.f.Lookup(context.Background(), "", "http://a.test/2")
	if err != nil || !st.Completed || !st.Created.Equal(t0) {
		t.Errorf("Lookup = %+v, %v; want completed, created %v", st, err, t0)
	}
	checkConsistent(t, fx)
	fx.reopen()
	if s := fx.f.Stats("", ""); s.Completed != 4 || s.Size != 0 {
		t.Errorf("stats after reopen = %+v, want 4 completed", s)
	}
}

// TestAckConcurrentWithRePuts acknowledges leased URLs while other
// goroutines re-put (Known, due now) URLs nobody leased and Gets run
// throughout, so leases are made while the committer applies those puts.
// Whatever the interleaving, the store and the counters must agree and
// everything must end completed exactly once.
func TestAckConcurrentWithRePuts(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	const hosts, perHost = 8, 40
	var all []Item
	for h := range hosts {
		for i := range perHost {
			all = append(all, disc(fmt.Sprintf("http://h%d.test/%d", h, i)))
		}
	}
	fx.put(all...)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// Re-putters: Known items, due now, for URLs picked regardless of
	// leases (acks of leased ones end their lease, others move the entry).
	for w := range 2 {
		wg.Go(func() {
			for i := 0; i < 300; i++ {
				select {
				case <-stop:
					return
				default:
				}
				u := all[(i*7+w*13)%len(all)].Info.URL
				if _, err := fx.f.Put(ctx, []Item{known(u, fx.clk.Now())}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	var workers sync.WaitGroup
	for range 3 {
		workers.Go(func() {
			for time.Now().Before(deadline) {
				ls, err := fx.f.Get(ctx, GetParams{MaxURLsPerQueue: 2, Lease: time.Hour})
				if err != nil {
					t.Error(err)
					return
				}
				for _, l := range ls {
					if err := fx.f.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
						t.Error(err)
						return
					}
				}
				if len(ls) == 0 {
					if fx.f.Stats("", "").Size == 0 {
						return
					}
					fx.f.WaitReady(ctx, 5*time.Millisecond)
				}
			}
		})
	}
	workers.Wait()
	close(stop)
	wg.Wait()
	// The re-putters may have re-queued completed URLs after the workers
	// stopped: finish them.
	for range 100 {
		ls, err := fx.f.Get(ctx, GetParams{Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) == 0 {
			break
		}
		for _, l := range ls {
			fx.ack(l.URL, time.Time{})
		}
	}
	if s := fx.f.Stats("", ""); s.Completed != hosts*perHost || s.Size != 0 || s.InProcess != 0 {
		t.Errorf("stats = %+v, want %d completed, nothing left", s, hosts*perHost)
	}
	checkConsistent(t, fx)
	checkAheadExact(t, fx.f)
	fx.reopen()
	checkConsistent(t, fx)
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("served after reopen: %v", got)
	}
}

// TestSweepClearsOnlyTouchedLeases: the post-commit sweep after a Known put
// of an unleased URL leaves the records of the other leases, in its queue
// and others, alone.
func TestSweepClearsOnlyTouchedLeases(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"), disc("http://h.test/b"), disc("http://g.test/c"))
	if got := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour}); len(got) != 2 {
		t.Fatalf("get = %v", got)
	}
	fx.put(known("http://h.test/b", fx.clk.Now()))
	for _, u := range []string{"http://h.test/a", "http://g.test/c"} {
		if l := fx.leaseOf(u); l == nil || !l.hasRec {
			t.Errorf("lease of %s = %+v, want its record", u, l)
		}
	}
	before := fx.f.recordReads.Load()
	fx.ack("http://h.test/a", time.Time{})
	fx.ack("http://g.test/c", time.Time{})
	if n := fx.f.recordReads.Load() - before; n != 0 {
		t.Errorf("records read = %d, want 0", n)
	}
	checkConsistent(t, fx)
}

// TestAckWritesOnlyChangedQueues checks that a refetch acknowledged in the
// URL's own queue, which leaves the queue's counters as they were, does not
// rewrite the queue record, that a completion does, and that the store
// stays consistent across a reopen.
func TestAckWritesOnlyChangedQueues(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://a.test/1"), disc("http://a.test/2"), disc("http://b.test/1"))
	got := fx.get(GetParams{Key: "a.test", MaxURLsPerQueue: 1})
	if len(got) != 1 {
		t.Fatalf("Get: %v", got)
	}
	w0 := fx.f.queueWrites.Load()
	fx.ack(got[0], fx.clk.Now().Add(time.Hour))
	if w := fx.f.queueWrites.Load(); w != w0 {
		t.Errorf("refetch in its own queue wrote %d queue records, want 0", w-w0)
	}
	got = fx.get(GetParams{Key: "a.test", MaxURLsPerQueue: 1})
	if len(got) != 1 {
		t.Fatalf("Get: %v", got)
	}
	fx.ack(got[0], time.Time{})
	if w := fx.f.queueWrites.Load(); w != w0+1 {
		t.Errorf("completion wrote %d queue records, want 1", w-w0)
	}
	checkConsistent(t, fx)
	fx.reopen()
	checkConsistent(t, fx)
	if st := fx.f.Stats("", "a.test"); st.Size != 1 || st.Counts()["completed"] != 1 {
		t.Errorf("after reopen: %+v", st)
	}
}

// TestRefetchCyclesSurviveCompaction checks the single deletes of queue
// entries: URLs refetched many times, with the memtables flushed and the
// store compacted between rounds (where a single delete meets its set),
// leave exactly one entry each, and each is served once after a reopen.
func TestRefetchCyclesSurviveCompaction(t *testing.T) {
	fx := newFixture(t)
	var urls []string
	for i := range 40 {
		u := fmt.Sprintf("http://h%d.test/%d", i%5, i)
		urls = append(urls, u)
		fx.put(disc(u))
	}
	for round := range 12 {
		got := fx.get(GetParams{AnyCrawl: true})
		if len(got) != len(urls) {
			t.Fatalf("round %d: Get served %d URLs, want %d", round, len(got), len(urls))
		}
		for _, u := range got {
			fx.ack(u, fx.clk.Now())
		}
		fx.clk.Advance(time.Second)
		if err := fx.db.Pebble().Flush(); err != nil {
			t.Fatal(err)
		}
		if round%3 == 2 {
			if err := fx.db.Pebble().Compact(context.Background(), []byte(prefixEntry), []byte("F/r"), true); err != nil {
				t.Fatal(err)
			}
		}
		checkConsistent(t, fx)
	}
	fx.reopen()
	checkConsistent(t, fx)
	got := fx.get(GetParams{AnyCrawl: true})
	slices.Sort(got)
	want := slices.Clone(urls)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after reopen Get served %d URLs, want the %d, once each", len(got), len(want))
	}
}

// TestCommitYieldsBetweenSlices checks that the committer lets Get take
// the lock between slices of a long group (yieldLocked) in each of its
// locked sections, that a Get there is served, and that the group comes
// out as if it had held the lock throughout.
func TestCommitYieldsBetweenSlices(t *testing.T) {
	const n = 4 * commitSlice
	fx := newFixture(t)
	var items []Item
	for i := range n {
		items = append(items, disc(fmt.Sprintf("http://h%d.test/%d", i%8, i)))
	}
	fx.put(items...)
	if got := fx.get(GetParams{Lease: time.Hour}); len(got) != n {
		t.Fatalf("leased %d URLs, want %d", len(got), n)
	}
	fx.put(disc("http://other.test/"))
	yields := 0
	var during []string
	fx.f.testHookYield = func() {
		yields++
		ls, err := fx.f.Get(context.Background(), GetParams{Lease: 2 * time.Hour})
		if err != nil {
			t.Error(err)
		}
		for _, l := range ls {
			during = append(during, l.URL)
		}
	}
	var acks []Item
	for _, it := range items {
		acks = append(acks, known(it.Info.URL, fx.clk.Now().Add(time.Hour)))
	}
	fx.put(acks...)
	fx.f.testHookYield = nil
	// The lease lookups, the batch, the read-ahead patches and the lease
	// releases each yield every commitSlice items.
	if min := 3*n/commitSlice - 1; yields < min {
		t.Errorf("committer yielded %d times in a group of %d acks, want at least %d", yields, n, min)
	}
	if !slices.Equal(during, []string{"http://other.test/"}) {
		t.Errorf("Gets between slices served %v, want other.test's URL once", during)
	}
	checkConsistent(t, fx)
	if s := fx.f.Stats("", ""); s.Size != n+1 || s.InProcess != 1 {
		t.Errorf("stats = %+v, want %d queued, 1 in process", s, n+1)
	}
	fx.clk.Advance(time.Hour)
	if got := fx.get(GetParams{}); len(got) != n {
		t.Errorf("after the refetch time Get served %d URLs, want %d", len(got), n)
	}
}

// TestCommitScratchReused: the committer's per-group maps and slices are
// emptied and reused, except after a group too large to keep room for.
func TestCommitScratchReused(t *testing.T) {
	var s commitScratch
	s.reset()
	s.written[seenKey{cid: 1}] = urlRecord{}
	s.ahead = append(s.ahead, aheadOp{val: []byte("x")})
	w := s.written
	s.reset()
	if len(s.written) != 0 || len(s.ahead) != 0 || cap(s.ahead) == 0 {
		t.Fatalf("after reset: %d written, %d/%d ahead", len(s.written), len(s.ahead), cap(s.ahead))
	}
	if s.ahead[:1][0].val != nil {
		t.Error("reset slice still points at the last group's values")
	}
	s.written[seenKey{cid: 2}] = urlRecord{}
	if len(w) != 1 {
		t.Error("written map not reused")
	}
	for i := range scratchKeep + 1 {
		s.written[seenKey{cid: uint32(i)}] = urlRecord{}
	}
	s.ahead = make([]aheadOp, scratchKeep+1)
	s.reset()
	if len(w) != scratchKeep+1 || s.ahead != nil {
		t.Errorf("large scratch kept: map %d (want a new one), ahead cap %d", len(s.written), cap(s.ahead))
	}
}
