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

// The other order: the hop reaches b first. The document it ends on is b's
// own /robots.txt, so it is kept as b's: b's Crawl-delay binds b's first
// page at once and b's robots.txt is not fetched a second time. (testweb
// once saw b's own robots.txt fetch 125 ms after the hop, under a
// Crawl-delay of 500 ms the hop had just read.)
func TestRobotsRedirectTargetKept(t *testing.T) {
	var mu sync.Mutex
	var robotsHits, pages []time.Time
	lnB, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &httptest.Server{Listener: lnB, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path == "/robots.txt" {
			robotsHits = append(robotsHits, time.Now())
		} else {
			pages = append(pages, time.Now())
		}
		mu.Unlock()
		w.Write([]byte("User-agent: *\nCrawl-delay: 0.5\nDisallow: /private\n"))
	})}}
	b.Start()
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+"/robots.txt", http.StatusMovedPermanently)
	}))
	defer a.Close()

	g := newGate(t, politeness.Config{DefaultDelay: 50 * time.Millisecond}, politeness.Backend{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if p, _, err := g.Try(ctx, mustURL(t, a.URL+"/page")); err != nil {
		t.Fatal(err)
	} else if p != nil {
		p.Release()
	}
	d, err := g.Peek(ctx, mustURL(t, b.URL+"/private/x"))
	if err != nil || d.Reason != politeness.ReasonRobots {
		t.Errorf("Peek(b/private/x) = %+v, %v; want robots (b's own rules, kept from the hop)", d, err)
	}
	p, err := g.Wait(ctx, mustURL(t, b.URL+"/page"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(b.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p.Done(politeness.Outcome{Status: resp.StatusCode})
	mu.Lock()
	defer mu.Unlock()
	if len(robotsHits) != 1 || len(pages) != 1 {
		t.Fatalf("b saw %d robots.txt and %d page requests, want 1 and 1", len(robotsHits), len(pages))
	}
	if gap := pages[0].Sub(robotsHits[0]); gap < 500*time.Millisecond {
		t.Errorf("b's first page %v after the hop read its robots.txt, want ≥ its Crawl-delay 500ms", gap)
	}
}
