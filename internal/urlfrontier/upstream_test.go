// The behaviours the reference implementation's tests assert
// (crawler-commons/url-frontier at 69399d2: tests/…/URLFrontierServiceTest,
// service/…/MemoryFrontierServiceTest, RocksDBServiceTest,
// GetURLsReservationTest, ListQueuesPaginationTest, SetCrawlLimitTest,
// MemoryCreationDatesTest, PutDiscoveredTest,
// MemoryFrontierServiceConcurrencyTest), and what else a client of it can
// observe, checked through the generated client. Each case is named after
// the upstream test or behaviour; where Courtesy differs on purpose
// (docs/frontier-service.md, "Differences"), the case asserts Courtesy's
// answer and says so.

package urlfrontier

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// upstreamCrawl, with the URLs of upstream's ServiceTestUtil.initURLs.
const (
	upstreamCrawl   = "crawl_id"
	upDiscovered    = "https://www.mysite.com/discovered"
	upCompleted     = "https://www.mysite.com/completed"
	upToRefetch     = "https://www.mysite.com/knowntorefetch"
	upSecondQueue   = "https://www.mysite.com/secondqueue"
	upToBeDeleted   = "https://www.delete.me/tobedeleted"
	upQueueMysite   = "queue_mysite"
	upAnotherQueue  = "another_queue"
	upDeleteQueue   = "delete_queue"
	upstreamTimeout = 10 * time.Second
)

// keyed is a URLInfo with a key and crawl ID.
func keyed(u, key, crawl string) *pb.URLInfo {
	return &pb.URLInfo{Url: u, Key: key, CrawlID: crawl}
}

// initUpstream puts what upstream's initURLs puts: 5 URLs in 3 queues of
// crawl_id, one of them discovered then completed in the same stream, and
// returns the refetch date of the scheduled ones.
func (fx *fixture) initUpstream() uint64 {
	fx.t.Helper()
	later := uint64(fx.clk.Now().Unix() + 3600)
	md := func(v string) map[string]*pb.StringList {
		return map[string]*pb.StringList{"meta1": {Values: []string{v}}}
	}
	completed := keyed(upCompleted, upQueueMysite, upstreamCrawl)
	completed.Metadata = md("md2")
	disc := keyed(upDiscovered, upQueueMysite, upstreamCrawl)
	disc.Metadata = md("md1")
	done := known(completed, 0)
	done.ID = "done"
	acks := fx.put(
		discovered("1", disc),
		discovered("2", completed),
		done,
		known(keyed(upToRefetch, upQueueMysite, upstreamCrawl), later),
		known(keyed(upSecondQueue, upAnotherQueue, upstreamCrawl), later),
		known(keyed(upToBeDeleted, upDeleteQueue, upstreamCrawl), later),
	)
	for id, st := range acks {
		if st != pb.AckMessage_OK {
			fx.t.Fatalf("initURLs: ack %s = %v", id, st)
		}
	}
	return later
}

func (fx *fixture) stats(crawl, key string) *pb.Stats {
	fx.t.Helper()
	st, err := fx.c.GetStats(context.Background(), &pb.QueueWithinCrawlParams{CrawlID: crawl, Key: key})
	if err != nil {
		fx.t.Fatalf("GetStats(%q, %q): %v", crawl, key, err)
	}
	return st
}

func (fx *fixture) status(u, key, crawl string) (*pb.URLItem, error) {
	return fx.c.GetURLStatus(context.Background(), &pb.URLStatusRequest{Url: u, Key: key, CrawlID: crawl})
}

func (fx *fixture) listURLs(p *pb.ListUrlParams) []*pb.URLItem {
	fx.t.Helper()
	st, err := fx.c.ListURLs(context.Background(), p)
	if err != nil {
		fx.t.Fatal(err)
	}
	var out []*pb.URLItem
	for range 10_000 {
		it, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			fx.t.Fatalf("ListURLs: %v", err)
		}
		out = append(out, it)
	}
	fx.t.Fatal("ListURLs: no end")
	return nil
}

func (fx *fixture) count(p *pb.CountUrlParams) uint64 {
	fx.t.Helper()
	n, err := fx.c.CountURLs(context.Background(), p)
	if err != nil {
		fx.t.Fatalf("CountURLs: %v", err)
	}
	return n.GetValue()
}

// inCrawl is the crawlID case of GetParams' oneof.
func inCrawl(id string) *pb.GetParams_CrawlID { return &pb.GetParams_CrawlID{CrawlID: id} }

func TestUpstreamBehaviours(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, fx *fixture)
	}{
		{"NeverRefetched: a new known URL without a refetch date is completed, never served", func(t *testing.T, fx *fixture) {
			if a := fx.put(known(keyed("http://key1.com/", "key1.com", ""), 0)); a["http://key1.com/"] != pb.AckMessage_OK {
				t.Fatalf("ack = %v", a)
			}
			if got := fx.get(&pb.GetParams{Key: "key1.com", MaxUrlsPerQueue: 1, DelayRequestable: 2, Item: inCrawl("DEFAULT")}); got != nil {
				t.Errorf("served %v", got)
			}
			if st := fx.stats("", "key1.com"); st.GetSize() != 0 || st.GetCounts()["completed"] != 1 || st.GetNumberOfQueues() != 1 {
				t.Errorf("stats = %v; want one queue, 0 active, 1 completed", st)
			}
		}},
		{"RightOrder: the earlier refetch date is served first", func(t *testing.T, fx *fixture) {
			now := uint64(fx.clk.Now().Unix())
			fx.put(known(keyed("http://key1.com/later", "key1.com", ""), now), known(keyed("http://key1.com/sooner", "key1.com", ""), now-10_000))
			got := fx.get(&pb.GetParams{Key: "key1.com", MaxUrlsPerQueue: 2, DelayRequestable: 2, Item: inCrawl("DEFAULT")})
			if !slices.Equal(got, []string{"http://key1.com/sooner", "http://key1.com/later"}) {
				t.Errorf("served %v", got)
			}
		}},
		{"testUpdates: duplicates acked, lease counted in stats and expiring, DeleteQueue counts", func(t *testing.T, fx *fixture) {
			in := keyed("http://key1.com/", "key1.com", "")
			if a := fx.put(discovered("first", in), discovered("second", in)); len(a) != 2 {
				t.Fatalf("acks = %v; want one per item", a)
			}
			if ql, err := fx.c.ListQueues(ctx, &pb.Pagination{}); err != nil || len(ql.GetValues()) != 1 {
				t.Fatalf("ListQueues = %v, %v; want 1 queue", ql, err)
			}
			p := &pb.GetParams{Key: "key1.com", MaxUrlsPerQueue: 1, DelayRequestable: 2, Item: inCrawl("DEFAULT")}
			if got := fx.get(p); !slices.Equal(got, []string{"http://key1.com/"}) {
				t.Fatalf("served %v", got)
			}
			if st := fx.stats("", "key1.com"); st.GetNumberOfQueues() != 1 || st.GetInProcess() != 1 {
				t.Errorf("stats while leased = %v", st)
			}
			if got := fx.get(p); got != nil {
				t.Errorf("served again while leased: %v", got)
			}
			fx.clk.Advance(2 * time.Second)
			if st := fx.stats("", "key1.com"); st.GetNumberOfQueues() != 1 || st.GetInProcess() != 0 {
				t.Errorf("stats after the lease = %v", st)
			}
			if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "key1.com"}); err != nil || n.GetValue() != 1 {
				t.Errorf("DeleteQueue = %v, %v; want 1", n, err)
			}
			if st := fx.stats("", "key1.com"); st.GetNumberOfQueues() != 0 {
				t.Errorf("stats after DeleteQueue = %v", st)
			}
		}},
		{"testQueueNames: the default key stops at the query", func(t *testing.T, fx *fixture) {
			fx.put(discovered("q", info("http://gac.icann.org?language_id=9")))
			if st := fx.stats("", "gac.icann.org"); st.GetSize() != 1 {
				t.Errorf("stats = %v", st)
			}
			if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "gac.icann.org"}); err != nil || n.GetValue() != 1 {
				t.Errorf("DeleteQueue = %v, %v", n, err)
			}
		}},
		{"testCrawlIDs: implicit and explicit DEFAULT, a bespoke crawl, DeleteCrawl", func(t *testing.T, fx *fixture) {
			if cs, err := fx.c.ListCrawls(ctx, &pb.Local{}); err != nil || len(cs.GetValues()) != 0 {
				t.Fatalf("ListCrawls = %v, %v", cs, err)
			}
			fx.put(discovered("b", keyed("http://urlfrontier.net/", "", "BESPOKE")))
			fx.put(discovered("i", info("http://urlfrontier.net/")))
			fx.put(discovered("e", keyed("http://urlfrontier.net/", "", "DEFAULT")))
			for _, crawl := range []string{"DEFAULT", "BESPOKE"} {
				if st := fx.stats(crawl, ""); st.GetSize() != 1 || st.GetNumberOfQueues() != 1 || st.GetCrawlID() != crawl {
					t.Errorf("stats %s = %v", crawl, st)
				}
			}
			fx.c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{Value: "BESPOKE"})
			if st := fx.stats("BESPOKE", ""); st.GetSize() != 0 || st.GetCrawlID() != "BESPOKE" {
				t.Errorf("stats after DeleteCrawl = %v", st)
			}
			fx.c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{})
			if st := fx.stats("", ""); st.GetSize() != 0 || st.GetCrawlID() != "DEFAULT" {
				t.Errorf("DEFAULT after DeleteCrawl \"\" = %v", st)
			}
		}},
		{"testGetStatus: discovered, completed, to refetch, not found", func(t *testing.T, fx *fixture) {
			later := fx.initUpstream()
			tests := []struct {
				url     string
				refetch uint64 // 1: any date after 0
			}{{upDiscovered, 1}, {upCompleted, 0}, {upToRefetch, later}}
			for _, tc := range tests {
				it, err := fx.status(tc.url, upQueueMysite, upstreamCrawl)
				if err != nil {
					t.Errorf("%s: %v", tc.url, err)
					continue
				}
				k := k(it)
				if i := k.GetInfo(); i.GetUrl() != tc.url || i.GetKey() != upQueueMysite || i.GetCrawlID() != upstreamCrawl || it.GetCreationDate() == 0 {
					t.Errorf("%s: %v", tc.url, it)
				}
				if got := k.GetRefetchableFromDate(); tc.refetch == 1 && got == 0 || tc.refetch != 1 && got != tc.refetch {
					t.Errorf("%s: refetchable_from_date %d, want %d", tc.url, got, tc.refetch)
				}
			}
			// Documented difference: a completed URL keeps its metadata.
			if it, err := fx.status(upCompleted, upQueueMysite, upstreamCrawl); err != nil || !slices.Equal(k(it).GetInfo().GetMetadata()["meta1"].GetValues(), []string{"md2"}) {
				t.Errorf("completed URL's metadata: %v, %v", it, err)
			}
			for _, key := range []string{upQueueMysite, "queue_3"} {
				if _, err := fx.status("https://www.example3.com", key, upstreamCrawl); status.Code(err) != codes.NotFound {
					t.Errorf("unknown URL in queue %s: %v, want NOT_FOUND", key, err)
				}
			}
			for _, u := range []string{"", "http:///x"} {
				if _, err := fx.status(u, "", upstreamCrawl); status.Code(err) != codes.InvalidArgument {
					t.Errorf("no key from %q: %v, want INVALID_ARGUMENT", u, err)
				}
			}
		}},
		{"testListAllURLs, testListURLsinglequeue, filters and start", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			f, yes, no := "COMPLETED", true, false
			tests := []struct {
				name string
				p    *pb.ListUrlParams
				want int
			}{
				{"all", &pb.ListUrlParams{CrawlID: upstreamCrawl, Size: 100}, 5},
				{"one queue", &pb.ListUrlParams{CrawlID: upstreamCrawl, Key: upAnotherQueue, Size: 100}, 1},
				{"ignore case", &pb.ListUrlParams{CrawlID: upstreamCrawl, Size: 100, Filter: &f, IgnoreCase: &yes}, 1},
				{"case sensitive", &pb.ListUrlParams{CrawlID: upstreamCrawl, Size: 100, Filter: &f, IgnoreCase: &no}, 0},
				{"start 3", &pb.ListUrlParams{CrawlID: upstreamCrawl, Start: 3, Size: 10}, 2},
				{"size 0 is 100", &pb.ListUrlParams{CrawlID: upstreamCrawl}, 5},
				{"another crawl", &pb.ListUrlParams{Size: 100}, 0},
			}
			for _, tc := range tests {
				got := fx.listURLs(tc.p)
				if len(got) != tc.want {
					t.Errorf("%s: %d URLs, want %d", tc.name, len(got), tc.want)
				}
				for _, it := range got {
					if it.GetKnown() == nil || it.GetCreationDate() == 0 || it.GetKnown().GetInfo().GetCrawlID() != upstreamCrawl {
						t.Errorf("%s: %v; want a known item with its creation date", tc.name, it)
					}
				}
			}
		}},
		{"testCountURLs: a queue, filters with and without case", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			f, yes, no := "COMPLETED", true, false
			tests := []struct {
				p    *pb.CountUrlParams
				want uint64
			}{
				{&pb.CountUrlParams{CrawlID: upstreamCrawl, Key: upQueueMysite}, 3},
				{&pb.CountUrlParams{CrawlID: upstreamCrawl, Key: upQueueMysite, Filter: &f, IgnoreCase: &no}, 0},
				{&pb.CountUrlParams{CrawlID: upstreamCrawl, Key: upQueueMysite, Filter: &f, IgnoreCase: &yes}, 1},
				{&pb.CountUrlParams{CrawlID: upstreamCrawl}, 5},
			}
			for _, tc := range tests {
				if got := fx.count(tc.p); got != tc.want {
					t.Errorf("CountURLs(%v) = %d, want %d", tc.p, got, tc.want)
				}
			}
		}},
		{"testNoRescheduleCompleted: a discovered item does not bring a completed URL back", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			if a := fx.put(discovered("again", keyed(upCompleted, upQueueMysite, upstreamCrawl))); a["again"] != pb.AckMessage_SKIPPED {
				t.Errorf("ack = %v, want SKIPPED", a)
			}
			if it, err := fx.status(upCompleted, upQueueMysite, upstreamCrawl); err != nil || k(it).GetRefetchableFromDate() != 0 {
				t.Errorf("status = %v, %v; want still completed", it, err)
			}
		}},
		{"testRescheduleCompleted: discovered is skipped, known reschedules", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			if a := fx.put(discovered("d", keyed(upToRefetch, upQueueMysite, upstreamCrawl))); a["d"] != pb.AckMessage_SKIPPED {
				t.Errorf("discovered ack = %v, want SKIPPED", a)
			}
			const refetch = 2943003600
			if a := fx.put(known(keyed(upToRefetch, upQueueMysite, upstreamCrawl), refetch)); a[upToRefetch] != pb.AckMessage_OK {
				t.Errorf("known ack = %v, want OK", a)
			}
			if it, err := fx.status(upToRefetch, upQueueMysite, upstreamCrawl); err != nil || k(it).GetRefetchableFromDate() != refetch {
				t.Errorf("status = %v, %v; want refetchable from %d", it, err, refetch)
			}
		}},
		{"known date in the future: served from that second, not before", func(t *testing.T, fx *fixture) {
			fx.put(known(info("http://f.test/"), uint64(fx.clk.Now().Unix()+60)))
			p := &pb.GetParams{Item: anyCrawl()}
			if got := fx.get(p); got != nil {
				t.Errorf("served before its date: %v", got)
			}
			fx.clk.Advance(60 * time.Second)
			if got := fx.get(p); !slices.Equal(got, []string{"http://f.test/"}) {
				t.Errorf("at its date: %v", got)
			}
		}},
		{"a known item ends the lease: completed (0) or due again", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", info("http://l.test/a")), discovered("b", info("http://l.test/b")))
			p := &pb.GetParams{Key: "l.test", Item: inCrawl("")}
			if got := fx.get(p); len(got) != 2 {
				t.Fatalf("served %v", got)
			}
			now := uint64(fx.clk.Now().Unix())
			fx.put(known(info("http://l.test/a"), 0), known(info("http://l.test/b"), now))
			if st := fx.stats("", "l.test"); st.GetInProcess() != 0 || st.GetCounts()["completed"] != 1 || st.GetSize() != 1 {
				t.Errorf("stats = %v; want no lease, 1 completed, 1 active", st)
			}
			fx.clk.Advance(time.Second)
			if got := fx.get(p); !slices.Equal(got, []string{"http://l.test/b"}) {
				t.Errorf("served %v; want b again, well before its 30 s lease ends", got)
			}
		}},
		{"delay_requestable 0 leases for 30 s", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", info("http://l.test/a")))
			p := &pb.GetParams{Item: anyCrawl()}
			fx.get(p)
			fx.clk.Advance(29 * time.Second)
			if got := fx.get(p); got != nil {
				t.Errorf("served after 29 s: %v", got)
			}
			fx.clk.Advance(time.Second)
			if got := fx.get(p); len(got) != 1 {
				t.Errorf("not served after 30 s: %v", got)
			}
		}},
		{"GetURLs: metadata, crawl scoping, unknown key", func(t *testing.T, fx *fixture) {
			md := map[string]*pb.StringList{"depth": {Values: []string{"1", "2"}}}
			fx.put(discovered("a", &pb.URLInfo{Url: "http://m.test/", Metadata: md}), discovered("b", keyed("http://m.test/", "", "other")))
			st, err := fx.c.GetURLs(ctx, &pb.GetParams{Item: inCrawl("DEFAULT")})
			if err != nil {
				t.Fatal(err)
			}
			u, err := st.Recv()
			if err != nil || u.GetCrawlID() != "DEFAULT" || u.GetKey() != "m.test" || !slices.Equal(u.GetMetadata()["depth"].GetValues(), []string{"1", "2"}) {
				t.Errorf("URLInfo = %v, %v", u, err)
			}
			if _, err := st.Recv(); !errors.Is(err, io.EOF) {
				t.Errorf("the other crawl served too: %v", err)
			}
			if got := fx.get(&pb.GetParams{Key: "nowhere.test", Item: inCrawl("other")}); got != nil {
				t.Errorf("unknown key served %v", got)
			}
			if got := fx.get(&pb.GetParams{Item: anyCrawl()}); !slices.Equal(got, []string{"http://m.test/"}) {
				t.Errorf("anyCrawlID served %v; want the other crawl's URL", got)
			}
		}},
		{"MaxQueues and MaxUrlsPerQueue bound one answer", func(t *testing.T, fx *fixture) {
			var items []*pb.URLItem
			for _, u := range []string{"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1", "http://b.test/2", "http://c.test/1"} {
				items = append(items, discovered(u, info(u)))
			}
			fx.put(items...)
			got := fx.get(&pb.GetParams{MaxQueues: 2, MaxUrlsPerQueue: 2, Item: anyCrawl()})
			hosts := map[string]int{}
			for _, u := range got {
				hosts[u[:len("http://a.test")]]++
			}
			if len(hosts) != 2 {
				t.Errorf("served %v: want 2 queues", got)
			}
			for h, n := range hosts {
				if n > 2 {
					t.Errorf("%s: %d URLs, want at most 2", h, n)
				}
			}
		}},
		{"rotationPathServesQueueOnlyOncePerWindow, keyed too", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", keyed("https://www.mysite.com/a", upQueueMysite, upstreamCrawl)), discovered("b", keyed("https://www.mysite.com/b", upQueueMysite, upstreamCrawl)))
			fx.c.SetDelay(ctx, &pb.QueueDelayParams{Key: upQueueMysite, CrawlID: upstreamCrawl, DelayRequestable: 300})
			rotation := &pb.GetParams{MaxUrlsPerQueue: 1, DelayRequestable: 30, Item: anyCrawl()}
			keyedP := &pb.GetParams{Key: upQueueMysite, MaxUrlsPerQueue: 1, DelayRequestable: 30, Item: inCrawl(upstreamCrawl)}
			if got := fx.get(rotation); len(got) != 1 {
				t.Fatalf("first serving %v", got)
			}
			fx.clk.Advance(31 * time.Second) // the lease is over, the delay is not
			if got, got2 := fx.get(rotation), fx.get(keyedP); got != nil || got2 != nil {
				t.Errorf("served inside the delay: %v %v", got, got2)
			}
			fx.clk.Advance(270 * time.Second)
			if got := fx.get(keyedP); len(got) != 1 {
				t.Errorf("after the delay: %v", got)
			}
		}},
		{"zeroSentDoesNotPenalizeQueue: a serving with nothing due starts no delay", func(t *testing.T, fx *fixture) {
			fx.put(known(keyed("http://z.test/", "z.test", ""), uint64(fx.clk.Now().Unix()+5)))
			fx.c.SetDelay(ctx, &pb.QueueDelayParams{Key: "z.test", DelayRequestable: 300})
			p := &pb.GetParams{Key: "z.test", Item: inCrawl("")}
			if got := fx.get(p); got != nil {
				t.Fatalf("served early: %v", got)
			}
			fx.clk.Advance(5 * time.Second)
			if got := fx.get(p); len(got) != 1 {
				t.Errorf("due URL not served: %v", got)
			}
		}},
		{"keyedRequestHonoursCrawlLimit, limit 0 removes it", func(t *testing.T, fx *fixture) {
			fx.put(known(keyed("https://www.mysite.com/done", upQueueMysite, upstreamCrawl), 0),
				discovered("a", keyed("https://www.mysite.com/a", upQueueMysite, upstreamCrawl)))
			if _, err := fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Key: upQueueMysite, CrawlID: upstreamCrawl, Limit: 1}); err != nil {
				t.Fatal(err)
			}
			keyedP := &pb.GetParams{Key: upQueueMysite, Item: inCrawl(upstreamCrawl)}
			if got, got2 := fx.get(keyedP), fx.get(&pb.GetParams{Item: anyCrawl()}); got != nil || got2 != nil {
				t.Errorf("served past the limit: %v %v", got, got2)
			}
			fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Key: upQueueMysite, CrawlID: upstreamCrawl, Limit: 0})
			if got := fx.get(keyedP); len(got) != 1 {
				t.Errorf("limit removed: served %v", got)
			}
		}},
		{"SetCrawlLimitTest: Empty answer; unknown queue an error (NOT_FOUND)", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", keyed("https://www.mysite.com/a", upQueueMysite, upstreamCrawl)))
			if e, err := fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Key: upQueueMysite, CrawlID: upstreamCrawl, Limit: 5}); err != nil || e == nil {
				t.Errorf("SetCrawlLimit = %v, %v", e, err)
			}
			_, err := fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Key: "nosuchqueue", CrawlID: upstreamCrawl, Limit: 5})
			if s, _ := status.FromError(err); s.Code() != codes.NotFound || s.Message() != "urlfrontier: CrawlId and Queue combination is not found." {
				t.Errorf("unknown queue: %v", err)
			}
		}},
		{"gateRejectsBlockedQueues, queueBlockedViaRpcIsNotServedAfterwards", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", keyed("https://www.mysite.com/a", upQueueMysite, upstreamCrawl)))
			now := fx.clk.Now().Unix()
			block := func(sec int64) {
				if _, err := fx.c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Key: upQueueMysite, CrawlID: upstreamCrawl, Time: uint64(sec)}); err != nil {
					t.Fatal(err)
				}
			}
			p := &pb.GetParams{Key: upQueueMysite, Item: inCrawl(upstreamCrawl), DelayRequestable: 1}
			block(now + 3600)
			if got := fx.get(p); got != nil {
				t.Errorf("blocked queue served %v", got)
			}
			if ql, _ := fx.c.ListQueues(ctx, &pb.Pagination{CrawlID: upstreamCrawl}); len(ql.GetValues()) != 0 {
				t.Errorf("blocked queue listed as active: %v", ql.GetValues())
			}
			// Courtesy unblocks at the second given, as the API says; the
			// reference keeps the queue blocked through that second
			// (documented difference).
			block(now)
			if got := fx.get(p); len(got) != 1 {
				t.Errorf("blocked until now: served %v, want the URL", got)
			}
			fx.clk.Advance(2 * time.Second)
			block(now - 1)
			if got := fx.get(p); len(got) != 1 {
				t.Errorf("block in the past: served %v", got)
			}
		}},
		{"ListQueuesPagination: pages over one crawl, inactive ones left out, echoes", func(t *testing.T, fx *fixture) {
			for i := range 6 {
				a := string(rune('0' + i))
				fx.put(discovered("a"+a, keyed("https://a"+a+".example.com/", "queue_a"+a, "crawl_a")),
					discovered("b"+a, keyed("https://b"+a+".example.com/", "queue_b"+a, "crawl_b")))
				if i%2 == 1 {
					fx.put(known(keyed("https://a"+a+".example.com/", "queue_a"+a, "crawl_a"), 0))
				}
			}
			page := func(start, size uint32, inactive bool) *pb.QueueList {
				ql, err := fx.c.ListQueues(ctx, &pb.Pagination{CrawlID: "crawl_a", Start: start, Size: size, IncludeInactive: inactive})
				if err != nil {
					t.Fatal(err)
				}
				return ql
			}
			through := func(size uint32, inactive bool) []string {
				var seen []string
				for start := uint32(0); start < 20; {
					ql := page(start, size, inactive)
					if len(ql.GetValues()) == 0 {
						break
					}
					seen = append(seen, ql.GetValues()...)
					start += uint32(len(ql.GetValues()))
				}
				return seen
			}
			if got := through(1, false); !slices.Equal(got, []string{"queue_a0", "queue_a2", "queue_a4"}) {
				t.Errorf("active queues = %v", got)
			}
			if got := through(2, true); len(got) != 6 || !sort.StringsAreSorted(got) {
				t.Errorf("with inactive = %v", got)
			}
			if ql := page(4, 2, true); len(ql.GetValues()) != 2 || ql.GetSize() != 2 || ql.GetStart() != 4 || ql.GetCrawlID() != "crawl_a" || ql.GetTotal() != 6 {
				t.Errorf("page = %v", ql)
			}
		}},
		{"MemoryCreationDatesTest: kept per crawl, through updates and completion", func(t *testing.T, fx *fixture) {
			const u = "https://www.mysite.com/shared"
			created := uint64(fx.clk.Now().Unix())
			fx.put(discovered("a", keyed(u, upQueueMysite, "crawlA")), discovered("b", keyed(u, upQueueMysite, "crawlB")))
			fx.clk.Advance(2 * time.Second)
			fx.put(known(keyed(u, upQueueMysite, "crawlA"), uint64(fx.clk.Now().Unix()+3600)))
			if it, err := fx.status(u, upQueueMysite, "crawlA"); err != nil || it.GetCreationDate() != created {
				t.Errorf("after an update: %v, %v; want created %d", it, err, created)
			}
			fx.clk.Advance(2 * time.Second)
			fx.put(known(keyed(u, upQueueMysite, "crawlA"), 0))
			if it, err := fx.status(u, upQueueMysite, "crawlA"); err != nil || it.GetCreationDate() != created {
				t.Errorf("after completion: %v, %v; want created %d", it, err, created)
			}
			fx.c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{Value: "crawlA"})
			if it, err := fx.status(u, upQueueMysite, "crawlB"); err != nil || it.GetCreationDate() != created {
				t.Errorf("other crawl: %v, %v; want created %d", it, err, created)
			}
		}},
		{"PutDiscoveredTest: created, duplicate in batch, known, malformed, empty batch", func(t *testing.T, fx *fixture) {
			st, err := fx.c.PutDiscovered(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				id    string
				items []*pb.URLInfo
				want  []pb.AckMessage_Status
			}{
				{"b1", []*pb.URLInfo{info("http://a.com/1"), info("http://b.com/1"), info("http://a.com/2")}, []pb.AckMessage_Status{0, 0, 0}},
				{"dup", []*pb.URLInfo{info("http://c.com/1"), info("http://c.com/1")}, []pb.AckMessage_Status{0, 1}},
				{"known", []*pb.URLInfo{info("http://a.com/1")}, []pb.AckMessage_Status{1}},
				{"malformed", []*pb.URLInfo{info(""), info("http://d.com/1")}, []pb.AckMessage_Status{1, 0}},
				{"probe", nil, nil},
			}
			for _, tc := range tests {
				if err := st.Send(&pb.DiscoveredBatch{ID: tc.id, Items: tc.items}); err != nil {
					t.Fatal(err)
				}
				a, err := st.Recv()
				if err != nil || a.GetID() != tc.id || !slices.Equal(a.GetStatuses(), tc.want) {
					t.Errorf("%s: ack %v, %v; want %v", tc.id, a, err, tc.want)
				}
			}
			st.CloseSend()
			if st := fx.stats("", ""); st.GetSize() != 5 || st.GetNumberOfQueues() != 4 {
				t.Errorf("stats = %v; want 5 URLs in 4 queues", st)
			}
		}},
		{"concurrentPutUrlsOnANewKey: one queue, both URLs", func(t *testing.T, fx *fixture) {
			done := make(chan struct{})
			for _, u := range []string{"http://n.test/1", "http://n.test/2"} {
				go func() {
					defer func() { done <- struct{}{} }()
					fx.put(discovered(u, keyed(u, "newkey", "")))
				}()
			}
			for range 2 {
				select {
				case <-done:
				case <-time.After(upstreamTimeout):
					t.Fatal("puts did not finish")
				}
			}
			if st := fx.stats("", ""); st.GetNumberOfQueues() != 1 || st.GetSize() != 2 {
				t.Errorf("stats = %v", st)
			}
		}},
		{"GetStats: unknown queue, active_queues, completed", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			if st := fx.stats(upstreamCrawl, "nosuchqueue"); st.GetNumberOfQueues() != 0 || st.GetSize() != 0 || st.GetCrawlID() != upstreamCrawl {
				t.Errorf("unknown queue: %v", st)
			}
			st := fx.stats(upstreamCrawl, "")
			if st.GetNumberOfQueues() != 3 || st.GetSize() != 4 || st.GetCounts()["completed"] != 1 || st.GetCounts()["active_queues"] != 3 || st.GetInProcess() != 0 {
				t.Errorf("crawl: %v", st)
			}
		}},
		{"SetDelay: a key in the DEFAULT crawl, named or empty; no key sets the default", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a1", info("http://a.test/1")), discovered("a2", info("http://a.test/2")),
				discovered("b1", info("http://b.test/1")), discovered("b2", info("http://b.test/2")))
			fx.c.SetDelay(ctx, &pb.QueueDelayParams{Key: "a.test", CrawlID: "DEFAULT", DelayRequestable: 100})
			fx.c.SetDelay(ctx, &pb.QueueDelayParams{DelayRequestable: 10})
			p := func(key string) *pb.GetParams {
				return &pb.GetParams{Key: key, MaxUrlsPerQueue: 1, DelayRequestable: 1, Item: inCrawl("")}
			}
			fx.get(p("a.test"))
			fx.get(p("b.test"))
			fx.clk.Advance(10 * time.Second)
			if got := fx.get(p("a.test")); got != nil {
				t.Errorf("a.test (100 s delay) served after 10 s: %v", got)
			}
			if got := fx.get(p("b.test")); len(got) != 1 {
				t.Errorf("b.test (default 10 s) not served after 10 s: %v", got)
			}
			fx.clk.Advance(90 * time.Second)
			if got := fx.get(p("a.test")); len(got) != 1 {
				t.Errorf("a.test not served after 100 s: %v", got)
			}
		}},
		{"SetActive: nothing served while inactive, puts still stored", func(t *testing.T, fx *fixture) {
			fx.c.SetActive(ctx, &pb.Active{State: false})
			if a := fx.put(discovered("a", info("http://i.test/"))); a["a"] != pb.AckMessage_OK {
				t.Errorf("put while inactive: %v", a)
			}
			if got := fx.get(&pb.GetParams{Item: anyCrawl()}); got != nil {
				t.Errorf("served while inactive: %v", got)
			}
			if a, err := fx.c.GetActive(ctx, &pb.Local{}); err != nil || a.GetState() {
				t.Errorf("GetActive = %v, %v", a, err)
			}
			fx.c.SetActive(ctx, &pb.Active{State: true})
			if got := fx.get(&pb.GetParams{Item: anyCrawl()}); len(got) != 1 {
				t.Errorf("served after SetActive true: %v", got)
			}
		}},
		{"DeleteCrawl and DeleteQueue: counts, unknown queue, ListCrawls", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "nosuchqueue", CrawlID: upstreamCrawl}); err != nil || n.GetValue() != 0 {
				t.Errorf("DeleteQueue unknown = %v, %v", n, err)
			}
			if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: upDeleteQueue, CrawlID: upstreamCrawl}); err != nil || n.GetValue() != 1 {
				t.Errorf("DeleteQueue = %v, %v", n, err)
			}
			if got := fx.count(&pb.CountUrlParams{CrawlID: upstreamCrawl}); got != 4 {
				t.Errorf("CountURLs after DeleteQueue = %d, want 4", got)
			}
			// URLs not completed: the reference memory implementation's count.
			if n, err := fx.c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{Value: upstreamCrawl}); err != nil || n.GetValue() != 3 {
				t.Errorf("DeleteCrawl = %v, %v; want 3", n, err)
			}
			if cs, _ := fx.c.ListCrawls(ctx, &pb.Local{}); len(cs.GetValues()) != 0 {
				t.Errorf("ListCrawls after DeleteCrawl = %v", cs.GetValues())
			}
		}},
		{"PurgeURLs 0 days: every URL so far", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			fx.clk.Advance(time.Second)
			if n, err := fx.c.PurgeURLs(ctx, &pb.PurgeUrlParams{CrawlID: upstreamCrawl}); err != nil || n.GetValue() != 5 {
				t.Errorf("PurgeURLs = %v, %v; want 5", n, err)
			}
			if st := fx.stats(upstreamCrawl, ""); st.GetSize() != 0 || st.GetCounts()["completed"] != 0 {
				t.Errorf("stats after purge = %v", st)
			}
		}},
		{"filterURL: a blank filter is no filter, start counts filtered URLs", func(t *testing.T, fx *fixture) {
			fx.initUpstream()
			blank, mysite := " \t", "mysite"
			if got := fx.count(&pb.CountUrlParams{CrawlID: upstreamCrawl, Filter: &blank}); got != 5 {
				t.Errorf("CountURLs blank filter = %d, want 5", got)
			}
			if got := fx.listURLs(&pb.ListUrlParams{CrawlID: upstreamCrawl, Filter: &blank}); len(got) != 5 {
				t.Errorf("ListURLs blank filter: %d URLs, want 5", len(got))
			}
			if got := fx.listURLs(&pb.ListUrlParams{CrawlID: upstreamCrawl, Filter: &mysite, Start: 3}); len(got) != 1 {
				t.Errorf("ListURLs filter from 3: %d URLs, want the 4th of 4", len(got))
			}
		}},
		{"size 0 means 100: ListQueues and ListURLs", func(t *testing.T, fx *fixture) {
			var items []*pb.URLItem
			for i := range 101 {
				u := "http://h" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ".test/"
				items = append(items, discovered(u, info(u)))
			}
			fx.put(items...)
			if ql, err := fx.c.ListQueues(ctx, &pb.Pagination{}); err != nil || len(ql.GetValues()) != 100 || ql.GetTotal() != 101 {
				t.Errorf("ListQueues: %d queues of %d, %v; want 100 of 101", len(ql.GetValues()), ql.GetTotal(), err)
			}
			if got := fx.listURLs(&pb.ListUrlParams{}); len(got) != 100 {
				t.Errorf("ListURLs: %d URLs, want 100", len(got))
			}
		}},
		{"a queue whose URLs are all leased is active", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", info("http://l.test/a")))
			fx.get(&pb.GetParams{Item: anyCrawl()})
			if ql, _ := fx.c.ListQueues(ctx, &pb.Pagination{}); !slices.Equal(ql.GetValues(), []string{"l.test"}) {
				t.Errorf("ListQueues = %v", ql.GetValues())
			}
			st := fx.stats("", "")
			if st.GetCounts()["active_queues"] != 1 || st.GetSize() != 1 || st.GetInProcess() != 1 {
				t.Errorf("stats = %v", st)
			}
			if it, err := fx.status("http://l.test/a", "", ""); err != nil || k(it).GetRefetchableFromDate() == 0 {
				t.Errorf("status of a leased URL = %v, %v", it, err)
			}
		}},
		{"QueueWithinCrawl: a blank crawl ID is DEFAULT for a key", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", info("http://w.test/a")))
			if got := fx.get(&pb.GetParams{Key: "w.test", Item: inCrawl(" ")}); len(got) != 1 {
				t.Errorf("GetURLs key, crawl \" \": %v", got)
			}
			if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "w.test", CrawlID: "DEFAULT"}); err != nil || n.GetValue() != 1 {
				t.Errorf("DeleteQueue = %v, %v", n, err)
			}
		}},
		{"a known item replaces the metadata", func(t *testing.T, fx *fixture) {
			md := func(v string) map[string]*pb.StringList { return map[string]*pb.StringList{"m": {Values: []string{v}}} }
			fx.put(discovered("a", &pb.URLInfo{Url: "http://r.test/", Metadata: md("old")}))
			fx.put(known(&pb.URLInfo{Url: "http://r.test/", Metadata: md("new")}, uint64(fx.clk.Now().Unix())))
			if it, err := fx.status("http://r.test/", "", ""); err != nil || !slices.Equal(k(it).GetInfo().GetMetadata()["m"].GetValues(), []string{"new"}) {
				t.Errorf("status = %v, %v", it, err)
			}
		}},
		// Documented differences: the cases assert Courtesy's answers.
		{"difference: GetURLs with crawlID \"\" and no key serves DEFAULT", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", info("http://e.test/")))
			if got := fx.get(&pb.GetParams{Item: inCrawl("")}); !slices.Equal(got, []string{"http://e.test/"}) {
				t.Errorf("served %v", got)
			}
		}},
		{"difference: a URL is unique within its crawl, whatever its key", func(t *testing.T, fx *fixture) {
			fx.put(discovered("a", keyed("http://u.test/", "one", "")))
			if a := fx.put(discovered("b", keyed("http://u.test/", "two", ""))); a["b"] != pb.AckMessage_SKIPPED {
				t.Errorf("discovered under another key: %v, want SKIPPED", a)
			}
			fx.put(known(keyed("http://u.test/", "two", ""), 1))
			if one, two := fx.stats("", "one"), fx.stats("", "two"); one.GetSize() != 0 || two.GetSize() != 1 {
				t.Errorf("after a known item under another key: one %v, two %v; want the URL moved", one, two)
			}
		}},
		{"difference: DeleteQueue keeps the completed URLs known", func(t *testing.T, fx *fixture) {
			fx.put(known(info("http://g.test/done"), 0), discovered("a", info("http://g.test/a")))
			if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "g.test"}); err != nil || n.GetValue() != 1 {
				t.Fatalf("DeleteQueue = %v, %v", n, err)
			}
			a := fx.put(discovered("done", info("http://g.test/done")), discovered("a", info("http://g.test/a")))
			if a["done"] != pb.AckMessage_SKIPPED || a["a"] != pb.AckMessage_OK {
				t.Errorf("put again: %v; want the completed URL SKIPPED, the removed one OK", a)
			}
			if _, err := fx.status("http://g.test/done", "", ""); status.Code(err) != codes.NotFound {
				t.Errorf("status of the completed URL: %v, want NOT_FOUND", err)
			}
			if a := fx.put(known(info("http://g.test/done"), 1)); a["http://g.test/done"] != pb.AckMessage_OK {
				t.Errorf("known item: %v", a)
			}
			fx.clk.Advance(time.Second)
			if got := fx.get(&pb.GetParams{Key: "g.test", Item: inCrawl("")}); len(got) != 2 {
				t.Errorf("served %v; want both URLs", got)
			}
		}},
		{"ListNodes: this node", func(t *testing.T, fx *fixture) {
			if n, err := fx.c.ListNodes(ctx, &pb.Empty{}); err != nil || !slices.Equal(n.GetValues(), []string{"127.0.0.1:7071"}) {
				t.Errorf("ListNodes = %v, %v", n, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newFixture(t))
		})
	}
}

// k is the known item of a URLItem.
func k(it *pb.URLItem) *pb.KnownURLItem { return it.GetKnown() }
