package redisbackend_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
)

// TestTwoGates: two Gates ("processes") on one Redis, each with two
// workers, ask for the same host at once. Never two permits at once, every
// start at least one delay after the previous end, and robots.txt fetched
// once for both.
func TestTwoGates(t *testing.T) {
	c, o := client(t)
	testTwoGates(t, c, o)
}

func testTwoGates(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	var robotsHits, pageHits atomic.Int32
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsHits.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		pageHits.Add(1)
		fmt.Fprint(w, "page")
	}))
	defer origin.Close()

	const delay = 150 * time.Millisecond
	cfg := politeness.Config{DefaultDelay: delay, PollInterval: 10 * time.Millisecond}
	gates := make([]*politeness.Gate, 2)
	for i := range gates {
		b := redisbackend.Backend(c, o)
		b.HTTPClient = origin.Client()
		g, err := politeness.New(cfg, b)
		if err != nil {
			t.Fatal(err)
		}
		gates[i] = g
	}
	u, err := url.Parse(origin.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var inFlight, fetches int
	var lastEnd time.Time
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for gi, g := range gates {
		for w := range 2 {
			wg.Go(func() {
				for i := range 3 {
					p, err := g.Wait(ctx, u)
					if err != nil {
						t.Errorf("gate %d worker %d: %v", gi, w, err)
						return
					}
					// Recorded after the grant (server time of the grant is
					// earlier) and before Done (server time later), so the
					// local gap is at least the server's.
					start := time.Now()
					mu.Lock()
					inFlight++
					fetches++
					if inFlight > 1 {
						t.Errorf("gate %d worker %d fetch %d: %d permits at once", gi, w, i, inFlight)
					}
					if !lastEnd.IsZero() && start.Sub(lastEnd) < delay {
						t.Errorf("gate %d worker %d fetch %d: gap %v < %v", gi, w, i, start.Sub(lastEnd), delay)
					}
					mu.Unlock()
					resp, err := origin.Client().Get(u.String())
					if err == nil {
						resp.Body.Close()
					}
					mu.Lock()
					inFlight--
					lastEnd = time.Now()
					mu.Unlock()
					if err := p.Done(politeness.Outcome{Status: 200, Err: err}); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	if fetches != 12 || pageHits.Load() != 12 {
		t.Fatalf("%d fetches, %d page hits; want 12", fetches, pageHits.Load())
	}
	if got := robotsHits.Load(); got != 1 {
		t.Fatalf("robots.txt fetched %d times by two gates, want 1", got)
	}
	// The second gate knows the rules without fetching.
	_, d, err := gates[1].Try(ctx, mustParse(t, origin.URL+"/private/x"))
	if err != nil || d.Reason != politeness.ReasonRobots {
		t.Fatalf("gate 1 /private: %+v, %v", d, err)
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestKeysExpire: idle state does not stay in Redis for ever.
func TestKeysExpire(t *testing.T) {
	c, o := client(t)
	testKeysExpire(t, c, o)
}

func testKeysExpire(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	s := redisbackend.NewState(c, o)
	ctx := context.Background()
	g, err := s.Acquire(ctx, "exp.example", politeness.AcquireRequest{LeaseID: "a", Limit: 1, Delay: time.Second, Lease: time.Minute})
	if err != nil || !g.OK {
		t.Fatalf("Acquire = %+v, %v", g, err)
	}
	if err := s.Release(ctx, "exp.example", politeness.ReleaseRequest{LeaseID: "a", Used: true}); err != nil {
		t.Fatal(err)
	}
	keys, err := allKeys(ctx, c, o.Prefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("no keys written")
	}
	for _, k := range keys {
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > time.Minute+10*time.Minute+time.Second {
			t.Errorf("key %s has TTL %v, want (0, 11m]", k, ttl)
		}
	}
}

// TestSharedDelays: a delay set through one Gate governs the other.
func TestSharedDelays(t *testing.T) {
	c, o := client(t)
	testSharedDelays(t, c, o)
}

func testSharedDelays(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	ctx := context.Background()
	cfg := politeness.Config{ConfigCacheTTL: time.Nanosecond}
	g1, err := politeness.New(cfg, redisbackend.Backend(c, o))
	if err != nil {
		t.Fatal(err)
	}
	g2, err := politeness.New(cfg, redisbackend.Backend(c, o))
	if err != nil {
		t.Fatal(err)
	}
	if err := g1.SetDelay(ctx, "shared.example", 42*time.Second, true); err != nil {
		t.Fatal(err)
	}
	if err := g1.SetDefaultDelay(ctx, 7*time.Second); err != nil {
		t.Fatal(err)
	}
	list, err := g2.ListDelays(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != "shared.example" || list[0].Manual != 42*time.Second || !list[0].Override {
		t.Fatalf("g2.ListDelays = %+v", list)
	}
	if d, err := g2.DefaultDelay(ctx); err != nil || d != 7*time.Second {
		t.Fatalf("g2.DefaultDelay = %v, %v", d, err)
	}
	st, err := g2.Status(ctx, "shared.example", "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Delays.Effective != 42*time.Second || !st.Open {
		t.Fatalf("g2.Status = %+v, want open with a 42s delay", st)
	}
}

// TestKeysExpireWhileHeld: Acquire gives a leases set it creates its
// expiry at once (no PTTL first), and extends both keys on every grant,
// also when it skips writing a gap that did not change.
func TestKeysExpireWhileHeld(t *testing.T) {
	c, o := client(t)
	s := redisbackend.NewState(c, o)
	ctx := context.Background()
	const key = "held.example"
	leases, state := o.Prefix+"{"+key+"}:leases", o.Prefix+"{"+key+"}:state"
	req := politeness.AcquireRequest{LeaseID: "a", Limit: 2, Delay: time.Millisecond, Lease: time.Minute}
	within := func(k string, lo, hi time.Duration) {
		t.Helper()
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl < lo || ttl > hi {
			t.Fatalf("key %s has TTL %v, want [%v, %v]", k, ttl, lo, hi)
		}
	}
	if g, err := s.Acquire(ctx, key, req); err != nil || !g.OK {
		t.Fatalf("Acquire = %+v, %v", g, err)
	}
	want := time.Minute + 10*time.Minute
	within(leases, want-5*time.Second, want)
	within(state, want-5*time.Second, want)
	// Both keys near their end: the next grant (same gap) extends them.
	for _, k := range []string{leases, state} {
		if err := c.PExpire(ctx, k, 5*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// (No fetch has ended yet: the delay does not hold the second grant.)
	req.LeaseID = "b"
	if g, err := s.Acquire(ctx, key, req); err != nil || !g.OK {
		t.Fatalf("second Acquire = %+v, %v", g, err)
	}
	within(leases, want-5*time.Second, want)
	within(state, want-5*time.Second, want)
	if gap, err := c.HGet(ctx, state, "gap").Result(); err != nil || gap != "1000" {
		t.Fatalf("gap = %q, %v; want 1000 (µs)", gap, err)
	}
}
