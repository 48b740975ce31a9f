package urlfrontier

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// serveStoppable serves a fresh frontier on a new loopback port and
// returns its address and a function that stops the service.
func serveStoppable(t *testing.T) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	f, err := frontier.Open(db, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{Frontier: f})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewGRPCServer(srv)
	go g.Serve(ln)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			g.Stop()
			f.Close()
			db.Close()
		}
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// TestClientPutAsCrawler: the crawler's acknowledgement Put (outlinks
// and the page's ack in one call) gets one status per item in order, over
// several PutDiscovered batches, and Depth and Priority survive the trip
// through the service.
func TestClientPutAsCrawler(t *testing.T) {
	addr, _ := serveStoppable(t)
	c, err := Dial(addr, ClientOptions{Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://p.test/", Priority: 2}}}); err != nil {
		t.Fatal(err)
	}
	ls, err := c.Get(ctx, frontier.GetParams{CrawlID: "", MaxURLsPerQueue: 1})
	if err != nil || len(ls) != 1 || ls[0].Priority != 2 || ls[0].Depth != 0 || ls[0].Metadata != nil {
		t.Fatalf("seed lease = %+v, %v", ls, err)
	}
	const n = 2500 // three batches
	var items []frontier.Item
	want := []frontier.Status{}
	for i := range n {
		// Every 100th outlink is the page itself: already known, skipped.
		u := fmt.Sprintf("http://q%d.test/%d", i%7, i)
		st := frontier.OK
		if i%100 == 0 {
			u, st = "http://p.test/", frontier.Skipped
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: u, Depth: 1 + i%3, Priority: int8(i % 2),
			Metadata: map[string][]string{"via": {"http://p.test/"}}}})
		want = append(want, st)
	}
	// The ack sits among the outlinks, as the crawler's acker groups them.
	items = slices.Insert(items, 10, frontier.Item{Info: ls[0].URLInfo, Known: true})
	want = slices.Insert(want, 10, frontier.OK)
	st, err := c.Put(ctx, items)
	if err != nil || !slices.Equal(st, want) {
		t.Fatalf("Put: %v (%d statuses, want %d)", err, len(st), len(want))
	}
	if s, err := c.StatsContext(ctx, "", ""); err != nil || s.Completed != 1 || s.Size != n-n/100 {
		t.Errorf("stats = %+v, %v; want 1 completed, %d queued", s, err, n-n/100)
	}
	got, err := c.Get(ctx, frontier.GetParams{Key: "q1.test"})
	if err != nil || len(got) == 0 {
		t.Fatalf("Get q1 = %v, %v", got, err)
	}
	for _, l := range got {
		var i int
		fmt.Sscanf(l.URL, "http://q1.test/%d", &i)
		if l.Depth != 1+i%3 || l.Priority != int8(i%2) || !maps.EqualFunc(l.Metadata, map[string][]string{"via": {"http://p.test/"}}, slices.Equal) {
			t.Errorf("lease %s: depth %d priority %d metadata %v", l.URL, l.Depth, l.Priority, l.Metadata)
		}
	}
}

// TestClientStatsDuringOutage: while the service is unreachable, Stats
// answers the last counts it read instead of an empty frontier (a crawler
// would take that for the end of its crawl).
func TestClientStatsDuringOutage(t *testing.T) {
	addr, stop := serveStoppable(t)
	c, err := Dial(addr, ClientOptions{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, MaxAttempts: 3, CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://a.test/1"}}, {Info: frontier.URLInfo{URL: "http://a.test/2"}}}); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats("", ""); s.Size != 2 {
		t.Fatalf("stats = %+v", s)
	}
	stop()
	if _, err := c.StatsContext(ctx, "", ""); err == nil {
		t.Fatal("the service still answers")
	}
	if s := c.Stats("", ""); s.Size != 2 || s.CrawlID != "DEFAULT" {
		t.Errorf("stats during the outage = %+v, want the last counts (size 2)", s)
	}
	if s := c.Stats("other", ""); s.Size != 0 || s.CrawlID != "other" {
		t.Errorf("stats of a crawl never read = %+v, want zero counts", s)
	}
}

// FuzzWireInfo: Depth and Priority survive the trip through URLFrontier
// metadata, the reserved keys never reach the crawler, and whatever
// metadata a service returns is read without a panic.
func FuzzWireInfo(f *testing.F) {
	f.Add("http://a.test/", 3, int8(2), "k", "v", "7")
	f.Add("", 0, int8(0), mdDepth, "-1", "x")
	f.Add("http://b.test/", 1<<20, int8(-128), mdPriority, "300", "")
	f.Fuzz(func(t *testing.T, u string, depth int, prio int8, k, v, raw string) {
		depth = max(depth, 0)
		in := frontier.URLInfo{URL: u, Depth: depth, Priority: prio, Metadata: map[string][]string{k: {v}}}
		out := fromWireInfo(toWireInfo(in))
		if out.URL != u || out.Depth != depth || out.Priority != prio {
			t.Errorf("round trip of %+v gave %+v", in, out)
		}
		if k != mdDepth && k != mdPriority && !slices.Equal(out.Metadata[k], []string{v}) {
			t.Errorf("metadata %q lost: %v", k, out.Metadata)
		}
		if k == mdDepth || k == mdPriority {
			return
		}
		got := fromWireInfo(&pb.URLInfo{Url: u, Metadata: map[string]*pb.StringList{mdDepth: {Values: []string{raw}}, mdPriority: {Values: []string{raw, raw}}, k: {Values: []string{v}}}})
		if _, ok := got.Metadata[mdDepth]; ok || got.Depth < 0 || got.Priority != 0 {
			t.Errorf("wire metadata read as %+v", got)
		}
	})
}
