package politeness_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// origin is a real HTTP server on 127.0.0.1 whose robots.txt behaviour a
// test sets and whose requests it counts.
type origin struct {
	srv *httptest.Server
	mu  struct {
		sync.Mutex
		robots http.HandlerFunc
		hits   map[string]int
		agents []string
	}
}

func newOrigin(t *testing.T, robots http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.mu.hits = map[string]int{}
	o.mu.robots = robots
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.mu.hits[r.URL.Path]++
		o.mu.agents = append(o.mu.agents, r.UserAgent())
		h := o.mu.robots
		o.mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt" || strings.HasPrefix(r.URL.Path, "/hop/") || r.URL.Path == "/final.txt":
			h(w, r)
		default:
			fmt.Fprintln(w, "page")
		}
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *origin) set(h http.HandlerFunc) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mu.robots = h
}

func (o *origin) hits(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mu.hits[path]
}

func (o *origin) url(path string) string { return o.srv.URL + path }

// key is the origin's politeness key: its host, the port left out.
func (o *origin) key() string { return o.srv.Listener.Addr().(*net.TCPAddr).IP.String() }

func serve(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// redirects answers /robots.txt with a chain of n redirects ending at
// /final.txt, which serves body.
func redirects(n int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var i int
		switch {
		case r.URL.Path == "/final.txt":
			fmt.Fprint(w, body)
			return
		case r.URL.Path == "/robots.txt":
			i = 0
		default:
			fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/hop/"), "%d", &i)
		}
		next := fmt.Sprintf("/hop/%d", i+1)
		if i+1 >= n {
			next = "/final.txt"
		}
		http.Redirect(w, r, next, http.StatusMovedPermanently)
	}
}

func hangUp(w http.ResponseWriter, r *http.Request) {
	c, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		c.Close()
	}
}

const privateRobots = "User-agent: *\nDisallow: /private\n"

func TestRobotsAccessResults(t *testing.T) {
	big := "User-agent: *\n" + strings.Repeat("# padding padding padding\n", robots.MaxSize/26+1) + "Disallow: /private\n"
	cases := []struct {
		name         string
		handler      http.HandlerFunc
		unauthorized string
		result       politeness.RobotsResult
		// blocked: everything refused with robots-unavailable after
		// retry (Never for 401/403).
		blocked     bool
		retry       time.Duration
		privateOK   bool // /private allowed (no usable rules)
		robotsHits  int
		wantBodyLen int
	}{
		{name: "200", handler: serve(200, privateRobots), result: politeness.RobotsOK, robotsHits: 1, wantBodyLen: len(privateRobots)},
		{name: "200 empty", handler: serve(200, ""), result: politeness.RobotsOK, privateOK: true, robotsHits: 1},
		{name: "204", handler: serve(204, ""), result: politeness.RobotsOK, privateOK: true, robotsHits: 1},
		{name: "5 redirects followed", handler: redirects(5, privateRobots), result: politeness.RobotsOK, robotsHits: 1, wantBodyLen: len(privateRobots)},
		{name: "6 redirects: allow all", handler: redirects(6, privateRobots), result: politeness.RobotsNotFound, privateOK: true, robotsHits: 1},
		{name: "401 disallow mode", handler: serve(401, privateRobots), result: politeness.RobotsUnauthorized, blocked: true, retry: politeness.Never, robotsHits: 1},
		{name: "403 disallow mode", handler: serve(403, ""), result: politeness.RobotsUnauthorized, blocked: true, retry: politeness.Never, robotsHits: 1},
		{name: "401 allow mode", handler: serve(401, ""), unauthorized: "allow", result: politeness.RobotsUnauthorized, privateOK: true, robotsHits: 1},
		{name: "403 allow mode", handler: serve(403, privateRobots), unauthorized: "allow", result: politeness.RobotsUnauthorized, privateOK: true, robotsHits: 1},
		{name: "404", handler: serve(404, privateRobots), result: politeness.RobotsNotFound, privateOK: true, robotsHits: 1},
		{name: "410", handler: serve(410, ""), result: politeness.RobotsNotFound, privateOK: true, robotsHits: 1},
		{name: "500", handler: serve(500, privateRobots), result: politeness.RobotsUnavailable, blocked: true, retry: time.Minute, robotsHits: 1},
		{name: "503 with Retry-After", handler: serve(503, "", "Retry-After", "600"), result: politeness.RobotsUnavailable, blocked: true, retry: 10 * time.Minute, robotsHits: 1},
		{name: "429", handler: serve(429, ""), result: politeness.RobotsUnavailable, blocked: true, retry: time.Minute, robotsHits: 1},
		{name: "network error", handler: hangUp, result: politeness.RobotsUnavailable, blocked: true, retry: time.Minute, robotsHits: 1},
		{name: "body over 500 KiB cut", handler: serve(200, big), result: politeness.RobotsOK, privateOK: true, robotsHits: 1, wantBodyLen: robots.MaxSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t, tc.handler)
			c := newClock()
			rs := politeness.NewMemoryRobotsStore()
			var obs politeness.Counters
			g := newGate(t, politeness.Config{Robots: politeness.RobotsConfig{Unauthorized: tc.unauthorized}},
				politeness.Backend{Robots: rs, Now: c.Now, Observer: &obs})
			d := tryRefused(t, g, o.url("/page"))
			if tc.blocked {
				if d.Reason != politeness.ReasonRobotsUnavailable || d.RetryAfter != tc.retry {
					t.Fatalf("/page: %v %v (%s), want robots-unavailable %v", d.Reason, d.RetryAfter, d.Detail, tc.retry)
				}
				// The answer's status, 0 without one: an origin that is not
				// there is told from one in trouble.
				want := 0
				if n, err := strconv.Atoi(strings.Fields(tc.name)[0]); err == nil {
					want = n
				}
				if d.RobotsStatus != want {
					t.Errorf("RobotsStatus = %d, want %d", d.RobotsStatus, want)
				}
			} else {
				// The robots.txt fetch took the slot: the first page comes
				// one delay later.
				if d.Reason != politeness.ReasonDelay || d.RetryAfter != time.Second {
					t.Fatalf("/page: %v %v (%s), want delay 1s after the robots.txt fetch", d.Reason, d.RetryAfter, d.Detail)
				}
				pd := tryRefused(t, g, o.url("/private"))
				if tc.privateOK && pd.Reason != politeness.ReasonDelay {
					t.Fatalf("/private: %+v, want only the delay", pd)
				}
				if !tc.privateOK && pd.Reason != politeness.ReasonRobots {
					t.Fatalf("/private: %+v, want robots", pd)
				}
				c.Advance(time.Second)
				p := tryGranted(t, g, o.url("/page"))
				_ = p.Done(politeness.Outcome{Status: 200})
			}
			if got := o.hits("/robots.txt"); got != tc.robotsHits {
				t.Fatalf("robots.txt fetched %d times, want %d", got, tc.robotsHits)
			}
			e, err := rs.GetRobots(context.Background(), strings.ToLower(o.srv.URL))
			if err != nil {
				t.Fatalf("stored entry: %v", err)
			}
			if e.Result != tc.result {
				t.Fatalf("stored result %q, want %q", e.Result, tc.result)
			}
			if tc.wantBodyLen > 0 && len(e.Body) != tc.wantBodyLen {
				t.Fatalf("stored body %d bytes, want %d", len(e.Body), tc.wantBodyLen)
			}
			if byResult, _ := obs.RobotsFetches(); byResult[tc.result] != 1 {
				t.Fatalf("observer saw %v, want one %q", byResult, tc.result)
			}
		})
	}
}

func TestRobotsUserAgent(t *testing.T) {
	o := newOrigin(t, serve(200, ""))
	g := newGate(t, politeness.Config{UserAgent: "testbot/1.0 (+http://127.0.0.1/bot)"}, politeness.Backend{})
	tryRefused(t, g, o.url("/"))
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.mu.agents) != 1 || o.mu.agents[0] != "testbot/1.0 (+http://127.0.0.1/bot)" {
		t.Fatalf("User-Agent sent: %q", o.mu.agents)
	}
}

// TestRobotsFetchedOnce: many callers on a cold host make one request.
func TestRobotsFetchedOnce(t *testing.T) {
	release := make(chan struct{})
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, privateRobots)
	})
	c := newClock()
	g := newGate(t, politeness.Config{}, politeness.Backend{Now: c.Now})
	const n = 20
	var wg sync.WaitGroup
	reasons := make(chan politeness.Reason, 2*n)
	for i := range n {
		wg.Go(func() {
			path := "/page"
			if i%2 == 1 {
				path = "/private/x"
			}
			_, d, err := g.Try(context.Background(), mustURL(t, o.url(path)))
			if err != nil {
				t.Error(err)
				return
			}
			reasons <- d.Reason
		})
	}
	// Let the callers pile up on the one fetch; correctness does not
	// depend on how many do.
	time.AfterFunc(50*time.Millisecond, func() { close(release) })
	wg.Wait()
	close(reasons)
	if got := o.hits("/robots.txt"); got != 1 {
		t.Fatalf("robots.txt fetched %d times by %d concurrent callers, want 1", got, n)
	}
	counts := map[politeness.Reason]int{}
	for r := range reasons {
		counts[r]++
	}
	if counts[politeness.ReasonRobots] != n/2 || counts[politeness.ReasonDelay] != n/2 {
		t.Fatalf("reasons %v, want %d robots and %d delay", counts, n/2, n/2)
	}
	if got := o.hits("/page"); got != 0 {
		t.Fatalf("page fetched %d times", got)
	}
}

func TestRobotsTTL(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		cfg     politeness.RobotsConfig
		ttl     time.Duration
	}{
		{"2xx 24h", serve(200, privateRobots), politeness.RobotsConfig{}, 24 * time.Hour},
		{"2xx configured", serve(200, privateRobots), politeness.RobotsConfig{TTL: time.Hour}, time.Hour},
		{"404 negative 6h", serve(404, ""), politeness.RobotsConfig{}, 6 * time.Hour},
		{"403 negative configured", serve(403, ""), politeness.RobotsConfig{NegativeTTL: 30 * time.Minute}, 30 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t, tc.handler)
			c := newClock()
			g := newGate(t, politeness.Config{DefaultDelay: -1, Robots: tc.cfg}, politeness.Backend{Now: c.Now})
			ctx := context.Background()
			if _, err := g.Peek(ctx, mustURL(t, o.url("/"))); err != nil {
				t.Fatal(err)
			}
			c.Advance(tc.ttl - time.Second)
			if _, err := g.Peek(ctx, mustURL(t, o.url("/"))); err != nil {
				t.Fatal(err)
			}
			if got := o.hits("/robots.txt"); got != 1 {
				t.Fatalf("fetched %d times before the TTL, want 1", got)
			}
			c.Advance(time.Second)
			if _, err := g.Peek(ctx, mustURL(t, o.url("/"))); err != nil {
				t.Fatal(err)
			}
			if got := o.hits("/robots.txt"); got != 2 {
				t.Fatalf("fetched %d times after the TTL, want 2", got)
			}
		})
	}
}

func TestRobotsStaleCopy(t *testing.T) {
	o := newOrigin(t, serve(200, privateRobots))
	c := newClock()
	rs := politeness.NewMemoryRobotsStore()
	g := newGate(t, politeness.Config{DefaultDelay: -1}, politeness.Backend{Robots: rs, Now: c.Now})
	ctx := context.Background()
	peek := func(path string) politeness.Decision {
		t.Helper()
		d, err := g.Peek(ctx, mustURL(t, o.url(path)))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := peek("/private"); d.Reason != politeness.ReasonRobots {
		t.Fatalf("fresh copy: %+v", d)
	}
	fetched := c.Now()
	o.set(serve(500, ""))
	c.Advance(24 * time.Hour)
	// 5xx: the good copy stays in force (RFC 9309 §2.3.1.4).
	if d := peek("/private"); d.Reason != politeness.ReasonRobots {
		t.Fatalf("stale copy, /private: %+v, want robots", d)
	}
	if d := peek("/page"); !d.Allowed {
		t.Fatalf("stale copy, /page: %+v, want allowed", d)
	}
	e, err := rs.GetRobots(ctx, o.url(""))
	if err != nil {
		t.Fatal(err)
	}
	if e.Result != politeness.RobotsUnavailable || !e.GoodFetched.Equal(fetched) || string(e.Good) != privateRobots || e.Failures != 1 {
		t.Fatalf("stored entry %+v", e)
	}
	// Retries back off: 1m, 2m, 4m ... capped at 1h.
	for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute} {
		hits := o.hits("/robots.txt")
		c.Advance(wait - time.Second)
		peek("/page")
		if o.hits("/robots.txt") != hits {
			t.Fatalf("retry %d came before %v", i, wait)
		}
		c.Advance(time.Second)
		peek("/page")
		if o.hits("/robots.txt") != hits+1 {
			t.Fatalf("retry %d did not come after %v", i, wait)
		}
	}
	// Past 30 days the copy is too old: everything disallowed.
	c.Advance(30 * 24 * time.Hour)
	d := peek("/page")
	if d.Reason != politeness.ReasonRobotsUnavailable || d.RetryAfter <= 0 || d.RetryAfter > time.Hour {
		t.Fatalf("after 30 days: %+v, want robots-unavailable with a retry within 1h", d)
	}
	// The origin recovers; the next retry picks it up.
	o.set(serve(200, ""))
	c.Advance(d.RetryAfter)
	if d := peek("/private"); !d.Allowed {
		t.Fatalf("after recovery: %+v, want allowed", d)
	}
}

// TestRobotsOtherStoreFresh: a fetch made by another process (seen in the
// shared store) is used instead of fetching again.
func TestRobotsSharedStore(t *testing.T) {
	o := newOrigin(t, serve(200, privateRobots))
	c := newClock()
	rs := politeness.NewMemoryRobotsStore()
	st := politeness.NewMemoryState(c.Now)
	g1 := newGate(t, politeness.Config{}, politeness.Backend{State: st, Robots: rs, Now: c.Now})
	g2 := newGate(t, politeness.Config{}, politeness.Backend{State: st, Robots: rs, Now: c.Now})
	tryRefused(t, g1, o.url("/page"))
	if d := tryRefused(t, g2, o.url("/private")); d.Reason != politeness.ReasonRobots {
		t.Fatalf("g2: %+v", d)
	}
	if got := o.hits("/robots.txt"); got != 1 {
		t.Fatalf("fetched %d times by two gates on one store, want 1", got)
	}
}

// TestRobotsRetryWaitsForSlot: after robots.txt answered 503 (no good
// copy), its copy expires (robots.retry-base) before the host's backoff
// from that 503 (backoff-base) ends. Until the slot frees, an ask gets the
// slot's "not yet", not robots-unavailable again (robots.txt has not been
// asked again: a client counting unavailable answers would count one
// failure many times); once it frees, robots.txt is fetched again.
func TestRobotsRetryWaitsForSlot(t *testing.T) {
	o := newOrigin(t, serve(503, ""))
	c := newClock()
	g := newGate(t, politeness.Config{DefaultDelay: -1, BackoffBase: 10 * time.Second,
		Robots: politeness.RobotsConfig{RetryBase: time.Second}},
		politeness.Backend{Robots: politeness.NewMemoryRobotsStore(), Now: c.Now})
	ctx := context.Background()
	peek := func() politeness.Decision {
		t.Helper()
		d, err := g.Peek(ctx, mustURL(t, o.url("/page")))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := peek(); d.Reason != politeness.ReasonRobotsUnavailable {
		t.Fatalf("first ask: %+v, want robots-unavailable", d)
	}
	hits := o.hits("/robots.txt")
	c.Advance(2 * time.Second) // the copy expired, the backoff runs
	d := peek()
	if d.Reason == politeness.ReasonRobotsUnavailable || d.Allowed {
		t.Fatalf("copy expired, host in backoff: %+v, want the slot's not-yet", d)
	}
	if d.RetryAfter <= 0 || d.RetryAfter > 10*time.Second {
		t.Errorf("not-yet for %v, want the rest of the backoff", d.RetryAfter)
	}
	if o.hits("/robots.txt") != hits {
		t.Fatalf("robots.txt asked again during the backoff")
	}
	o.set(serve(200, "User-agent: *\nAllow: /\n"))
	c.Advance(d.RetryAfter)
	if d := peek(); !d.Allowed {
		t.Fatalf("after the backoff: %+v, want allowed", d)
	}
	if o.hits("/robots.txt") != hits+1 {
		t.Fatalf("robots.txt asked %d times after the backoff, want once", o.hits("/robots.txt")-hits)
	}
}
