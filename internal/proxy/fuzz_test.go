package proxy

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// FuzzRequestHeaders feeds the request fields the proxy itself parses
// (X-Courtesy-Mode, X-Courtesy-Timeout, Proxy-Authorization, Accept,
// Connection, If-None-Match / If-Modified-Since) with arbitrary values: no
// panic, and the results stay within their bounds.
func FuzzRequestHeaders(f *testing.F) {
	f.Add("wait", "30s", "Basic YW5uOnMzY3JldA==", "application/json", "close, X-Foo", `"v1", W/"v2"`)
	f.Add("SEQUENTIAL", "100", "Basic !!!", "text/*;q=0", "", "*")
	f.Add("", "-1", "Bearer x", "", ",,,", "")
	f.Add("reject", "99999999999999999999", "basic", "+json", "Keep-Alive", `W/`)
	rc := &runtimeConfig{Config: Config{}.withDefaults()}
	f.Fuzz(func(t *testing.T, mode, timeout, auth, accept, conn, inm string) {
		h := http.Header{}
		h.Set(HeaderMode, mode)
		h.Set(HeaderTimeout, timeout)
		h.Set("Proxy-Authorization", auth)
		h.Set("Connection", conn)
		h.Set("If-None-Match", inm)
		h.Set("If-Modified-Since", timeout)
		m, d, err := requestMode(h, rc)
		if err == nil {
			if m != ModeReject && m != ModeWait && m != ModeSequential {
				t.Fatalf("mode %q from %q", m, mode)
			}
			if d <= 0 || d > maxHeaderTimeout && d != rc.MaxWait && d != rc.SequentialTimeout {
				t.Fatalf("timeout %v from %q", d, timeout)
			}
		}
		if checkProxyAuth(h, map[string]string{"ann": "s3cret"}) && auth != "Basic YW5uOnMzY3JldA==" && !strings.EqualFold(strings.Fields(auth + " x")[0], "basic") {
			t.Fatalf("accepted %q", auth)
		}
		_ = wantsJSON(accept)
		_ = notModified(h, http.Header{"Etag": {inm}, "Last-Modified": {timeout}})
		c := h.Clone()
		removeHopByHop(c)
		for _, k := range hopByHop {
			if c.Get(k) != "" {
				t.Fatalf("%s survived", k)
			}
		}
	})
}

// TestNoGoroutineLeak runs every kind of exchange (forwarded, cached,
// refused, timed out, cut) and checks the goroutine count comes back.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		o := newOrigin(t, "User-agent: *\nDisallow: /no/\n", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				time.Sleep(500 * time.Millisecond)
			}
			w.Header().Set("Cache-Control", "max-age=60")
			hello(w, r)
		})
		e := newEnv(t, envOpts{cfg: Config{MaxWait: 100 * time.Millisecond, UpstreamHeaderTimeout: 200 * time.Millisecond}, cache: true, pol: politeness.Config{DefaultDelay: 50 * time.Millisecond}})
		c := e.client()
		for _, u := range []string{"/a", "/a", "/no/x", "/slow", "/b", "/c"} {
			e.do(c, "GET", o.URL+u)
		}
		for _, m := range []string{"reject", "sequential"} {
			e.do(c, "GET", o.URL+"/d", HeaderMode, m)
		}
		c.CloseIdleConnections()
		e.front.Close()
		e.proxy.Close()
		e.closeDB()
		o.Close()
	}()
	checkGoroutines(t, before, 3)
}
