package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
)

// The two paths an http:// GET or HEAD can take: the h1 client (the
// default) and http.Transport (Client.plain nil, as for https).
var paths = []string{"h1", "transport"}

// newClientOn returns a Client whose http:// requests take path.
func newClientOn(t *testing.T, cfg Config, path string) *Client {
	t.Helper()
	c := newClient(t, cfg)
	switch path {
	case "h1":
		if c.plain == nil {
			t.Fatal("New built no h1 client")
		}
	case "transport":
		c.plain = nil
	default:
		t.Fatalf("unknown path %q", path)
	}
	return c
}

// rawOrigin is an HTTP/1.1 origin on 127.0.0.1 written by hand, for
// answers net/http's server will not give. For every request it records
// the bytes of the request header and writes answer(path), then keeps
// the connection for the next request unless the answer is empty (the
// connection is then closed without a word) or ends in CLOSE (closed
// after the answer). An answer ending in HANG is held open until the
// test's end.
type rawOrigin struct {
	addr string
	mu   struct {
		sync.Mutex
		requests []string // raw request headers, in arrival order
	}
}

func newRawOrigin(t *testing.T, answer func(path string) string) *rawOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(hang)
		ln.Close()
		wg.Wait()
	})
	o := &rawOrigin{addr: ln.Addr().String()}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				// Closing the connection at the test's end ends a blocked read.
				stop := context.AfterFunc(ctxDone(hang), func() { c.Close() })
				defer stop()
				br := bufio.NewReader(c)
				for range 100 {
					var raw bytes.Buffer
					req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(br, &raw)))
					if err != nil {
						return
					}
					_ = req.Body.Close()
					o.mu.Lock()
					o.mu.requests = append(o.mu.requests, raw.String())
					o.mu.Unlock()
					a := answer(req.URL.Path)
					if a == "" {
						return
					}
					if body, ok := strings.CutSuffix(a, "CLOSE"); ok {
						io.WriteString(c, body)
						return
					}
					if strings.HasSuffix(a, "HANG") {
						io.WriteString(c, strings.TrimSuffix(a, "HANG"))
						<-hang
						return
					}
					if _, err := io.WriteString(c, a); err != nil {
						return
					}
				}
			})
		}
	})
	return o
}

// ctxDone returns a context canceled when ch is closed.
func ctxDone(ch <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-ch; cancel() }()
	return ctx
}

func (o *rawOrigin) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.mu.requests...)
}

// summary is what a fetch recorded, less what differs between two runs
// by nature (times, the server's Date and the client port).
type summary struct {
	Kind        Kind
	Err         bool
	Status      int
	Reason      string
	Proto       string
	Header      http.Header
	RawBody     string
	Body        string
	Truncated   bool
	TruncReason Truncation
	DecodeErr   bool
	ContentType string
	Sniffed     bool
	Redirect    string
	RemoteIP    netip.Addr
	ConnReused  bool
	SentHeader  http.Header
	Timed       bool // Start set, TTFB > 0, Duration >= TTFB
}

func summarize(r *Result, err error) summary {
	if err != nil {
		return summary{Kind: KindOf(err), Err: true}
	}
	h := r.Header.Clone()
	h.Del("Date")
	s := summary{
		Status: r.Status, Reason: r.Reason, Proto: r.Proto, Header: h,
		RawBody: string(r.RawBody), Body: string(r.Body),
		Truncated: r.Truncated, TruncReason: r.TruncReason, DecodeErr: r.DecodeErr != nil,
		ContentType: r.ContentType, Sniffed: r.Sniffed,
		RemoteIP: r.RemoteAddr.Addr(), ConnReused: r.ConnReused,
		SentHeader: r.Request.Header,
		Timed:      !r.Start.IsZero() && r.TTFB > 0 && r.Duration >= r.TTFB,
	}
	if r.Redirect != nil {
		s.Redirect = r.Redirect.String()
	}
	return s
}

// TestPathsAgree runs each case on both paths against the same origins
// and requires the same Result (or error Kind), and, where the case
// says, the same request bytes on the wire.
func TestPathsAgree(t *testing.T) {
	t.Parallel()
	gz := gzipBytes(t, page)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Add("X-Multi", "1")
			w.Header().Add("X-Multi", "2")
			w.Write(page)
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/html")
			w.Write(gz)
		case "/chunked":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("he"))
			w.(http.Flusher).Flush()
			w.Write([]byte("llo"))
		case "/sniff":
			w.Header()["Content-Type"] = nil
			w.Write([]byte("<!DOCTYPE html><html>hi</html>"))
		case "/redirect":
			w.Header().Set("Location", "../to?x=1")
			w.WriteHeader(http.StatusFound)
		case "/nocontent":
			w.WriteHeader(http.StatusNoContent)
		case "/cookie":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "1", Path: "/"})
			w.Write([]byte("cookie: " + r.Header.Get("Cookie")))
		case "/slow":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>partial"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/noheaders":
			<-r.Context().Done()
		case "/short":
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("only ten b"))
		case "/reset":
			resetConn(w)
		case "/big-header":
			w.Header().Set("X-Big", strings.Repeat("a", 8<<10))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	raw := newRawOrigin(t, func(path string) string {
		switch path {
		case "/early-hints":
			return "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" +
				"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
		case "/http10":
			return "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil closeCLOSE"
		case "/garbage":
			return "NOT HTTP AT ALL\r\n\r\n"
		case "/odd-reason":
			return "HTTP/1.1 299 Quite Fine\r\nContent-Length: 0\r\n\r\n"
		case "/silent":
			return ""
		}
		return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
	})
	// A port with nothing listening: bind, note, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host == "here.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	type step struct {
		url string
		req Request
	}
	tests := []struct {
		name  string
		cfg   Config
		steps []step // fetched in order on one Client; each compared
		// callerTimeout, when set, bounds the caller's context.
		callerTimeout time.Duration
		canceled      bool // the caller's context is canceled before
		wantKind      Kind // of the last step, when it must fail
		wantErr       bool
		sameWire      bool // the raw origin saw the same request bytes
	}{
		{name: "page, then reused", steps: []step{{srv.URL + "/page", Request{}}, {srv.URL + "/page", Request{}}}},
		{name: "gzip", steps: []step{{srv.URL + "/gzip", Request{}}}},
		{name: "chunked", steps: []step{{srv.URL + "/chunked", Request{}}}},
		{name: "sniffed", steps: []step{{srv.URL + "/sniff", Request{}}}},
		{name: "redirect", steps: []step{{srv.URL + "/a/redirect", Request{}}, {srv.URL + "/redirect", Request{}}}},
		{name: "no content", steps: []step{{srv.URL + "/nocontent", Request{}}}},
		{name: "head", steps: []step{{srv.URL + "/page", Request{Method: "HEAD"}}, {srv.URL + "/page", Request{}}}},
		{name: "head before get", cfg: Config{HeadBeforeGet: true}, steps: []step{{srv.URL + "/page.mp3", Request{}}}},
		{name: "cookies", steps: []step{{srv.URL + "/cookie", Request{}}, {srv.URL + "/cookie", Request{Cookie: "v=crawler"}}}},
		{name: "request options", steps: []step{{srv.URL + "/page", Request{
			AcceptLanguage: "pt", AcceptEncoding: "gzip",
			Header: http.Header{"If-None-Match": {`"x"`}, "Accept": {"text/html"}}}}}},
		{name: "dns cache name", cfg: Config{Lookup: lookup}, steps: []step{{"http://here.test:" + port + "/page", Request{}}}},
		{name: "size cap", cfg: Config{MaxBodySize: 100}, steps: []step{{srv.URL + "/page", Request{}}, {srv.URL + "/page", Request{}}}},
		{name: "decoded size cap", cfg: Config{MaxDecodedSize: 100}, steps: []step{{srv.URL + "/gzip", Request{}}}},
		{name: "slow body", cfg: Config{Timeout: 300 * time.Millisecond}, steps: []step{{srv.URL + "/slow", Request{}}}},
		{name: "no headers", cfg: Config{Timeout: 300 * time.Millisecond}, steps: []step{{srv.URL + "/noheaders", Request{}}},
			wantErr: true, wantKind: KindTimeout},
		{name: "caller deadline", callerTimeout: 300 * time.Millisecond, steps: []step{{srv.URL + "/noheaders", Request{}}},
			wantErr: true, wantKind: KindCanceled},
		{name: "canceled", canceled: true, steps: []step{{srv.URL + "/page", Request{}}}, wantErr: true, wantKind: KindCanceled},
		{name: "closed mid-body", steps: []step{{srv.URL + "/short", Request{}}}, wantErr: true, wantKind: KindReset},
		{name: "reset", steps: []step{{srv.URL + "/reset", Request{}}}, wantErr: true, wantKind: KindReset},
		{name: "silent close", steps: []step{{"http://" + raw.addr + "/silent", Request{}}}, wantErr: true, wantKind: KindReset},
		{name: "connect refused", steps: []step{{"http://" + closed + "/", Request{}}}, wantErr: true, wantKind: KindConnect},
		{name: "dns failure", cfg: Config{Lookup: lookup}, steps: []step{{"http://nowhere.test/", Request{}}},
			wantErr: true, wantKind: KindDNS},
		{name: "header too long", cfg: Config{MaxHeaderBytes: 4 << 10}, steps: []step{{srv.URL + "/big-header", Request{}}},
			wantErr: true, wantKind: KindOther},
		{name: "invalid header value", steps: []step{{srv.URL + "/page", Request{Header: http.Header{"X-Bad": {"a\r\nb"}}}}},
			wantErr: true, wantKind: KindOther},
		{name: "garbage", steps: []step{{"http://" + raw.addr + "/garbage", Request{}}}, wantErr: true, wantKind: KindOther},
		{name: "early hints", steps: []step{{"http://" + raw.addr + "/early-hints", Request{}}}},
		{name: "http/1.0", steps: []step{{"http://" + raw.addr + "/http10", Request{}}}},
		{name: "odd reason", steps: []step{{"http://" + raw.addr + "/odd-reason", Request{}}}},
		{name: "wire bytes", sameWire: true, steps: []step{{"http://" + raw.addr + "/odd-reason", Request{
			AcceptLanguage: "de", Cookie: "v=1", Header: http.Header{"If-Modified-Since": {"Sat, 01 Jan 2000 00:00:00 GMT"}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string][]summary{}
			var wire [][]string
			for _, path := range paths {
				before := len(raw.requests())
				c := newClientOn(t, tc.cfg, path)
				for i, st := range tc.steps {
					ctx, cancel := context.WithCancel(context.Background())
					if tc.callerTimeout > 0 {
						ctx, cancel = context.WithTimeout(context.Background(), tc.callerTimeout)
					}
					if tc.canceled {
						cancel()
					}
					r, err := c.Fetch(ctx, mustURL(t, st.url), st.req)
					cancel()
					last := i == len(tc.steps)-1
					if err != nil && !(tc.wantErr && last) {
						t.Fatalf("%s: step %d: %v", path, i, err)
					}
					if last && tc.wantErr && KindOf(err) != tc.wantKind {
						t.Errorf("%s: error %v, kind %v, want %v", path, err, KindOf(err), tc.wantKind)
					}
					got[path] = append(got[path], summarize(r, err))
				}
				if tc.sameWire {
					wire = append(wire, raw.requests()[before:])
				}
			}
			h1s, trs := got["h1"], got["transport"]
			for i := range h1s {
				if !reflect.DeepEqual(h1s[i], trs[i]) {
					t.Errorf("step %d differs:\n h1:        %+v\n transport: %+v", i, h1s[i], trs[i])
				}
				if !h1s[i].Err && !h1s[i].Timed {
					t.Errorf("step %d: Start, TTFB or Duration not set", i)
				}
			}
			if tc.sameWire {
				if len(wire[0]) == 0 || !reflect.DeepEqual(wire[0], wire[1]) {
					t.Errorf("request bytes differ:\n h1:        %q\n transport: %q", wire[0], wire[1])
				}
			}
		})
	}
}

// TestPlainPathTaken: an http:// or https:// GET or HEAD goes through the
// h1 client (its connection is then idle in it), and records the wire;
// https goes through http.Transport with Config.HTTP2.
func TestPlainPathTaken(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(h)
	t.Cleanup(secure.Close)
	roots := secure.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, tc := range []struct {
		name     string
		url      string
		method   string
		http2    bool
		wantIdle int
	}{
		{"http get", plain.URL + "/", "", false, 1},
		{"http head", plain.URL + "/", "HEAD", false, 1},
		{"https", secure.URL + "/", "", false, 1},
		{"https head", secure.URL + "/", "HEAD", false, 1},
		{"https with HTTP2", secure.URL + "/", "", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, Config{TLSConfig: &tls.Config{RootCAs: roots}, HTTP2: tc.http2})
			for i := range 3 {
				r := fetchOK(t, c, tc.url, Request{Method: tc.method})
				if r.Status != 200 || r.ConnReused != (i > 0) {
					t.Fatalf("fetch %d: status %d, reused %v", i, r.Status, r.ConnReused)
				}
				if wire := r.WireHeader != nil && r.WireRequest != nil; wire == tc.http2 {
					t.Errorf("fetch %d: wire bytes recorded %v (%q, %q)", i, wire, r.WireHeader, r.WireRequest)
				}
			}
			if n := c.plain.IdleCount(); n != tc.wantIdle {
				t.Errorf("h1 client holds %d idle connections, want %d", n, tc.wantIdle)
			}
			c.Close()
			if n := c.plain.IdleCount(); n != 0 {
				t.Errorf("after Close: %d idle connections", n)
			}
		})
	}
}

// BenchmarkFetchPaths: keep-alive GETs of a 2 KB page from 16 host names
// on one loopback server, by parallel fetchers, on each path. cpu-ns/op
// is the process's CPU time (user+system, the server's included) per
// fetch.
func BenchmarkFetchPaths(b *testing.B) {
	srv := pageServer(b, 2048)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	lookup := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	const hosts = 16
	urls := make([]*url.URL, hosts)
	for i := range urls {
		urls[i], _ = url.Parse("http://h" + strconv.Itoa(i) + ".test:" + port + "/page.html")
	}
	for _, path := range paths {
		b.Run(path, func(b *testing.B) {
			c, err := New(Config{Lookup: lookup})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if path == "transport" {
				c.plain = nil
			}
			var next atomic.Int64
			cpu0 := cpuclock.Process()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					r, err := c.Fetch(ctx, urls[next.Add(1)%hosts], Request{})
					if err != nil || len(r.Body) != 2048 {
						b.Fatal(err)
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(cpuclock.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
