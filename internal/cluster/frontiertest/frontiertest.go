// Package frontiertest is the conformance suite every frontier.API
// implementation passes: the embedded Pebble frontier and the Redis
// Cluster frontier (internal/cluster). It checks the semantics a crawler
// and a URLFrontier service rely on: the seen-test, crawl namespaces, due
// order, priorities, leases and their expiry, acknowledgements and the
// counters, delays, blocks, crawl limits, retirement and Lookup, and the
// URLFrontier service's calls (service.go): SetActive, ListQueues,
// DeleteQueue, DeleteCrawl, ListURLs, CountURLs and PurgeURLs.
//
//	frontiertest.Run(t, func(t *testing.T, now func() time.Time) frontier.API { ... })
//
// Time is a fake clock the suite moves; the implementation must take it as
// its clock (frontier.Options.Now, cluster.Options.Now).
package frontiertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// Clock is the suite's fake clock.
type Clock = fakeclock.Clock

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return fakeclock.New(t) }

// New makes an empty frontier on the clock now.
type New func(t *testing.T, now func() time.Time) frontier.API

type env struct {
	t   *testing.T
	f   frontier.API
	clk *Clock
	ctx context.Context
}

func (e *env) put(items ...frontier.Item) []frontier.Status {
	e.t.Helper()
	st, err := e.f.Put(e.ctx, items)
	if err != nil {
		e.t.Fatalf("Put: %v", err)
	}
	return st
}

func (e *env) get(p frontier.GetParams) []string {
	e.t.Helper()
	ls, err := e.f.Get(e.ctx, p)
	if err != nil {
		e.t.Fatalf("Get(%+v): %v", p, err)
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.URL
	}
	return out
}

func (e *env) ack(u string, refetch time.Time) {
	e.t.Helper()
	if err := e.f.Ack(e.ctx, frontier.URLInfo{URL: u}, refetch); err != nil {
		e.t.Fatalf("Ack(%s): %v", u, err)
	}
}

func (e *env) stats(key string) frontier.Stats {
	e.t.Helper()
	return e.f.Stats("", key)
}

func disc(u string) frontier.Item { return frontier.Item{Info: frontier.URLInfo{URL: u}} }

func wantURLs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Run runs the suite; newF is called once per case.
func Run(t *testing.T, newF New) {
	cases := []struct {
		name string
		fn   func(e *env)
	}{
		{"SeenTest", seenTest},
		{"InvalidItems", invalidItems},
		{"CrawlNamespaces", crawlNamespaces},
		{"PriorityAndDepth", priorityAndDepth},
		{"DatedDiscovered", datedDiscovered},
		{"LeaseHidesURL", leaseHidesURL},
		{"LeaseExpires", leaseExpires},
		{"AckCompletes", ackCompletes},
		{"AckRefetch", ackRefetch},
		{"LateAckCountsOnce", lateAckCountsOnce},
		{"QueuesInDueOrder", queuesInDueOrder},
		{"MaxQueuesAndPerQueue", maxQueuesAndPerQueue},
		{"BlockQueueUntil", blockQueueUntil},
		{"AckHold", ackHold},
		{"SetDelay", setDelay},
		{"CrawlLimit", crawlLimit},
		{"Retire", retire},
		{"Release", release},
		{"Lookup", lookup},
		{"KnownCreates", knownCreates},
		{"Metadata", metadata},
		{"SetActive", setActive},
		{"ListQueues", listQueues},
		{"DeleteQueue", deleteQueue},
		{"DeleteCrawl", deleteCrawl},
		{"ListURLs", listURLs},
		{"CountURLs", countURLs},
		{"PurgeURLs", purgeURLs},
		{"PendingBlockAndDelay", pendingBlockAndDelay},
		{"ListsCompleted", listsCompleted},
		{"RaisedInFlightBound", raisedInFlightBound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewClock(time.Unix(1_800_000_000, 0))
			e := &env{t: t, clk: clk, ctx: context.Background()}
			e.f = newF(t, clk.Now)
			t.Cleanup(func() { e.f.Close() })
			tc.fn(e)
		})
	}
}

func seenTest(e *env) {
	st := e.put(disc("http://a.example/1"), disc("http://a.example/2"), disc("http://a.example/1"))
	if !slices.Equal(st, []frontier.Status{frontier.OK, frontier.OK, frontier.Skipped}) {
		e.t.Fatalf("first Put statuses %v", st)
	}
	st = e.put(disc("http://a.example/2"), disc("http://a.example/3"))
	if !slices.Equal(st, []frontier.Status{frontier.Skipped, frontier.OK}) {
		e.t.Fatalf("second Put statuses %v", st)
	}
	// A completed URL stays seen.
	got := e.get(frontier.GetParams{})
	for _, u := range got {
		e.ack(u, time.Time{})
	}
	if st := e.put(disc("http://a.example/1")); st[0] != frontier.Skipped {
		e.t.Fatalf("completed URL discovered again: %v", st)
	}
	if s := e.stats(""); s.Size != 0 || s.Completed != 3 || s.Queues != 1 {
		e.t.Fatalf("stats %+v, want 0 queued, 3 completed, 1 queue", s)
	}
}

func invalidItems(e *env) {
	long := "http://a.example/" + string(make([]byte, 9000))
	st := e.put(disc("no-host"), frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/", Key: string(make([]byte, 256))}}, disc(long), disc(""))
	for i, s := range st {
		if s != frontier.Skipped {
			e.t.Errorf("item %d: %v, want SKIPPED", i, s)
		}
	}
	if s := e.stats(""); s.Size != 0 {
		e.t.Fatalf("invalid items stored: %+v", s)
	}
}

func crawlNamespaces(e *env) {
	a := frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/", CrawlID: "one"}}
	b := frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/", CrawlID: "two"}}
	if st := e.put(a, b); st[0] != frontier.OK || st[1] != frontier.OK {
		e.t.Fatalf("same URL in two crawls: %v", st)
	}
	if got := e.get(frontier.GetParams{CrawlID: "one"}); len(got) != 1 {
		e.t.Fatalf("crawl one served %q", got)
	}
	if got := e.get(frontier.GetParams{CrawlID: "two"}); len(got) != 1 {
		e.t.Fatalf("crawl two served %q", got)
	}
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("default crawl served %q", got)
	}
	if s := e.f.Stats("one", ""); s.Size != 1 || s.InProcess != 1 {
		e.t.Fatalf("crawl one stats %+v", s)
	}
	crawls := e.f.ListCrawls()
	if !slices.Contains(crawls, "one") || !slices.Contains(crawls, "two") {
		e.t.Fatalf("ListCrawls = %q", crawls)
	}
}

func priorityAndDepth(e *env) {
	mk := func(u string, prio int8, depth int) frontier.Item {
		return frontier.Item{Info: frontier.URLInfo{URL: u, Priority: prio, Depth: depth}}
	}
	e.put(mk("http://a.example/d2", 0, 2), mk("http://a.example/d1", 0, 1), mk("http://a.example/seed", 2, 0),
		mk("http://a.example/low", -1, 0), mk("http://a.example/d1b", 0, 1))
	got := e.get(frontier.GetParams{Key: "a.example"})
	wantURLs(e.t, "queue order", got, []string{"http://a.example/seed", "http://a.example/d1", "http://a.example/d1b", "http://a.example/d2", "http://a.example/low"})
	ls, err := e.f.Get(e.ctx, frontier.GetParams{})
	if err != nil || len(ls) != 0 {
		e.t.Fatalf("Get with everything leased: %v, %v", ls, err)
	}
}

// datedDiscovered: a dated discovered URL takes its place by date among
// URLs rescheduled to a time (URLFrontier's order by next-fetch date); an
// undated one comes before them all.
func datedDiscovered(e *env) {
	dated := func(u string) frontier.Item { return frontier.Item{Info: frontier.URLInfo{URL: u}, Dated: true} }
	known := func(u string, at time.Time) frontier.Item {
		return frontier.Item{Info: frontier.URLInfo{URL: u}, Known: true, RefetchFrom: at}
	}
	start := e.clk.Now()
	e.put(dated("http://a.example/dated1"))
	e.clk.Advance(time.Minute)
	e.put(disc("http://a.example/undated"), dated("http://a.example/dated2"),
		known("http://a.example/early", time.Unix(1, 0)), known("http://a.example/retry", start.Add(30*time.Second)))
	got := e.get(frontier.GetParams{Key: "a.example"})
	wantURLs(e.t, "queue order", got, []string{"http://a.example/undated", "http://a.example/early",
		"http://a.example/dated1", "http://a.example/retry", "http://a.example/dated2"})
	st, err := e.f.Lookup(e.ctx, "", "http://a.example/dated1")
	if err != nil || !st.RefetchFrom.Equal(start) {
		e.t.Errorf("Lookup dated = %+v, %v; want due at %v", st, err, start)
	}
}

func leaseHidesURL(e *env) {
	e.put(disc("http://a.example/1"))
	ls, err := e.f.Get(e.ctx, frontier.GetParams{Lease: time.Minute})
	if err != nil || len(ls) != 1 {
		e.t.Fatalf("Get: %v, %v", ls, err)
	}
	if l := ls[0]; l.Key != "a.example" || l.CrawlID != frontier.DefaultCrawl || !l.Expires.Equal(e.clk.Now().Add(time.Minute)) {
		e.t.Fatalf("lease %+v", l)
	}
	e.clk.Advance(59 * time.Second)
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("leased URL served again: %q", got)
	}
	if s := e.stats(""); s.InProcess != 1 || s.Size != 1 {
		e.t.Fatalf("stats %+v, want 1 in process", s)
	}
}

func leaseExpires(e *env) {
	e.put(disc("http://a.example/1"))
	if got := e.get(frontier.GetParams{Lease: time.Minute}); len(got) != 1 {
		e.t.Fatalf("Get = %q", got)
	}
	e.clk.Advance(time.Minute + time.Millisecond)
	got := e.get(frontier.GetParams{})
	wantURLs(e.t, "after the lease expired", got, []string{"http://a.example/1"})
	if s := e.stats(""); s.InProcess != 1 || s.Size != 1 {
		e.t.Fatalf("stats %+v", s)
	}
}

func ackCompletes(e *env) {
	e.put(disc("http://a.example/1"), disc("http://b.example/1"))
	got := sorted(e.get(frontier.GetParams{}))
	wantURLs(e.t, "Get", got, []string{"http://a.example/1", "http://b.example/1"})
	e.ack("http://a.example/1", time.Time{})
	s := e.stats("")
	if s.Size != 1 || s.Completed != 1 || s.InProcess != 1 || s.Queues != 2 || s.ActiveQueues != 1 {
		e.t.Fatalf("stats %+v, want 1 queued, 1 completed, 1 in process, 2 queues, 1 active", s)
	}
	if q := e.stats("a.example"); q.Completed != 1 || q.Size != 0 || q.Queues != 1 {
		e.t.Fatalf("queue stats %+v", q)
	}
	// Acking the same URL again changes no counter.
	e.ack("http://a.example/1", time.Time{})
	if s2 := e.stats(""); s2 != s {
		e.t.Fatalf("after a repeated ack %+v, before %+v", s2, s)
	}
}

func ackRefetch(e *env) {
	e.put(disc("http://a.example/1"))
	e.get(frontier.GetParams{})
	e.ack("http://a.example/1", e.clk.Now().Add(time.Hour))
	if s := e.stats(""); s.Size != 1 || s.InProcess != 0 || s.Completed != 0 {
		e.t.Fatalf("stats %+v", s)
	}
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("served before its refetch time: %q", got)
	}
	e.clk.Advance(time.Hour)
	wantURLs(e.t, "at the refetch time", e.get(frontier.GetParams{}), []string{"http://a.example/1"})
}

// lateAckCountsOnce: a lease expires, another caller gets the URL; the
// first caller's late ack and the second's must leave one completed URL.
func lateAckCountsOnce(e *env) {
	e.put(disc("http://a.example/1"), disc("http://a.example/2"))
	if got := e.get(frontier.GetParams{Lease: time.Second, MaxURLsPerQueue: 1}); len(got) != 1 {
		e.t.Fatalf("first Get %q", got)
	}
	e.clk.Advance(2 * time.Second)
	got := e.get(frontier.GetParams{Lease: time.Minute})
	if len(got) != 2 {
		e.t.Fatalf("second Get %q, want both URLs", got)
	}
	for _, u := range got {
		e.ack(u, time.Time{})
	}
	// A late ack of the first lease: it may be refused (fencing) or
	// taken, but it must not count the URL twice.
	_ = e.f.Ack(e.ctx, frontier.URLInfo{URL: got[0]}, time.Time{})
	if s := e.stats(""); s.Completed != 2 || s.Size != 0 || s.InProcess != 0 {
		e.t.Fatalf("stats %+v, want 2 completed and nothing queued or in process", s)
	}
}

func queuesInDueOrder(e *env) {
	// Three queues whose URLs come due at different times: served in
	// ascending due order, one queue per Get.
	now := e.clk.Now()
	for i, host := range []string{"c.example", "a.example", "b.example"} {
		u := fmt.Sprintf("http://%s/", host)
		e.put(frontier.Item{Info: frontier.URLInfo{URL: u}, Known: true, RefetchFrom: now.Add(time.Duration(3-i) * time.Minute)})
	}
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("served before due: %q", got)
	}
	e.clk.Advance(10 * time.Minute)
	var order []string
	for range 3 {
		order = append(order, e.get(frontier.GetParams{MaxQueues: 1})...)
	}
	wantURLs(e.t, "due order", order, []string{"http://b.example/", "http://a.example/", "http://c.example/"})
}

func maxQueuesAndPerQueue(e *env) {
	for _, h := range []string{"a", "b", "c"} {
		for i := range 3 {
			e.put(disc(fmt.Sprintf("http://%s.example/%d", h, i)))
		}
	}
	got := e.get(frontier.GetParams{MaxQueues: 2, MaxURLsPerQueue: 2})
	if len(got) != 4 {
		e.t.Fatalf("MaxQueues 2, MaxURLsPerQueue 2: %q", got)
	}
	hosts := map[string]int{}
	for _, u := range got {
		hosts[frontier.DefaultKey(u)]++
	}
	for h, n := range hosts {
		if n != 2 {
			e.t.Fatalf("%s gave %d URLs: %q", h, n, got)
		}
	}
	// The bound also counts what is in flight: the served queues give
	// nothing more while two URLs are out.
	got = e.get(frontier.GetParams{MaxURLsPerQueue: 2})
	if len(got) != 2 {
		e.t.Fatalf("second Get %q, want the third queue's two URLs", got)
	}
	for _, u := range got {
		if hosts[frontier.DefaultKey(u)] != 0 {
			e.t.Fatalf("queue over its in-flight bound served %s", u)
		}
	}
}

func blockQueueUntil(e *env) {
	e.put(disc("http://a.example/1"), disc("http://b.example/1"))
	until := e.clk.Now().Add(10 * time.Second)
	if err := e.f.BlockQueueUntil(e.ctx, "", "a.example", until); err != nil {
		e.t.Fatal(err)
	}
	// Unknown queues are ignored.
	if err := e.f.BlockQueueUntil(e.ctx, "", "nowhere.example", until); err != nil {
		e.t.Fatal(err)
	}
	wantURLs(e.t, "while a is blocked", e.get(frontier.GetParams{}), []string{"http://b.example/1"})
	e.clk.Advance(10*time.Second - time.Millisecond)
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("served 1 ms before the block ends: %q", got)
	}
	e.clk.Advance(time.Millisecond)
	wantURLs(e.t, "when the block ends", e.get(frontier.GetParams{}), []string{"http://a.example/1"})
	// Zero unblocks.
	e.put(disc("http://a.example/2"))
	e.f.BlockQueueUntil(e.ctx, "", "a.example", e.clk.Now().Add(time.Hour))
	e.f.BlockQueueUntil(e.ctx, "", "a.example", time.Time{})
	wantURLs(e.t, "after unblocking", e.get(frontier.GetParams{}), []string{"http://a.example/2"})
}

// ackHold: an acknowledgement's Hold keeps its queue from being served
// before it (the crawler's hold after a fetch), keeps a later block, and
// is ignored on a discovered item.
func ackHold(e *env) {
	e.put(disc("http://a.example/1"), disc("http://a.example/2"), disc("http://b.example/1"), disc("http://b.example/2"))
	got := sorted(e.get(frontier.GetParams{MaxURLsPerQueue: 1}))
	wantURLs(e.t, "Get", got, []string{"http://a.example/1", "http://b.example/1"})
	now := e.clk.Now()
	ack := func(u string, refetch, hold time.Time) {
		e.t.Helper()
		st := e.put(frontier.Item{Info: frontier.URLInfo{URL: u}, Known: true, RefetchFrom: refetch, Hold: hold})
		if st[0] != frontier.OK {
			e.t.Fatalf("ack of %s: %v", u, st[0])
		}
	}
	// b's queue is blocked for an hour by someone else while its URL is
	// out: the shorter hold of its ack must not lower that block.
	if err := e.f.BlockQueueUntil(e.ctx, "", "b.example", now.Add(time.Hour)); err != nil {
		e.t.Fatal(err)
	}
	ack("http://a.example/1", time.Time{}, now.Add(10*time.Second))
	ack("http://b.example/1", time.Time{}, now.Add(time.Second))
	if got := e.get(frontier.GetParams{MaxURLsPerQueue: 1}); len(got) != 0 {
		e.t.Fatalf("served while held: %q", got)
	}
	e.clk.Advance(10*time.Second - time.Millisecond)
	if got := e.get(frontier.GetParams{MaxURLsPerQueue: 1}); len(got) != 0 {
		e.t.Fatalf("served 1 ms before the hold ends: %q", got)
	}
	e.clk.Advance(time.Millisecond)
	wantURLs(e.t, "when a's hold ends", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), []string{"http://a.example/2"})
	// A retry: due in a second, but its queue held for a minute.
	ack("http://a.example/2", e.clk.Now().Add(time.Second), e.clk.Now().Add(time.Minute))
	e.clk.Advance(time.Minute - time.Millisecond)
	if got := e.get(frontier.GetParams{MaxURLsPerQueue: 1}); len(got) != 0 {
		e.t.Fatalf("retry served while its queue is held: %q", got)
	}
	e.clk.Advance(time.Millisecond)
	wantURLs(e.t, "when the retry's hold ends", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), []string{"http://a.example/2"})
	e.ack("http://a.example/2", time.Time{})
	// b's block still stands, and ends when it was set to.
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("b served under its block: %q", got)
	}
	e.clk.Advance(time.Hour)
	wantURLs(e.t, "when b's block ends", e.get(frontier.GetParams{}), []string{"http://b.example/2"})
	// A discovered item's hold is no hold.
	e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://c.example/1"}, Hold: e.clk.Now().Add(time.Hour)})
	wantURLs(e.t, "a discovered URL with a hold", e.get(frontier.GetParams{}), []string{"http://c.example/1"})
}

func setDelay(e *env) {
	for i := range 3 {
		e.put(disc(fmt.Sprintf("http://a.example/%d", i)))
	}
	if err := e.f.SetDelay(e.ctx, "", "a.example", 5*time.Second); err != nil {
		e.t.Fatal(err)
	}
	got := e.get(frontier.GetParams{MaxURLsPerQueue: 1})
	if len(got) != 1 {
		e.t.Fatalf("first Get %q", got)
	}
	e.ack(got[0], time.Time{})
	e.clk.Advance(4 * time.Second)
	if got := e.get(frontier.GetParams{MaxURLsPerQueue: 5}); len(got) != 0 {
		e.t.Fatalf("served within the delay: %q", got)
	}
	e.clk.Advance(time.Second)
	if got := e.get(frontier.GetParams{MaxURLsPerQueue: 5}); len(got) != 2 {
		e.t.Fatalf("after the delay %q", got)
	}
}

func crawlLimit(e *env) {
	for i := range 3 {
		e.put(disc(fmt.Sprintf("http://a.example/%d", i)))
	}
	if err := e.f.SetCrawlLimit(e.ctx, "", "nowhere.example", 1); !errors.Is(err, frontier.ErrNotFound) {
		e.t.Fatalf("SetCrawlLimit on an unknown queue: %v", err)
	}
	if err := e.f.SetCrawlLimit(e.ctx, "", "a.example", 1); err != nil {
		e.t.Fatal(err)
	}
	got := e.get(frontier.GetParams{MaxURLsPerQueue: 1})
	if len(got) != 1 {
		e.t.Fatalf("Get %q", got)
	}
	e.ack(got[0], time.Time{})
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("served past the crawl limit: %q", got)
	}
	if err := e.f.SetCrawlLimit(e.ctx, "", "a.example", 0); err != nil {
		e.t.Fatal(err)
	}
	if got := e.get(frontier.GetParams{}); len(got) != 2 {
		e.t.Fatalf("after removing the limit %q", got)
	}
}

func retire(e *env) {
	e.put(disc("http://a.example/1"), disc("http://a.example/2"), disc("http://b.example/1"))
	if err := e.f.Retire(e.ctx, "", "a.example", "dns"); err != nil {
		e.t.Fatal(err)
	}
	if err := e.f.Retire(e.ctx, "", "nowhere.example", "dns"); !errors.Is(err, frontier.ErrNotFound) {
		e.t.Fatalf("Retire on an unknown queue: %v", err)
	}
	wantURLs(e.t, "Get", e.get(frontier.GetParams{}), []string{"http://b.example/1"})
	s := e.stats("")
	if s.Retired != 2 || s.RetiredQueues != 1 || s.Size != 1 {
		e.t.Fatalf("stats %+v, want 2 retired URLs in 1 queue, 1 queued", s)
	}
	if st := e.put(disc("http://a.example/1")); st[0] != frontier.Skipped {
		e.t.Fatalf("URL of a retired queue discovered again: %v", st)
	}
}

func release(e *env) {
	e.put(disc("http://a.example/1"))
	got := e.get(frontier.GetParams{Lease: time.Hour})
	if len(got) != 1 {
		e.t.Fatalf("Get %q", got)
	}
	e.f.Release(frontier.URLInfo{URL: got[0]})
	wantURLs(e.t, "after Release", e.get(frontier.GetParams{}), got)
}

func lookup(e *env) {
	e.put(disc("http://a.example/1"), disc("http://a.example/2"))
	if _, err := e.f.Lookup(e.ctx, "", "http://a.example/none"); !errors.Is(err, frontier.ErrNotFound) {
		e.t.Fatalf("Lookup of an unknown URL: %v", err)
	}
	st, err := e.f.Lookup(e.ctx, "", "http://a.example/1")
	if err != nil || st.Completed || st.Leased || st.Key != "a.example" || !st.Created.Equal(e.clk.Now()) {
		e.t.Fatalf("Lookup queued: %+v, %v", st, err)
	}
	got := e.get(frontier.GetParams{MaxURLsPerQueue: 1})
	st, err = e.f.Lookup(e.ctx, "", got[0])
	if err != nil || !st.Leased {
		e.t.Fatalf("Lookup leased: %+v, %v", st, err)
	}
	e.ack(got[0], time.Time{})
	st, err = e.f.Lookup(e.ctx, "", got[0])
	if err != nil || !st.Completed || st.Leased {
		e.t.Fatalf("Lookup completed: %+v, %v", st, err)
	}
	due := e.clk.Now().Add(time.Hour)
	e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/2"}, Known: true, RefetchFrom: due})
	st, err = e.f.Lookup(e.ctx, "", "http://a.example/2")
	if err != nil || !st.RefetchFrom.Equal(due) || st.Completed {
		e.t.Fatalf("Lookup rescheduled: %+v, %v", st, err)
	}
}

func knownCreates(e *env) {
	st := e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/done"}, Known: true},
		frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/now"}, Known: true, RefetchFrom: e.clk.Now()})
	if st[0] != frontier.OK || st[1] != frontier.OK {
		e.t.Fatalf("known puts: %v", st)
	}
	if s := e.stats(""); s.Completed != 1 || s.Size != 1 {
		e.t.Fatalf("stats %+v", s)
	}
	wantURLs(e.t, "Get", e.get(frontier.GetParams{}), []string{"http://a.example/now"})
}

func metadata(e *env) {
	md := map[string][]string{"src": {"seed"}, "tags": {"a", "b"}}
	e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/m", Metadata: md, Priority: 2, Depth: 7}})
	ls, err := e.f.Get(e.ctx, frontier.GetParams{})
	if err != nil || len(ls) != 1 {
		e.t.Fatalf("Get: %v, %v", ls, err)
	}
	l := ls[0]
	if l.Priority != 2 || l.Depth != 7 || len(l.Metadata) != 2 || !slices.Equal(l.Metadata["tags"], []string{"a", "b"}) || !slices.Equal(l.Metadata["src"], []string{"seed"}) {
		e.t.Fatalf("lease %+v", l)
	}
}
