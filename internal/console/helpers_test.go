package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

const testToken = "test-token-0123456789"

// clock is a settable clock for the console and the frontier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// progress is a crawl whose counters the test sets.
type progress struct {
	mu sync.Mutex
	p  Progress
}

func (p *progress) Progress() Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.p
}

func (p *progress) set(fn func(*Progress)) {
	p.mu.Lock()
	fn(&p.p)
	p.mu.Unlock()
}

// fixture is a console over a real frontier and a real politeness gate
// (memory backend), both on the fixture's clock.
type fixture struct {
	t      *testing.T
	clk    *clock
	fr     *frontier.Frontier
	gate   *politeness.Gate
	robots *politeness.MemoryRobotsStore
	crawl  *progress
	s      *Server
	h      http.Handler
	logs   *bytes.Buffer
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	clk := newClock()
	db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := frontier.Open(db, frontier.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fr.Close(); db.Close() })
	rs := politeness.NewMemoryRobotsStore()
	gate, err := politeness.New(politeness.Config{DefaultDelay: time.Second}, politeness.Backend{Robots: rs, Now: clk.Now, State: politeness.NewMemoryState(clk.Now)})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, clk: clk, fr: fr, gate: gate, robots: rs, crawl: &progress{}, logs: &bytes.Buffer{}}
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	cfg.Now = clk.Now
	cfg.Logger = slogTo(fx.logs)
	s, err := New(cfg, Sources{Crawl: fx.crawl, Frontier: FrontierSource(fr, ""), Politeness: PolitenessSource(gate, rs),
		Nodes: &LocalNode{ID: "n1"}})
	if err != nil {
		t.Fatal(err)
	}
	fx.s, fx.h = s, s.Handler()
	return fx
}

func (fx *fixture) put(urls ...string) {
	fx.t.Helper()
	items := make([]frontier.Item, len(urls))
	for i, u := range urls {
		items[i] = frontier.Item{Info: frontier.URLInfo{URL: u}}
	}
	if _, err := fx.fr.Put(context.Background(), items); err != nil {
		fx.t.Fatal(err)
	}
}

// do sends a request and decodes the JSON answer into out (if not nil).
func (fx *fixture) do(method, path, body string, hdr map[string]string, out any) int {
	fx.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	fx.h.ServeHTTP(rec, req)
	if out != nil && rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			fx.t.Fatalf("%s %s: decoding %q: %v", method, path, rec.Body.String(), err)
		}
	}
	return rec.Code
}

// act posts an action with the token.
func (fx *fixture) act(path, body string, out any) int {
	fx.t.Helper()
	return fx.do("POST", path, body, map[string]string{"Authorization": "Bearer " + testToken}, out)
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
