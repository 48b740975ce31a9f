package frontier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// clock is an injected, manually advanced clock.
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) }

type fixture struct {
	t    *testing.T
	dir  string
	db   *kv.DB
	f    *Frontier
	clk  *clock
	opts Options // for Open; Now is the fixture's clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, Options{})
}

// newFixtureWith opens a frontier with opts (its clock the fixture's).
func newFixtureWith(t *testing.T, opts Options) *fixture {
	t.Helper()
	fx := &fixture{t: t, dir: t.TempDir(), clk: newClock(), opts: opts}
	fx.open()
	t.Cleanup(fx.close)
	return fx
}

func (fx *fixture) open() {
	fx.t.Helper()
	db, err := kv.Open(fx.dir, kv.Options{CacheBytes: 8 << 20})
	if err != nil {
		fx.t.Fatal(err)
	}
	opts := fx.opts
	opts.Now = fx.clk.Now
	f, err := Open(db, opts)
	if err != nil {
		db.Close()
		fx.t.Fatal(err)
	}
	fx.db, fx.f = db, f
}

func (fx *fixture) close() {
	if fx.f == nil {
		return
	}
	if err := fx.f.Close(); err != nil {
		fx.t.Error(err)
	}
	if err := fx.db.Close(); err != nil {
		fx.t.Error(err)
	}
	fx.f, fx.db = nil, nil
}

func (fx *fixture) reopen() {
	fx.t.Helper()
	fx.close()
	fx.open()
}

func (fx *fixture) put(items ...Item) []Status {
	fx.t.Helper()
	st, err := fx.f.Put(context.Background(), items)
	if err != nil {
		fx.t.Fatalf("Put: %v", err)
	}
	return st
}

func (fx *fixture) get(p GetParams) []string {
	fx.t.Helper()
	ls, err := fx.f.Get(context.Background(), p)
	if err != nil {
		fx.t.Fatalf("Get: %v", err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.URL)
	}
	return out
}

func (fx *fixture) ack(u string, refetch time.Time) {
	fx.t.Helper()
	if err := fx.f.Ack(context.Background(), URLInfo{URL: u}, refetch); err != nil {
		fx.t.Fatalf("Ack: %v", err)
	}
}

func disc(u string) Item { return Item{Info: URLInfo{URL: u}} }

func TestPutSeenTest(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name  string
		items []Item
		want  []Status
	}{
		{"new", []Item{disc("http://a.test/1"), disc("http://a.test/2")}, []Status{OK, OK}},
		{"known", []Item{disc("http://a.test/1"), disc("http://b.test/1")}, []Status{Skipped, OK}},
		{"duplicate in one call", []Item{disc("http://c.test/x"), disc("http://c.test/x")}, []Status{OK, Skipped}},
		{"no host", []Item{disc("mailto:x@y"), disc("")}, []Status{Skipped, Skipped}},
		{"key too long", []Item{{Info: URLInfo{URL: "http://d.test/", Key: string(make([]byte, 256))}}}, []Status{Skipped}},
		{"other crawl", []Item{{Info: URLInfo{URL: "http://a.test/1", CrawlID: "other"}}}, []Status{OK}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fx.put(tc.items...); !slices.Equal(got, tc.want) {
				t.Errorf("statuses = %v, want %v", got, tc.want)
			}
		})
	}
	if s := fx.f.Stats("", ""); s.Size != 4 || s.Queues != 3 {
		t.Errorf("stats = %+v, want size 4 over 3 queues", s)
	}
}

func TestPriorityOrder(t *testing.T) {
	fx := newFixture(t)
	fx.put(
		Item{Info: URLInfo{URL: "http://h.test/d2", Depth: 2}},
		Item{Info: URLInfo{URL: "http://h.test/d1a", Depth: 1}},
		Item{Info: URLInfo{URL: "http://h.test/sitemap", Depth: 3, Priority: 1}},
		Item{Info: URLInfo{URL: "http://h.test/d1b", Depth: 1}},
		Item{Info: URLInfo{URL: "http://h.test/", Priority: 2}},
	)
	got := fx.get(GetParams{})
	want := []string{"http://h.test/", "http://h.test/sitemap", "http://h.test/d1a", "http://h.test/d1b", "http://h.test/d2"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestLeaseExpiryAndAck(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"), disc("http://h.test/b"))
	p := GetParams{MaxURLsPerQueue: 1, Lease: 10 * time.Second}
	if got := fx.get(p); !slices.Equal(got, []string{"http://h.test/a"}) {
		t.Fatalf("first get = %v", got)
	}
	if got := fx.get(p); got != nil {
		t.Fatalf("queue with a URL in flight served again: %v", got)
	}
	if s := fx.f.Stats("", ""); s.InProcess != 1 || s.Size != 2 {
		t.Errorf("stats = %+v", s)
	}
	fx.clk.Advance(9 * time.Second)
	if got := fx.get(p); got != nil {
		t.Fatalf("served before the lease expired: %v", got)
	}
	fx.clk.Advance(2 * time.Second)
	if got := fx.get(p); !slices.Equal(got, []string{"http://h.test/a"}) {
		t.Fatalf("after expiry get = %v, want a again", got)
	}
	fx.ack("http://h.test/a", time.Time{})
	if got := fx.get(p); !slices.Equal(got, []string{"http://h.test/b"}) {
		t.Fatalf("after ack get = %v, want b", got)
	}
	fx.ack("http://h.test/b", time.Time{})
	fx.clk.Advance(time.Hour)
	if got := fx.get(p); got != nil {
		t.Fatalf("completed URLs served again: %v", got)
	}
	if s := fx.f.Stats("", ""); s.Completed != 2 || s.Size != 0 || s.InProcess != 0 {
		t.Errorf("stats = %+v, want 2 completed", s)
	}
	st, err := fx.f.Lookup(context.Background(), "", "http://h.test/a")
	if err != nil || !st.Completed || st.Key != "h.test" {
		t.Errorf("Lookup = %+v, %v", st, err)
	}
	if _, err := fx.f.Lookup(context.Background(), "", "http://h.test/zzz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup unknown = %v, want ErrNotFound", err)
	}
}

func TestRefetchSchedule(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"))
	fx.get(GetParams{})
	fx.ack("http://h.test/a", fx.clk.Now().Add(time.Minute))
	if got := fx.get(GetParams{}); got != nil {
		t.Fatalf("served before its refetch date: %v", got)
	}
	next, ok := fx.f.NextReady()
	if !ok || !next.Equal(fx.clk.Now().Add(time.Minute)) {
		t.Errorf("NextReady = %v %v", next, ok)
	}
	fx.clk.Advance(time.Minute)
	if got := fx.get(GetParams{}); !slices.Equal(got, []string{"http://h.test/a"}) {
		t.Fatalf("get = %v", got)
	}
}

func TestCrawlNamespaces(t *testing.T) {
	fx := newFixture(t)
	fx.put(
		Item{Info: URLInfo{URL: "http://h.test/", CrawlID: "one"}},
		Item{Info: URLInfo{URL: "http://h.test/", CrawlID: "two"}},
		Item{Info: URLInfo{URL: "http://h.test/", CrawlID: " "}},
	)
	if got := fx.f.ListCrawls(); !slices.Equal(got, []string{DefaultCrawl, "one", "two"}) {
		t.Errorf("ListCrawls = %v", got)
	}
	ls, err := fx.f.Get(context.Background(), GetParams{CrawlID: "one"})
	if err != nil || len(ls) != 1 || ls[0].CrawlID != "one" {
		t.Fatalf("get one = %+v %v", ls, err)
	}
	if got := fx.get(GetParams{AnyCrawl: true}); len(got) != 2 {
		t.Errorf("any crawl = %v, want the 2 others", got)
	}
	n, err := fx.f.DeleteCrawl(context.Background(), "two")
	if err != nil || n != 1 {
		t.Errorf("DeleteCrawl = %d %v", n, err)
	}
	fx.reopen()
	if got := fx.f.ListCrawls(); !slices.Equal(got, []string{DefaultCrawl, "one"}) {
		t.Errorf("ListCrawls after delete = %v", got)
	}
	if st := fx.put(Item{Info: URLInfo{URL: "http://h.test/", CrawlID: "two"}}); st[0] != OK {
		t.Errorf("URL of a deleted crawl still seen: %v", st)
	}
}

func TestRoundRobinAndMaxQueues(t *testing.T) {
	fx := newFixture(t)
	for _, h := range []string{"a", "b", "c"} {
		for i := range 2 {
			fx.put(disc(fmt.Sprintf("http://%s.test/%d", h, i)))
		}
	}
	got := fx.get(GetParams{MaxQueues: 2, MaxURLsPerQueue: 1})
	if len(got) != 2 {
		t.Fatalf("max queues: got %v", got)
	}
	got2 := fx.get(GetParams{MaxURLsPerQueue: 1})
	if len(got2) != 1 || slices.Contains(got, got2[0]) {
		t.Fatalf("third queue not served next: %v then %v", got, got2)
	}
}

func TestBlockDelayLimit(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	for i := range 4 {
		fx.put(disc(fmt.Sprintf("http://h.test/%d", i)))
	}
	if err := fx.f.BlockQueueUntil(ctx, "", "h.test", fx.clk.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := fx.get(GetParams{MaxURLsPerQueue: 1}); got != nil {
		t.Fatalf("blocked queue served: %v", got)
	}
	if keys, total := fx.f.ListQueues("", 0, 0, false); total != 0 || keys != nil {
		t.Errorf("blocked queue listed as active: %v", keys)
	}
	if keys, _ := fx.f.ListQueues("", 0, 0, true); !slices.Equal(keys, []string{"h.test"}) {
		t.Errorf("ListQueues inactive = %v", keys)
	}
	fx.clk.Advance(5 * time.Second)
	if err := fx.f.SetDelay(ctx, "", "h.test", 3*time.Second); err != nil {
		t.Fatal(err)
	}
	got := fx.get(GetParams{MaxURLsPerQueue: 1})
	if len(got) != 1 {
		t.Fatalf("get = %v", got)
	}
	fx.ack(got[0], time.Time{})
	if got := fx.get(GetParams{MaxURLsPerQueue: 1}); got != nil {
		t.Fatalf("served within its delay: %v", got)
	}
	fx.clk.Advance(3 * time.Second)
	got = fx.get(GetParams{MaxURLsPerQueue: 1})
	if len(got) != 1 {
		t.Fatalf("not served after its delay: %v", got)
	}
	fx.ack(got[0], time.Time{})
	if err := fx.f.SetCrawlLimit(ctx, "", "h.test", 2); err != nil {
		t.Fatal(err)
	}
	fx.clk.Advance(time.Minute)
	if got := fx.get(GetParams{}); got != nil {
		t.Fatalf("queue over its crawl limit served: %v", got)
	}
	if err := fx.f.SetCrawlLimit(ctx, "", "nope.test", 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("limit on unknown queue = %v", err)
	}
	if err := fx.f.SetCrawlLimit(ctx, "", "h.test", 0); err != nil {
		t.Fatal(err)
	}
	if got := fx.get(GetParams{}); len(got) != 2 {
		t.Fatalf("limit removed, get = %v", got)
	}
	n, err := fx.f.DeleteQueue(ctx, "", "h.test")
	if err != nil || n != 2 {
		t.Errorf("DeleteQueue = %d %v", n, err)
	}
	if s := fx.f.Stats("", ""); s.Queues != 0 || s.InProcess != 0 {
		t.Errorf("stats after delete = %+v", s)
	}
}

func TestInactive(t *testing.T) {
	fx := newFixture(t)
	fx.f.SetActive(false)
	fx.put(disc("http://h.test/"))
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("inactive frontier served %v", got)
	}
	fx.f.SetActive(true)
	if got := fx.get(GetParams{}); len(got) != 1 {
		t.Errorf("active again: %v", got)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	fx := newFixture(t)
	md := map[string][]string{"srcloc": {"http://x.test/a"}, "hop": {"L", "R"}}
	fx.put(Item{Info: URLInfo{URL: "http://h.test/", Metadata: md, Depth: 3}})
	ls, err := fx.f.Get(context.Background(), GetParams{})
	if err != nil || len(ls) != 1 {
		t.Fatal(ls, err)
	}
	if ls[0].Depth != 3 || !slices.Equal(ls[0].Metadata["hop"], []string{"L", "R"}) || ls[0].Metadata["srcloc"][0] != "http://x.test/a" {
		t.Errorf("lease = %+v", ls[0])
	}
}

// TestConcurrent runs putters, getters and ackers at once (for -race) and
// checks that every URL is completed exactly once.
func TestConcurrent(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	const hosts, perHost = 20, 30
	var wg sync.WaitGroup
	for h := range hosts {
		wg.Go(func() {
			for i := range perHost {
				if _, err := fx.f.Put(ctx, []Item{disc(fmt.Sprintf("http://h%d.test/%d", h, i)), disc(fmt.Sprintf("http://h%d.test/%d", h, i/2))}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var mu sync.Mutex
	seen := map[string]int{}
	deadline := time.Now().Add(20 * time.Second)
	for w := range 4 {
		wg.Go(func() {
			_ = w
			for time.Now().Before(deadline) {
				ls, err := fx.f.Get(ctx, GetParams{MaxQueues: 3, MaxURLsPerQueue: 1, Lease: time.Hour})
				if err != nil {
					t.Error(err)
					return
				}
				for _, l := range ls {
					mu.Lock()
					seen[l.URL]++
					mu.Unlock()
					if err := fx.f.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
						t.Error(err)
						return
					}
				}
				mu.Lock()
				done := len(seen) == hosts*perHost
				mu.Unlock()
				if done {
					return
				}
				if len(ls) == 0 {
					fx.f.WaitReady(ctx, 5*time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != hosts*perHost {
		t.Fatalf("served %d distinct URLs, want %d", len(seen), hosts*perHost)
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s served %d times", u, n)
		}
	}
	if s := fx.f.Stats("", ""); s.Completed != hosts*perHost || s.Size != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestClosed(t *testing.T) {
	fx := newFixture(t)
	f := fx.f
	fx.close()
	if _, err := f.Put(context.Background(), []Item{disc("http://h.test/")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close = %v", err)
	}
	if _, err := f.Get(context.Background(), GetParams{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v", err)
	}
}

func TestRelease(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"))
	ls, err := fx.f.Get(context.Background(), GetParams{MaxURLsPerQueue: 1, Lease: time.Hour})
	if err != nil || len(ls) != 1 {
		t.Fatal(ls, err)
	}
	if got := fx.get(GetParams{MaxURLsPerQueue: 1}); got != nil {
		t.Fatalf("leased URL served: %v", got)
	}
	fx.f.Release(ls[0].URLInfo)
	if got := fx.get(GetParams{MaxURLsPerQueue: 1}); len(got) != 1 {
		t.Fatalf("released URL not served again: %v", got)
	}
}

// TestDiscoveredAndAckedInOneGroup puts a URL as discovered and acknowledges
// it in the same call (one commit group): it must end completed, with no
// queue entry left behind to be served.
func TestDiscoveredAndAckedInOneGroup(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"), Item{Info: URLInfo{URL: "http://h.test/a"}, Known: true})
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("completed URL served: %v", got)
	}
	if s := fx.f.Stats("", ""); s.Completed != 1 || s.Size != 0 {
		t.Errorf("stats = %+v, want 1 completed, nothing queued", s)
	}
}

// TestSeenTestOnLastLevel checks the on-disk seen-test (seenChecker) once the
// URL records sit in sstables of every level, the last one included (where
// the iterator consults Bloom filters that DB.Get would skip), with an empty
// seen cache so that every answer comes from disk.
func TestSeenTestOnLastLevel(t *testing.T) {
	// The store's own seen-test: without the filter, which would answer
	// for the new URLs before Pebble is asked.
	fx := newFixtureWith(t, Options{SeenFilterBytes: -1})
	const n = 2000
	var known, fresh []Item
	for i := range n {
		known = append(known, disc(fmt.Sprintf("http://h%d.test/p/%d", i%50, i)))
		fresh = append(fresh, disc(fmt.Sprintf("http://h%d.test/q/%d", i%50, i)))
	}
	for lo := 0; lo < n; lo += 500 {
		for _, s := range fx.put(known[lo : lo+500]...) {
			if s != OK {
				t.Fatalf("first insert: %v", s)
			}
		}
	}
	fx.reopen()
	// Everything into the last level, then more tables above it.
	if err := fx.db.Pebble().Compact(context.Background(), []byte("F/"), []byte("F0"), true); err != nil {
		t.Fatal(err)
	}
	if err := fx.db.Pebble().Flush(); err != nil {
		t.Fatal(err)
	}
	if m := fx.db.Pebble().Metrics(); m.Levels[6].TablesCount == 0 {
		t.Fatalf("no table in L6 after a manual compaction: %+v", m.Levels)
	}
	fx.reopen() // empty seen cache
	tests := []struct {
		name  string
		items []Item
		want  Status
	}{
		{"known on disk", known, Skipped},
		{"new", fresh, OK},
		{"new ones now known", fresh, Skipped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := fx.put(tc.items...)
			for i, s := range st {
				if s != tc.want {
					t.Fatalf("item %d (%s) = %v, want %v", i, tc.items[i].Info.URL, s, tc.want)
				}
			}
		})
	}
	if s := fx.f.Stats("", ""); s.Size != 2*n {
		t.Errorf("size = %d, want %d", s.Size, 2*n)
	}
	// The new URLs were ruled out by Bloom filters (the last level's
	// included), not by reading data blocks.
	if m := fx.db.Pebble().Metrics(); m.Filter.Hits < n/2 {
		t.Errorf("filter hits = %d, want most of the %d new URLs", m.Filter.Hits, n)
	}
}

func TestLookup(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://a.test/x"))
	fx.reopen()
	st, err := fx.f.Lookup(context.Background(), "", "http://a.test/x")
	if err != nil {
		t.Fatal(err)
	}
	if st.URL != "http://a.test/x" || st.Key != "a.test" || st.Completed {
		t.Errorf("status = %+v", st)
	}
	if _, err := fx.f.Lookup(context.Background(), "", "http://a.test/y"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown URL: err = %v, want ErrNotFound", err)
	}
}

// TestKnown: Known answers what Put's seen-test would, before and after a
// reopen (store, not only the in-memory cache), for any crawl.
func TestKnown(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://a.test/x"))
	for _, reopen := range []bool{false, true} {
		if reopen {
			fx.reopen()
		}
		for _, tc := range []struct {
			crawl, url string
			want       bool
		}{
			{"", "http://a.test/x", true},
			{"", "http://a.test/y", false},
			{"other", "http://a.test/x", false},
		} {
			if got, err := fx.f.Known(tc.crawl, tc.url); err != nil || got != tc.want {
				t.Errorf("reopen %v: Known(%q, %q) = %v, %v; want %v", reopen, tc.crawl, tc.url, got, err, tc.want)
			}
		}
	}
}

// TestReadyHeapKeys: the ready heap keeps each queue's keys beside it;
// they must match the queue's and its position after every kind of
// change (served, parked, acknowledged, blocked, delayed).
func TestReadyHeapKeys(t *testing.T) {
	fx := newFixtureWith(t, Options{DefaultDelay: time.Second})
	check := func(when string) {
		t.Helper()
		fx.f.mu.Lock()
		defer fx.f.mu.Unlock()
		for _, c := range fx.f.mu.crawls {
			for i, e := range c.ready {
				if e.q.heapIdx != i || e.readyAt != e.q.readyAt || e.qid != e.q.rec.qid {
					t.Fatalf("%s: heap[%d] = {%d %d} for queue %s at %d, readyAt %d, qid %d", when, i, e.readyAt, e.qid, e.q.key, e.q.heapIdx, e.q.readyAt, e.q.rec.qid)
				}
				if i > 0 && c.ready.Less(i, (i-1)/2) {
					t.Fatalf("%s: heap order broken at %d", when, i)
				}
			}
		}
	}
	for i := range 60 {
		fx.put(disc(fmt.Sprintf("http://h%d.test/%d", i%12, i)))
	}
	check("after puts")
	ctx := context.Background()
	for round := range 8 {
		ls, err := fx.f.Get(ctx, GetParams{MaxQueues: 5, MaxURLsPerQueue: 1, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprint("round ", round, " get"))
		for j, l := range ls {
			switch j % 3 {
			case 0:
				fx.ack(l.URL, fx.clk.Now().Add(time.Duration(j)*time.Second))
			case 1:
				fx.f.Release(l.URLInfo)
			}
		}
		if err := fx.f.BlockQueueUntil(ctx, "", fmt.Sprintf("h%d.test", round), fx.clk.Now().Add(3*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := fx.f.SetDelay(ctx, "", fmt.Sprintf("h%d.test", round+3), 2*time.Second); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprint("round ", round, " acks"))
		fx.clk.Advance(700 * time.Millisecond)
	}
}

// TestPutSeenTestSorted: Put looks the URLs its seen cache does not answer
// up in key order; each item still gets its own status, across crawls and
// with duplicates inside the batch.
func TestPutSeenTestSorted(t *testing.T) {
	fx := newFixtureWith(t, Options{SeenCacheEntries: 1})
	var first []Item
	for i := range 50 {
		first = append(first, Item{Info: URLInfo{URL: fmt.Sprintf("http://h%d.test/%d", i%5, i), CrawlID: []string{"a", "b"}[i%2]}})
	}
	fx.put(first...)
	fx.f.seen.reset() // answer from the store, not the cache
	var items []Item
	var want []Status
	for i := range 100 {
		it := Item{Info: URLInfo{URL: fmt.Sprintf("http://h%d.test/%d", i%5, i), CrawlID: []string{"a", "b"}[i%2]}}
		items = append(items, it)
		if i < 50 {
			want = append(want, Skipped)
		} else {
			want = append(want, OK)
		}
	}
	items = append(items, items[70], Item{Info: URLInfo{URL: items[3].Info.URL, CrawlID: "c"}})
	want = append(want, Skipped, OK)
	got := fx.put(items...)
	if !slices.Equal(got, want) {
		t.Errorf("statuses = %v, want %v", got, want)
	}
	checkConsistent(t, fx)
}

// TestStatsReadyWaiting: Stats tells the queues a Get would look at now
// from those waiting for a due time, and when the first of those is due; a
// queue whose URLs are all in flight is in neither.
func TestStatsReadyWaiting(t *testing.T) {
	fx := newFixture(t)
	t0 := fx.clk.Now()
	fx.put(disc("http://a.test/1"), known("http://b.test/1", t0.Add(time.Hour)), known("http://c.test/1", t0.Add(2*time.Hour)))
	type want struct {
		ready, waiting, inProcess uint64
		next                      time.Time
	}
	check := func(step, key string, w want) {
		t.Helper()
		st := fx.f.Stats("", key)
		got := want{st.ReadyQueues, st.WaitingQueues, st.InProcess, st.NextDue}
		if got.ready != w.ready || got.waiting != w.waiting || got.inProcess != w.inProcess || !got.next.Equal(w.next) {
			t.Errorf("%s: ready, waiting, in process, next due = %d, %d, %d, %v; want %d, %d, %d, %v",
				step, got.ready, got.waiting, got.inProcess, got.next, w.ready, w.waiting, w.inProcess, w.next)
		}
	}
	// A queue's first due time is learnt by the Get that reads it: until
	// then the queue counts as ready (a Get would look at it).
	check("start", "", want{3, 0, 0, time.Time{}})
	if got := fx.get(GetParams{Lease: 3 * time.Hour}); !slices.Equal(got, []string{"http://a.test/1"}) {
		t.Fatalf("served %v", got)
	}
	check("a leased", "", want{0, 2, 1, t0.Add(time.Hour)})
	check("one queue", "c.test", want{0, 1, 0, t0.Add(2 * time.Hour)})
	fx.clk.Advance(time.Hour)
	check("b due", "", want{1, 1, 1, t0.Add(2 * time.Hour)})
	fx.clk.Advance(time.Hour)
	check("all due", "", want{2, 0, 1, time.Time{}})
}

// TestGetLimitsNoOverflow: limits whose product overflows an int (both
// come from the wire) neither panic nor stop the URLs being served.
func TestGetLimitsNoOverflow(t *testing.T) {
	const big = 1<<32 - 1
	tests := []struct {
		name string
		p    GetParams
		want int
	}{
		{"both largest", GetParams{MaxQueues: big, MaxURLsPerQueue: big}, 3},
		{"product past int64", GetParams{MaxQueues: 1 << 40, MaxURLsPerQueue: 1 << 40}, 3},
		{"max int", GetParams{MaxQueues: int(^uint(0) >> 1), MaxURLsPerQueue: 2}, 3},
		{"one queue", GetParams{MaxQueues: 1, MaxURLsPerQueue: big}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			fx.put(disc("http://a.test/1"), disc("http://a.test/2"), disc("http://b.test/1"))
			if got := fx.get(tc.p); len(got) != tc.want {
				t.Errorf("Get(%+v) = %v, want %d URLs", tc.p, got, tc.want)
			}
		})
	}
}
