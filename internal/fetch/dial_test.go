package fetch

// Dialing: --resolve overrides, the DNS cache and the address policy.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

func TestResolverOverrideAndDNSCache(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Host)
	}))
	defer srv.Close()
	srvAddr := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := net.SplitHostPort(srvAddr)

	res, err := resolve.New([]string{"*.synthetic.test=" + srvAddr})
	if err != nil {
		t.Fatal(err)
	}
	var lookups atomic.Int32
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		if host == "cached.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	c := newClient(t, Config{Resolver: res, Lookup: lookup})

	r := fetchOK(t, c, "http://a.synthetic.test:9/", Request{})
	if string(r.Body) != "a.synthetic.test:9" {
		t.Errorf("override: server saw Host %q", r.Body)
	}
	if lookups.Load() != 0 {
		t.Errorf("override looked up DNS %d times", lookups.Load())
	}

	for range 3 {
		r = fetchOK(t, c, "http://cached.test:"+port+"/", Request{Header: http.Header{"Connection": {"close"}}})
	}
	if string(r.Body) != "cached.test:"+port {
		t.Errorf("cached: server saw Host %q", r.Body)
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("3 fetches of one host made %d lookups, want 1", n)
	}
	if hits, _ := c.DNSStats(); hits < 2 {
		t.Errorf("DNS cache hits = %d, want >= 2", hits)
	}

	for range 2 {
		_, err := c.Fetch(context.Background(), mustURL(t, "http://nowhere.test/"), Request{})
		if KindOf(err) != KindDNS {
			t.Errorf("unknown host: %v (kind %v), want dns", err, KindOf(err))
		}
	}
	if n := lookups.Load(); n != 2 {
		t.Errorf("failed lookups not cached: %d lookups, want 2", n)
	}
}

func TestDNSCacheTTL(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	calls := 0
	c := newDNSCache(func(context.Context, string) ([]netip.Addr, error) {
		calls++
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, byte(calls)})}, nil
	}, time.Minute, time.Second, 2)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	get := func(host string) netip.Addr {
		t.Helper()
		a, err := c.Lookup(ctx, host)
		if err != nil || len(a) != 1 {
			t.Fatalf("Lookup(%s) = %v, %v", host, a, err)
		}
		return a[0]
	}
	steps := []struct {
		name    string
		advance time.Duration
		host    string
		calls   int
	}{
		{"first", 0, "a", 1},
		{"cached", 59 * time.Second, "a", 1},
		{"expired", time.Second, "a", 2},
		{"second host", 0, "b", 3},
		{"third host evicts a", 0, "c", 4},
		{"b still cached", 0, "b", 4},
		{"a looked up again", 0, "a", 5},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		get(s.host)
		if calls != s.calls {
			t.Fatalf("%s: %d lookups, want %d", s.name, calls, s.calls)
		}
	}
}

// TestAddrPolicy: the policy applies to IP literals and DNS answers, never
// to a --resolve target, and a refusal sends nothing (no address outside
// loopback is dialled: the refused ones are refused before connecting).
func TestAddrPolicy(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	srvAddr := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := net.SplitHostPort(srvAddr)
	res, err := resolve.New([]string{"*.mapped.test=" + srvAddr})
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "metadata.test":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "loop.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "both.test": // a refused address first, then an allowed one
			return []netip.Addr{netip.MustParseAddr("fe80::1"), netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	cases := []struct {
		policy addrpolicy.Policy
		url    string
		want   Kind // 0 (KindOther) stands for success
	}{
		{addrpolicy.All, "http://127.0.0.1:" + port + "/", 0},
		{addrpolicy.NoLinkLocal, "http://127.0.0.1:" + port + "/", 0},
		{addrpolicy.NoLinkLocal, "http://loop.test:" + port + "/", 0},
		{addrpolicy.NoLinkLocal, "http://both.test:" + port + "/", 0},
		{addrpolicy.NoLinkLocal, "http://169.254.169.254/latest/meta-data/", KindRefused},
		{addrpolicy.NoLinkLocal, "http://[fe80::1]/", KindRefused},
		{addrpolicy.NoLinkLocal, "http://0.0.0.0:" + port + "/", KindRefused},
		{addrpolicy.NoLinkLocal, "http://metadata.test/", KindRefused},
		{addrpolicy.PublicOnly, "http://127.0.0.1:" + port + "/", KindRefused},
		{addrpolicy.PublicOnly, "http://loop.test:" + port + "/", KindRefused},
		{addrpolicy.PublicOnly, "http://10.0.0.1/", KindRefused},
		{addrpolicy.PublicOnly, "http://a.mapped.test/", 0}, // the user's own rule
		{addrpolicy.PublicOnly, "http://nowhere.test/", KindDNS},
	}
	for _, c := range cases {
		cl := newClient(t, Config{Resolver: res, Lookup: lookup, AddrPolicy: c.policy})
		r, err := cl.Fetch(context.Background(), mustURL(t, c.url), Request{})
		switch {
		case c.want == 0 && (err != nil || string(r.Body) != "ok"):
			t.Errorf("%s %s: %v, want the page", c.policy, c.url, err)
		case c.want != 0 && KindOf(err) != c.want:
			t.Errorf("%s %s: %v (kind %v), want %v", c.policy, c.url, err, KindOf(err), c.want)
		case c.want == KindRefused && !errors.Is(err, addrpolicy.ErrRefused):
			t.Errorf("%s %s: %v does not wrap ErrRefused", c.policy, c.url, err)
		}
	}
}
