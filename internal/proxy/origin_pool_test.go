package proxy

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// The origin pool's own tests are in internal/h1; these check how the
// proxy configures and uses it.

// Through the proxy: an origin connection idle for proxy.idle-conn-timeout
// is closed with no further request (the origin sees it close).
func TestProxyClosesIdleOriginConns(t *testing.T) {
	// The connections that carried pages (not the gate's robots.txt
	// fetch, which has a client of its own) and those closed.
	var (
		mu            sync.Mutex
		pages, closed = map[string]bool{}, map[string]bool{}
	)
	o := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		pages[r.RemoteAddr] = true
		mu.Unlock()
		hello(w, r)
	}))
	o.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			mu.Lock()
			closed[c.RemoteAddr().String()] = true
			mu.Unlock()
		}
	}
	o.Start()
	t.Cleanup(o.Close)
	// Long enough that the connection is still idle when checked below,
	// even on a loaded machine.
	e := newEnv(t, envOpts{cfg: Config{IdleConnTimeout: time.Second}})
	for _, p := range []string{"/a", "/b"} {
		if r, body := e.get(o.URL + p); r.StatusCode != 200 || body != "hello "+p {
			t.Fatalf("GET %s: %d %q", p, r.StatusCode, body)
		}
	}
	if n := e.proxy.origin.IdleCount(); n != 1 {
		t.Fatalf("%d idle origin connections after the requests, want 1", n)
	}
	waitFor(t, "the idle origin connection to close", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for a := range pages {
			if !closed[a] {
				return false
			}
		}
		return len(pages) > 0 && e.proxy.origin.IdleCount() == 0
	})
}

func TestIdleConnConfig(t *testing.T) {
	file := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(file, []byte("max-idle-conns: 100\nidle-conn-timeout: 15s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := config.Load(file, &c); err != nil {
		t.Fatal(err)
	}
	if c.MaxIdleConns != 100 || c.IdleConnTimeout != 15*time.Second {
		t.Fatalf("loaded max-idle-conns %d, idle-conn-timeout %v", c.MaxIdleConns, c.IdleConnTimeout)
	}
	if d := (Config{}).withDefaults(); d.MaxIdleConns != 4096 || d.IdleConnTimeout != 90*time.Second {
		t.Fatalf("defaults: max-idle-conns %d, idle-conn-timeout %v", d.MaxIdleConns, d.IdleConnTimeout)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"negative max-idle-conns", Config{MaxIdleConns: -1}},
		{"huge max-idle-conns", Config{MaxIdleConns: maxQueueLimit + 1}},
		{"negative idle-conn-timeout", Config{IdleConnTimeout: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), "idle") {
				t.Fatalf("Validate = %v, want an error about idle connections", err)
			}
		})
	}
	g, err := politeness.New(politeness.Config{DefaultDelay: -1}, politeness.Backend{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{MaxIdleConns: 7, IdleConnTimeout: 3 * time.Second}, Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if ho := p.origin.Options(); ho.MaxIdle != 7 || ho.IdleTimeout != 3*time.Second ||
		p.transport.MaxIdleConns != 7 || p.transport.IdleConnTimeout != 3*time.Second {
		t.Fatalf("pool %d/%v, transport %d/%v, want 7/3s for both", ho.MaxIdle, ho.IdleTimeout,
			p.transport.MaxIdleConns, p.transport.IdleConnTimeout)
	}
}
