package politeness_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// regpPaths gives /slow/ its own Crawl-delay (a REGP nested block) and
// the rest of the site a 2 s delay.
const regpPaths = "Robot-version: 3.0\nUser-agent: *\nCrawl-delay: 2\nAllow: /\n{\nAllow: /slow/\nCrawl-delay: 5\n}\n"

// TestPathDelay: a REGP nested block's delay spaces a URL of its path
// from the end of the key's last fetch, whatever was fetched; URLs of
// other paths keep the key's delay; the decision names the source.
func TestPathDelay(t *testing.T) {
	cases := []struct {
		name       string
		first, ask string
		cfg        politeness.Config
		want       time.Duration
		source     politeness.DelaySource
	}{
		{name: "other path keeps the host delay", first: "/a", ask: "/b", want: 2 * time.Second, source: politeness.SourceCrawlDelay},
		{name: "slow path after another", first: "/a", ask: "/slow/x", want: 5 * time.Second, source: politeness.SourcePath},
		{name: "host path after the slow one", first: "/slow/x", ask: "/a", want: 2 * time.Second, source: politeness.SourceCrawlDelay},
		{name: "path delay capped", first: "/a", ask: "/slow/x", cfg: politeness.Config{MaxCrawlDelay: 3 * time.Second}, want: 3 * time.Second, source: politeness.SourcePath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg, regpPaths)
			p := tryGranted(t, f.g, "http://h.example"+tc.first)
			if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
				t.Fatal(err)
			}
			done := f.clock.Now()
			d := tryRefused(t, f.g, "http://h.example"+tc.ask)
			if d.Reason != politeness.ReasonDelay || d.RetryAfter != tc.want || d.Delays.Gap() != tc.want {
				t.Fatalf("decision %+v, want a delay of %v", d, tc.want)
			}
			if d.Delays.Source != tc.source {
				t.Errorf("source %q, want %q", d.Delays.Source, tc.source)
			}
			if !d.NextAllowed.Equal(done.Add(tc.want)) {
				t.Errorf("NextAllowed %v, want %v", d.NextAllowed, done.Add(tc.want))
			}
			f.clock.Advance(tc.want - time.Millisecond)
			tryRefused(t, f.g, "http://h.example"+tc.ask)
			f.clock.Advance(time.Millisecond)
			tryGranted(t, f.g, "http://h.example"+tc.ask)
		})
	}
}

// TestPathDelayOverride: a forced manual delay wins over robots.txt, path
// delays included.
func TestPathDelayOverride(t *testing.T) {
	f := newFixture(t, politeness.Config{}, regpPaths)
	if err := f.g.SetDelay(context.Background(), "h.example", 200*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	p := tryGranted(t, f.g, "http://h.example/a")
	if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
		t.Fatal(err)
	}
	d := tryRefused(t, f.g, "http://h.example/slow/x")
	if d.RetryAfter != 200*time.Millisecond || d.Delays.Path != 0 || d.Delays.Source != politeness.SourceManual {
		t.Fatalf("decision %+v, want the forced 200ms", d)
	}
}

// TestPermitNext: after Done the permit says when the key opens: one
// effective delay after the end of the fetch, or the backoff's end after
// a 429 or 503; the gate agrees.
func TestPermitNext(t *testing.T) {
	cases := []struct {
		name    string
		outcome politeness.Outcome
		want    time.Duration
	}{
		{"200", politeness.Outcome{Status: 200}, time.Second},
		{"404", politeness.Outcome{Status: 404}, time.Second},
		{"429 with Retry-After", politeness.Outcome{Status: 429, RetryAfter: time.Minute}, time.Minute},
		{"503 exponential", politeness.Outcome{Status: 503}, 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, politeness.Config{}, "")
			p := tryGranted(t, f.g, "http://h.example/a")
			if next, err := p.Next(context.Background()); err != nil || !next.Equal(f.clock.Now()) {
				t.Fatalf("Next before Done = %v, %v; want the grant time", next, err)
			}
			f.clock.Advance(300 * time.Millisecond)
			if err := p.Done(tc.outcome); err != nil {
				t.Fatal(err)
			}
			next, err := p.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := f.clock.Now().Add(tc.want); !next.Equal(want) {
				t.Fatalf("Next = %v, want %v", next, want)
			}
			d := tryRefused(t, f.g, "http://h.example/b")
			if !d.NextAllowed.Equal(next) {
				t.Fatalf("gate's NextAllowed %v, permit's Next %v", d.NextAllowed, next)
			}
			f.clock.Advance(tc.want)
			tryGranted(t, f.g, "http://h.example/b")
		})
	}
}

// TestRules: the gate shares its one parse of robots.txt: relative
// Sitemap lines resolved against the file's URL, the group of the
// configured agent, nothing when the origin is unknown.
func TestRules(t *testing.T) {
	f := newFixture(t, politeness.Config{Agent: "courtesy"}, "User-agent: courtesy\nDisallow: /x\nSitemap: /sitemap-a.xml\nSitemap: https://cdn.example/s.xml\n")
	ctx := context.Background()
	r, ok, err := f.g.Rules(ctx, "http://h.example")
	if err != nil || !ok {
		t.Fatalf("Rules = %v, %v", ok, err)
	}
	want := []string{"http://h.example/sitemap-a.xml", "https://cdn.example/s.xml"}
	if got := r.File.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("sitemaps %q, want %q", got, want)
	}
	if r.Group.Allowed("/x") || !r.Group.Allowed("/y") || r.Blocked || r.Entry.Result != politeness.RobotsOK {
		t.Errorf("rules %+v not the stored file's", r)
	}
	if _, ok, err := f.g.Rules(ctx, "http://unknown.example"); ok || err != nil {
		t.Errorf("unknown origin: ok %v err %v, want none", ok, err)
	}
	if _, _, err := f.g.Rules(ctx, ""); err == nil {
		t.Error("empty origin: no error")
	}
}

// TestIPRules: REGP Ip-allow and Ip-disallow lines refuse the URLs of a
// site that excludes one of the gate's egress addresses.
func TestIPRules(t *testing.T) {
	const body = "Robot-version: 3.0\nUser-agent: *\nIp-disallow: 192.0.2.0/24\nAllow: /\n"
	cases := []struct {
		name    string
		egress  []netip.Addr
		allowed bool
	}{
		{"no egress known", nil, true},
		{"egress excluded", []netip.Addr{netip.MustParseAddr("192.0.2.7")}, false},
		{"egress elsewhere", []netip.Addr{netip.MustParseAddr("198.51.100.1")}, true},
		{"one of two excluded", []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("192.0.2.9")}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, politeness.Config{ParseOptions: robots.Options{EgressIPs: tc.egress}}, body)
			if tc.allowed {
				tryGranted(t, f.g, "http://h.example/a")
				return
			}
			if d := tryRefused(t, f.g, "http://h.example/a"); d.Reason != politeness.ReasonRobots || !d.NextAllowed.IsZero() {
				t.Fatalf("decision %+v, want a robots refusal for good", d)
			}
		})
	}
}
