// Over 600 lines: every RPC of the URLFrontier service through the
// generated client, on one fixture; a file per RPC would repeat it.

package urlfrontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// clock is a manually advanced clock shared by the frontier and the server.
type clock = fakeclock.Clock

type fixture struct {
	t      *testing.T
	clk    *clock
	f      *frontier.Frontier
	c      pb.URLFrontierClient
	conn   *grpc.ClientConn
	levels *LogLevels
	reg    *prometheus.Registry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{t: t, clk: fakeclock.New(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))}
	db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	f, err := frontier.Open(db, frontier.Options{DefaultDelay: time.Second, Now: fx.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	fx.f = f
	fx.levels = NewLogLevels(slog.DiscardHandler, slog.LevelInfo)
	fx.reg = prometheus.NewRegistry()
	m, err := NewMetrics(fx.reg, f)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{Frontier: f, Nodes: []string{"127.0.0.1:7071"}, Levels: fx.levels, Metrics: m, Now: fx.clk.Now,
		Logger: fx.levels.Logger("urlfrontier")})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewGRPCServer(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	fx.conn, fx.c = conn, pb.NewURLFrontierClient(conn)
	t.Cleanup(func() {
		conn.Close()
		g.Stop()
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		db.Close()
	})
	return fx
}

func info(u string) *pb.URLInfo { return &pb.URLInfo{Url: u} }

func discovered(id string, in *pb.URLInfo) *pb.URLItem {
	return &pb.URLItem{ID: id, Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: in}}}
}

func known(in *pb.URLInfo, refetch uint64) *pb.URLItem {
	return &pb.URLItem{Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: in, RefetchableFromDate: refetch}}}
}

// put sends items on one PutURLs stream and returns the acks by ID.
func (fx *fixture) put(items ...*pb.URLItem) map[string]pb.AckMessage_Status {
	fx.t.Helper()
	st, err := fx.c.PutURLs(context.Background())
	if err != nil {
		fx.t.Fatal(err)
	}
	go func() {
		for _, it := range items {
			if err := st.Send(it); err != nil {
				return
			}
		}
		st.CloseSend()
	}()
	acks := map[string]pb.AckMessage_Status{}
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fx.t.Fatalf("PutURLs: %v", err)
		}
		acks[a.GetID()] = a.GetStatus()
	}
	if len(acks) != len(items) {
		fx.t.Fatalf("PutURLs: %d acks for %d items: %v", len(acks), len(items), acks)
	}
	return acks
}

func (fx *fixture) get(p *pb.GetParams) []string {
	fx.t.Helper()
	st, err := fx.c.GetURLs(context.Background(), p)
	if err != nil {
		fx.t.Fatal(err)
	}
	var out []string
	for {
		u, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			fx.t.Fatalf("GetURLs: %v", err)
		}
		out = append(out, u.GetUrl())
	}
}

func anyCrawl() *pb.GetParams_AnyCrawlID {
	return &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}
}

func TestPutURLsAcksAndSkips(t *testing.T) {
	fx := newFixture(t)
	long := strings.Repeat("k", 256)
	acks := fx.put(
		discovered("a", info("http://a.test/1")),
		discovered("", info("http://a.test/2")), // ack ID is the URL
		discovered("dup", info("http://a.test/1")),
		discovered("nohost", info("mailto:someone@a.test")),
		discovered("malformed", info("http://[::1/x")),
		discovered("empty", info("")),
		discovered("longkey", &pb.URLInfo{Url: "http://b.test/", Key: long}),
		&pb.URLItem{ID: "neither"},
		discovered("after", info("http://c.test/")),
	)
	want := map[string]pb.AckMessage_Status{
		"a": pb.AckMessage_OK, "http://a.test/2": pb.AckMessage_OK, "dup": pb.AckMessage_SKIPPED,
		"nohost": pb.AckMessage_SKIPPED, "malformed": pb.AckMessage_SKIPPED, "empty": pb.AckMessage_SKIPPED,
		"longkey": pb.AckMessage_SKIPPED, "neither": pb.AckMessage_SKIPPED, "after": pb.AckMessage_OK,
	}
	for id, w := range want {
		if acks[id] != w {
			t.Errorf("ack %q = %v, want %v", id, acks[id], w)
		}
	}
	// The duplicate may race the first within one stream; either way one is stored.
	if n, _ := fx.c.CountURLs(context.Background(), &pb.CountUrlParams{}); n.GetValue() != 3 {
		t.Errorf("count = %d, want 3", n.GetValue())
	}
}

func TestCrawlIDsAndDefaultKey(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	fx.put(
		discovered("1", &pb.URLInfo{Url: "http://Host.test:8080/a"}),
		discovered("2", &pb.URLInfo{Url: "http://host.test/b", CrawlID: "  "}),
		discovered("3", &pb.URLInfo{Url: "http://host.test/a", CrawlID: "c2"}),
		discovered("4", &pb.URLInfo{Url: "http://x.test/a", Key: "mykey", CrawlID: "c2"}),
	)
	crawls, err := fx.c.ListCrawls(ctx, &pb.Local{})
	if err != nil || !slices.Equal(crawls.GetValues(), []string{"DEFAULT", "c2"}) {
		t.Fatalf("ListCrawls = %v, %v", crawls.GetValues(), err)
	}
	st, err := fx.c.GetStats(ctx, &pb.QueueWithinCrawlParams{CrawlID: ""})
	if err != nil || st.GetCrawlID() != "DEFAULT" || st.GetSize() != 2 || st.GetNumberOfQueues() != 1 {
		t.Errorf("DEFAULT stats = %v, %v", st, err)
	}
	ql, err := fx.c.ListQueues(ctx, &pb.Pagination{CrawlID: "c2"})
	if err != nil || !slices.Equal(ql.GetValues(), []string{"host.test", "mykey"}) || ql.GetCrawlID() != "c2" || ql.GetTotal() != 2 {
		t.Errorf("c2 queues = %v, %v", ql, err)
	}
}

func TestGetURLsScheduling(t *testing.T) {
	fx := newFixture(t)
	now := uint64(fx.clk.Now().Unix())
	fx.put(
		known(info("http://a.test/late"), now-10),
		known(info("http://a.test/early"), now-100),
		known(info("http://a.test/future"), now+3600),
		discovered("b1", info("http://b.test/1")),
		discovered("b2", info("http://b.test/2")),
		discovered("c1", info("http://c.test/1")),
	)
	// Ascending due order within a queue; max_urls_per_queue per queue.
	got := fx.get(&pb.GetParams{MaxUrlsPerQueue: 2, Key: "a.test", Item: &pb.GetParams_CrawlID{CrawlID: ""}})
	if !slices.Equal(got, []string{"http://a.test/early", "http://a.test/late"}) {
		t.Fatalf("a.test = %v", got)
	}
	// A key without a crawl ID: empty stream.
	if got := fx.get(&pb.GetParams{Key: "b.test"}); got != nil {
		t.Errorf("key without crawlID = %v, want nothing", got)
	}
	// max_queues.
	if got := fx.get(&pb.GetParams{MaxQueues: 1, MaxUrlsPerQueue: 1, Item: anyCrawl()}); len(got) != 1 {
		t.Errorf("max_queues 1 = %v", got)
	}
	// b.test has one URL in flight: with max 1 per queue it is skipped;
	// c.test is served. a.test has 2 in flight.
	fx.clk.Advance(2 * time.Second)
	got = fx.get(&pb.GetParams{MaxUrlsPerQueue: 1, Item: anyCrawl()})
	if len(got) != 1 || !strings.HasPrefix(got[0], "http://c.test/") && !strings.HasPrefix(got[0], "http://b.test/") {
		t.Errorf("in-flight bound: got %v", got)
	}
	st, _ := fx.c.GetStats(context.Background(), &pb.QueueWithinCrawlParams{})
	if st.GetInProcess() != 4 || st.GetSize() != 6 || st.GetCounts()["active_queues"] != 3 {
		t.Errorf("stats = %v", st)
	}
	// The lease (delay_requestable) expires: URLs are served again.
	fx.clk.Advance(31 * time.Second)
	if got := fx.get(&pb.GetParams{Item: anyCrawl()}); len(got) != 5 {
		t.Errorf("after lease expiry = %v, want the 5 due URLs", got)
	}
	// A known item with refetchable_from_date 0 completes the URL and
	// ends its lease.
	fx.put(known(info("http://a.test/early"), 0))
	st, _ = fx.c.GetStats(context.Background(), &pb.QueueWithinCrawlParams{Key: "a.test"})
	if st.GetCounts()["completed"] != 1 || st.GetSize() != 2 || st.GetNumberOfQueues() != 1 || st.GetInProcess() != 1 {
		t.Errorf("a.test stats = %v", st)
	}
	fx.clk.Advance(2 * time.Hour)
	if got := fx.get(&pb.GetParams{Key: "a.test", DelayRequestable: 5, Item: &pb.GetParams_CrawlID{}}); !slices.Equal(got, []string{"http://a.test/late", "http://a.test/future"}) {
		t.Errorf("completed URL served again? %v", got)
	}
}

// TestGetURLsDueOrder: a queue serves its URLs by next-fetch date, a
// discovered URL's being the time it was put (as in URLFrontier), so a
// known URL due earlier comes first whenever it was put.
func TestGetURLsDueOrder(t *testing.T) {
	type put struct {
		url     string
		refetch int64 // seconds from the put; 0: discovered
		advance time.Duration
	}
	tests := []struct {
		name string
		puts []put
		want []string
	}{
		{"known earlier than discovered", []put{{"http://a.test/disc", 0, 0}, {"http://a.test/prio", -1_700_000_000, 0}},
			[]string{"http://a.test/prio", "http://a.test/disc"}},
		{"retry due before later discoveries", []put{{"http://a.test/old", 0, time.Minute}, {"http://a.test/new", 0, 0}, {"http://a.test/retry", -30, 0}},
			[]string{"http://a.test/old", "http://a.test/retry", "http://a.test/new"}},
		{"discovered in put order", []put{{"http://a.test/1", 0, time.Second}, {"http://a.test/2", 0, 0}, {"http://a.test/3", 0, 0}},
			[]string{"http://a.test/1", "http://a.test/2", "http://a.test/3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			for _, p := range tc.puts {
				if p.refetch == 0 {
					fx.put(discovered(p.url, info(p.url)))
				} else {
					fx.put(known(info(p.url), uint64(fx.clk.Now().Unix()+p.refetch)))
				}
				fx.clk.Advance(p.advance)
			}
			got := fx.get(&pb.GetParams{Key: "a.test", Item: &pb.GetParams_CrawlID{}})
			if !slices.Equal(got, tc.want) {
				t.Errorf("GetURLs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDelayBlockLimitActive(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	// Set before the queues exist: kept for when they appear.
	if _, err := fx.c.SetDelay(ctx, &pb.QueueDelayParams{Key: "d.test", DelayRequestable: 10}); err != nil {
		t.Fatal(err)
	}
	blockUntil := uint64(fx.clk.Now().Add(time.Minute).Unix())
	if _, err := fx.c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Key: "b.test", Time: blockUntil}); err != nil {
		t.Fatal(err)
	}
	var items []*pb.URLItem
	for _, u := range []string{"http://d.test/1", "http://d.test/2", "http://b.test/1", "http://e.test/1", "http://e.test/2"} {
		items = append(items, discovered(u, info(u)))
	}
	fx.put(items...)
	p := &pb.GetParams{MaxUrlsPerQueue: 1, DelayRequestable: 600, Item: anyCrawl()}
	// One URL of d.test and e.test each (which one depends on the order
	// the stream's workers stored them); b.test is blocked.
	got := fx.get(p)
	sort.Strings(got)
	if len(got) != 2 || !strings.HasPrefix(got[0], "http://d.test/") || !strings.HasPrefix(got[1], "http://e.test/") {
		t.Fatalf("first round = %v", got)
	}
	ql, _ := fx.c.ListQueues(ctx, &pb.Pagination{})
	if !slices.Equal(ql.GetValues(), []string{"d.test", "e.test"}) {
		t.Errorf("active queues = %v (b.test is blocked)", ql.GetValues())
	}
	ql, _ = fx.c.ListQueues(ctx, &pb.Pagination{IncludeInactive: true, Start: 1, Size: 1})
	if !slices.Equal(ql.GetValues(), []string{"d.test"}) || ql.GetTotal() != 3 || ql.GetSize() != 1 || ql.GetStart() != 1 {
		t.Errorf("page = %v", ql)
	}
	// Default delay 1 s (e.test), queue delay 10 s (d.test), block 60 s;
	// from now on 2 URLs per queue may be in flight.
	p.MaxUrlsPerQueue = 2
	fx.clk.Advance(1500 * time.Millisecond)
	if got := fx.get(p); len(got) != 1 || !strings.HasPrefix(got[0], "http://e.test/") {
		t.Errorf("after 1.5 s = %v, want e.test's second URL (delays in ms, not whole seconds)", got)
	}
	// Unblock b.test; make the default 0.
	if _, err := fx.c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Key: "b.test", Time: 0}); err != nil {
		t.Fatal(err)
	}
	fx.clk.Advance(time.Second)
	if got := fx.get(p); !slices.Equal(got, []string{"http://b.test/1"}) {
		t.Errorf("after unblock = %v", got)
	}
	// Pause: nothing served, puts still accepted.
	if _, err := fx.c.SetActive(ctx, &pb.Active{State: false}); err != nil {
		t.Fatal(err)
	}
	if a, _ := fx.c.GetActive(ctx, &pb.Local{}); a.GetState() {
		t.Error("GetActive = true after SetActive false")
	}
	fx.clk.Advance(time.Minute)
	fx.put(discovered("f", info("http://f.test/")))
	if got := fx.get(p); got != nil {
		t.Errorf("inactive frontier served %v", got)
	}
	fx.c.SetActive(ctx, &pb.Active{State: true})
	if got := fx.get(p); len(got) != 2 {
		t.Errorf("resumed: %v, want d.test's second URL and f.test", got)
	}
	// Crawl limit: unknown queue is NOT_FOUND; a reached limit stops serving.
	if _, err := fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Key: "nope.test", Limit: 1}); status.Code(err) != codes.NotFound {
		t.Errorf("limit on unknown queue = %v", err)
	}
	fx.put(known(info("http://g.test/1"), 0), discovered("g2", info("http://g.test/2")))
	if _, err := fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Key: "g.test", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	fx.clk.Advance(time.Minute)
	if got := fx.get(&pb.GetParams{Key: "g.test", Item: &pb.GetParams_CrawlID{}}); got != nil {
		t.Errorf("queue past its crawl limit served %v", got)
	}
}

func TestStatusListCountPurgeDelete(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	md := map[string]*pb.StringList{"depth": {Values: []string{"2"}}}
	fx.put(
		discovered("1", &pb.URLInfo{Url: "http://a.test/Page", Metadata: md}),
		discovered("2", info("http://a.test/other")),
		discovered("3", info("http://b.test/page")),
	)
	created := uint64(fx.clk.Now().Unix())
	fx.put(known(&pb.URLInfo{Url: "http://b.test/page"}, 0))

	item, err := fx.c.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "http://a.test/Page"})
	if err != nil {
		t.Fatal(err)
	}
	k := item.GetKnown()
	if k == nil || k.GetRefetchableFromDate() != created || item.GetCreationDate() != created || k.GetInfo().GetKey() != "a.test" ||
		!slices.Equal(k.GetInfo().GetMetadata()["depth"].GetValues(), []string{"2"}) || k.GetInfo().GetCrawlID() != "DEFAULT" {
		t.Errorf("status = %v", item)
	}
	item, err = fx.c.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "http://b.test/page"})
	if err != nil || item.GetKnown().GetRefetchableFromDate() != 0 {
		t.Errorf("completed status = %v, %v", item, err)
	}
	for _, r := range []*pb.URLStatusRequest{{Url: "http://a.test/none"}, {Url: "http://a.test/Page", Key: "b.test"}, {Url: "http://a.test/Page", CrawlID: "x"}} {
		if _, err := fx.c.GetURLStatus(ctx, r); status.Code(err) != codes.NotFound {
			t.Errorf("status %v = %v, want NOT_FOUND", r, err)
		}
	}
	list := func(p *pb.ListUrlParams) []string {
		st, err := fx.c.ListURLs(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for {
			it, err := st.Recv()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			if it.GetKnown() == nil {
				t.Errorf("ListURLs item not known: %v", it)
			}
			out = append(out, it.GetKnown().GetInfo().GetUrl())
		}
	}
	filter, yes := "page", true
	if got := list(&pb.ListUrlParams{Filter: &filter}); !slices.Equal(got, []string{"http://b.test/page"}) {
		t.Errorf("filter = %v", got)
	}
	if got := list(&pb.ListUrlParams{Filter: &filter, IgnoreCase: &yes}); !slices.Equal(got, []string{"http://a.test/Page", "http://b.test/page"}) {
		t.Errorf("filter ignoreCase = %v", got)
	}
	// Queues in key order; within one, serving order (here, put order,
	// which the stream's workers may change).
	full := list(&pb.ListUrlParams{})
	if len(full) != 3 || full[2] != "http://b.test/page" {
		t.Fatalf("full list = %v", full)
	}
	if got := list(&pb.ListUrlParams{Start: 1, Size: 1}); !slices.Equal(got, full[1:2]) {
		t.Errorf("page = %v", got)
	}
	if n, _ := fx.c.CountURLs(ctx, &pb.CountUrlParams{Filter: &filter, IgnoreCase: &yes}); n.GetValue() != 2 {
		t.Errorf("count = %d", n.GetValue())
	}
	if n, _ := fx.c.CountURLs(ctx, &pb.CountUrlParams{Key: "a.test"}); n.GetValue() != 2 {
		t.Errorf("count a.test = %d", n.GetValue())
	}
	// Purge: nothing is older than a day yet; then everything is.
	if n, err := fx.c.PurgeURLs(ctx, &pb.PurgeUrlParams{Days: 1}); err != nil || n.GetValue() != 0 {
		t.Errorf("purge young = %v, %v", n, err)
	}
	fx.put(discovered("c", info("http://c.test/")))
	fx.clk.Advance(36 * time.Hour)
	fx.put(discovered("c2", info("http://c.test/2")))
	if n, err := fx.c.PurgeURLs(ctx, &pb.PurgeUrlParams{Key: "c.test", Days: 1}); err != nil || n.GetValue() != 1 {
		t.Errorf("purge c.test = %v, %v", n, err)
	}
	if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "a.test"}); err != nil || n.GetValue() != 2 {
		t.Errorf("DeleteQueue = %v, %v", n, err)
	}
	if n, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{Key: "none.test"}); err != nil || n.GetValue() != 0 {
		t.Errorf("DeleteQueue unknown = %v, %v", n, err)
	}
	fx.put(discovered("o", &pb.URLInfo{Url: "http://o.test/", CrawlID: "other"}))
	if n, err := fx.c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{Value: "other"}); err != nil || n.GetValue() != 1 {
		t.Errorf("DeleteCrawl = %v, %v", n, err)
	}
	if cs, _ := fx.c.ListCrawls(ctx, &pb.Local{}); !slices.Equal(cs.GetValues(), []string{"DEFAULT"}) {
		t.Errorf("crawls after delete = %v", cs.GetValues())
	}
}

// TestPurgeURLsDays: only URLs created days ago or earlier go, whatever
// the number of days (a duration in nanoseconds overflows past 292 years).
func TestPurgeURLsDays(t *testing.T) {
	tests := []struct {
		days uint32
		want uint64
	}{
		{0, 2},
		{1, 1},
		{2, 0},
		{106_752, 0},
		{1<<32 - 1, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.days), func(t *testing.T) {
			fx := newFixture(t)
			fx.put(discovered("old", info("http://p.test/old")))
			fx.clk.Advance(36 * time.Hour)
			fx.put(discovered("new", info("http://p.test/new")))
			n, err := fx.c.PurgeURLs(context.Background(), &pb.PurgeUrlParams{Days: tc.days})
			if err != nil || n.GetValue() != tc.want {
				t.Fatalf("PurgeURLs(%d days) = %v, %v; want %d", tc.days, n, err, tc.want)
			}
			c, err := fx.c.CountURLs(context.Background(), &pb.CountUrlParams{})
			if err != nil || c.GetValue() != 2-tc.want {
				t.Errorf("CountURLs after = %v, %v; want %d", c, err, 2-tc.want)
			}
		})
	}
}

func TestPutDiscoveredBatches(t *testing.T) {
	fx := newFixture(t)
	st, err := fx.c.PutDiscovered(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	batches := []*pb.DiscoveredBatch{
		{ID: "b1", Items: []*pb.URLInfo{info("http://a.test/1"), info("nohost"), info("http://a.test/2")}},
		{ID: "b2", Items: []*pb.URLInfo{info("http://a.test/1"), info("http://b.test/1")}},
		{ID: "empty"},
	}
	for _, b := range batches {
		if err := st.Send(b); err != nil {
			t.Fatal(err)
		}
		// One batch at a time, so that b2 sees b1's URLs.
		a, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]pb.AckMessage_Status{
			"b1":    {pb.AckMessage_OK, pb.AckMessage_SKIPPED, pb.AckMessage_OK},
			"b2":    {pb.AckMessage_SKIPPED, pb.AckMessage_OK},
			"empty": {},
		}[b.ID]
		if a.GetID() != b.ID || !slices.Equal(a.GetStatuses(), want) {
			t.Errorf("ack = %v, want %s %v", a, b.ID, want)
		}
	}
	st.CloseSend()
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("end of stream = %v", err)
	}
}

func TestNodesLogLevelHealth(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	n, err := fx.c.ListNodes(ctx, &pb.Empty{})
	if err != nil || !slices.Equal(n.GetValues(), []string{"127.0.0.1:7071"}) {
		t.Errorf("ListNodes = %v, %v", n, err)
	}
	tests := []struct {
		pkg   string
		level pb.LogLevelParams_Level
		check string
		want  slog.Level
	}{
		{"frontier", pb.LogLevelParams_DEBUG, "frontier", slog.LevelDebug},
		{"crawlercommons.urlfrontier.service.URLFrontier", pb.LogLevelParams_TRACE, "urlfrontier", LevelTrace},
		{"ROOT", pb.LogLevelParams_ERROR, "other", slog.LevelError},
		{"frontier", pb.LogLevelParams_WARN, "frontier", slog.LevelWarn},
	}
	for _, tc := range tests {
		if _, err := fx.c.SetLogLevel(ctx, &pb.LogLevelParams{Package: tc.pkg, Level: tc.level}); err != nil {
			t.Fatal(err)
		}
		if got := fx.levels.Level(tc.check); got != tc.want {
			t.Errorf("after %s %v: level of %s = %v, want %v", tc.pkg, tc.level, tc.check, got, tc.want)
		}
	}
	h, err := healthpb.NewHealthClient(fx.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health = %v, %v", h, err)
	}
	fx.put(discovered("a", info("http://a.test/")))
	fx.get(&pb.GetParams{Item: anyCrawl()})
	mfs, err := fx.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
	}
	for _, name := range []string{"courtesy_urlfrontier_requests_total", "courtesy_urlfrontier_request_seconds", "courtesy_urlfrontier_urls_in_total",
		"courtesy_urlfrontier_urls_out_total", "courtesy_frontier_urls", "courtesy_frontier_queues", "courtesy_frontier_active"} {
		if !seen[name] {
			t.Errorf("metric %s missing", name)
		}
	}
}

// TestBadInput sends invalid parameters to every RPC that takes any: each
// answers a clear error code, and the service keeps serving.
func TestBadInput(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"DeleteCrawl long id", func() error { _, err := fx.c.DeleteCrawl(ctx, &pb.DeleteCrawlMessage{Value: long}); return err }, codes.InvalidArgument},
		{"ListQueues long crawl", func() error { _, err := fx.c.ListQueues(ctx, &pb.Pagination{CrawlID: long}); return err }, codes.InvalidArgument},
		{"GetStats long key", func() error { _, err := fx.c.GetStats(ctx, &pb.QueueWithinCrawlParams{Key: long}); return err }, codes.InvalidArgument},
		{"DeleteQueue no key", func() error { _, err := fx.c.DeleteQueue(ctx, &pb.QueueWithinCrawlParams{}); return err }, codes.InvalidArgument},
		{"BlockQueueUntil no key", func() error { _, err := fx.c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Time: 1}); return err }, codes.InvalidArgument},
		{"BlockQueueUntil far future", func() error {
			_, err := fx.c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Key: "k", Time: 1 << 63})
			return err
		}, codes.OK},
		{"SetDelay long key", func() error { _, err := fx.c.SetDelay(ctx, &pb.QueueDelayParams{Key: long}); return err }, codes.InvalidArgument},
		{"SetLogLevel bad level", func() error { _, err := fx.c.SetLogLevel(ctx, &pb.LogLevelParams{Level: 99}); return err }, codes.InvalidArgument},
		{"SetLogLevel long package", func() error { _, err := fx.c.SetLogLevel(ctx, &pb.LogLevelParams{Package: long}); return err }, codes.InvalidArgument},
		{"SetCrawlLimit no key", func() error { _, err := fx.c.SetCrawlLimit(ctx, &pb.CrawlLimitParams{Limit: 1}); return err }, codes.InvalidArgument},
		{"GetURLStatus no url", func() error { _, err := fx.c.GetURLStatus(ctx, &pb.URLStatusRequest{}); return err }, codes.InvalidArgument},
		{"GetURLStatus no host", func() error { _, err := fx.c.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "mailto:x"}); return err }, codes.InvalidArgument},
		{"CountURLs long key", func() error { _, err := fx.c.CountURLs(ctx, &pb.CountUrlParams{Key: long}); return err }, codes.InvalidArgument},
		{"PurgeURLs long crawl", func() error { _, err := fx.c.PurgeURLs(ctx, &pb.PurgeUrlParams{CrawlID: long}); return err }, codes.InvalidArgument},
		{"ListURLs long key", func() error {
			st, err := fx.c.ListURLs(ctx, &pb.ListUrlParams{Key: long})
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.InvalidArgument},
		{"GetURLs long key", func() error {
			st, err := fx.c.GetURLs(ctx, &pb.GetParams{Key: long, Item: &pb.GetParams_CrawlID{}})
			if err == nil {
				_, err = st.Recv()
			}
			return err
		}, codes.InvalidArgument},
		{"GetURLs largest limits", func() error {
			st, err := fx.c.GetURLs(ctx, &pb.GetParams{MaxQueues: 1<<32 - 1, MaxUrlsPerQueue: 1<<32 - 1, DelayRequestable: 1<<32 - 1, Item: anyCrawl()})
			if err == nil {
				if _, err = st.Recv(); errors.Is(err, io.EOF) {
					err = nil
				}
			}
			return err
		}, codes.OK},
		{"ListQueues huge start", func() error { _, err := fx.c.ListQueues(ctx, &pb.Pagination{Start: 1<<32 - 1}); return err }, codes.OK},
		{"ListURLs huge page", func() error {
			st, err := fx.c.ListURLs(ctx, &pb.ListUrlParams{Start: 1<<32 - 1, Size: 1<<32 - 1})
			if err == nil {
				if _, err = st.Recv(); errors.Is(err, io.EOF) {
					err = nil
				}
			}
			return err
		}, codes.OK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.want {
				t.Errorf("code = %v, want %v", got, tc.want)
			}
		})
	}
	// Still serving.
	if a := fx.put(discovered("ok", info("http://ok.test/"))); a["ok"] != pb.AckMessage_OK {
		t.Errorf("after bad input: %v", a)
	}
}

// TestPutURLsOrderPerURL: items about one URL in one stream are applied in
// the order sent, whatever the workers do with other URLs.
func TestPutURLsOrderPerURL(t *testing.T) {
	fx := newFixture(t)
	later := uint64(fx.clk.Now().Add(time.Hour).Unix())
	var items []*pb.URLItem
	for i := range 200 {
		u := fmt.Sprintf("http://h%d.test/", i%7)
		it := known(info(u+fmt.Sprint(i/7)), later)
		it.ID = fmt.Sprint("r", i)
		items = append(items, it)
		done := known(info(u+fmt.Sprint(i/7)), 0)
		done.ID = fmt.Sprint("c", i)
		items = append(items, done)
	}
	fx.put(items...)
	st, err := fx.c.GetStats(context.Background(), &pb.QueueWithinCrawlParams{})
	if err != nil || st.GetCounts()["completed"] != 200 || st.GetSize() != 0 {
		t.Errorf("stats = %v, %v; want 200 completed, none queued", st, err)
	}
}
