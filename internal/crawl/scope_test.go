package crawl

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/traps"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseScope(t *testing.T) {
	tests := []struct {
		in      string
		mode    string
		domains []string
		err     bool
	}{
		{"", ScopeSeeds, nil, false},
		{"seeds", ScopeSeeds, nil, false},
		{"all", ScopeAll, nil, false},
		{".pt,Example.org", ScopeDomains, []string{".pt", "example.org"}, false},
		{"domains:a.test", ScopeDomains, []string{"a.test"}, false},
		{"domains:", "", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := ParseScope(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			if s.Mode != tc.mode || !slices.Equal(s.Domains, tc.domains) {
				t.Errorf("got %+v", s)
			}
		})
	}
}

func TestInScope(t *testing.T) {
	tests := []struct {
		name  string
		scope Scope
		url   string
		want  bool
	}{
		{"seed host", Scope{Mode: ScopeSeeds}, "http://seed.test/a", true},
		{"other host", Scope{Mode: ScopeSeeds}, "http://other.test/a", false},
		{"subdomain of seed is another host", Scope{Mode: ScopeSeeds}, "http://www.seed.test/", false},
		{"domain suffix", Scope{Mode: ScopeDomains, Domains: []string{".pt"}}, "http://www.sapo.pt/", true},
		{"domain itself", Scope{Mode: ScopeDomains, Domains: []string{"example.org"}}, "http://example.org/", true},
		{"domain suffix is not a substring", Scope{Mode: ScopeDomains, Domains: []string{"example.org"}}, "http://badexample.org/", false},
		{"all", Scope{Mode: ScopeAll}, "http://anything.test/", true},
		{"include wins", Scope{Mode: ScopeSeeds, Include: []string{`^http://other\.test/keep`}}, "http://other.test/keep/1", true},
		{"exclude wins", Scope{Mode: ScopeAll, Exclude: []string{`/private/`}}, "http://seed.test/private/x", false},
		{"seed host on https", Scope{Mode: ScopeSeeds}, "https://seed.test/a", true},
		{"seed host on another port", Scope{Mode: ScopeSeeds}, "http://seed.test:8080/a", false},
		{"seed host on https's port over http", Scope{Mode: ScopeSeeds}, "http://seed.test:443/a", false},
		{"seed on a port", Scope{Mode: ScopeSeeds}, "http://port.test:8080/x", true},
		{"host of a seed on a port, default port", Scope{Mode: ScopeSeeds}, "http://port.test/x", false},
		{"domains: another port of a seed host", Scope{Mode: ScopeDomains, Domains: []string{".pt"}}, "http://seed.test:8080/a", false},
		{"domains: any port in a domain", Scope{Mode: ScopeDomains, Domains: []string{".pt"}}, "http://www.sapo.pt:8080/", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScoper(tc.scope)
			for _, seed := range []string{"http://seed.test/", "http://port.test:8080/"} {
				s.addSeedHost(s.key(mustURL(t, seed)))
			}
			if got := s.inScope(mustURL(t, tc.url)); got != tc.want {
				t.Errorf("inScope(%s) = %v, want %v", tc.url, got, tc.want)
			}
		})
	}
}

// TestInScopeByName: a state from before the origin keys keeps its seeds
// scope by host name, every port in.
func TestInScopeByName(t *testing.T) {
	s := newScoper(Scope{Mode: ScopeSeeds})
	s.byName = true
	s.addSeedHost(s.key(mustURL(t, "http://seed.test:8080/")))
	for u, want := range map[string]bool{"http://seed.test/": true, "http://seed.test:9090/": true, "http://other.test/": false} {
		if got := s.inScope(mustURL(t, u)); got != want {
			t.Errorf("inScope(%s) = %v, want %v", u, got, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"bad mode", Config{Scope: Scope{Mode: "planet"}}, false},
		{"bad policy", Config{Scope: Scope{ExternalLinks: "sometimes"}}, false},
		{"bad regexp", Config{Scope: Scope{Include: []string{"("}}}, false},
		{"negative pages", Config{MaxPages: -1}, false},
		{"negative delay means none", Config{Delay: -time.Second}, true},
		{"duplicate-hosts loop", Config{DuplicateHosts: []string{"a.test=b.test", "b.test=a.test"}}, false},
		{"duplicate-hosts", Config{DuplicateHosts: []string{"www.a.test=a.test"}}, true},
		{"store cache 512 MiB", Config{StoreCacheBytes: 512 << 20}, true},
		{"negative store cache", Config{StoreCacheBytes: -1}, false},
		{"store cache over 64 GiB", Config{StoreCacheBytes: 65 << 30}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestRevisitRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	r, ok := decodeRevisit(encodeRevisit("http://a.test/x y", at, "<urn:uuid:1>"))
	if !ok || r.TargetURI != "http://a.test/x y" || !r.Date.Equal(at) || r.RecordID != "<urn:uuid:1>" {
		t.Errorf("round trip = %+v %v", r, ok)
	}
	for _, bad := range []string{"", "x", "1 2", "notanumber id url"} {
		if _, ok := decodeRevisit([]byte(bad)); ok {
			t.Errorf("decodeRevisit(%q) accepted", bad)
		}
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{
		"courtesy/0.1 (+https://x)": "courtesy",
		"MyBot":                     "mybot",
		"":                          "courtesy",
		"Foo Bar/2":                 "foo",
	} {
		if got := productToken(in); got != want {
			t.Errorf("productToken(%q) = %q, want %q", in, got, want)
		}
	}
}

// testCrawler is a Crawler with just what outlinks needs.
func testCrawler(t *testing.T, scope Scope, limits traps.Limits) *Crawler {
	t.Helper()
	c, err := New(Config{Scope: scope, Traps: limits}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.tr, err = traps.Open(nil, limits, traps.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.metrics = newMetrics()
	c.clog = crawllog.NewWriter(io.Discard, crawllog.Options{})
	c.scope.addSeedHost("a.test")
	c.scope.addSeedHost("b.test")
	return c
}

func links(t *testing.T, urls ...string) []extract.Link {
	var out []extract.Link
	for _, s := range urls {
		// As extract.HTML gives them: normalized with the crawl's options.
		u, err := urlnorm.Normalize(s, urlnorm.CrawlDefaults())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, extract.Link{URL: u, Abs: u.String(), Hop: extract.HopLink})
	}
	return out
}

func itemURLs(items []frontier.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Info.URL)
	}
	return out
}

func TestOutlinksPolicies(t *testing.T) {
	lease := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://a.test/", Key: "a.test", Depth: 0, Metadata: map[string][]string{}}}
	src := mustURL(t, "http://a.test/")
	in := links(t, "http://a.test/p1", "http://b.test/deep/page", "http://c.test/out", "http://a.test/p1#frag",
		"http://a.test/x?PHPSESSID=0123456789abcdef0123456789abcdef", "http://a.test/s/s/s/")
	tests := []struct {
		policy string
		want   []string
	}{
		{PolicyDeepLink, []string{"http://a.test/p1", "http://b.test/deep/page", "http://a.test/x"}},
		{PolicyHomePage, []string{"http://a.test/p1", "http://b.test/", "http://a.test/x"}},
		{PolicyCombined, []string{"http://a.test/p1", "http://b.test/deep/page", "http://b.test/", "http://a.test/x"}},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			c := testCrawler(t, Scope{Mode: ScopeSeeds, ExternalLinks: tc.policy}, traps.Limits{})
			items := c.outlinks(lease, src, in, false)
			if got := itemURLs(items); !slices.Equal(got, tc.want) {
				t.Errorf("outlinks = %v, want %v", got, tc.want)
			}
			for _, it := range items {
				if it.Info.Depth != 1 || md1(it.Info.Metadata, mdVia) != "http://a.test/" || md1(it.Info.Metadata, mdPath) != "L" {
					t.Errorf("item %+v: want depth 1, via the page, path L", it.Info)
				}
			}
			if r := c.tr.Report(); r.Hits[traps.RepeatedSegments] != 1 {
				t.Errorf("growing path not cut: %v", r.Hits)
			}
		})
	}
}

func TestOutlinksOffScopeHopsAndStoppedSite(t *testing.T) {
	c := testCrawler(t, Scope{Mode: ScopeSeeds, MaxOffScopeHops: 1, ExternalLinks: PolicyDeepLink}, traps.Limits{MaxDepth: 2})
	src := mustURL(t, "http://a.test/")
	lease := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://a.test/", Key: "a.test", Depth: 1, Metadata: map[string][]string{mdPath: {"L"}}}}
	items := c.outlinks(lease, src, links(t, "http://c.test/x", "http://a.test/y"), false)
	if got := itemURLs(items); !slices.Equal(got, []string{"http://c.test/x", "http://a.test/y"}) {
		t.Fatalf("got %v", got)
	}
	if md1(items[0].Info.Metadata, mdOff) != "1" {
		t.Errorf("off-scope hop not counted: %v", items[0].Info.Metadata)
	}
	// From the off-scope page, a further off-scope link is too far, and
	// depth 3 is over the limit of 2.
	off := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://c.test/x", Key: "c.test", Depth: 1, Metadata: map[string][]string{mdOff: {"1"}}}}
	if got := itemURLs(c.outlinks(off, mustURL(t, "http://c.test/x"), links(t, "http://d.test/"), false)); got != nil {
		t.Errorf("second off-scope hop followed: %v", got)
	}
	deep := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://a.test/y", Key: "a.test", Depth: 2, Metadata: map[string][]string{}}}
	if got := itemURLs(c.outlinks(deep, mustURL(t, "http://a.test/y"), links(t, "http://a.test/z"), false)); got != nil {
		t.Errorf("link beyond max depth followed: %v", got)
	}
	// A stopped site's own links are not followed; others are.
	for i := 0; ; i++ {
		// Copies found along the links between them: a trap's shape.
		d := traps.Dup{URL: fmt.Sprintf("http://a.test/c/%d", i+1), Via: fmt.Sprintf("http://a.test/c/%d", i), Of: "http://a.test/c/0"}
		if c.tr.DuplicateOf("a.test", d) {
			break
		}
		if i > 100 {
			t.Fatal("a.test not stopped after 100 chained duplicates")
		}
	}
	got := itemURLs(c.outlinks(lease, src, links(t, "http://a.test/q", "http://b.test/"), false))
	if !slices.Equal(got, []string{"http://b.test/"}) {
		t.Errorf("stopped site: got %v", got)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
