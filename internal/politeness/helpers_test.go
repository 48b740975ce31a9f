package politeness_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// clock is a manual clock for tests that talk to a real httptest server
// (synctest cannot advance time while a goroutine waits on the network).
type clock = fakeclock.Clock

func newClock() *clock { return fakeclock.New(time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)) }

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url %q: %v", s, err)
	}
	return u
}

func newGate(t testing.TB, cfg politeness.Config, b politeness.Backend) *politeness.Gate {
	t.Helper()
	if b.HTTPClient == nil {
		b.HTTPClient = loopbackClient()
	}
	g, err := politeness.New(cfg, b)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// seedRobots stores body as origin's fresh robots.txt, so no fetch happens.
func seedRobots(t testing.TB, s politeness.RobotsStore, origin, body string, now time.Time) {
	t.Helper()
	e := politeness.RobotsEntry{Origin: origin, Result: politeness.RobotsOK, Status: 200, Body: []byte(body),
		Fetched: now, Expires: now.Add(1000 * time.Hour)}
	if err := s.PutRobots(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

// tryDecision calls Try and fails unless it is refused.
func tryRefused(t testing.TB, g *politeness.Gate, u string) politeness.Decision {
	t.Helper()
	p, d, err := g.Try(context.Background(), mustURL(t, u))
	if err != nil {
		t.Fatalf("Try(%s): %v", u, err)
	}
	if p != nil {
		t.Fatalf("Try(%s) granted a permit, want refusal", u)
	}
	if d.Allowed {
		t.Fatalf("Try(%s): refused but Decision.Allowed", u)
	}
	return d
}

// tryGranted calls Try and fails unless it grants a permit.
func tryGranted(t testing.TB, g *politeness.Gate, u string) *politeness.Permit {
	t.Helper()
	p, d, err := g.Try(context.Background(), mustURL(t, u))
	if err != nil {
		t.Fatalf("Try(%s): %v", u, err)
	}
	if p == nil {
		t.Fatalf("Try(%s) refused: %+v", u, d)
	}
	if !d.Allowed || d.Reason != politeness.ReasonNone {
		t.Fatalf("Try(%s): permit with decision %+v", u, d)
	}
	return p
}

// loopbackClient refuses to dial anything outside 127.0.0.0/8, so a test
// mistake can never reach the internet (or even DNS).
func loopbackClient() *http.Client {
	d := &net.Dialer{}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ip := net.ParseIP(host)
			if ip == nil || !ip.IsLoopback() || ip.To4() == nil {
				return nil, fmt.Errorf("test dialer: %s is not in 127.0.0.0/8", addr)
			}
			return d.DialContext(ctx, network, addr)
		},
		DisableKeepAlives: true,
	}
	return &http.Client{Transport: tr}
}
