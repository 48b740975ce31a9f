package robots

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Tests for REGP: every table and example of §3-§5 is a case,
// named after its table or section.

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "regp", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func regp(body string) string { return "Robot-version: 3.0\n\n" + body }

func noProblems(t *testing.T, f *File) {
	t.Helper()
	for _, p := range f.Problems() {
		t.Errorf("unexpected problem: line %d: %s", p.Line, p.Message)
	}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestREGPTable1RobotsURL(t *testing.T) {
	tests := []struct{ site, want string }{
		{"http://www.example.com/", "http://www.example.com/robots.txt"},
		{"http://www.example.com:8080/", "http://www.example.com:8080/robots.txt"},
		{"https://www.example.com/a/b?c#d", "https://www.example.com/robots.txt"},
	}
	for _, tc := range tests {
		t.Run("Table1 "+tc.site, func(t *testing.T) {
			got, err := RobotsURL(tc.site)
			if err != nil || got != tc.want {
				t.Errorf("RobotsURL(%q) = %q, %v; want %q", tc.site, got, err, tc.want)
			}
		})
	}
	if _, err := RobotsURL("/relative"); err == nil {
		t.Error("RobotsURL of a relative URL: no error")
	}
}

func TestREGPTable2LineForms(t *testing.T) {
	tests := []struct{ name, body string }{
		{"Table2 specific command line", "User-agent: a\nDisallow: /x\n"},
		{"Table2 left and right brace lines", "User-agent: a\nDisallow: /x\n{\nAllow: /x/y\nCrawl-delay: 2\n}\n"},
		{"Table2 blank line", "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /\n"},
		{"Table2 comment line", "## a comment\nUser-agent: a ## trailing comment\nDisallow: /x ## comment\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(regp(tc.body)))
			if f.Dialect() != REGP {
				t.Fatalf("dialect %s", f.Dialect())
			}
			noProblems(t, f)
			if f.Allowed("a", "/x") {
				t.Error("/x allowed for a")
			}
		})
	}
	// `#` is not a comment in REGP: it belongs to the path.
	f := Parse([]byte(regp("User-agent: a\nDisallow: /x#y\n")))
	if !f.Allowed("a", "/x") || f.Allowed("a", "/x%23y") {
		t.Error("REGP: '#' should be part of the path")
	}
}

func TestREGPTable3Fields(t *testing.T) {
	lines := map[string]string{
		"Last-modified":  "30 Oct 2014 04:31:17 UT",
		"User-agent":     "infoseeker",
		"Ip-disallow":    "222.69.212.*",
		"Ip-allow":       "222.69.212.14",
		"Disallow":       "/data",
		"Allow":          "/data/open",
		"Crawl-delay":    "5",
		"Ip-delay":       "2.5",
		"Request-rate":   "500/h",
		"Ip-rate":        "100/m",
		"Visit-time":     "01:00 +0800-06:00 +0800",
		"Time-forbidden": "30 Oct 2014 00:00:00 UT-2 Nov 2014 23:59:59 UT",
		"Language":       "en-us,en",
		"Encoding":       "gzip,deflate",
		"Charset":        "gb2312,utf-8",
		"Cookie":         "visitor=crawler",
		"Mirror-site":    "www.example.com",
		"Sitemap":        "http://www.example.com/sitemap.xml",
		"Host":           "www.example.com",
		"Index-page":     "/news/",
		"Change-always":  "/a",
		"Change-hourly":  "/h",
		"Change-daily":   "/d",
		"Change-weekly":  "/w",
		"Change-monthly": "/m",
		"Change-yearly":  "/y",
		"Change-never":   "/n",
	}
	// Robot-version is the file's first line; the others follow in a group
	// (target segment first).
	order := []string{"Last-modified", "User-agent", "Ip-disallow", "Ip-allow"}
	for k := range lines {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	slices.Sort(order[4:])
	var b strings.Builder
	b.WriteString("Robot-version: 3.0\n")
	for _, k := range order {
		b.WriteString(k + ": " + lines[k] + "\n")
	}
	f := Parse([]byte(b.String()))
	if f.Dialect() != REGP || f.Version() != "3.0" {
		t.Fatalf("dialect %s version %q", f.Dialect(), f.Version())
	}
	noProblems(t, f)
	g := f.Group("infoseeker")
	e := g.Extensions()
	if e.IPDelay != 2500*time.Millisecond || len(e.IPRates) != 1 || e.IPRates[0].Interval() != 600*time.Millisecond {
		t.Errorf("Ip-delay/Ip-rate: %+v", e)
	}
	if len(e.Changes) != 7 || len(e.IndexPages) != 1 || len(e.MirrorSites) != 1 || len(e.Cookies) != 1 {
		t.Errorf("guidance values: %+v", e)
	}
	for _, c := range []struct {
		path string
		want ChangeFreq
	}{{"/a1", ChangeAlways}, {"/h", ChangeHourly}, {"/d", ChangeDaily}, {"/w", ChangeWeekly}, {"/m", ChangeMonthly}, {"/y", ChangeYearly}, {"/n", ChangeNever}} {
		if got, ok := g.ChangeFreq(c.path); !ok || got != c.want {
			t.Errorf("Table3 ChangeFreq(%q) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
	if _, ok := g.ChangeFreq("/zzz"); ok {
		t.Error("ChangeFreq of an unlisted path")
	}
}

func TestREGPListing32(t *testing.T) {
	f := Parse(readFixture(t, "listing-3.2.txt"))
	noProblems(t, f)
	if f.Dialect() != REGP || f.Version() != "3.0" {
		t.Fatalf("dialect %s version %q", f.Dialect(), f.Version())
	}
	if lm, ok := f.LastModified(); !ok || !lm.Equal(utc("2014-10-30T04:31:17Z")) {
		t.Errorf("LastModified = %v, %v", lm, ok)
	}
	if got := f.Sitemaps(); !slices.Equal(got, []string{"http://www.example.com/documents/example_sitemap.xml"}) {
		t.Errorf("Sitemaps = %q", got)
	}
	tests := []struct {
		name, agent, path string
		allowed           bool
		delay             time.Duration // 0: none
	}{
		{"Listing 3.2 WebCrawler data", "WebCrawler", "/data", false, 0},
		{"Listing 3.2 WebCrawler data/open", "WebCrawler", "/data/open/x.html", true, 0},
		{"Listing 3.2 WebCrawler implicit Allow: /", "WebCrawler", "/elsewhere", true, 0},
		{"Listing 3.2 infoseeker info", "infoseeker", "/info/a", true, 0},
		{"Listing 3.2 infoseeker news", "infoseeker", "/news", true, 0},
		{"Listing 3.2 infoseeker implicit Disallow: /", "infoseeker", "/data", false, 0},
		{"Listing 3.2 infoseeker info/hot with delay 5", "infoseeker", "/info/hot/1.html", true, 5 * time.Second},
		{"Listing 3.2 wiseRobot info/hot without delay", "wiseRobot", "/info/hot/1.html", true, 0},
		{"Listing 3.2 BobbyInfoSeeker contains infoseeker", "BobbyInfoSeeker", "/news", true, 0},
		{"Listing 3.2 other crawler unrestricted", "OtherBot", "/data", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := f.Group(tc.agent)
			if got := g.Allowed(tc.path); got != tc.allowed {
				t.Errorf("Allowed(%q) = %v, want %v (%+v)", tc.path, got, tc.allowed, g.Explain(tc.path))
			}
			d, ok := g.CrawlDelayFor(tc.path)
			if ok != (tc.delay != 0) || d != tc.delay {
				t.Errorf("CrawlDelayFor(%q) = %v, %v; want %v", tc.path, d, ok, tc.delay)
			}
			// Global command section: Visit-time 1:00-16:00 UT and
			// Language hold for every crawler.
			if e := g.Extensions(); !slices.Equal(e.Languages, []string{"zh-cn", "zh"}) {
				t.Errorf("Languages = %q", e.Languages)
			}
			if got := g.NextVisit(utc("2024-05-01T00:30:00Z")); !got.Equal(utc("2024-05-01T01:00:00Z")) {
				t.Errorf("NextVisit(00:30) = %v", got)
			}
		})
	}
}

func TestREGPTable4And5UserAgent(t *testing.T) {
	ex1 := Parse([]byte(regp("User-agent: infoseeker\nDisallow: /\n")))
	ex2 := Parse([]byte(regp("User-agent: infoseeker\nUser-agent: wiseRobot\nDisallow: /\n")))
	ex3 := Parse([]byte(regp("User-agent: *\nDisallow: /\n")))
	tests := []struct {
		name  string
		f     *File
		token string
		match bool
	}{
		{"Table4 Infoseeker", ex1, "Infoseeker", true},
		{"Table4 InfoSeeker", ex1, "InfoSeeker", true},
		{"Table4 BobbyInfoSeeker", ex1, "BobbyInfoSeeker", true},
		{"Table4 Info_seeker", ex1, "Info_seeker", false},
		{"Table4 InformationSeeker", ex1, "InformationSeeker", false},
		{"Table4 Infoseek", ex1, "Infoseek", false},
		{"Table5 Infoseeker", ex2, "Infoseeker", true},
		{"Table5 Wiserobot", ex2, "Wiserobot", true},
		{"Table5 Inforobot", ex2, "Inforobot", false},
		{"3.2.3 Example3 any crawler", ex3, "Anybot", true},
		{"3.2.3 Example3 no token", ex3, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The group disallows everything: matched means disallowed.
			if got := !tc.f.Allowed(tc.token, "/page"); got != tc.match {
				t.Errorf("%q matched = %v, want %v", tc.token, got, tc.match)
			}
		})
	}
}

func TestREGPTables6To8Paths(t *testing.T) {
	ex1 := Parse([]byte(regp("User-agent: *\nDisallow: /tmp\n")))
	ex2 := Parse([]byte(regp("User-agent: *\nAllow: /tmp/\n")))
	ex3 := Parse([]byte(regp("User-agent: *\nDisallow: /news/\nDisallow: /info\nAllow: /info/open\n")))
	tests := []struct {
		name  string
		f     *File
		path  string
		allow bool
	}{
		{"Table6 /tmp", ex1, "/tmp", false},
		{"Table6 /temp", ex1, "/temp", true},
		{"Table6 /tmp1", ex1, "/tmp1", false},
		{"Table6 /tmp.html", ex1, "/tmp.html", false},
		{"Table6 /tmp/tmp0001.html", ex1, "/tmp/tmp0001.html", false},
		{"Table7 /tmp", ex2, "/tmp", false},
		{"Table7 /temp", ex2, "/temp", false},
		{"Table7 /tmp1", ex2, "/tmp1", false},
		{"Table7 /tmp.html", ex2, "/tmp.html", false},
		{"Table7 /tmp/tmp0001.html", ex2, "/tmp/tmp0001.html", true},
		{"Table8 /news/news0001.html", ex3, "/news/news0001.html", false},
		{"Table8 /info/infoShow.html", ex3, "/info/infoShow.html", false},
		{"Table8 /info/latest/info0001.html", ex3, "/info/latest/info0001.html", false},
		{"Table8 /info0001.html", ex3, "/info0001.html", false},
		{"Table8 /info/open/info0001.html", ex3, "/info/open/info0001.html", true},
		{"Table8 /tmp/tmp0001.html", ex3, "/tmp/tmp0001.html", true},
		{"3.2.5 values are case-insensitive", ex1, "/TMP/x", false},
		{"3.2.5 robots.txt always allowed", ex2, "/robots.txt", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Allowed("crawler", tc.path); got != tc.allow {
				t.Errorf("Allowed(%q) = %v, want %v", tc.path, got, tc.allow)
			}
		})
	}
}

// Tables 9-11: the application of §5, with representative URLs of the
// example site (§4.1).
func TestREGPTables9To11Application(t *testing.T) {
	at := utc("2015-03-20T10:00:00Z")
	regpFile := Parse(readFixture(t, "listing-5.txt"))
	noProblems(t, regpFile)
	old := Parse(readFixture(t, "listing-5-old-rep.txt"))
	tests := []struct {
		name  string
		f     *File
		path  string
		fetch bool
		delay time.Duration
	}{
		{"Table9 home page", AllowAll(), "/", true, 0},
		{"Table9 useless page (login)", AllowAll(), "/login.do", true, 0},
		{"Table9 latest news page", AllowAll(), "/newsItem.do?id=9", true, 0},
		{"Table10 home page", regpFile, "/", true, 500 * time.Millisecond},
		{"Table10 useless page (login)", regpFile, "/login.do", false, 500 * time.Millisecond},
		{"Table10 useless page (registration)", regpFile, "/reg.do", false, 500 * time.Millisecond},
		{"Table10 useless page (news release)", regpFile, "/newsRelease.do", false, 500 * time.Millisecond},
		{"Table10 latest news page (snapshot)", regpFile, "/html/news9.html", true, time.Second},
		{"Table10 old news page (snapshot)", regpFile, "/html/news1.html", true, time.Second},
		{"Table10 news item page (newsitem.do? block)", regpFile, "/newsItem.do?id=9", true, 5 * time.Second},
		{"Table11 home page", old, "/", true, 0},
		{"Table11 useless page (login)", old, "/login.do", false, 0},
		{"Table11 latest news page", old, "/newsItem.do?id=9", true, 0},
		// Table 11 has "No" for old news pages because without a sitemap
		// the crawler never finds them; robots.txt itself allows them.
		{"Table11 old news page", old, "/newsItem.do?id=1", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.f.Group("courtesy")
			if got := g.Allowed(tc.path); got != tc.fetch {
				t.Errorf("Allowed(%q) = %v, want %v (%+v)", tc.path, got, tc.fetch, g.Explain(tc.path))
			}
			if got := g.MinInterval(tc.path, at); got != tc.delay {
				t.Errorf("MinInterval(%q) = %v, want %v", tc.path, got, tc.delay)
			}
		})
	}
	if len(old.Sitemaps()) != 0 || len(regpFile.Sitemaps()) != 1 {
		t.Errorf("sitemaps: old %q, REGP %q", old.Sitemaps(), regpFile.Sitemaps())
	}
	e := regpFile.Group("courtesy").Extensions()
	if !slices.Equal(e.Cookies, []string{"user=robot"}) || !slices.Equal(e.Languages, []string{"zh-CN"}) ||
		!slices.Equal(e.Encodings, []string{"gzip", "deflate"}) {
		t.Errorf("Table10 global section: %+v", e)
	}
	if lm, _ := regpFile.LastModified(); !lm.Equal(utc("2015-03-19T04:00:00Z")) {
		t.Errorf("Last-modified = %v", lm)
	}
	if old.Dialect() != RFC9309 {
		t.Errorf("old REP file dialect %s", old.Dialect())
	}
}

func TestREGP322LastModifiedExamples(t *testing.T) {
	want := utc("2014-10-30T04:31:00Z")
	tests := []struct {
		name, value string
		want        time.Time
	}{
		{"3.2.2 Example1", "30 Oct 2014 04:31:17 UT", want.Add(17 * time.Second)},
		{"3.2.2 Example2", "Thu, 30 Oct 2014 04:31 UT", want},
		{"3.2.2 Example3", "30 Oct 2014 12:31 +0800", want},
		{"3.2.2 two-digit year", "30 Oct 14 12:31 +0800", want},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte("Robot-version: 3.0\nLast-modified: " + tc.value + "\n"))
			noProblems(t, f)
			if got, ok := f.LastModified(); !ok || !got.Equal(tc.want) {
				t.Errorf("LastModified = %v, %v; want %v", got, ok, tc.want)
			}
		})
	}
}

func TestREGP324IPExamples(t *testing.T) {
	ex1 := "Ip-disallow: 222.69.212.*\n"
	ex2 := "Ip-disallow: 222.69.*.*\nIp-allow: 222.69.212.14\nIp-allow: 222.69.212.15\n"
	ex3 := "Ip-allow: *\n"
	only := "Ip-allow: 10.1.2.3\n"
	tests := []struct {
		name, body, ip string
		allowed        bool
	}{
		{"3.2.4 Example1 excluded", ex1, "222.69.212.7", false},
		{"3.2.4 Example1 other address", ex1, "222.69.213.7", true},
		{"3.2.4 Example2 allowed .14", ex2, "222.69.212.14", true},
		{"3.2.4 Example2 allowed .15", ex2, "222.69.212.15", true},
		{"3.2.4 Example2 excluded .16", ex2, "222.69.212.16", false},
		{"3.2.4 Example2 implicit Ip-allow: *", ex2, "10.0.0.1", true},
		{"3.2.4 Example3 any", ex3, "192.0.2.1", true},
		{"3.2.4 implicit Ip-disallow: * before a first Ip-allow", only, "10.1.2.4", false},
		{"3.2.4 implicit Ip-disallow: * listed address", only, "10.1.2.3", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// No User-agent line: `User-agent: *` is implied (§3.2.4).
			body := regp(tc.body + "Disallow: /private\n")
			addr := netip.MustParseAddr(tc.ip)
			f := ParseOptions([]byte(body), Options{EgressIPs: []netip.Addr{addr}})
			noProblems(t, f)
			g := f.Group("crawler")
			if got := g.Allowed("/page"); got != tc.allowed {
				t.Errorf("Allowed from %s = %v, want %v", tc.ip, got, tc.allowed)
			}
			if got := g.IPAllowed(addr); got != tc.allowed {
				t.Errorf("IPAllowed(%s) = %v, want %v", tc.ip, got, tc.allowed)
			}
			if !g.Allowed("/robots.txt") {
				t.Error("/robots.txt not allowed")
			}
			// Without egress addresses the lines are recorded only.
			if !Parse([]byte(body)).Allowed("crawler", "/page") {
				t.Error("Ip lines matched without EgressIPs")
			}
		})
	}
}

func TestREGP326To327DelayAndRate(t *testing.T) {
	f := Parse([]byte(regp("User-agent: *\nCrawl-delay: 5\nRequest-rate: 500/h\nIp-delay: 1.5\nIp-rate: 20/m\n")))
	noProblems(t, f)
	g := f.Group("bot")
	if d, ok := g.CrawlDelay(); !ok || d != 5*time.Second {
		t.Errorf("3.2.6 Example: CrawlDelay = %v, %v", d, ok)
	}
	r, ok := g.RequestRate(time.Now())
	if !ok || r != (Rate{Requests: 500, Per: time.Hour}) || r.Interval() != 7200*time.Millisecond {
		t.Errorf("3.2.7 Example: RequestRate = %+v, %v", r, ok)
	}
	if e := g.Extensions(); e.IPDelay != 1500*time.Millisecond || e.IPRates[0].Rate != (Rate{20, time.Minute}) {
		t.Errorf("Ip-delay/Ip-rate: %+v", e)
	}
	if d := g.IPInterval(time.Now()); d != 3*time.Second {
		t.Errorf("IPInterval = %v, want 3s (20/m beats 1.5 s)", d)
	}
	if d := Parse([]byte("User-agent: *\nCrawl-delay: 5\n")).Group("bot").IPInterval(time.Now()); d != 0 {
		t.Errorf("IPInterval without Ip lines = %v, want 0", d)
	}
}

func TestREGP328Windows(t *testing.T) {
	forbid := Parse([]byte(regp("User-agent: *\nTime-forbidden: 30 Oct 2014 00:00:00 UT-2 Nov 2014 23:59:59 UT\n")))
	visit := Parse([]byte(regp("User-agent: *\nVisit-time: 01:00 +0800-06:00 +0800\n")))
	sec5 := Parse([]byte(regp("Visit-time: 21:00:00 +0800-08:00:00 +0800\n")))
	tests := []struct {
		name string
		f    *File
		at   string
		want string
	}{
		{"3.2.8 Example1 before the forbidden period", forbid, "2014-10-29T23:00:00Z", "2014-10-29T23:00:00Z"},
		{"3.2.8 Example1 inside the forbidden period", forbid, "2014-10-31T12:00:00Z", "2014-11-03T00:00:00Z"},
		{"3.2.8 Example1 after the forbidden period", forbid, "2014-11-03T00:00:00Z", "2014-11-03T00:00:00Z"},
		{"3.2.8 Example2 inside (17:00-22:00 UTC)", visit, "2024-01-01T18:00:00Z", "2024-01-01T18:00:00Z"},
		{"3.2.8 Example2 before", visit, "2024-01-01T10:00:00Z", "2024-01-01T17:00:00Z"},
		{"3.2.8 Example2 after, next day", visit, "2024-01-01T22:30:00Z", "2024-01-02T17:00:00Z"},
		{"5 Visit-time after 21:00 Beijing, at 20:00 Beijing", sec5, "2024-01-01T12:00:00Z", "2024-01-01T13:00:00Z"},
		{"5 Visit-time wraps midnight, at 02:00 Beijing", sec5, "2024-01-01T18:00:00Z", "2024-01-01T18:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			noProblems(t, tc.f)
			if got := tc.f.Group("bot").NextVisit(utc(tc.at)); !got.Equal(utc(tc.want)) {
				t.Errorf("NextVisit(%s) = %v, want %s", tc.at, got, tc.want)
			}
		})
	}
}

func TestREGP329To3215Guidance(t *testing.T) {
	body := regp(`User-agent: *
Language: en-us,en
Encoding: gzip,deflate
Charset: gb2312,utf-8
Cookie: visitor=crawler
Mirror-site: www.example.com
Index-page: /news/newslist.html
Index-page: /news/
Index-page: /news/news.html$*
Index-page: /news//list.html*
Change-hourly: /news/newslist.html
Change-daily: /news/hot/.html*

Sitemap: <http://www.example.com/sitemap.xml>
Host: www.example.com
`)
	f := Parse([]byte(body))
	noProblems(t, f)
	g := f.Group("bot")
	e := g.Extensions()
	checks := []struct {
		name      string
		got, want []string
	}{
		{"3.2.9 Language", e.Languages, []string{"en-us", "en"}},
		{"3.2.9 Encoding", e.Encodings, []string{"gzip", "deflate"}},
		{"3.2.9 Charset", e.Charsets, []string{"gb2312", "utf-8"}},
		{"3.2.10 Cookie", e.Cookies, []string{"visitor=crawler"}},
		{"3.2.11 Mirror-site", e.MirrorSites, []string{"www.example.com"}},
		{"3.2.12 Sitemap", f.Sitemaps(), []string{"http://www.example.com/sitemap.xml"}},
		{"3.2.13 Host", []string{f.Host()}, []string{"www.example.com"}},
		{"3.2.14 Index-page", e.IndexPages, []string{"/news/newslist.html", "/news/", "/news/news.html$*", "/news//list.html*"}},
	}
	for _, c := range checks {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name, path string
		index      bool
	}{
		{"3.2.14 Example1", "/news/newslist.html", true},
		{"3.2.14 Example2", "/news/2014/a.html", true},
		{"3.2.14 case-insensitive", "/NEWS/x", true},
		{"3.2.14 unlisted", "/about", false},
	} {
		if got := g.IndexPage(c.path); got != c.index {
			t.Errorf("%s: IndexPage(%q) = %v", c.name, c.path, got)
		}
	}
	if fr, ok := g.ChangeFreq("/news/newslist.html"); !ok || fr != ChangeHourly {
		t.Errorf("3.2.15 Example1: %q %v", fr, ok)
	}
	if fr, ok := g.ChangeFreq("/news/hot/.html5"); !ok || fr != ChangeDaily {
		t.Errorf("3.2.15 Example2: %q %v", fr, ok)
	}
}

func TestREGPRequestRateWindows(t *testing.T) {
	f := Parse([]byte("User-agent: *\nRequest-rate: 1/5\nRequest-rate: 1/10m 0600-0845\nVisit-time: 0600-0845\n"))
	noProblems(t, f)
	g := f.Group("bot")
	tests := []struct {
		name string
		at   string
		want Rate
	}{
		{"outside the window: unwindowed rate", "2024-01-01T12:00:00Z", Rate{1, 5 * time.Second}},
		{"inside the window: windowed rate", "2024-01-01T07:00:00Z", Rate{1, 10 * time.Minute}},
		{"window end is exclusive", "2024-01-01T08:45:00Z", Rate{1, 5 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r, ok := g.RequestRate(utc(tc.at)); !ok || r != tc.want {
				t.Errorf("RequestRate(%s) = %+v, %v; want %+v", tc.at, r, ok, tc.want)
			}
		})
	}
	if got := g.NextVisit(utc("2024-01-01T09:00:00Z")); !got.Equal(utc("2024-01-02T06:00:00Z")) {
		t.Errorf("NextVisit = %v", got)
	}
}

func TestREGPNestedAndGlobal(t *testing.T) {
	tests := []struct {
		name, body, agent, path string
		allowed                 bool
	}{
		{"nested block for another agent is ignored", "User-agent: a\nUser-agent: b\nDisallow: /x\n{\nUser-agent: b\nAllow: /x/open\n}\n", "a", "/x/open", false},
		{"nested block for the agent applies", "User-agent: a\nUser-agent: b\nDisallow: /x\n{\nUser-agent: b\nAllow: /x/open\n}\n", "b", "/x/open", true},
		{"global rule applies to every crawler", "User-agent: a\nDisallow: /a\n\nDisallow: /secret\n", "zzz", "/secret", false},
		{"first matching group only", "User-agent: bot\nDisallow: /one\n\nUser-agent: bot\nDisallow: /two\n", "bot", "/two", true},
		{"specific group before star", "User-agent: *\nDisallow: /\n\nUser-agent: bot\nDisallow: /two\n", "bot", "/one", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(regp(tc.body)))
			noProblems(t, f)
			if got := f.Allowed(tc.agent, tc.path); got != tc.allowed {
				t.Errorf("Allowed(%q, %q) = %v, want %v", tc.agent, tc.path, got, tc.allowed)
			}
		})
	}
}

func TestDialectDetection(t *testing.T) {
	tests := []struct {
		name, body string
		want       Dialect
		version    string
	}{
		{"no version", "User-agent: *\n", RFC9309, ""},
		{"version 3.0", "Robot-version: 3.0\n", REGP, "3.0"},
		{"version 3.1 after comments", "# hi\n\nRobot-version: 3.1\n", REGP, "3.1"},
		{"version 2.0", "Robot-version: 2.0\nUser-agent: *\n", RFC9309, "2.0"},
		{"version not first", "User-agent: *\nRobot-version: 3.0\n", RFC9309, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(tc.body))
			if f.Dialect() != tc.want || f.Version() != tc.version {
				t.Errorf("dialect %s version %q; want %s %q", f.Dialect(), f.Version(), tc.want, tc.version)
			}
		})
	}
	// REGP directives outside REGP files are reported and ignored.
	f := Parse([]byte("User-agent: *\nTime-forbidden: 0000-2359\nDisallow: /x\n"))
	if ps := f.Problems(); len(ps) != 1 || ps[0].Line != 2 || !strings.Contains(ps[0].Message, "REGP") {
		t.Errorf("problems %+v", ps)
	}
	if !f.Group("a").NextVisit(utc("2024-01-01T10:00:00Z")).Equal(utc("2024-01-01T10:00:00Z")) {
		t.Error("Time-forbidden honoured in an RFC 9309 file")
	}
}
