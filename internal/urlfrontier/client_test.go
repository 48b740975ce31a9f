package urlfrontier

import (
	"context"
	"log/slog"
	"net"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// serveLoopback serves a fresh service on a loopback port of its own
// until the test ends.
func serveLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln)
	return ln
}

// serveOn serves a fresh frontier on ln (real clock), with extra gRPC
// server options.
func serveOn(t *testing.T, ln net.Listener, extra ...grpc.ServerOption) {
	t.Helper()
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
	g, _ := NewGRPCServer(srv, extra...)
	go g.Serve(ln)
	t.Cleanup(func() {
		g.Stop()
		f.Close()
		db.Close()
	})
}

func TestClientCalls(t *testing.T) {
	ln := serveLoopback(t)
	c, err := Dial(ln.Addr().String(), ClientOptions{Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	md := map[string][]string{"a": {"1"}}
	st, err := c.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://a.test/1", Metadata: md}}, {Info: frontier.URLInfo{URL: "nohost"}}})
	if err != nil || !slices.Equal(st, []frontier.Status{frontier.OK, frontier.Skipped}) {
		t.Fatalf("Put = %v, %v", st, err)
	}
	st, err = c.PutDiscovered(ctx, []frontier.URLInfo{{URL: "http://a.test/1"}, {URL: "http://b.test/1", CrawlID: "c"}})
	if err != nil || !slices.Equal(st, []frontier.Status{frontier.Skipped, frontier.OK}) {
		t.Fatalf("PutDiscovered = %v, %v", st, err)
	}
	ls, err := c.Get(ctx, frontier.GetParams{AnyCrawl: true})
	if err != nil || len(ls) != 2 {
		t.Fatalf("Get = %v, %v", ls, err)
	}
	for _, l := range ls {
		if l.URL == "http://a.test/1" && (l.Key != "a.test" || l.CrawlID != "DEFAULT" || !slices.Equal(l.Metadata["a"], []string{"1"})) {
			t.Errorf("lease = %+v", l)
		}
	}
	if err := c.Ack(ctx, ls[0].URLInfo, time.Time{}); err != nil {
		t.Fatal(err)
	}
	c.Release(ls[1].URLInfo)
	if err := c.SetDelay(ctx, "c", "b.test", 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.BlockQueueUntil(ctx, "c", "b.test", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s := c.Stats("", "")
	if s.Completed+s.Size != 1 || s.CrawlID != "DEFAULT" {
		t.Errorf("Stats = %+v", s)
	}
	s, err = c.StatsContext(ctx, "c", "b.test")
	if err != nil || s.Size != 1 || s.InProcess != 0 {
		t.Errorf("Stats c = %+v, %v (released)", s, err)
	}
	// Blocked: b.test is not served although released.
	ls, err = c.Get(ctx, frontier.GetParams{CrawlID: "c"})
	if err != nil || len(ls) != 0 {
		t.Errorf("blocked queue served: %v, %v", ls, err)
	}
}

// TestClientHoldBeforeAck: URLFrontier has no hold on an acknowledgement,
// so the client blocks the queue of an acknowledged URL with a Hold
// before it sends the acknowledgement (another crawler could be served
// the queue in between otherwise), once per queue, and sends no block for
// an acknowledgement without one.
func TestClientHoldBeforeAck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls []string
	record := func(method string) {
		mu.Lock()
		calls = append(calls, path.Base(method))
		mu.Unlock()
	}
	serveOn(t, ln,
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			record(info.FullMethod)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			record(info.FullMethod)
			return h(srv, ss)
		}))
	c, err := Dial(ln.Addr().String(), ClientOptions{Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.SetDelay(ctx, "", "", 0); err != nil { // the service's default is 1 s
		t.Fatal(err)
	}
	urls := []string{"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1", "http://b.test/2", "http://b.test/3"}
	var items []frontier.Item
	for _, u := range urls {
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: u}})
	}
	if _, err := c.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	ls, err := c.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 2})
	if err != nil || len(ls) != 4 {
		t.Fatalf("Get = %v, %v", ls, err)
	}
	mu.Lock()
	calls = nil
	mu.Unlock()
	hour := time.Now().Add(time.Hour)
	var acks []frontier.Item
	for _, l := range ls {
		it := frontier.Item{Info: l.URLInfo, Known: true}
		if l.Key == "a.test" {
			it.Hold = hour
		}
		acks = append(acks, it)
	}
	if st, err := c.Put(ctx, acks); err != nil || slices.IndexFunc(st, func(s frontier.Status) bool { return s != frontier.OK }) >= 0 {
		t.Fatalf("acks = %v, %v", st, err)
	}
	mu.Lock()
	got := slices.Clone(calls)
	mu.Unlock()
	if want := []string{"BlockQueueUntil", "PutURLs"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	// a.test is held; b.test's last URL is served.
	ls, err = c.Get(ctx, frontier.GetParams{})
	if err != nil || len(ls) != 1 || ls[0].Key != "b.test" {
		t.Errorf("Get after the acks = %v, %v; want b.test's URL only", ls, err)
	}
}

// TestClientRetriesUntilServiceUp: calls made while the service is down
// retry with backoff, then succeed once it is up, losing nothing.
func TestClientRetriesUntilServiceUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the service is down
	up := make(chan struct{})
	retries := 0
	c, err := Dial(addr, ClientOptions{MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		OnRetry: func(attempt int, err error) {
			retries++
			if attempt == 3 {
				ln, lerr := net.Listen("tcp", addr)
				if lerr != nil {
					t.Errorf("relisten: %v", lerr)
					return
				}
				serveOn(t, ln)
				close(up)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := c.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://a.test/"}}})
	if err != nil || st[0] != frontier.OK {
		t.Fatalf("Put after outage = %v, %v", st, err)
	}
	<-up
	if retries < 3 {
		t.Errorf("retries = %d, want at least 3", retries)
	}
	// A bounded client gives up with the error.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln2.Addr().String()
	ln2.Close()
	c2, _ := Dial(dead, ClientOptions{MinBackoff: time.Millisecond, MaxAttempts: 2})
	defer c2.Close()
	if _, err := c2.StatsContext(ctx, "", ""); err == nil {
		t.Error("Stats on a dead service succeeded")
	}
}

// crawlerFrontier is the subset of *frontier.Frontier that Courtesy's
// crawler calls: a remote Client must offer the same, so that the crawler
// can take either.
type crawlerFrontier interface {
	Put(ctx context.Context, items []frontier.Item) ([]frontier.Status, error)
	Get(ctx context.Context, p frontier.GetParams) ([]frontier.Lease, error)
	Release(info frontier.URLInfo)
	BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error
	Retire(ctx context.Context, crawlID, key, reason string) error
	Stats(crawlID, key string) frontier.Stats
	WaitReady(ctx context.Context, d time.Duration)
	Close() error
}

var (
	_ crawlerFrontier = (*frontier.Frontier)(nil)
	_ crawlerFrontier = (*Client)(nil)
)

func TestClientRetire(t *testing.T) {
	ln := serveLoopback(t)
	c, err := Dial(ln.Addr().String(), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://r.test/"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Retire(ctx, "", "r.test", "dns"); err != nil {
		t.Fatal(err)
	}
	if ls, err := c.Get(ctx, frontier.GetParams{AnyCrawl: true}); err != nil || len(ls) != 0 {
		t.Errorf("retired queue served %v, %v", ls, err)
	}
	if s := c.Stats("", "r.test"); s.Size != 1 {
		t.Errorf("retired queue lost its URL: %+v", s)
	}
}
