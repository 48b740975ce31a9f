package proxy

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

func tlsOrigin(t *testing.T, robots string) *httptest.Server {
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func portOf(t *testing.T, s *httptest.Server) int {
	u, _ := url.Parse(s.URL)
	p, _ := strconv.Atoi(u.Port())
	return p
}

func TestConnectTunnel(t *testing.T) {
	before := runtime.NumGoroutine()
	open := tlsOrigin(t, "User-agent: *\nDisallow: /private/\n")
	closed := tlsOrigin(t, "User-agent: *\nDisallow: /\n")
	other := tlsOrigin(t, "")
	// The gate fetches robots.txt over TLS from the test origins.
	pool := open.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	gateClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	e := newEnv(t, envOpts{cfg: Config{ConnectPorts: []int{portOf(t, open), portOf(t, closed)}}, gateHTTP: gateClient})
	pu, _ := url.Parse(e.front.URL)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}

	resp, err := client.Get(open.URL + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "secure /hello" {
		t.Errorf("through the tunnel: %q", b)
	}
	// The open tunnel holds the host's slot (one connection per host, and
	// the test origins share the key 127.0.0.1): close it.
	client.CloseIdleConnections()
	// Inside the tunnel the path is invisible: /private/ is not checked.
	for _, tt := range []struct {
		name, url, want string
	}{
		{"host disallowing everything", closed.URL + "/x", "403"},
		{"port not allowed", other.URL + "/x", "403"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Get(tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) && !strings.Contains(err.Error(), http.StatusText(http.StatusForbidden)) {
				t.Errorf("got %v, want a %s from the proxy", err, tt.want)
			}
		})
	}
	client.CloseIdleConnections()
	waitFor(t, "tunnels to close", func() bool { return e.proxy.tunnelsActive.Load() == 0 })
	tr := e.proxy.Trace()
	found := false
	for _, x := range tr {
		if x.Outcome == "tunnel" && x.Method == "CONNECT" {
			found = true
		}
	}
	if !found {
		t.Errorf("no tunnel in the trace: %+v", tr)
	}
	e.front.Close()
	e.proxy.Close()
	open.Close()
	closed.Close()
	other.Close()
	checkGoroutines(t, before, 5)
}

func TestMITM(t *testing.T) {
	before := runtime.NumGoroutine()
	var hits atomic.Int64
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		hits.Add(1)
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	defer origin.Close()
	originPool := origin.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ca, _, err := mitm.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gateClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: originPool}}}
	g, err := politeness.New(politeness.Config{DefaultDelay: -1}, politeness.Backend{HTTPClient: gateClient})
	if err != nil {
		t.Fatal(err)
	}
	db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	cache, _ := httpcache.Open(db, httpcache.Options{})
	p, err := New(Config{AllowPrivate: true, ConnectPorts: []int{portOf(t, origin)}},
		Options{Gate: g, Cache: cache, MITM: ca, UpstreamTLS: &tls.Config{RootCAs: originPool}})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p.Handler(nil))
	pu, _ := url.Parse(front.URL)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()},
	}}
	get := func(path string) (int, string, http.Header) {
		resp, err := client.Get(origin.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, body, _ := get("/a"); code != 200 || body != "secure /a" {
		t.Errorf("first: %d %q", code, body)
	}
	if code, body, h := get("/a"); code != 200 || body != "secure /a" || h.Get(HeaderCache) != "HIT" {
		t.Errorf("second: %d %q %v", code, body, h)
	}
	// Inside the intercepted tunnel robots.txt applies per path, and a
	// request for another host than the tunnel's never reaches the
	// pipeline (internal/mitm answers 421).
	if code, _, h := get("/private/x"); code != 403 || h.Get(HeaderReason) != "robots" {
		t.Errorf("private: %d %v", code, h)
	}
	if hits.Load() != 1 {
		t.Errorf("origin saw %d page requests, want 1", hits.Load())
	}
	found := false
	for _, e := range p.Trace() {
		if strings.HasPrefix(e.URL, "https://") && e.Outcome == "cache_hit" {
			found = true
		}
	}
	if !found {
		t.Errorf("no https cache hit in the trace: %+v", p.Trace())
	}
	client.CloseIdleConnections()
	front.Close()
	p.Close()
	cache.Close()
	db.Close()
	origin.Close()
	checkGoroutines(t, before, 5)
}
