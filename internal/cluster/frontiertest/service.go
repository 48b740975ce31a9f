// Cases for the calls of the URLFrontier service: pausing, listing and
// deleting queues and crawls, listing, counting and purging URLs.

package frontiertest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

func (e *env) listQueues(start, size int, inactive bool) ([]string, int) {
	e.t.Helper()
	return e.f.ListQueues("", start, size, inactive)
}

func (e *env) listURLs(p frontier.ListParams) []frontier.URLEntry {
	e.t.Helper()
	var out []frontier.URLEntry
	if err := e.f.ListURLs(e.ctx, p, func(u frontier.URLEntry) error {
		out = append(out, u)
		return nil
	}); err != nil {
		e.t.Fatalf("ListURLs(%+v): %v", p, err)
	}
	return out
}

func entryURLs(es []frontier.URLEntry) []string {
	out := make([]string, len(es))
	for i, u := range es {
		out[i] = u.URL
	}
	return out
}

func (e *env) count(p frontier.ListParams) uint64 {
	e.t.Helper()
	n, err := e.f.CountURLs(e.ctx, p)
	if err != nil {
		e.t.Fatalf("CountURLs(%+v): %v", p, err)
	}
	return n
}

// take leases and acknowledges (completes) one URL of a queue.
func (e *env) take(key string) string {
	e.t.Helper()
	got := e.get(frontier.GetParams{Key: key, MaxURLsPerQueue: 1})
	if len(got) != 1 {
		e.t.Fatalf("Get of %s: %q", key, got)
	}
	e.ack(got[0], time.Time{})
	return got[0]
}

func setActive(e *env) {
	if !e.f.Active() {
		e.t.Fatal("a new frontier is not active")
	}
	e.put(disc("http://a.example/1"))
	e.f.SetActive(false)
	if e.f.Active() {
		e.t.Fatal("Active after SetActive(false)")
	}
	if got := e.get(frontier.GetParams{}); len(got) != 0 {
		e.t.Fatalf("served while paused: %q", got)
	}
	if st := e.put(disc("http://b.example/1")); st[0] != frontier.OK {
		e.t.Fatalf("Put while paused: %v", st)
	}
	e.f.SetActive(true)
	if !e.f.Active() {
		e.t.Fatal("not Active after SetActive(true)")
	}
	wantURLs(e.t, "after resuming", sorted(e.get(frontier.GetParams{})), []string{"http://a.example/1", "http://b.example/1"})
}

func listQueues(e *env) {
	for _, h := range []string{"e", "d", "c", "b", "a"} {
		e.put(disc("http://" + h + ".example/1"))
	}
	if err := e.f.BlockQueueUntil(e.ctx, "", "c.example", e.clk.Now().Add(time.Hour)); err != nil {
		e.t.Fatal(err)
	}
	e.take("d.example")
	if err := e.f.Retire(e.ctx, "", "e.example", "gone"); err != nil {
		e.t.Fatal(err)
	}
	keys, total := e.listQueues(0, 0, false)
	wantURLs(e.t, "active queues", keys, []string{"a.example", "b.example"})
	if total != 2 {
		e.t.Fatalf("active total %d, want 2", total)
	}
	keys, total = e.listQueues(0, 0, true)
	wantURLs(e.t, "all queues", keys, []string{"a.example", "b.example", "c.example", "d.example", "e.example"})
	if total != 5 {
		e.t.Fatalf("total %d, want 5", total)
	}
	keys, total = e.listQueues(1, 2, true)
	wantURLs(e.t, "page [1,3)", keys, []string{"b.example", "c.example"})
	if total != 5 {
		e.t.Fatalf("paged total %d, want 5", total)
	}
	if keys, total = e.listQueues(9, 2, true); len(keys) != 0 || total != 5 {
		e.t.Fatalf("page past the end: %q, %d", keys, total)
	}
	if keys, total = e.f.ListQueues("nocrawl", 0, 10, true); len(keys) != 0 || total != 0 {
		e.t.Fatalf("unknown crawl: %q, %d", keys, total)
	}
	e.clk.Advance(2 * time.Hour)
	keys, _ = e.listQueues(0, 0, false)
	wantURLs(e.t, "active queues once the block ended", keys, []string{"a.example", "b.example", "c.example"})
}

func deleteQueue(e *env) {
	for i := range 3 {
		e.put(disc(fmt.Sprintf("http://a.example/%d", i)))
	}
	e.put(disc("http://b.example/1"))
	done := e.take("a.example")
	n, err := e.f.DeleteQueue(e.ctx, "", "a.example")
	if err != nil || n != 2 {
		e.t.Fatalf("DeleteQueue: %d, %v; want 2 removed", n, err)
	}
	keys, _ := e.listQueues(0, 0, true)
	wantURLs(e.t, "queues after DeleteQueue", keys, []string{"b.example"})
	if s := e.stats(""); s.Size != 1 || s.Queues != 1 || s.ActiveQueues != 1 {
		e.t.Fatalf("stats after DeleteQueue %+v, want 1 URL in 1 queue", s)
	}
	wantURLs(e.t, "Get after DeleteQueue", e.get(frontier.GetParams{}), []string{"http://b.example/1"})
	if n, err := e.f.DeleteQueue(e.ctx, "", "nowhere.example"); err != nil || n != 0 {
		e.t.Fatalf("DeleteQueue of an unknown queue: %d, %v", n, err)
	}
	removed := "http://a.example/0"
	if removed == done {
		removed = "http://a.example/1"
	}
	st := e.put(disc(done), disc(removed))
	if st[0] != frontier.Skipped || st[1] != frontier.OK {
		e.t.Fatalf("put again after DeleteQueue: %v; want the completed URL still known, the removed one new", st)
	}
}

func deleteCrawl(e *env) {
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://b.example/1"} {
		e.put(frontier.Item{Info: frontier.URLInfo{URL: u, CrawlID: "x"}})
	}
	e.put(disc("http://a.example/1"))
	got := e.get(frontier.GetParams{CrawlID: "x", Key: "b.example"})
	if len(got) != 1 {
		e.t.Fatalf("Get of crawl x: %q", got)
	}
	if err := e.f.Ack(e.ctx, frontier.URLInfo{URL: got[0], CrawlID: "x"}, time.Time{}); err != nil {
		e.t.Fatal(err)
	}
	n, err := e.f.DeleteCrawl(e.ctx, "x")
	if err != nil || n != 2 {
		e.t.Fatalf("DeleteCrawl: %d, %v; want 2 removed", n, err)
	}
	if slices.Contains(e.f.ListCrawls(), "x") {
		e.t.Fatalf("crawl x still listed: %q", e.f.ListCrawls())
	}
	if s := e.f.Stats("x", ""); s.Size != 0 || s.Completed != 0 || s.Queues != 0 {
		e.t.Fatalf("stats of the deleted crawl %+v", s)
	}
	if got := e.get(frontier.GetParams{CrawlID: "x"}); len(got) != 0 {
		e.t.Fatalf("deleted crawl served %q", got)
	}
	wantURLs(e.t, "the other crawl", e.get(frontier.GetParams{}), []string{"http://a.example/1"})
	st, err := e.f.Put(e.ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://b.example/1", CrawlID: "x"}}})
	if err != nil || st[0] != frontier.OK {
		e.t.Fatalf("put into the deleted crawl: %v, %v; want the URL forgotten", st, err)
	}
	if !slices.Contains(e.f.ListCrawls(), "x") {
		e.t.Fatalf("crawl x not listed again: %q", e.f.ListCrawls())
	}
	if n, err := e.f.DeleteCrawl(e.ctx, "nocrawl"); err != nil || n != 0 {
		e.t.Fatalf("DeleteCrawl of an unknown crawl: %d, %v", n, err)
	}
}

func listURLs(e *env) {
	t0 := e.clk.Now()
	md := map[string][]string{"src": {"seed"}}
	e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://b.example/1", Metadata: md, Priority: 3, Depth: 2}},
		disc("http://b.example/2"), disc("http://a.example/2"), disc("http://a.example/1"), disc("http://b.example/UP"))
	due := t0.Add(time.Hour)
	e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/2"}, Known: true, RefetchFrom: due})
	if got := e.get(frontier.GetParams{Key: "b.example", MaxURLsPerQueue: 1}); len(got) != 1 || got[0] != "http://b.example/1" {
		e.t.Fatalf("Get %q, want the priority URL", got)
	}
	all := e.listURLs(frontier.ListParams{})
	urls := entryURLs(all)
	wantURLs(e.t, "every URL", sorted(urls), []string{"http://a.example/1", "http://a.example/2", "http://b.example/1", "http://b.example/2", "http://b.example/UP"})
	for i, u := range all {
		if u.CrawlID != frontier.DefaultCrawl || u.Completed || !u.Created.Equal(t0) {
			e.t.Fatalf("entry %+v", u)
		}
		if want := u.URL[7:16]; u.Key != want {
			e.t.Fatalf("entry %s has key %q", u.URL, u.Key)
		}
		if i > 0 && all[i-1].Key > u.Key {
			e.t.Fatalf("queues not in key order: %q", urls)
		}
		switch u.URL {
		case "http://b.example/1":
			if u.Priority != 3 || u.Depth != 2 || !slices.Equal(u.Metadata["src"], []string{"seed"}) {
				e.t.Fatalf("leased entry %+v", u)
			}
		case "http://a.example/2":
			if !u.RefetchFrom.Equal(due) {
				e.t.Fatalf("rescheduled entry %+v, want due %v", u, due)
			}
		default:
			if !u.RefetchFrom.IsZero() {
				e.t.Fatalf("entry %+v has a refetch time", u)
			}
		}
	}
	wantURLs(e.t, "Start 1, Size 2", entryURLs(e.listURLs(frontier.ListParams{Start: 1, Size: 2})), urls[1:3])
	wantURLs(e.t, "Start past the end", entryURLs(e.listURLs(frontier.ListParams{Start: 9})), nil)
	wantURLs(e.t, "filter", sorted(entryURLs(e.listURLs(frontier.ListParams{Filter: "/2"}))), []string{"http://a.example/2", "http://b.example/2"})
	wantURLs(e.t, "filter, case", entryURLs(e.listURLs(frontier.ListParams{Filter: "up"})), nil)
	wantURLs(e.t, "filter, ignoring case", entryURLs(e.listURLs(frontier.ListParams{Filter: "up", IgnoreCase: true})), []string{"http://b.example/UP"})
	wantURLs(e.t, "one queue", sorted(entryURLs(e.listURLs(frontier.ListParams{Key: "a.example"}))), []string{"http://a.example/1", "http://a.example/2"})
	wantURLs(e.t, "unknown crawl", entryURLs(e.listURLs(frontier.ListParams{CrawlID: "nocrawl"})), nil)
	stop := errors.New("stop")
	calls := 0
	err := e.f.ListURLs(e.ctx, frontier.ListParams{}, func(frontier.URLEntry) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		e.t.Fatalf("ListURLs with fn failing: %v after %d calls", err, calls)
	}
}

func countURLs(e *env) {
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://b.example/1", "http://b.example/22"} {
		e.put(disc(u))
	}
	e.take("a.example")
	cases := []struct {
		p    frontier.ListParams
		want uint64
	}{
		{frontier.ListParams{}, 4},
		{frontier.ListParams{Key: "a.example"}, 2},
		{frontier.ListParams{Key: "b.example", Start: 1, Size: 1}, 2},
		{frontier.ListParams{Filter: "/2"}, 2},
		{frontier.ListParams{Filter: "B.EXAMPLE", IgnoreCase: true}, 2},
		{frontier.ListParams{Filter: "B.EXAMPLE"}, 0},
		{frontier.ListParams{CrawlID: "nocrawl"}, 0},
		{frontier.ListParams{Key: "nowhere.example"}, 0},
	}
	for _, c := range cases {
		if n := e.count(c.p); n != c.want {
			e.t.Errorf("CountURLs(%+v) = %d, want %d", c.p, n, c.want)
		}
	}
}

func purgeURLs(e *env) {
	t0 := e.clk.Now()
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://b.example/1"} {
		e.put(disc(u))
	}
	e.clk.Advance(10 * time.Second)
	e.put(disc("http://a.example/3"), disc("http://b.example/3"))
	e.take("a.example") // a.example/1, completed
	if got := e.get(frontier.GetParams{Key: "b.example", Lease: time.Hour, MaxURLsPerQueue: 1}); len(got) != 1 || got[0] != "http://b.example/1" {
		e.t.Fatalf("Get of b: %q", got)
	}
	n, err := e.f.PurgeURLs(e.ctx, frontier.ListParams{}, t0.Add(5*time.Second))
	if err != nil || n != 3 {
		e.t.Fatalf("PurgeURLs: %d, %v; want the 3 older URLs", n, err)
	}
	if _, err := e.f.Lookup(e.ctx, "", "http://a.example/2"); !errors.Is(err, frontier.ErrNotFound) {
		e.t.Fatalf("Lookup of a purged URL: %v", err)
	}
	if s := e.stats(""); s.Size != 2 || s.Completed != 0 || s.InProcess != 0 {
		e.t.Fatalf("stats after the purge %+v, want 2 queued", s)
	}
	wantURLs(e.t, "left", sorted(entryURLs(e.listURLs(frontier.ListParams{}))), []string{"http://a.example/3", "http://b.example/3"})
	if st := e.put(disc("http://a.example/1")); st[0] != frontier.OK {
		e.t.Fatalf("purged URL not new again: %v", st)
	}
	n, err = e.f.PurgeURLs(e.ctx, frontier.ListParams{Key: "b.example", Filter: "/3"}, e.clk.Now())
	if err != nil || n != 1 {
		e.t.Fatalf("PurgeURLs of one queue with a filter: %d, %v", n, err)
	}
	wantURLs(e.t, "left after the filtered purge", sorted(entryURLs(e.listURLs(frontier.ListParams{}))), []string{"http://a.example/1", "http://a.example/3"})
	if n := e.count(frontier.ListParams{}); n != 2 {
		e.t.Fatalf("CountURLs after purging %d, want 2", n)
	}
	if n, err := e.f.PurgeURLs(e.ctx, frontier.ListParams{CrawlID: "nocrawl"}, e.clk.Now()); err != nil || n != 0 {
		e.t.Fatalf("PurgeURLs of an unknown crawl: %d, %v", n, err)
	}
}

// pendingBlockAndDelay: the URLFrontier server may block a queue or set
// its delay before any URL of it is put; both apply when it appears, and
// the queue does not exist until then.
func pendingBlockAndDelay(e *env) {
	if err := e.f.BlockQueueUntil(e.ctx, "", "b.example", e.clk.Now().Add(time.Minute)); err != nil {
		e.t.Fatal(err)
	}
	if err := e.f.SetDelay(e.ctx, "", "d.example", time.Hour); err != nil {
		e.t.Fatal(err)
	}
	if keys, total := e.listQueues(0, 0, true); len(keys) != 0 || total != 0 {
		e.t.Fatalf("queues before any Put: %q, %d", keys, total)
	}
	if s := e.stats("b.example"); s.Queues != 0 {
		e.t.Fatalf("stats of a queue not put yet %+v", s)
	}
	if err := e.f.SetCrawlLimit(e.ctx, "", "b.example", 1); !errors.Is(err, frontier.ErrNotFound) {
		e.t.Fatalf("SetCrawlLimit on a queue with only a block: %v", err)
	}
	e.put(disc("http://b.example/1"), disc("http://d.example/1"), disc("http://d.example/2"))
	wantURLs(e.t, "b blocked, d served once", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), []string{"http://d.example/1"})
	e.ack("http://d.example/1", time.Time{})
	e.clk.Advance(2 * time.Minute)
	wantURLs(e.t, "after the block, within d's delay", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), []string{"http://b.example/1"})
	e.ack("http://b.example/1", time.Time{})
	e.clk.Advance(time.Hour)
	wantURLs(e.t, "after d's delay", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), []string{"http://d.example/2"})
}

// listsCompleted: ListURLs lists completed URLs after the queued ones of
// their queue; CountURLs counts them with a filter; PurgeURLs filters
// them; Lookup returns their metadata.
func listsCompleted(e *env) {
	md := map[string][]string{"k": {"v"}}
	e.put(frontier.Item{Info: frontier.URLInfo{URL: "http://a.example/done", Metadata: md}},
		disc("http://a.example/2"), disc("http://b.example/1"))
	got := e.get(frontier.GetParams{Key: "a.example", MaxURLsPerQueue: 1})
	if len(got) != 1 || got[0] != "http://a.example/done" {
		e.t.Fatalf("Get %q", got)
	}
	if err := e.f.Ack(e.ctx, frontier.URLInfo{URL: got[0], Metadata: md}, time.Time{}); err != nil {
		e.t.Fatal(err)
	}
	all := e.listURLs(frontier.ListParams{})
	wantURLs(e.t, "list", entryURLs(all), []string{"http://a.example/2", "http://a.example/done", "http://b.example/1"})
	if d := all[1]; !d.Completed || d.Key != "a.example" || !d.Created.Equal(e.clk.Now()) || !d.RefetchFrom.IsZero() || !slices.Equal(d.Metadata["k"], []string{"v"}) {
		e.t.Fatalf("completed entry %+v", d)
	}
	wantURLs(e.t, "Start 1", entryURLs(e.listURLs(frontier.ListParams{Start: 1, Size: 1})), []string{"http://a.example/done"})
	if n := e.count(frontier.ListParams{Filter: "done"}); n != 1 {
		e.t.Fatalf("CountURLs of the completed URL: %d", n)
	}
	st, err := e.f.Lookup(e.ctx, "", "http://a.example/done")
	if err != nil || !st.Completed || !slices.Equal(st.Metadata["k"], []string{"v"}) {
		e.t.Fatalf("Lookup of the completed URL: %+v, %v", st, err)
	}
	n, err := e.f.PurgeURLs(e.ctx, frontier.ListParams{Filter: "done"}, e.clk.Now())
	if err != nil || n != 1 {
		e.t.Fatalf("PurgeURLs of the completed URL: %d, %v", n, err)
	}
	if s := e.stats(""); s.Completed != 0 || s.Size != 2 {
		e.t.Fatalf("stats after the purge %+v", s)
	}
	wantURLs(e.t, "list after the purge", entryURLs(e.listURLs(frontier.ListParams{})), []string{"http://a.example/2", "http://b.example/1"})
}

// raisedInFlightBound: a queue served up to one caller's in-flight bound
// is served at once to a caller with a higher bound (URLFrontier clients
// may change max_urls_per_queue between calls).
func raisedInFlightBound(e *env) {
	e.put(disc("http://a.example/1"), disc("http://a.example/2"), disc("http://a.example/3"), disc("http://a.example/4"))
	wantURLs(e.t, "bound 1", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), []string{"http://a.example/1"})
	wantURLs(e.t, "bound 1 again", e.get(frontier.GetParams{MaxURLsPerQueue: 1}), nil)
	wantURLs(e.t, "bound 2", e.get(frontier.GetParams{MaxURLsPerQueue: 2}), []string{"http://a.example/2"})
	wantURLs(e.t, "bound 2 again", e.get(frontier.GetParams{MaxURLsPerQueue: 2}), nil)
	wantURLs(e.t, "no bound", sorted(e.get(frontier.GetParams{})), []string{"http://a.example/3", "http://a.example/4"})
}
