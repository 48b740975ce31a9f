// Over 600 lines: the synthetic web's contract, one test per kind of site
// (robots variants, traps, redirects, media, mirrors), all on one shared web;
// split by site family it would repeat the web's set-up in every file.

package testweb

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

func mustNew(t testing.TB, cfg Config) *Web {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero value", Config{}, true},
		{"benchmark size", Config{Sites: 2000, PagesPerSite: 50}, true},
		{"negative sites", Config{Sites: -1}, false},
		{"too many sites", Config{Sites: MaxSites + 1}, false},
		{"negative pages", Config{PagesPerSite: -3}, false},
		{"huge page", Config{PageBytes: MaxPageBytes + 1}, false},
		{"too many links", Config{LinksPerPage: MaxLinks + 1}, false},
		{"no external links", Config{NoExternal: true}, true},
		{"negative slow delay", Config{SlowDelay: -time.Second}, false},
		{"slow delay too long", Config{SlowDelay: time.Hour}, false},
		{"endless too big", Config{EndlessBytes: MaxEndlessBytes + 1}, false},
		{"address outside loopback", Config{AddrBase: netip.MustParseAddr("10.0.0.1")}, false},
		{"ipv6 address", Config{AddrBase: netip.MustParseAddr("::1")}, false},
		{"visit window wrapping midnight", Config{VisitTime: "22:30-03:15"}, true},
		{"visit window malformed", Config{VisitTime: "9-17"}, false},
		{"visit window bad hour", Config{VisitTime: "24:00-01:00"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if _, err := New(tc.cfg); (err == nil) != tc.ok {
				t.Fatalf("New() error %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "testweb: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestSitesOfDefaultWeb(t *testing.T) {
	w := mustNew(t, Config{})
	sites := w.Sites()
	generic := 0
	for _, s := range sites {
		if s.HasKind(KindGeneric) {
			generic++
		}
	}
	if generic != DefaultSites {
		t.Errorf("%d generic sites, want %d", generic, DefaultSites)
	}
	// 38 hazard sites, by hand: the table of special.go.
	if got := len(sites) - generic; got != 38 {
		t.Errorf("%d hazard sites, want 38", got)
	}
	tests := []struct {
		host     string
		kind     Kind
		status   int
		delay    time.Duration
		orphans  int
		trap     Trap
		sitemaps int
	}{
		{"site-0000.test", KindGeneric, 200, 0, 0, "", 0},
		{"robots-404.test", KindRobots404, 404, 0, 0, "", 0},
		{"robots-401.test", KindRobots401, 401, 0, 0, "", 0},
		{"robots-403.test", KindRobots403, 403, 0, 0, "", 0},
		{"robots-500.test", KindRobots5xx, 500, 0, 0, "", 0},
		{"robots-503.test", KindRobots5xx, 503, 0, 0, "", 0},
		{"robots-429.test", KindRobots429, 429, 0, 0, "", 0},
		{"robots-redirect.test", KindRobotsRedirect, 301, 500 * time.Millisecond, 0, "", 0},
		{"crawl-delay.test", KindCrawlDelay, 200, time.Second, 0, "", 0},
		{"request-rate.test", KindRequestRate, 200, 500 * time.Millisecond, 0, "", 0},
		{"regp.test", KindRobotsREGP, 200, 200 * time.Millisecond, 2, "", 1},
		{"sitemap-xml.test", KindSitemapXML, 200, 0, 5, "", 1},
		{"sitemap-index.test", KindSitemapIndex, 200, 0, 6, "", 1},
		{"sitemap-text.test", KindSitemapText, 200, 0, 4, "", 1},
		{"sitemap-gzip.test", KindSitemapGzip, 200, 0, 4, "", 1},
		{"calendar.test", KindTrap, 200, 0, 0, TrapCalendar, 0},
		{"wild.test", KindTrap, 404, 0, 0, TrapWildcard, 0},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			s := w.Site(tc.host)
			if s == nil {
				t.Fatal("no such site")
			}
			if !s.HasKind(tc.kind) || s.RobotsStatus != tc.status || s.Delay != tc.delay ||
				len(s.Orphans) != tc.orphans || s.Trap != tc.trap || len(s.Sitemaps) != tc.sitemaps {
				t.Errorf("got kinds %v status %d delay %v orphans %d trap %q sitemaps %d", s.Kinds, s.RobotsStatus, s.Delay, len(s.Orphans), s.Trap, len(s.Sitemaps))
			}
			if (s.Robots != nil) != (tc.status == 200 || tc.status == 301) {
				t.Errorf("Robots body present = %v for status %d", s.Robots != nil, tc.status)
			}
		})
	}
	if n := len(w.Site("robots-huge.test").Robots); n <= 500<<10 {
		t.Errorf("huge robots.txt is %d bytes, want more than 500 KiB", n)
	}
	if got := w.Site("WWW.Dup.Test."); got == nil || got.Host != "dup.test" || got.DupGroup != "dup.test" {
		t.Errorf("www.dup.test maps to %+v", got)
	}
}

func TestHostsLines(t *testing.T) {
	w := mustNew(t, Config{Sites: 3, SitesPerAddr: 2, Plain: true})
	want := []string{"127.1.0.1\tsite-0000.test site-0001.test", "127.1.0.2\tsite-0002.test"}
	if got := w.HostsLines(); !slices.Equal(got, want) {
		t.Errorf("HostsLines() = %q, want %q", got, want)
	}
	if got := w.Hosts(); !slices.Equal(got, []string{"site-0000.test", "site-0001.test", "site-0002.test"}) {
		t.Errorf("Hosts() = %q", got)
	}
	if got := w.Addrs(); len(got) != 2 || got[1] != netip.MustParseAddr("127.1.0.2") {
		t.Errorf("Addrs() = %v", got)
	}
	big := mustNew(t, Config{Sites: 12345, PagesPerSite: 1, Plain: true})
	if h := big.Sites()[12344].Host; h != "site-12344.test" {
		t.Errorf("wide names: %q", h)
	}
}

// A plain web small enough to count by hand: two sites of three pages and
// no external links. Every page links to the next one; page 1 also links to
// its /private/ copy. So each site has /, page 1, page 2 and
// /private/page-1.html: 8 URLs, all 200.
func TestCrawlPlainWebExact(t *testing.T) {
	w := mustNew(t, Config{Sites: 2, PagesPerSite: 3, LinksPerPage: 2, NoExternal: true, Plain: true})
	res := crawl(t, w, []string{"http://site-0000.test/", "http://site-0001.test/"}, 100)
	var want []string
	for _, h := range []string{"site-0000.test", "site-0001.test"} {
		for _, p := range []string{"/", "/docs/a/page-1.html", "/about/a/page-2.html", "/private/page-1.html"} {
			want = append(want, "http://"+h+p)
		}
	}
	var got []string
	for u, st := range res.status {
		got = append(got, u)
		if st != 200 {
			t.Errorf("%s: status %d", u, st)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("crawled %q\nwant %q", got, want)
	}
}

// Three sites of twelve pages with external links, <base href> (pages 3
// and 10) and every link form: 12 pages plus /private/ copies of pages 1,
// 6 and 11 per site = 45 URLs, all answering 200 (no link resolves to a
// page that does not exist).
func TestCrawlPlainWithBaseAndExternal(t *testing.T) {
	w := mustNew(t, Config{Sites: 3, PagesPerSite: 12, Plain: true})
	res := crawl(t, w, []string{"http://site-0000.test/"}, 1000)
	if len(res.status) != 45 {
		t.Errorf("crawled %d URLs, want 45", len(res.status))
	}
	for u, st := range res.status {
		if st != 200 {
			t.Errorf("%s: status %d", u, st)
		}
	}
	if !strings.Contains(body(t, get(t, w.Handler(), "http://site-0000.test"+genericPath(3))), `<base href="/news/">`) {
		t.Error("page 3 has no <base href>")
	}
}

// Crawling the default web from hub.test (traps skipped) reaches every
// site and alias, every status agrees with Lookup, no link leads nowhere,
// and no page links to an orphan.
func TestCrawlHazardWeb(t *testing.T) {
	w := mustNew(t, Config{SlowDelay: time.Millisecond, EndlessBytes: 1000})
	res := crawl(t, w, []string{"http://hub.test/"}, 20000)
	for u, st := range res.status {
		pu, _ := url.Parse(u)
		r := w.Lookup(pu.Host, pu.RequestURI())
		if r.Status != st {
			t.Errorf("%s: served %d, Lookup says %d", u, st, r.Status)
		}
		if r.Class == ClassNotFound {
			t.Errorf("%s: a link leads to nothing", u)
		}
	}
	for _, h := range w.Hosts() {
		if slices.Contains(w.Site(h).Mirrors, h) {
			continue // reached through the Mirror-site lines, not by links
		}
		if _, ok := res.status["http://"+h+"/"]; !ok && w.Site(h).Trap == "" {
			t.Errorf("home of %s never reached", h)
		}
	}
	for _, s := range w.Sites() {
		for _, o := range s.Orphans {
			if res.linked[o] {
				t.Errorf("orphan %s is linked", o)
			}
		}
	}
	for _, u := range []string{"http://redirects.test/target/end.html", "http://redirect-target.test/landing.html", "http://meta-robots.test/rel-nofollow/target.html"} {
		if res.status[u] != 200 {
			t.Errorf("%s: status %d, want 200", u, res.status[u])
		}
	}
}

func TestLookup(t *testing.T) {
	w := mustNew(t, Config{SlowDelay: time.Millisecond, EndlessBytes: 100})
	tests := []struct {
		name, host, target string
		class              Class
		trap               Trap
		status             int
	}{
		{"generic home", "site-0000.test", "/", ClassPage, "", 200},
		{"mixed case host and port", "SITE-0000.Test:80", "/docs/a/page-1.html", ClassPage, "", 200},
		{"query ignored", "site-0000.test", "/docs/a/page-1.html?x=1", ClassPage, "", 200},
		{"percent-encoded path", "site-0000.test", "/%64ocs/a/page-1.html", ClassPage, "", 200},
		{"page in the wrong directory", "site-0000.test", "/docs/a/page-2.html", ClassNotFound, "", 404},
		{"page past the end", "site-0000.test", "/docs/c/page-21.html", ClassNotFound, "", 404},
		{"leading zero", "site-0000.test", "/docs/a/page-01.html", ClassNotFound, "", 404},
		{"private copy", "site-0000.test", "/private/page-1.html", ClassPage, "", 200},
		{"private copy not linked", "site-0000.test", "/private/page-2.html", ClassNotFound, "", 404},
		{"robots", "site-0000.test", "/robots.txt", ClassRobots, "", 200},
		{"robots 503", "robots-503.test", "/robots.txt", ClassRobots, "", 503},
		{"robots 401", "robots-401.test", "/robots.txt", ClassRobots, "", 401},
		{"robots 429", "robots-429.test", "/robots.txt", ClassRobots, "", 429},
		{"robots redirect", "robots-redirect.test", "/robots.txt", ClassRobots, "", 301},
		{"robots absent", "robots-404.test", "/robots.txt", ClassRobots, "", 404},
		{"unknown host", "nowhere.example", "/", ClassUnknownHost, "", 421},
		{"health on the listener", "127.0.0.1:8081", "/health", ClassUnknownHost, "", 200},
		{"metrics on localhost", "localhost", "/metrics", ClassUnknownHost, "", 200},
		{"no metrics through a proxy name", "nowhere.example", "/metrics", ClassUnknownHost, "", 421},
		{"visit window site", "regp-window.test", "/", ClassPage, "", 200},
		{"month", "calendar.test", "/calendar/2026/11/", ClassTrap, TrapCalendar, 200},
		{"day", "calendar.test", "/calendar/1999/12/31/", ClassTrap, TrapCalendar, 200},
		{"no such day", "calendar.test", "/calendar/2026/02/30/", ClassNotFound, "", 404},
		{"year too far", "calendar.test", "/calendar/10000/01/", ClassNotFound, "", 404},
		{"session id", "session.test", "/?PHPSESSID=0123456789abcdef", ClassTrap, TrapSession, 200},
		{"session entry", "session.test", "/", ClassPage, "", 200},
		{"bad session id", "session.test", "/?PHPSESSID=xyz", ClassNotFound, "", 404},
		{"growing", "growing.test", "/a/a/a/", ClassTrap, TrapGrowing, 200},
		{"growing too long", "growing.test", "/" + strings.Repeat("a/", 1001), ClassTrap, TrapGrowing, 414},
		{"growing behind robots", "robots-rules.test", "/trap/a/a/", ClassTrap, TrapGrowing, 200},
		{"listing", "dirlist.test", "/pub/", ClassPage, "", 200},
		{"reordered listing", "dirlist.test", "/pub/?C=N;O=D", ClassTrap, TrapDirList, 200},
		{"old-style reordering", "dirlist.test", "/pub/docs/?N=D", ClassTrap, TrapDirList, 200},
		{"listed file", "dirlist.test", "/pub/README.txt", ClassMedia, "", 200},
		{"near duplicate", "neardup.test", "/item/5", ClassTrap, TrapNearDup, 200},
		{"near duplicate with zero", "neardup.test", "/item/05", ClassNotFound, "", 404},
		{"wildcard name", "x.wild.test", "/", ClassTrap, TrapWildcard, 200},
		{"wildcard entry", "wild.test", "/", ClassPage, "", 200},
		{"wildcard other path", "x.wild.test", "/docs/a/page-1.html", ClassNotFound, "", 404},
		{"regp data", "regp.test", "/data/open/report.html", ClassPage, "", 200},
		{"regp other data", "regp.test", "/data/x/report.html", ClassNotFound, "", 404},
		{"wildcard robots", "deep.x.wild.test", "/robots.txt", ClassRobots, "", 404},
		{"not a host name", "bad_name.wild.test", "/", ClassUnknownHost, "", 421},
		{"www alias", "www.dup.test", "/", ClassPage, "", 200},
		{"nofollow target", "meta-robots.test", "/rel-nofollow/target.html", ClassPage, "", 200},
		{"orphan", "sitemap-xml.test", "/hidden/orphan-5.html", ClassOrphan, "", 200},
		{"orphan past the end", "sitemap-xml.test", "/hidden/orphan-6.html", ClassNotFound, "", 404},
		{"gzip sitemap", "sitemap-index.test", "/sitemaps/b.xml.gz", ClassSitemap, "", 200},
		{"chain", "redirects.test", "/chain/3", ClassRedirect, "", 302},
		{"chain end", "redirects.test", "/chain/5", ClassRedirect, "", 301},
		{"chain past end", "redirects.test", "/chain/6", ClassNotFound, "", 404},
		{"loop", "redirects.test", "/loop/b", ClassRedirect, "", 301},
		{"gone", "errors.test", "/gone.html", ClassError, "", 410},
		{"busy", "errors.test", "/busy.html", ClassError, "", 503},
		{"wrong type", "media.test", "/files/page.jpg", ClassMedia, "", 200},
		{"slow", "slow.test", "/slow/1.html", ClassTrap, TrapSlow, 200},
		{"endless", "endless.test", "/radio.mp3", ClassTrap, TrapEndless, 200},
	}
	h := w.Handler()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := w.Lookup(tc.host, tc.target)
			if r.Class != tc.class || r.Trap != tc.trap || r.Status != tc.status {
				t.Errorf("Lookup = %s %q %d, want %s %q %d", r.Class, r.Trap, r.Status, tc.class, tc.trap, tc.status)
			}
			resp := get(t, h, "http://"+tc.host+tc.target)
			if resp.StatusCode != tc.status {
				t.Errorf("served %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	if r := w.Lookup("meta-robots.test", "/nofollow/target-1.html"); !r.Nofollow {
		t.Error("nofollow target not flagged")
	}
	if r := w.Lookup("site-0001.test", "/private/page-6.html"); !r.Private {
		t.Error("private page not flagged")
	}
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Seed: 7, Sites: 5, PagesPerSite: 10}
	a, b := mustNew(t, cfg), mustNew(t, cfg)
	other := mustNew(t, Config{Seed: 8, Sites: 5, PagesPerSite: 10})
	urls := []string{"http://site-0000.test/", "http://site-0003.test" + genericPath(9), "http://hub.test/",
		"http://calendar.test/calendar/2026/11/", "http://dirlist.test/pub/?C=S;O=D", "http://x.wild.test/",
		"http://session.test/", "http://sitemap-gzip.test/sitemap.xml.gz", "http://robots-huge.test/robots.txt",
		"http://malformed.test/"}
	for _, u := range urls {
		ba, bb := body(t, get(t, a.Handler(), u)), body(t, get(t, b.Handler(), u))
		if ba != bb {
			t.Errorf("%s differs between two webs of one config", u)
		}
	}
	if body(t, get(t, a.Handler(), urls[0])) == body(t, get(t, other.Handler(), urls[0])) {
		t.Error("seeds 7 and 8 give the same home page")
	}
}

func TestPageShape(t *testing.T) {
	w := mustNew(t, Config{PageBytes: 3000})
	h := w.Handler()
	page := body(t, get(t, h, "http://site-0002.test"+genericPath(5)))
	for _, want := range []string{"<title>", `<meta name="description"`, `<link rel="canonical" href="http://site-0002.test/docs/b/page-5.html">`, "<nav>", "</html>", `href="../`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := len(page); n < 3000 || n > 6000 {
		t.Errorf("page is %d bytes for PageBytes 3000", n)
	}
	if !regexp.MustCompile(`href="http://[^"]*[A-Z][^"]*"`).MatchString(body(t, get(t, h, "http://site-0002.test/"))+page) &&
		!strings.Contains(page, ":80/") {
		t.Error("no mixed-case or default-port link")
	}
	mal := body(t, get(t, h, "http://malformed.test/"))
	if strings.Contains(mal, "</body>") || !strings.Contains(mal, "<A HREF=") {
		t.Error("malformed.test is well-formed")
	}
	nofollow := get(t, h, "http://meta-robots.test/x-nofollow.html")
	if nofollow.Header.Get("X-Robots-Tag") != "nofollow" {
		t.Error("no X-Robots-Tag")
	}
	if !strings.Contains(body(t, get(t, h, "http://meta-robots.test/nofollow.html")), `<meta name="robots" content="NOINDEX, NOFOLLOW">`) {
		t.Error("no meta robots")
	}
}

func TestCompression(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	plain := get(t, h, "http://compressed.test/")
	want := body(t, plain)
	if plain.Header.Get("Content-Encoding") != "" {
		t.Fatal("compressed without Accept-Encoding")
	}
	tests := []struct {
		name, path, accept, enc string
	}{
		{"br preferred", "/", "gzip, br", "br"},
		{"gzip", "/", "gzip", "gzip"},
		{"gzip refused", "/", "gzip;q=0", ""},
		{"always gzip", "/always-gzip.html", "", "gzip"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, h, "http://compressed.test"+tc.path, "Accept-Encoding", tc.accept)
			if got := resp.Header.Get("Content-Encoding"); got != tc.enc {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.enc)
			}
			var r io.Reader = resp.Body
			switch tc.enc {
			case "br":
				r = brotli.NewReader(r)
			case "gzip":
				zr, err := gzip.NewReader(r)
				if err != nil {
					t.Fatal(err)
				}
				r = zr
			}
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.path == "/" && string(b) != want {
				t.Error("decoded body differs from the identity body")
			}
			if !strings.Contains(string(b), "</html>") {
				t.Error("decoded body is not the page")
			}
		})
	}
}

type sitemapURLSet struct {
	URLs []struct {
		Loc    string `xml:"loc"`
		SrcLoc string `xml:"srcloc"`
		Type   string `xml:"type"`
	} `xml:"url"`
	Sitemaps []struct {
		Loc string `xml:"loc"`
	} `xml:"sitemap"`
}

// Every sitemap lists the home page and exactly the site's orphans.
func TestSitemapsListOrphans(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	var fetch func(u string) []string
	fetch = func(u string) []string {
		resp := get(t, h, u)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", u, resp.StatusCode)
		}
		b := []byte(body(t, resp))
		if strings.HasSuffix(u, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasSuffix(u, ".txt") {
			return strings.Fields(string(b))
		}
		var set sitemapURLSet
		if err := xml.Unmarshal(b, &set); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var out []string
		for _, s := range set.Sitemaps {
			out = append(out, fetch(s.Loc)...)
		}
		for _, x := range set.URLs {
			out = append(out, x.Loc)
			if x.Loc != "" && strings.Contains(x.Loc, "/hidden/") && (x.Type != "data" || x.SrcLoc == "") {
				t.Errorf("%s: %s lacks <type>data</type> or <srcloc>", u, x.Loc)
			}
			if x.SrcLoc != "" {
				if st := get(t, h, x.SrcLoc).StatusCode; st != 200 {
					t.Errorf("srcloc %s: %d", x.SrcLoc, st)
				}
			}
		}
		return out
	}
	total := 0
	for _, s := range w.Sites() {
		if len(s.Sitemaps) == 0 {
			continue
		}
		if !strings.Contains(string(s.Robots), "Sitemap: "+s.Sitemaps[0]) {
			t.Errorf("%s: robots.txt does not name %s", s.Host, s.Sitemaps[0])
		}
		got := fetch(s.Sitemaps[0])
		want := append([]string{s.SeedPages[0]}, s.Orphans...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: sitemaps list %q, want %q", s.Host, got, want)
		}
		total += len(s.Orphans)
	}
	if total != 21 { // 5 + 6 + 4 + 4 + 2, special.go
		t.Errorf("%d orphans in all, want 21", total)
	}
}

func TestEndlessTimeBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := mustNew(t, Config{EndlessBytes: MaxEndlessBytes, EndlessTime: 3 * time.Second})
		rw := &slowWriter{ResponseRecorder: httptest.NewRecorder()}
		start := time.Now()
		w.Handler().ServeHTTP(rw, httptest.NewRequest("GET", "http://endless.test/radio.mp3", nil))
		if d := time.Since(start); d < 3*time.Second || d > 4*time.Second {
			t.Errorf("streamed for %v, want about 3s", d)
		}
	})
}

// slowWriter takes 100 ms per write, like a slow client.
type slowWriter struct{ *httptest.ResponseRecorder }

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(100 * time.Millisecond)
	return s.ResponseRecorder.Write(p)
}

// The listener answers absolute-form requests, so that it can be used as
// an HTTP proxy, and refuses CONNECT.
func TestProxyForm(t *testing.T) {
	w := mustNew(t, Config{})
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	proxy, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	defer client.CloseIdleConnections()
	for _, tc := range []struct {
		url  string
		code int
	}{
		{"http://hub.test/", 200},
		{"http://Site-0001.TEST:80/robots.txt", 200},
		{"http://robots-503.test/robots.txt", 503},
		{"http://example.com/", 421},
	} {
		resp, err := client.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d", tc.url, resp.StatusCode, tc.code)
		}
	}
	conn, err := net.Dial("tcp", proxy.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(conn, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("CONNECT: %d, want 405", resp.StatusCode)
	}
}

func TestRelPath(t *testing.T) {
	tests := []struct{ dir, target, want string }{
		{"/", "/", "./"},
		{"/", "/a/b/c.html", "./a/b/c.html"},
		{"/a/b/", "/", "../../"},
		{"/a/b/", "/a/b/c.html", "./c.html"},
		{"/a/b/", "/a/x/c.html", "../x/c.html"},
		{"/docs/", "/news/a/page-4.html", "../news/a/page-4.html"},
	}
	for _, tc := range tests {
		t.Run(tc.dir+" to "+tc.target, func(t *testing.T) {
			got := relPath(tc.dir, tc.target)
			if got != tc.want {
				t.Errorf("relPath = %q, want %q", got, tc.want)
			}
			base, _ := url.Parse("http://h" + tc.dir)
			ref, _ := url.Parse(got)
			if r := base.ResolveReference(ref).Path; r != tc.target {
				t.Errorf("%q resolves to %q", got, r)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	for _, u := range []string{"http://hub.test/", "http://hub.test/", "http://calendar.test/calendar/2026/11/", "http://nowhere.example/"} {
		get(t, h, u)
	}
	m := body(t, get(t, h, "http://127.0.0.1:8081/metrics"))
	for _, want := range []string{
		`courtesy_testweb_requests_total{class="page"} 2`,
		`courtesy_testweb_requests_total{class="trap"} 1`,
		`courtesy_testweb_requests_total{class="unknown-host"} 2`, // the /metrics request counts too
		"courtesy_testweb_sites 58",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}

// regp-window.test's robots.txt carries Config.VisitTime, and the robots
// parser sees the window it describes.
func TestVisitTimeWindow(t *testing.T) {
	for _, tc := range []struct{ window, open, closed string }{
		{"", "2026-11-22T09:00:00Z", "2026-11-22T13:00:00Z"},
		{"22:30-03:15", "2026-11-22T01:00:00Z", "2026-11-22T12:00:00Z"},
	} {
		w := mustNew(t, Config{VisitTime: tc.window})
		s := w.Site("regp-window.test")
		if s == nil {
			t.Fatal("no regp-window.test")
		}
		g := robots.Parse(s.Robots).Group("anybot")
		open, _ := time.Parse(time.RFC3339, tc.open)
		closed, _ := time.Parse(time.RFC3339, tc.closed)
		if got := g.NextVisit(open); !got.Equal(open) {
			t.Errorf("window %q: NextVisit(%s) = %s, want open", tc.window, open, got)
		}
		if got := g.NextVisit(closed); !got.After(closed) {
			t.Errorf("window %q: NextVisit(%s) = %s, want later", tc.window, closed, got)
		}
	}
}

// TestHostDirectiveSites: canonical.test's robots.txt names it as Host on
// both of its names; mirrored.test declares two mirrors that serve its
// pages, with a robots.txt of their own without Mirror-site lines, and
// whose pages resolve their links on mirrored.test.
func TestHostDirectiveSites(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	tests := []struct {
		name, host string
		robotsHas  []string
		robotsNot  []string
	}{
		{"canonical name", "canonical.test", []string{"Host: canonical.test"}, nil},
		{"www name", "www.canonical.test", []string{"Host: canonical.test"}, nil},
		{"declaring name", "mirrored.test", []string{"Robot-version: 3.0", "Mirror-site: m1.mirrored.test", "Mirror-site: m2.mirrored.test"}, nil},
		{"first mirror", "m1.mirrored.test", []string{"Disallow: /private/"}, []string{"Mirror-site"}},
		{"second mirror", "m2.mirrored.test", []string{"Disallow: /private/"}, []string{"Mirror-site"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := body(t, get(t, h, "http://"+tc.host+"/robots.txt"))
			for _, want := range tc.robotsHas {
				if !strings.Contains(r, want) {
					t.Errorf("robots.txt of %s lacks %q:\n%s", tc.host, want, r)
				}
			}
			for _, not := range tc.robotsNot {
				if strings.Contains(r, not) {
					t.Errorf("robots.txt of %s has %q:\n%s", tc.host, not, r)
				}
			}
		})
	}
	c := w.Site("www.canonical.test")
	if c == nil || c.Host != "canonical.test" || !c.HasKind(KindRobotsHost) || fmt.Sprint(c.NonCanonical) != "[www.canonical.test]" ||
		fmt.Sprint(c.SeedPages) != "[http://www.canonical.test/]" || c.DupGroup != "canonical.test" || c.Pages != specialPages {
		t.Errorf("canonical.test: %+v", c)
	}
	m := w.Site("m2.mirrored.test")
	if m == nil || m.Host != "mirrored.test" || !m.HasKind(KindMirrorSite) || fmt.Sprint(m.NonCanonical) != "[mirrored.test]" ||
		fmt.Sprint(m.Mirrors) != "[m1.mirrored.test m2.mirrored.test]" || m.DupGroup != "" {
		t.Errorf("mirrored.test: %+v", m)
	}
	// The mirrors serve the declaring site's pages, byte for byte; on the
	// even pages every relative link resolves on mirrored.test, on the odd
	// ones on the mirror that served the page.
	for i, p := range []string{"/", genericPath(3), genericPath(4), genericPath(5)} {
		a := body(t, get(t, h, "http://mirrored.test"+p))
		for _, mirror := range m.Mirrors {
			if b := body(t, get(t, h, "http://"+mirror+p)); a != b {
				t.Errorf("%s%s differs from mirrored.test%s", mirror, p, p)
			}
		}
		if abs := strings.Contains(a, `<base href="http://mirrored.test/`); abs != (i%2 == 0) {
			t.Errorf("mirrored.test%s: absolute <base href> %v, want %v", p, abs, i%2 == 0)
		}
	}
	// The hub links to the Host site by its www name, not to the mirrors.
	hub := body(t, get(t, h, "http://hub.test/"))
	if !strings.Contains(hub, "http://www.canonical.test/") || !strings.Contains(hub, "http://mirrored.test/") || strings.Contains(hub, "m1.mirrored.test") {
		t.Error("hub links: want www.canonical.test and mirrored.test, not the mirrors")
	}
}
