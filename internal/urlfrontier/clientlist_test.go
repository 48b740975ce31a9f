package urlfrontier

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// TestFromPBItem: fromPBItem reads back what toPBItem writes (times to the
// second), and a discovered item is due now.
func TestFromPBItem(t *testing.T) {
	created := time.Unix(1_700_000_000, 0)
	info := frontier.URLInfo{URL: "http://a.test/x", Key: "a.test", CrawlID: "c", Metadata: map[string][]string{"k": {"v"}}}
	for _, e := range []frontier.URLEntry{
		{URLInfo: info, Completed: true, Created: created},
		{URLInfo: info, RefetchFrom: created.Add(time.Hour), Created: created},
	} {
		if got := fromPBItem(toPBItem(e)); !reflect.DeepEqual(got, e) {
			t.Errorf("fromPBItem(toPBItem(%+v)) = %+v", e, got)
		}
	}
	d := fromPBItem(&pb.URLItem{Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: &pb.URLInfo{Url: "http://a.test/y", Key: "a.test"}}}})
	if d.URL != "http://a.test/y" || d.Completed || !d.RefetchFrom.IsZero() {
		t.Errorf("discovered item read as %+v", d)
	}
}

// TestClientLists drives Queues, URLs, Active and SetActive against a
// service: paging past one ListQueues page, a bound on the keys given,
// a queue's URLs with the completed one marked.
func TestClientLists(t *testing.T) {
	ln := serveLoopback(t)
	c, err := Dial(ln.Addr().String(), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const hosts = queuesPage + 5
	items := make([]frontier.Item, 0, hosts+1)
	for i := range hosts {
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: "http://h" + strconv.Itoa(i) + ".test/", CrawlID: "c"}})
	}
	items = append(items, frontier.Item{Info: frontier.URLInfo{URL: "http://h0.test/done", CrawlID: "c"}, Known: true})
	if _, err := c.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := c.Queues(ctx, "c", 0, func(string) bool { n++; return true }); err != nil || n != hosts {
		t.Errorf("Queues: %d keys, %v; want %d", n, err, hosts)
	}
	n = 0
	if err := c.Queues(ctx, "c", 7, func(string) bool { n++; return true }); err != nil || n != 7 {
		t.Errorf("Queues bounded to 7: %d keys, %v", n, err)
	}
	es, err := c.URLs(ctx, "c", "h0.test", 10)
	if err != nil || len(es) != 2 {
		t.Fatalf("URLs: %+v, %v", es, err)
	}
	done := 0
	for _, e := range es {
		if e.Completed {
			done++
		}
	}
	if done != 1 {
		t.Errorf("URLs: %d completed, want 1: %+v", done, es)
	}
	for _, on := range []bool{false, true} {
		if err := c.SetActive(ctx, on); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Active(ctx); err != nil || got != on {
			t.Errorf("Active after SetActive(%v) = %v, %v", on, got, err)
		}
	}
}
