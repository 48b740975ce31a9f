package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/poll"
)

// origin is a test web server that records when each request started and
// ended, and the headers it saw.
type origin struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []originReq
}

type originReq struct {
	path       string
	start, end time.Time
	header     http.Header
}

// newOrigin serves robots.txt (robots, or 404 when empty) and routes to h,
// on 127.0.0.1. Origins on one address share a politeness key (the host,
// port ignored): use newOriginAt for independent hosts.
func newOrigin(t *testing.T, robots string, h http.HandlerFunc) *origin {
	return newOriginAt(t, "127.0.0.1", robots, h)
}

// newOriginAt is newOrigin on another loopback address (127.0.0.0/8 is
// all loopback on Linux), so that its politeness key is its own.
func newOriginAt(t *testing.T, ip, robots string, h http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.URL.Path == "/robots.txt" {
			if robots == "" {
				http.NotFound(w, r)
			} else {
				io.WriteString(w, robots)
			}
		} else {
			h(w, r)
		}
		o.mu.Lock()
		o.reqs = append(o.reqs, originReq{r.URL.RequestURI(), start, time.Now(), r.Header.Clone()})
		o.mu.Unlock()
	}))
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	o.Listener.Close()
	o.Listener = ln
	o.Start()
	t.Cleanup(o.Close)
	return o
}

// pages returns the recorded requests other than robots.txt.
func (o *origin) pages() []originReq {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []originReq
	for _, r := range o.reqs {
		if r.path != "/robots.txt" {
			out = append(out, r)
		}
	}
	return out
}

func hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "hello "+r.URL.Path)
}

// env is a proxy in front of test origins.
type env struct {
	t     *testing.T
	gate  *politeness.Gate
	cache *httpcache.Cache
	proxy *Proxy
	front *httptest.Server
	// closeDB closes the cache's store (once); nil without a cache.
	closeDB func()
}

type envOpts struct {
	cfg   Config
	pol   politeness.Config
	cache bool
	// cacheOpts are the cache's options when cache is set.
	cacheOpts httpcache.Options
	gateHTTP  *http.Client
	// now is the clock of the gate and the proxy; nil means time.Now.
	// A test that injects one may use reject mode only: wait mode's
	// timers run on the real clock.
	now func() time.Time
}

func newFakeClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	if o.pol.DefaultDelay == 0 {
		o.pol.DefaultDelay = -1 // no delay unless the test asks
	}
	g, err := politeness.New(o.pol, politeness.Backend{HTTPClient: o.gateHTTP, Now: o.now})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, gate: g}
	if o.cache {
		db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if e.cache, err = httpcache.Open(db, o.cacheOpts); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		e.closeDB = func() { once.Do(func() { e.cache.Close(); db.Close() }) }
		t.Cleanup(e.closeDB)
	}
	if !o.cfg.AllowPrivate && o.cfg.AllowedClients == nil {
		o.cfg.AllowPrivate = true // test origins live on loopback
	}
	p, err := New(o.cfg, Options{Gate: g, Cache: e.cache, Now: o.now})
	if err != nil {
		t.Fatal(err)
	}
	e.proxy = p
	e.front = httptest.NewUnstartedServer(p.Handler(nil))
	e.front.Config = NewServer(p.Handler(nil), o.cfg, nil)
	e.front.Start()
	p.AddSelf(e.front.Listener.Addr().String())
	t.Cleanup(func() {
		e.front.Close()
		p.Close()
	})
	return e
}

// client returns an HTTP client that uses the proxy, with its own
// connection pool.
func (e *env) client() *http.Client {
	pu, _ := url.Parse(e.front.URL)
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 64},
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// get sends a GET through the proxy with extra header pairs.
func (e *env) get(url string, kv ...string) (*http.Response, string) {
	e.t.Helper()
	return e.do(e.client(), "GET", url, kv...)
}

func (e *env) do(c *http.Client, method, url string, kv ...string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Add(kv[i], kv[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// rawRequest writes raw bytes to the proxy and returns the first response
// line (or the read error).
func (e *env) rawRequest(raw string) string {
	e.t.Helper()
	c, err := net.Dial("tcp", e.front.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		return "write: " + err.Error()
	}
	b := make([]byte, 512)
	n, err := c.Read(b)
	if n == 0 {
		return "read: " + err.Error()
	}
	line, _, _ := strings.Cut(string(b[:n]), "\r\n")
	return line
}

// checkGoroutines fails if the goroutine count does not come back to at
// most before+slack within a bounded wait.
func checkGoroutines(t *testing.T, before, slack int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before+slack {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d before, %d after\n%s", before, n, buf[:min(len(buf), 8000)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls cond until it holds or a bounded time passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 10*time.Second, what, cond)
}
