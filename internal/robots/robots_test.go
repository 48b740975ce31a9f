package robots

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		name, pattern, path string
		want                bool
	}{
		{"prefix", "/fish", "/fish.html", true},
		{"prefix no match", "/fish", "/Fish.asp", false},
		{"trailing star redundant", "/fish*", "/fishheads/yummy.html", true},
		{"directory", "/fish/", "/fish", false},
		{"star suffix", "/*.php", "/folder/filename.php?parameters", true},
		{"anchored", "/*.php$", "/filename.php", true},
		{"anchored no match with query", "/*.php$", "/filename.php?parameters", false},
		{"anchored literal", "/fish$", "/fish", true},
		{"anchored literal longer path", "/fish$", "/fish/", false},
		{"two stars", "/*fish*.php", "/a/fishy/b.php", true},
		{"two stars order", "/*fish*.php", "/a.php/fish", false},
		{"star then anchored suffix", "/a*b$", "/axxbyyb", true},
		{"star then anchored suffix miss", "/a*b$", "/axxbyy", false},
		{"dollar in middle is literal", "/a$b", "/a$b", true},
		{"encoded star literal", "/a%2A", "/a*", true},
		{"encoded star not wildcard", "/a%2A", "/ab", false},
		{"unreserved escape decoded", "/%7Emak", "/~mak", true},
		{"unreserved escape in path decoded", "/~mak", "/%7emak", true},
		{"slash escape kept distinct", "/a%2Fb", "/a/b", false},
		{"escape hex case ignored", "/a%2fb", "/a%2Fb", true},
		{"non-ASCII encoded", "/ツ", "/%E3%83%84", true},
		{"non-ASCII path encoded", "/%E3%83%84", "/ツ", true},
		{"bad escape literal", "/a%3Mb", "/a%3Mb", true},
		{"space", "/a b", "/a%20b", true},
		{"empty pattern matches all", "", "/x", true},
		{"star only", "*", "/anything", true},
		{"many stars collapse", "/a***b", "/axb", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := compilePattern(tc.pattern, false)
			if got := p.match(normalizePath(tc.path)); got != tc.want {
				t.Errorf("%q ~ %q = %v, want %v (norm %q, path %q)", tc.pattern, tc.path, got, tc.want, p.norm, normalizePath(tc.path))
			}
		})
	}
}

func TestRequestPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://example.com", "/"},
		{"http://example.com/", "/"},
		{"https://example.com/a/b?c=d#frag", "/a/b?c=d"},
		{"http://example.com?q", "/?q"},
		{"//example.com/x", "/x"},
		{"/p;params?q", "/p;params?q"},
		{"", "/"},
		{"http://user@h:8080/x", "/x"},
		{"relative", "/relative"},
		{"http://h/a:b", "/a:b"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := RequestPath(tc.in); got != tc.want {
				t.Errorf("RequestPath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRFC9309(t *testing.T) {
	tests := []struct {
		name, body, agent, path string
		want                    bool
	}{
		{"longest match", "User-agent: *\nAllow: /p\nDisallow: /\n", "a", "/page", true},
		{"allow wins tie", "User-agent: *\nDisallow: /x\nAllow: /x\n", "a", "/x", true},
		{"specific group beats star", "User-agent: *\nDisallow: /\nUser-agent: foo\nDisallow: /x\n", "FOO", "/y", true},
		{"groups merged", "User-agent: foo\nDisallow: /a\n\nUser-agent: bar\nDisallow: /b\n\nUser-agent: foo\nDisallow: /c\n", "foo", "/c", false},
		{"no star no match allows", "User-agent: foo\nDisallow: /\n", "bar", "/", true},
		{"empty disallow allows", "User-agent: *\nDisallow:\n", "a", "/x", true},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /\n", "a", "/robots.txt", true},
		{"CR line ends", "User-agent: *\rDisallow: /x\r", "a", "/x", false},
		{"CRLF line ends", "User-agent: *\r\nDisallow: /x\r\n", "a", "/x", false},
		{"BOM", "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n", "a", "/x", false},
		{"typo dissallow", "User-agent: *\nDissallow: /x\n", "a", "/x", false},
		{"comment", "User-agent: * # all\nDisallow: /x # no\n", "a", "/x", false},
		{"rules before group ignored", "Disallow: /x\nUser-agent: *\nAllow: /\n", "a", "/x", true},
		{"missing colon", "User-agent *\nDisallow /x\n", "a", "/x", false},
		{"case-sensitive paths", "User-agent: *\nDisallow: /X\n", "a", "/x", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.body)).Allowed(tc.agent, tc.path); got != tc.want {
				t.Errorf("Allowed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSyntheticFiles(t *testing.T) {
	if !AllowAll().Allowed("a", "/x") {
		t.Error("AllowAll disallows")
	}
	d := DisallowAll()
	if d.Allowed("a", "/x") || !d.Allowed("a", "/robots.txt") {
		t.Error("DisallowAll")
	}
	if e := d.Group("a").Explain("/x"); e.Allowed || e.Reason == "" {
		t.Errorf("Explain = %+v", e)
	}
}

func TestExplain(t *testing.T) {
	f := Parse([]byte("User-agent: *\nAllow: /a/b\nDisallow: /a\n"))
	tests := []struct {
		path string
		want Decision
	}{
		{"/a/x", Decision{Allowed: false, Line: 3, Rule: "Disallow: /a"}},
		{"/a/b", Decision{Allowed: true, Line: 2, Rule: "Allow: /a/b"}},
		{"/z", Decision{Allowed: true, Reason: "no rule matched"}},
		{"/robots.txt", Decision{Allowed: true, Reason: "/robots.txt is always allowed"}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := f.Group("x").Explain(tc.path); got != tc.want {
				t.Errorf("Explain(%q) = %+v, want %+v", tc.path, got, tc.want)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	body := "Disallow: /early\nUser-agent: *\nDissalow: /x\nFrobnicate: 1\nnot a directive line\nCrawl-delay: soon\nUser-agent: Googlebot/2.1\nAllow: relative\n"
	want := []Problem{
		{1, "rule before any User-agent line; ignored"},
		{3, `"Dissalow" read as "Disallow"`},
		{4, `unknown directive "Frobnicate"; skipped`},
		{5, "line is not `name: value`; skipped"},
		{6, `Crawl-Delay: "soon" is not a number of seconds; line skipped`},
		{7, `User-agent "Googlebot/2.1": only the product token "Googlebot" is matched`},
		{8, `path "relative" does not start with '/'`},
	}
	got := Parse([]byte(body)).Problems()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Problems:\n got %v\nwant %v", got, want)
	}
	if ps := Parse([]byte("User-agent: *\nDisallow: /\n")).Problems(); len(ps) != 0 {
		t.Errorf("clean file has problems %v", ps)
	}
	// Problems are bounded.
	many := strings.Repeat("junk\n", 5000)
	if ps := Parse([]byte(many)).Problems(); len(ps) != maxProblems+1 {
		t.Errorf("%d problems for 5000 bad lines", len(ps))
	}
}

func TestLimits(t *testing.T) {
	// Rules past MaxSize are ignored.
	body := "User-agent: *\n" + strings.Repeat("#"+strings.Repeat("x", 99)+"\n", MaxSize/100) + "Disallow: /late\n"
	f := Parse([]byte(body))
	if !f.Allowed("a", "/late") {
		t.Error("rule beyond MaxSize honoured")
	}
	if ps := f.Problems(); len(ps) == 0 || ps[0].Line != 0 {
		t.Errorf("truncation not reported: %v", ps)
	}
	// Deep nesting and stray braces are reported, not fatal.
	deep := "Robot-version: 3.0\nUser-agent: *\n" + strings.Repeat("{\n", 20) + "Disallow: /d\n" + strings.Repeat("}\n", 22)
	f = Parse([]byte(deep))
	if f.Allowed("a", "/d") || len(f.Problems()) == 0 {
		t.Errorf("deep nesting: allowed %v problems %v", f.Allowed("a", "/d"), f.Problems())
	}
	// UTF-16 files are bridged (RFC 9309 §2.3 MAY).
	u16 := []byte{0xFF, 0xFE}
	for _, r := range "User-agent: *\nDisallow: /x\n" {
		u16 = append(u16, byte(r), 0)
	}
	if Parse(u16).Allowed("a", "/x") {
		t.Error("UTF-16LE file not read")
	}
}

func TestWindowParsing(t *testing.T) {
	tests := []struct {
		in   string
		want Window
		ok   bool
	}{
		{"0600-0845", Window{Daily: true, Start: 6 * time.Hour, End: 8*time.Hour + 45*time.Minute}, true},
		{"1:00-16:00 UT", Window{Daily: true, Start: time.Hour, End: 16 * time.Hour}, true},
		{"01:00 +0800-06:00 +0800", Window{Daily: true, Start: 17 * time.Hour, End: 22 * time.Hour}, true},
		{"01:00 -0500-06:00", Window{Daily: true, Start: 6 * time.Hour, End: 11 * time.Hour}, true},
		{"2200-0200", Window{Daily: true, Start: 22 * time.Hour, End: 2 * time.Hour}, true},
		{"30 Oct 2014 00:00:00 UT-2 Nov 2014 23:59:59 UT", Window{From: utc("2014-10-30T00:00:00Z"), To: utc("2014-11-03T00:00:00Z")}, true},
		{"30 Oct 2014 22:00 UT-02:00", Window{From: utc("2014-10-30T22:00:00Z"), To: utc("2014-10-31T02:01:00Z")}, true},
		{"0600", Window{}, false},
		{"25:00-26:00", Window{}, false},
		{"06:00-2 Nov 2014 10:00", Window{}, false},
		{"", Window{}, false},
		{"a-b", Window{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseWindow(tc.in)
			if (err == nil) != tc.ok || tc.ok && got != tc.want {
				t.Errorf("parseWindow(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestRateParsing(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"1/5", Rate{1, 5 * time.Second}, true},
		{"500/h", Rate{500, time.Hour}, true},
		{"120/m", Rate{120, time.Minute}, true},
		{"1/10m", Rate{1, 10 * time.Minute}, true},
		{"0.5/s", Rate{1, 2 * time.Second}, true},
		{"3/", Rate{3, time.Second}, true},
		{"0/5", Rate{}, false},
		{"x/5", Rate{}, false},
		{"5", Rate{}, false},
		{"1/-5", Rate{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRate(tc.in)
			if (err == nil) != tc.ok || tc.ok && got.Rate != tc.want {
				t.Errorf("parseRate(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestNextVisitNever(t *testing.T) {
	f := Parse([]byte("Robot-version: 3.0\n\nUser-agent: *\nVisit-time: 0100-0200\nTime-forbidden: 0000-0300\n"))
	if got := f.Group("a").NextVisit(utc("2024-01-01T00:00:00Z")); !got.IsZero() {
		t.Errorf("NextVisit = %v, want zero (never)", got)
	}
}

// The parsed form is shared by many goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	f := Parse([]byte("User-agent: a\nDisallow: /a\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /star\nRequest-rate: 1/5\n"))
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("bot%c", 'a'+i%26)
			for j := range 200 {
				g := f.Group(agent)
				if g.Allowed("/star/x") {
					errs <- agent + ": /star/x allowed"
					return
				}
				_ = g.Explain(fmt.Sprintf("/p%d", j))
				_, _ = g.RequestRate(time.Unix(int64(j), 0))
				if f.Allowed("a", "/a") {
					errs <- "a: /a allowed"
					return
				}
				_ = f.Problems()
				_ = f.Sitemaps()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Matching a prebuilt group allocates nothing for ordinary paths.
func TestAllowedDoesNotAllocate(t *testing.T) {
	f := Parse([]byte("User-agent: *\nDisallow: /a/*/b$\nAllow: /a\nDisallow: /\n"))
	g := f.Group("x")
	n := testing.AllocsPerRun(100, func() {
		g.Allowed("/a/x/b")
		f.Allowed("x", "/search?q=1")
	})
	if n != 0 {
		t.Errorf("%v allocations per match", n)
	}
}

func TestProductToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Courtesy-Bot/1.0 (+https://example.org)", "Courtesy-Bot"},
		{"  foo bar", "foo"},
		{"/x", ""},
	}
	for _, tc := range tests {
		if got := ProductToken(tc.in); got != tc.want {
			t.Errorf("ProductToken(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
