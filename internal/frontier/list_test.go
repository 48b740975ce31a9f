package frontier

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"
)

func listAll(t *testing.T, f *Frontier, p ListParams) []URLEntry {
	t.Helper()
	var out []URLEntry
	if err := f.ListURLs(context.Background(), p, func(e URLEntry) error { out = append(out, e); return nil }); err != nil {
		t.Fatalf("ListURLs: %v", err)
	}
	return out
}

func urlsOf(es []URLEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.URL)
	}
	return out
}

func TestListURLsQueuedAndCompleted(t *testing.T) {
	fx := newFixture(t)
	md := map[string][]string{"depth": {"1"}, "src": {"a", "b"}}
	fx.put(
		Item{Info: URLInfo{URL: "http://b.test/One", Metadata: md}},
		disc("http://b.test/two"),
		disc("http://a.test/x"),
		Item{Info: URLInfo{URL: "http://a.test/y", CrawlID: "other"}},
	)
	created := fx.clk.Now().Truncate(time.Second)
	fx.get(GetParams{})
	// Completed with its metadata; the other refetched later.
	fx.put(Item{Info: URLInfo{URL: "http://b.test/One", Metadata: md}, Known: true})
	refetch := fx.clk.Now().Add(time.Hour)
	fx.put(Item{Info: URLInfo{URL: "http://b.test/two"}, Known: true, RefetchFrom: refetch})

	all := listAll(t, fx.f, ListParams{})
	if got, want := urlsOf(all), []string{"http://a.test/x", "http://b.test/two", "http://b.test/One"}; !slices.Equal(got, want) {
		t.Fatalf("ListURLs = %v, want %v", got, want)
	}
	one := all[2]
	if !one.Completed || one.Key != "b.test" || one.CrawlID != DefaultCrawl || !one.Created.Equal(created) || !maps.EqualFunc(one.Metadata, md, slices.Equal) {
		t.Errorf("completed entry = %+v", one)
	}
	if two := all[1]; two.Completed || !two.RefetchFrom.Equal(refetch) {
		t.Errorf("refetched entry = %+v, want due %v", two, refetch)
	}
	st, err := fx.f.Lookup(context.Background(), "", "http://b.test/One")
	if err != nil || !maps.EqualFunc(st.Metadata, md, slices.Equal) {
		t.Errorf("Lookup metadata = %v, %v", st.Metadata, err)
	}

	tests := []struct {
		name string
		p    ListParams
		want []string
	}{
		{"queue", ListParams{Key: "b.test"}, []string{"http://b.test/two", "http://b.test/One"}},
		{"page", ListParams{Start: 1, Size: 1}, []string{"http://b.test/two"}},
		{"filter", ListParams{Filter: "one"}, nil},
		{"filter ignore case", ListParams{Filter: "one", IgnoreCase: true}, []string{"http://b.test/One"}},
		{"other crawl", ListParams{CrawlID: "other"}, []string{"http://a.test/y"}},
		{"unknown crawl", ListParams{CrawlID: "nope"}, nil},
		{"unknown queue", ListParams{Key: "nope.test"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := urlsOf(listAll(t, fx.f, tc.p)); !slices.Equal(got, tc.want) {
				t.Errorf("ListURLs = %v, want %v", got, tc.want)
			}
			n, err := fx.f.CountURLs(context.Background(), tc.p)
			want := uint64(len(tc.want))
			if tc.p.Size > 0 {
				want = 3 // count ignores paging
			}
			if err != nil || n != want {
				t.Errorf("CountURLs = %d, %v, want %d", n, err, want)
			}
		})
	}
	// Completed again, then queued again: one entry each time.
	fx.put(Item{Info: URLInfo{URL: "http://b.test/One"}, Known: true, RefetchFrom: refetch})
	if got := listAll(t, fx.f, ListParams{Key: "b.test"}); len(got) != 2 || got[0].Completed || got[1].Completed {
		t.Errorf("after requeue = %+v", got)
	}
	fx.reopen()
	if got := urlsOf(listAll(t, fx.f, ListParams{})); len(got) != 3 {
		t.Errorf("after reopen = %v", got)
	}
}

func TestPurgeURLs(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	fx.put(disc("http://a.test/old1"), disc("http://a.test/old2"), disc("http://b.test/old"))
	fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour}) // old1 and b.test/old leased
	fx.put(Item{Info: URLInfo{URL: "http://b.test/old"}, Known: true})
	fx.clk.Advance(48 * time.Hour)
	fx.put(disc("http://a.test/new"))

	n, err := fx.f.PurgeURLs(ctx, ListParams{Key: "a.test"}, fx.clk.Now().Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("purge a.test = %d, %v, want 2", n, err)
	}
	if s := fx.f.Stats("", "a.test"); s.Size != 1 || s.InProcess != 0 {
		t.Errorf("a.test stats = %+v, want 1 URL, none in flight", s)
	}
	if _, err := fx.f.Lookup(ctx, "", "http://a.test/old1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("purged URL still known: %v", err)
	}
	// A purged URL may be discovered again.
	if st := fx.put(disc("http://a.test/old1")); st[0] != OK {
		t.Errorf("rediscovered purged URL: %v", st)
	}
	// The completed one, crawl-wide.
	n, err = fx.f.PurgeURLs(ctx, ListParams{}, fx.clk.Now().Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("purge crawl = %d, %v, want 1", n, err)
	}
	if s := fx.f.Stats("", "b.test"); s.Completed != 0 {
		t.Errorf("b.test stats = %+v", s)
	}
	if got := urlsOf(listAll(t, fx.f, ListParams{})); !slices.Equal(got, []string{"http://a.test/new", "http://a.test/old1"}) {
		t.Errorf("left = %v", got)
	}
}

func TestPendingDelayAndBlock(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	if err := fx.f.SetDelay(ctx, "", "d.test", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := fx.f.BlockQueueUntil(ctx, "c", "b.test", fx.clk.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n := fx.f.PendingQueues(); n != 2 {
		t.Fatalf("pending = %d, want 2", n)
	}
	fx.put(disc("http://d.test/1"), disc("http://d.test/2"), Item{Info: URLInfo{URL: "http://b.test/", CrawlID: "c"}})
	if n := fx.f.PendingQueues(); n != 0 {
		t.Errorf("pending after the queues appeared = %d", n)
	}
	if got := fx.get(GetParams{MaxURLsPerQueue: 1, AnyCrawl: true}); !slices.Equal(got, []string{"http://d.test/1"}) {
		t.Fatalf("get = %v, want d.test/1 only (b.test blocked)", got)
	}
	fx.clk.Advance(9 * time.Second)
	if got := fx.get(GetParams{MaxURLsPerQueue: 1, AnyCrawl: true}); got != nil {
		t.Fatalf("served inside the pending delay: %v", got)
	}
	fx.clk.Advance(time.Minute)
	if got := fx.get(GetParams{MaxURLsPerQueue: 1, AnyCrawl: true}); len(got) != 2 {
		t.Fatalf("after delay and block = %v", got)
	}
	// Unblocking a pending block forgets it.
	_ = fx.f.BlockQueueUntil(ctx, "", "e.test", fx.clk.Now().Add(time.Hour))
	_ = fx.f.BlockQueueUntil(ctx, "", "e.test", time.Time{})
	if n := fx.f.PendingQueues(); n != 0 {
		t.Errorf("pending after unblock = %d", n)
	}
}

// TestParkedQueueServedAtHigherLimit: a queue parked because its in-flight
// count reached one caller's MaxURLsPerQueue is served to a caller that
// allows more (clients of a shared frontier ask with different limits).
func TestParkedQueueServedAtHigherLimit(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/1"), disc("http://h.test/2"), disc("http://h.test/3"))
	if got := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour}); len(got) != 1 {
		t.Fatalf("first = %v", got)
	}
	if got := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour}); got != nil {
		t.Fatalf("at its limit = %v", got)
	}
	if got := fx.get(GetParams{MaxURLsPerQueue: 2, Lease: time.Hour}); len(got) != 1 {
		t.Fatalf("limit 2 = %v, want one more", got)
	}
	if got := fx.get(GetParams{Key: "h.test", Lease: time.Hour}); len(got) != 1 {
		t.Fatalf("by key, no limit = %v, want the last", got)
	}
}
