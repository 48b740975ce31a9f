// Over 600 lines: the end-to-end tests of the proxy pipeline (one per
// rule of docs/proxy.md, through a real listener), which share the env
// helpers; split by feature they would each repeat the same setup.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

func TestForwardStripsHopByHop(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Origin-Hop")
		w.Header().Set("X-Origin-Hop", "secret")
		w.Header().Set("Keep-Alive", "timeout=5")
		hello(w, r)
	})
	e := newEnv(t, envOpts{})
	resp, body := e.get(o.URL+"/a?b=c",
		"Connection", "X-Client-Hop", "X-Client-Hop", "1", "Proxy-Connection", "keep-alive",
		HeaderMode, "wait", HeaderClient, "me", "X-End-To-End", "kept")
	if resp.StatusCode != 200 || body != "hello /a" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if resp.Header.Get("X-Origin-Hop") != "" || resp.Header.Get("Keep-Alive") != "" {
		t.Errorf("hop-by-hop response fields forwarded: %v", resp.Header)
	}
	if !strings.Contains(resp.Header.Get("Via"), "courtesy-") {
		t.Errorf("no Via on the response: %v", resp.Header)
	}
	pages := o.pages()
	if len(pages) != 1 {
		t.Fatalf("origin saw %d requests", len(pages))
	}
	h := pages[0].header
	for _, k := range []string{"X-Client-Hop", "Proxy-Connection", HeaderMode, HeaderClient} {
		if h.Get(k) != "" {
			t.Errorf("origin saw %s: %q", k, h.Get(k))
		}
	}
	if h.Get("X-End-To-End") != "kept" || !strings.Contains(h.Get("Via"), "courtesy-") {
		t.Errorf("origin header %v", h)
	}
	if pages[0].path != "/a?b=c" {
		t.Errorf("origin path %q", pages[0].path)
	}
}

func TestRobotsRefusal(t *testing.T) {
	o := newOrigin(t, "User-agent: *\nDisallow: /private/\n", hello)
	e := newEnv(t, envOpts{})
	tests := []struct {
		name, accept, wantType string
	}{
		{"plain text", "", "text/plain; charset=utf-8"},
		{"json by Accept", "application/json", "application/json"},
		{"html prefers text", "text/html, application/json", "text/plain; charset=utf-8"},
	}
	for _, mode := range []string{"reject", "wait"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				resp, body := e.get(o.URL+"/private/x", "Accept", tt.accept, HeaderMode, mode)
				if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderReason) != "robots" {
					t.Fatalf("got %d %s %q", resp.StatusCode, resp.Header.Get(HeaderReason), body)
				}
				if got := resp.Header.Get("Content-Type"); got != tt.wantType {
					t.Errorf("Content-Type %q, want %q", got, tt.wantType)
				}
				if tt.wantType == "application/json" {
					var v struct {
						Reason       string `json:"reason"`
						RetryAfterMs int64  `json:"retryAfterMs"`
					}
					if err := json.Unmarshal([]byte(body), &v); err != nil || v.Reason != "robots" || v.RetryAfterMs != -1 {
						t.Errorf("json body %q: %+v %v", body, v, err)
					}
				} else if !strings.Contains(body, "403") {
					t.Errorf("text body %q", body)
				}
			})
		}
	}
	if n := len(o.pages()); n != 0 {
		t.Errorf("origin saw %d disallowed requests", n)
	}
}

func TestRejectMode429(t *testing.T) {
	o := newOrigin(t, "", hello)
	clk := newFakeClock()
	e := newEnv(t, envOpts{cfg: Config{Mode: ModeReject}, pol: politeness.Config{DefaultDelay: 1500 * time.Millisecond}, now: clk.Now})
	// The first request on a cold host finds the slot taken by the
	// robots.txt fetch: 429 too.
	resp, body := e.get(o.URL + "/1")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("cold host: %d %q", resp.StatusCode, body)
	}
	ms, _ := strconv.ParseInt(resp.Header.Get(HeaderRetryAfterMs), 10, 64)
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if ms <= 0 || ms > 1500 || secs != 2 {
		t.Errorf("Retry-After %q (want 2, rounded up) and %s %q (want 1..1500)", resp.Header.Get("Retry-After"), HeaderRetryAfterMs, resp.Header.Get(HeaderRetryAfterMs))
	}
	if !strings.Contains(body, fmt.Sprintf("Retry after %d ms", ms)) {
		t.Errorf("body %q lacks the wait", body)
	}
	// The robots.txt fetch ends (on the real clock); then the host's
	// delay, counted from its end, passes on the injected one.
	u, _ := url.Parse(o.URL + "/2")
	waitFor(t, "the robots.txt fetch to end", func() bool {
		d, err := e.gate.Peek(context.Background(), u)
		return err == nil && d.Reason != politeness.ReasonConcurrency
	})
	clk.Advance(time.Duration(ms) * time.Millisecond)
	if resp, _ := e.get(o.URL + "/2"); resp.StatusCode != 200 {
		t.Fatalf("after waiting: %d", resp.StatusCode)
	}
	resp, body = e.get(o.URL+"/3", "Accept", "application/json")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get(HeaderReason) != "delay" {
		t.Fatalf("second request: %d %q", resp.StatusCode, body)
	}
	var v struct {
		RetryAfterMs int64  `json:"retryAfterMs"`
		Error        string `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.RetryAfterMs < 1000 || v.RetryAfterMs > 1500 {
		t.Errorf("json %q: %+v %v", body, v, err)
	}
	if len(o.pages()) != 1 {
		t.Errorf("origin saw %d pages, want 1", len(o.pages()))
	}
}

// TestSlotFreeWhenAnswered: the host's slot is free by the time the client
// has the last byte of its response, so a client that asks again at once
// (reject mode, no delay) never meets its own finished request as one "in
// flight". The slot used to be freed after the response was flushed, and
// CI saw a 429 "concurrency" with a Retry-After of the lease.
func TestSlotFreeWhenAnswered(t *testing.T) {
	big := strings.Repeat("x", 100<<10) // longer than the server's write buffer
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, big)
		case "/chunked":
			io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			io.WriteString(w, "b")
		case "/fail":
			panic(http.ErrAbortHandler)
		default:
			hello(w, r)
		}
	})
	e := newEnv(t, envOpts{cfg: Config{Mode: ModeReject}})
	for _, path := range []string{"/robots-warm", "/small", "/big", "/chunked", "/fail"} {
		t.Run(path, func(t *testing.T) {
			for i := range 40 {
				resp, body := e.get(o.URL + path)
				if resp.StatusCode == http.StatusTooManyRequests {
					t.Fatalf("request %d: 429 %s %q", i, resp.Header.Get(HeaderReason), body)
				}
			}
		})
	}
}

func TestWaitModeSpacesRequests(t *testing.T) {
	const delay = 200 * time.Millisecond
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{pol: politeness.Config{DefaultDelay: delay}})
	c := e.client()
	var wg sync.WaitGroup
	codes := make([]int, 5)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := e.do(c, "GET", fmt.Sprintf("%s/%d", o.URL, i))
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d: %d", i, c)
		}
	}
	pages := o.pages()
	if len(pages) != 5 {
		t.Fatalf("origin saw %d", len(pages))
	}
	for i := 1; i < len(pages); i++ {
		if gap := pages[i].start.Sub(pages[i-1].end); gap < delay {
			t.Errorf("gap %d: %v < %v", i, gap, delay)
		}
	}
}

func TestWaitTimeoutAndQueueBounds(t *testing.T) {
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{cfg: Config{MaxWait: 300 * time.Millisecond, MaxQueuePerHost: 2}, pol: politeness.Config{DefaultDelay: 10 * time.Second}})
	// robots.txt takes the slot first: every page now waits ~10 s.
	resp, body := e.get(o.URL + "/1")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get(HeaderReason) != "wait-timeout" {
		t.Fatalf("wait timeout: %d %q", resp.StatusCode, body)
	}
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra < 1 || ra > 10 {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	// Two held requests fill the host's queue; a third gets 503 at once.
	c := e.client()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.do(c, "GET", fmt.Sprintf("%s/held%d", o.URL, i), HeaderTimeout, "2s")
		}()
	}
	waitFor(t, "two queued", func() bool { n, _ := e.proxy.queues.depth(); return n == 2 })
	resp, body = e.get(o.URL + "/3")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(HeaderReason) != "queue-full" {
		t.Errorf("queue full: %d %q", resp.StatusCode, body)
	}
	wg.Wait()
	if n, k := e.proxy.queues.depth(); n != 0 || k != 0 {
		t.Errorf("queue not empty after: %d requests, %d keys", n, k)
	}
}

func TestClientDisconnectLeavesQueue(t *testing.T) {
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{pol: politeness.Config{DefaultDelay: 10 * time.Second}})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", o.URL+"/x", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := e.client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, "queued", func() bool { n, _ := e.proxy.queues.depth(); return n == 1 })
	cancel()
	<-done
	waitFor(t, "queue to empty", func() bool { n, _ := e.proxy.queues.depth(); return n == 0 })
	waitFor(t, "trace entry", func() bool {
		tr := e.proxy.Trace()
		return len(tr) > 0 && tr[0].Outcome == "client_gone"
	})
}

func TestSequentialOrder(t *testing.T) {
	release := make(chan struct{}) // the slow origin answers once closed
	slow := newOriginAt(t, "127.0.0.2", "", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		hello(w, r)
	})
	fast := newOriginAt(t, "127.0.0.3", "", hello)
	e := newEnv(t, envOpts{cfg: Config{Mode: ModeSequential}})
	c := e.client()
	var mu sync.Mutex
	got := map[string]string{}
	done := map[string]chan struct{}{"A1": make(chan struct{}), "A2": make(chan struct{}), "B1": make(chan struct{})}
	send := func(name, url, client string) {
		defer close(done[name])
		_, body := e.do(c, "GET", url, HeaderClient, client)
		mu.Lock()
		got[name] = body
		mu.Unlock()
	}
	isDone := func(name string) bool {
		select {
		case <-done[name]:
			return true
		default:
			return false
		}
	}
	go send("A1", slow.URL+"/slow", "A")
	waitFor(t, "A1 in flight", func() bool { return e.proxy.seq.size() == 1 })
	go send("A2", fast.URL+"/fast", "A")
	go send("B1", fast.URL+"/other", "B")
	// B1, another client, is not held behind A1: it is answered while
	// A1's origin has not answered yet.
	waitFor(t, "B1 answered", func() bool { return isDone("B1") })
	// A2's origin has answered too, yet A2 is held until A1 is written.
	waitFor(t, "A2 fetched", func() bool {
		for _, p := range fast.pages() {
			if p.path == "/fast" {
				return true
			}
		}
		return false
	})
	if isDone("A1") || isDone("A2") {
		t.Errorf("client A answered before its first request's origin did (A1 %v, A2 %v)", isDone("A1"), isDone("A2"))
	}
	close(release)
	waitFor(t, "A1 and A2 answered", func() bool { return isDone("A1") && isDone("A2") })
	mu.Lock()
	defer mu.Unlock()
	if got["A1"] != "hello /slow" || got["A2"] != "hello /fast" || got["B1"] != "hello /other" {
		t.Fatalf("responses %+v", got)
	}
}

func TestSequentialTimeout(t *testing.T) {
	release := make(chan struct{}) // the slow origin answers once closed
	slow := newOriginAt(t, "127.0.0.2", "", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		hello(w, r)
	})
	fast := newOriginAt(t, "127.0.0.3", "", hello)
	e := newEnv(t, envOpts{cfg: Config{Mode: ModeSequential}})
	c := e.client()
	first := make(chan struct{})
	go func() { defer close(first); e.do(c, "GET", slow.URL+"/slow") }()
	waitFor(t, "first in flight", func() bool { return e.proxy.seq.size() == 1 })
	// The first request cannot be answered before release: only the
	// 200 ms timeout can end the second.
	resp, body := e.do(c, "GET", fast.URL+"/fast", HeaderTimeout, "200")
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get(HeaderReason) != "sequential-timeout" {
		t.Errorf("got %d %s %q, want 504 sequential-timeout", resp.StatusCode, resp.Header.Get(HeaderReason), body)
	}
	close(release) // the first may finish now
	<-first
}

func TestCacheThroughProxy(t *testing.T) {
	var etagHits sync.Map
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fresh":
			w.Header().Set("Cache-Control", "max-age=60")
		case "/nostore":
			w.Header().Set("Cache-Control", "no-cache, no-store") // the polite-proxy thesis §4.6 override
		case "/etag":
			w.Header().Set("Cache-Control", "max-age=0")
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				etagHits.Store(r.URL.Path, true)
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		hello(w, r)
	})
	e := newEnv(t, envOpts{cache: true})
	for _, path := range []string{"/fresh", "/nostore"} {
		r1, b1 := e.get(o.URL + path)
		r2, b2 := e.get(o.URL + path)
		if r1.Header.Get(HeaderCache) != "MISS" || r2.Header.Get(HeaderCache) != "HIT" || b1 != b2 || r2.Header.Get("Age") == "" {
			t.Errorf("%s: %s then %s, bodies %q %q", path, r1.Header.Get(HeaderCache), r2.Header.Get(HeaderCache), b1, b2)
		}
	}
	// A client's no-cache revalidates: the origin answers 304.
	r, b := e.get(o.URL+"/fresh", "Cache-Control", "no-cache")
	if r.Header.Get(HeaderCache) != "MISS" || b != "hello /fresh" {
		t.Errorf("no-cache without validator: %s %q", r.Header.Get(HeaderCache), b)
	}
	e.get(o.URL + "/etag")
	r, b = e.get(o.URL + "/etag")
	if r.Header.Get(HeaderCache) != "REVALIDATED" || b != "hello /etag" {
		t.Errorf("etag: %s %q", r.Header.Get(HeaderCache), b)
	}
	if _, ok := etagHits.Load("/etag"); !ok {
		t.Error("no conditional request reached the origin")
	}
	// The client's own validator gets a 304 from the cache.
	r, _ = e.get(o.URL+"/fresh", "If-None-Match", "W/\"zzz\", *")
	if r.StatusCode != http.StatusNotModified {
		t.Errorf("client conditional: %d", r.StatusCode)
	}
	r, b = e.get(o.URL+"/missing", "Cache-Control", "only-if-cached")
	if r.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("only-if-cached miss: %d %q", r.StatusCode, b)
	}
	pages := o.pages()
	count := map[string]int{}
	for _, p := range pages {
		count[p.path]++
	}
	if count["/fresh"] != 2 || count["/nostore"] != 1 || count["/etag"] != 2 || count["/missing"] != 0 {
		t.Errorf("origin requests %v", count)
	}
	s := e.cache.Stats()
	if s.Hits < 3 || s.Revalidated != 1 {
		t.Errorf("cache stats %+v", s)
	}
	// POST invalidates (RFC 9111 §4.4).
	e.do(e.client(), "POST", o.URL+"/fresh")
	if r, _ := e.get(o.URL + "/fresh"); r.Header.Get(HeaderCache) != "MISS" {
		t.Errorf("after POST: %s", r.Header.Get(HeaderCache))
	}
}

func TestSSRFGuardAndLoop(t *testing.T) {
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{cfg: Config{AllowedClients: []string{"127.0.0.0/8"}}})
	tests := []struct {
		name, url string
		status    int
		reason    string
	}{
		{"loopback literal", o.URL + "/", 403, "private-destination"},
		{"name resolving to loopback", strings.Replace(o.URL, "127.0.0.1", "localhost", 1) + "/", 403, "private-destination"},
		{"private literal", "http://10.1.2.3/", 403, "private-destination"},
		{"link-local", "http://169.254.169.254/latest/meta-data/", 403, "private-destination"},
		{"ipv6 loopback", "http://[::1]:1/", 403, "private-destination"},
		{"the proxy itself", e.front.URL + "/", 508, "loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.get(tt.url)
			if resp.StatusCode != tt.status || resp.Header.Get(HeaderReason) != tt.reason {
				t.Errorf("got %d %s %q", resp.StatusCode, resp.Header.Get(HeaderReason), body)
			}
		})
	}
	if n := len(o.pages()); n != 0 {
		t.Errorf("origin reached %d times", n)
	}
}

func TestAccessControl(t *testing.T) {
	o := newOrigin(t, "", hello)
	t.Run("client network", func(t *testing.T) {
		e := newEnv(t, envOpts{cfg: Config{AllowPrivate: true, AllowedClients: []string{"10.0.0.0/8"}}})
		resp, _ := e.get(o.URL + "/")
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderReason) != "client-forbidden" {
			t.Errorf("got %d", resp.StatusCode)
		}
	})
	t.Run("basic auth", func(t *testing.T) {
		e := newEnv(t, envOpts{cfg: Config{AllowPrivate: true, Users: map[string]string{"ann": "s3cret"}}})
		resp, _ := e.get(o.URL + "/")
		if resp.StatusCode != http.StatusProxyAuthRequired || !strings.HasPrefix(resp.Header.Get("Proxy-Authenticate"), "Basic") {
			t.Errorf("no credentials: %d %v", resp.StatusCode, resp.Header)
		}
		resp, _ = e.get(o.URL+"/", "Proxy-Authorization", "Basic YW5uOndyb25n") // ann:wrong
		if resp.StatusCode != http.StatusProxyAuthRequired {
			t.Errorf("wrong password: %d", resp.StatusCode)
		}
		resp, body := e.get(o.URL+"/", "Proxy-Authorization", "Basic YW5uOnMzY3JldA==") // ann:s3cret
		if resp.StatusCode != 200 || body != "hello /" {
			t.Errorf("good credentials: %d %q", resp.StatusCode, body)
		}
		if h := o.pages()[0].header; h.Get("Proxy-Authorization") != "" {
			t.Error("credentials forwarded to the origin")
		}
	})
}

func TestUpstreamFailures(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hangup":
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		case "/endless":
			w.Header().Set("Content-Type", "application/octet-stream")
			chunk := make([]byte, 32<<10)
			for i := 0; i < 1<<16; i++ { // bounded: 2 GiB at most
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	})
	e := newEnv(t, envOpts{cfg: Config{UpstreamHeaderTimeout: 300 * time.Millisecond, MaxResponseBytes: 1 << 20}, cache: true})
	resp, body := e.get(o.URL + "/hang")
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get(HeaderReason) != "upstream-timeout" {
		t.Errorf("hanging origin: %d %q", resp.StatusCode, body)
	}
	resp, err := e.client().Get(o.URL + "/endless")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n > 1<<20 || n < 1<<19 {
		t.Errorf("endless body relayed %d bytes, want at most the 1 MiB cut", n)
	}
	if err == nil {
		t.Error("a cut body read as complete: the connection must be aborted")
	}
	if s := e.cache.Stats(); s.Entries != 0 {
		t.Errorf("a cut body was cached: %+v", s)
	}
	tr := e.proxy.Trace()
	if len(tr) == 0 || !strings.Contains(tr[0].Error, "longer than") || tr[0].Outcome != "response_too_large" {
		t.Errorf("trace %+v", tr)
	}
	resp, _ = e.get(o.URL + "/hangup")
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(HeaderReason) != "upstream-error" {
		t.Errorf("origin hanging up: %d", resp.StatusCode)
	}
	// An unreachable origin cannot serve robots.txt either: RFC 9309
	// §2.3.1.4 makes that "disallow all", so nothing is forwarded; the
	// client is told the origin could not be reached (502), not that
	// robots.txt refused it.
	refused := newOrigin(t, "", hello)
	refused.Close()
	resp, body = e.get(refused.URL + "/")
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(HeaderReason) != "upstream-error" ||
		!strings.Contains(body, "could not be reached") || !strings.Contains(body, "connection refused") {
		t.Errorf("closed origin: %d %s %q", resp.StatusCode, resp.Header.Get(HeaderReason), body)
	}
}

func TestMalformedRequests(t *testing.T) {
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{cfg: Config{MaxHeaderBytes: 4 << 10, ReadHeaderTimeout: 300 * time.Millisecond}})
	host := strings.TrimPrefix(o.URL, "http://")
	tests := []struct {
		name, raw, want string
	}{
		{"garbage request line", "HELLO\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"bad version", "GET http://" + host + "/ HTTP/9.9\r\nHost: " + host + "\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported"},
		{"header without colon", "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nNoColon\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"oversized headers", "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", "HTTP/1.1 431 Request Header Fields Too Large"},
		{"unknown transfer coding", "POST http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: zip\r\n\r\n", "HTTP/1.1 501 Not Implemented"},
		{"two Content-Lengths", "POST http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", "HTTP/1.1 400 Bad Request"},
		{"origin form is not proxied", "GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"ftp scheme", "GET ftp://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"bad mode header", "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nX-Courtesy-Mode: fast\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"bad timeout header", "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nX-Courtesy-Timeout: -5\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"slowloris", "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\nX-Slow: ", "read: EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.rawRequest(tt.raw); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if n := len(o.pages()); n != 0 {
		t.Errorf("origin reached %d times", n)
	}
}

// TestConflictingFraming: RFC 9112 §6.3 lets a server frame a request that
// has both Content-Length and Transfer-Encoding by the latter; an
// intermediary must drop Content-Length before forwarding. The origin must
// see one unambiguous message.
func TestConflictingFraming(t *testing.T) {
	var gotLen int64
	var gotBody string
	var gotCL string
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotLen, gotBody, gotCL = r.ContentLength, string(b), r.Header.Get("Content-Length")
		hello(w, r)
	})
	e := newEnv(t, envOpts{})
	host := strings.TrimPrefix(o.URL, "http://")
	got := e.rawRequest("POST http://" + host + "/p HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("got %q", got)
	}
	if gotBody != "abc" || gotCL == "100" || (gotLen != 3 && gotLen != -1) {
		t.Errorf("origin saw body %q, Content-Length %q, length %d", gotBody, gotCL, gotLen)
	}
}

// TestNoArchive: a page that asks not to be archived (X-Robots-Tag or a
// robots meta tag, the polite-proxy thesis §7) is not cached, even under the thesis
// override.
func TestNoArchive(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/header":
			w.Header().Set("X-Robots-Tag", "noarchive")
		case "/other-bot":
			w.Header().Set("X-Robots-Tag", "otherbot: noarchive")
		case "/meta":
			io.WriteString(w, `<html><head><META NAME="robots" CONTENT="NoArchive"></head><body>x</body></html>`)
			return
		case "/text":
			io.WriteString(w, `<html><body>the word noarchive in the text</body></html>`)
			return
		}
		io.WriteString(w, "<html><body>plain</body></html>")
	})
	e := newEnv(t, envOpts{cache: true})
	for _, tt := range []struct {
		path   string
		cached bool
	}{{"/header", false}, {"/other-bot", true}, {"/meta", false}, {"/text", true}, {"/plain", true}} {
		e.get(o.URL + tt.path)
		resp, _ := e.get(o.URL + tt.path)
		if got := resp.Header.Get(HeaderCache) == "HIT"; got != tt.cached {
			t.Errorf("%s: cached %v, want %v", tt.path, got, tt.cached)
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, tt := range []struct {
		b    string
		want bool
	}{{"xx NOARCHIVE", true}, {"noarchiv", false}, {"", false}, {"nOaRcHiVe", true}, {"n", false}, {"nnnoarchive", true},
		{"NOARCHIVE", true}, {"@OARCHIVE", false}, {"no archive", false}, {"x<meta content=noarchivex>", true}} {
		if got := containsFold([]byte(tt.b), "noarchive"); got != tt.want {
			t.Errorf("containsFold(%q) = %v", tt.b, got)
		}
	}
}

// FuzzContainsFold checks the byte loop against a plain reference: ASCII
// lower-casing and bytes.Contains.
func FuzzContainsFold(f *testing.F) {
	f.Add([]byte("<meta name=robots content=NoArchive>"))
	f.Add([]byte("nnnOCACHE"))
	f.Add([]byte{0x4e, 0x6f, 0xce})
	f.Fuzz(func(t *testing.T, b []byte) {
		lower := make([]byte, len(b))
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		for _, s := range []string{"noarchive", "nocache"} {
			if got, want := containsFold(b, s), bytes.Contains(lower, []byte(s)); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, want %v", b, s, got, want)
			}
		}
		want := bytes.Contains(lower, []byte("noarchive")) || bytes.Contains(lower, []byte("nocache"))
		if got := mentionsNoArchive(b); got != want {
			t.Fatalf("mentionsNoArchive(%q) = %v, want %v", b, got, want)
		}
	})
}
