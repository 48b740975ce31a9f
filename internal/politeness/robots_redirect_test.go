package politeness_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// A robots.txt that redirects to another host makes a request to that host,
// so the hop waits for that host's slot and delay. (testweb's
// robots-redirect.test → robots-target.test once saw two robots.txt
// requests 2 ms apart: one under each host's slot.) Real time: the assertion
// is a lower bound, which load cannot break.
func TestRobotsRedirectToAnotherHostWaitsForItsSlot(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	lnB, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &httptest.Server{Listener: lnB, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
		}
		w.Write([]byte("User-agent: *\nDisallow: /private\n"))
	})}}
	b.Start()
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+"/robots.txt", http.StatusMovedPermanently)
	}))
	defer a.Close()

	const delay = 300 * time.Millisecond
	g := newGate(t, politeness.Config{DefaultDelay: delay}, politeness.Backend{})
	ctx := context.Background()
	for _, u := range []string{b.URL + "/page", a.URL + "/page"} {
		p, _, err := g.Try(ctx, mustURL(t, u))
		if err != nil {
			t.Fatalf("Try(%s): %v", u, err)
		}
		if p != nil {
			p.Release()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != 2 {
		t.Fatalf("%s saw %d robots.txt requests, want 2 (its own, then a's redirect hop)", b.URL, len(starts))
	}
	if gap := starts[1].Sub(starts[0]); gap < delay {
		t.Errorf("redirect hop reached %s %v after its own robots.txt fetch, want ≥ %v", b.URL, gap, delay)
	}
	// The rules fetched through the redirect apply to a's origin.
	d, err := g.Peek(ctx, mustURL(t, a.URL+"/private/x"))
	if err != nil || d.Reason != politeness.ReasonRobots {
		t.Errorf("Peek(a/private/x) = %v, %v; want robots (b's rules apply to a)", d.Reason, err)
	}
}
