package extract

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

func TestRefreshURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content, want string
		ok                  bool
	}{
		{"standard", "5; url=http://x/a", "http://x/a", true},
		{"upper URL no space", "0;URL=/b", "/b", true},
		{"single quotes", "0; url='/c d'", "/c d", true},
		{"double quotes", `1; URL="/e"`, "/e", true},
		{"comma separator", "3, url=/f", "/f", true},
		{"spaces around equals", "3; url = /g", "/g", true},
		{"no delay", "url=/h", "/h", true},
		{"no url keyword", "7; /i", "/i", true},
		{"fractional delay", "0.5; url=/j", "/j", true},
		{"unbalanced trailing quote", "1;url=/k'", "/k", true},
		{"unterminated quote", "1;url='/l", "/l", true},
		{"delay only", "30", "", false},
		{"empty", "", "", false},
		{"only separator", "5;", "", false},
		{"url keyword empty", "5; url=", "", false},
		{"url as path word", "5; urlpath.html", "urlpath.html", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := refreshURL([]byte(c.content))
			if string(got) != c.want || ok != c.ok {
				t.Errorf("refreshURL(%q) = %q, %v; want %q, %v", c.content, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestRedirect(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://example.com/dir/old")
	cases := []struct {
		name, location, want string
		wantErr              bool
	}{
		{"absolute", "https://example.com/new", "https://example.com/new", false},
		{"relative path", "new/", "http://example.com/dir/new/", false},
		{"directory slash (seed 001 §3.4)", "/dir/", "http://example.com/dir/", false},
		{"fragment dropped", "/x#y", "http://example.com/x", false},
		{"whitespace trimmed", "  /t \r\n", "http://example.com/t", false},
		{"controls trimmed", "\x00\x1f /t\x01", "http://example.com/t", false},
		{"fragment after a control: the page itself", "\x01#top", "", true},
		{"scheme relative", "//other.example/", "http://other.example/", false},
		{"ftp refused", "ftp://example.com/f", "", true},
		{"empty", "", "", true},
		{"bad host", "http://a b/", "", true},
		{"too long", "/" + strings.Repeat("a", DefaultMaxURLLength), "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Redirect(base, c.location)
			if c.wantErr {
				var re *RedirectError
				if !errors.As(err, &re) {
					t.Fatalf("Redirect(%q) = %v, %v; want a *RedirectError", c.location, l.URL, err)
				}
				if !strings.HasPrefix(err.Error(), "extract: ") {
					t.Errorf("error %q lacks the package prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Redirect(%q): %v", c.location, err)
			}
			if l.URL.String() != c.want || l.Hop != HopRedirect || l.Tag != "http" || l.Attr != "location" {
				t.Errorf("Redirect(%q) = %+v (%s), want %s hop R", c.location, l, l.URL, c.want)
			}
		})
	}
	if _, err := Redirect(nil, "/x"); !errors.Is(err, ErrBase) {
		t.Errorf("nil base: err = %v, want ErrBase", err)
	}
}

func TestHTMLErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, base string
		o          Options
		want       string
	}{
		{"relative base", "/x", Options{}, "base URL"},
		{"ftp base", "ftp://example.com/", Options{}, "base URL"},
		{"negative MaxLinks", "http://example.com/", Options{MaxLinks: -1}, "MaxLinks"},
		{"negative MaxText", "http://example.com/", Options{MaxText: -5}, "MaxText"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := HTML(mustURL(t, c.base), []byte("<a href=x>"), "", c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "extract: ") {
				t.Errorf("err = %v, want extract: …%s…", err, c.want)
			}
		})
	}
	if _, err := HTML(nil, nil, "", Options{}); !errors.Is(err, ErrBase) {
		t.Errorf("nil base: %v", err)
	}
}

func TestHTMLLimits(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://example.com/")
	var many strings.Builder
	for i := range 50 {
		fmt.Fprintf(&many, "<a href=/p%d>link number %d</a>\n", i, i)
	}
	long := "<a href=/" + strings.Repeat("x", 300) + ">long</a><a href=/short>s</a>"
	cases := []struct {
		name      string
		body      string
		o         Options
		links     int
		problem   string
		count     int
		truncated bool
	}{
		{"max links", many.String(), Options{MaxLinks: 10}, 10, ProblemTooManyLinks, 40, false},
		{"max url length", long, Options{MaxURLLength: 100}, 1, ProblemURLTooLong, 1, false},
		{"max bytes", many.String(), Options{MaxBytes: 100}, 3, ProblemTruncated, 1, true},
		{"duplicates are not counted against the limit", strings.Repeat("<a href=/same>x</a>", 100) + "<a href=/other>", Options{MaxLinks: 2}, 2, "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := HTML(base, []byte(c.body), "", c.o)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, p, c.o.withDefaults())
			if len(p.Links) != c.links {
				t.Errorf("%d links, want %d", len(p.Links), c.links)
			}
			if p.Truncated != c.truncated {
				t.Errorf("Truncated = %v", p.Truncated)
			}
			if c.problem == "" {
				if len(p.Problems) != 0 {
					t.Errorf("problems %+v, want none", p.Problems)
				}
				return
			}
			if len(p.Problems) != 1 || p.Problems[0].Kind != c.problem || p.Problems[0].Count != c.count {
				t.Errorf("problems %+v, want %s x%d", p.Problems, c.problem, c.count)
			}
		})
	}
}

func TestHTMLTextBounds(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://example.com/")
	body := "<title>" + strings.Repeat("tïtle ", 400) + "</title><body><a href=/a>" +
		strings.Repeat("änchor ", 100) + "</a>" + strings.Repeat("wörd ", 5000) + "<script>var x = 'not text';</script><style>p{}</style>"
	o := Options{MaxText: 1000, MaxAnchorText: 50}
	p, err := HTML(base, []byte(body), "text/html; charset=utf-8", o)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p, o.withDefaults())
	if strings.Contains(p.Text, "not text") || strings.Contains(p.Text, "p{}") {
		t.Errorf("script or style in text: %q", p.Text)
	}
	if !strings.HasPrefix(p.Text, "änchor änchor") || len(p.Text) < 990 {
		t.Errorf("text %d bytes, starts %q", len(p.Text), p.Text[:min(40, len(p.Text))])
	}
	if len(p.Links) != 1 || !strings.HasPrefix(p.Links[0].Text, "änchor") || len(p.Links[0].Text) > 50 {
		t.Errorf("links %+v", p.Links)
	}
	if len(p.Title) > 200 || !strings.HasPrefix(p.Title, "tïtle tïtle") {
		t.Errorf("title %d bytes: %q", len(p.Title), p.Title)
	}
}

func TestHTMLNested(t *testing.T) {
	t.Parallel()
	// Each unclosed <title> or nested <noscript> costs a re-read: the
	// bounds keep a hostile page linear in practice.
	base := mustURL(t, "http://example.com/")
	cases := []struct {
		name  string
		body  string
		links int
	}{
		{"unclosed title then link", "<title>x<a href=/a>a</a>", 1},
		{"unclosed style then link", "<style>p{}<a href=/a>a</a>", 1},
		{"many unclosed titles", strings.Repeat("<title>", 100) + "<a href=/a>", 0},
		{"noscript in noscript", "<noscript><noscript><a href=/deep>d</a></noscript><a href=/one>o</a></noscript>", 1},
		{"closed textarea hides markup", "<textarea><a href=/in-textarea></textarea>", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := HTML(base, []byte(c.body), "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Links) != c.links {
				t.Errorf("%d links (%+v), want %d", len(p.Links), p.Links, c.links)
			}
		})
	}
}

func TestHTMLNormalizeOption(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://example.com/dir/page.html")
	crawl := urlnorm.CrawlDefaults()
	cases := []struct {
		name string
		body string
		o    urlnorm.Options
		want string
	}{
		{"zero options keep index file", `<a href="sub/index.html">x</a>`, urlnorm.Options{}, "http://example.com/dir/sub/index.html"},
		{"crawl options drop index file", `<a href="sub/index.html">x</a>`, crawl, "http://example.com/dir/sub/"},
		{"crawl options strip session id", `<a href="/a?PHPSESSID=0123456789abcdef0123456789abcdef&x=1">x</a>`, crawl, "http://example.com/a?x=1"},
		// The base is resolved without the heuristics (a base of
		// /other/ would give /other/?q=1); the link keeps its query, so
		// index-file removal does not apply to it.
		{"base not crawl-normalized", `<base href="/other/index.html"><a href="?q=1">x</a>`, crawl, "http://example.com/other/index.html?q=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := HTML(base, []byte(c.body), "", Options{Normalize: c.o})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Links) != 1 {
				t.Fatalf("%d links (%+v), want 1", len(p.Links), p.Links)
			}
			l := p.Links[0]
			if l.Abs != c.want || l.URL.String() != c.want {
				t.Errorf("Abs %q, URL %q; want %q", l.Abs, l.URL, c.want)
			}
		})
	}
}

// TestHTMLNoText: NoText collects no text but says whether there was
// some, as Text would.
func TestHTMLNoText(t *testing.T) {
	base := mustURL(t, "http://example.com/")
	for _, tc := range []struct {
		name, body string
		has        bool
	}{
		{"words", "<p>hello</p>", true},
		{"only spaces", "<p> \t\n</p><br>", false},
		{"script and title only", "<title>t</title><script>var x</script><style>p{}</style>", false},
		{"non-ASCII letter", "<p>\u00e9</p>", true},
		{"non-breaking space only", "<p>\u00a0\u2003</p>", false},
		{"invalid UTF-8 only", "<p>\xff\xfe</p>", false},
		{"text in noscript only", "<noscript>fallback</noscript>", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := HTML(base, []byte(tc.body), "text/html; charset=utf-8", Options{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := HTML(base, []byte(tc.body), "text/html; charset=utf-8", Options{NoText: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.Text != "" || p.HasText != tc.has || full.HasText != tc.has || (full.Text != "") != tc.has {
				t.Errorf("NoText: Text %q HasText %v; full: Text %q HasText %v; want HasText %v", p.Text, p.HasText, full.Text, full.HasText, tc.has)
			}
		})
	}
}

// TestHTMLQueryEncoding: on a page in a legacy encoding the query of a
// link is percent-encoded in that encoding, as browsers send it (WHATWG
// URL); the path stays UTF-8, and UTF-8 pages are unchanged. A character
// the encoding lacks becomes "&#N;", percent-encoded.
func TestHTMLQueryEncoding(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://example.com/dir/page.html")
	cases := []struct {
		name, ct, body, want string
	}{
		{"shift_jis header", "text/html; charset=Shift_JIS", "<a href=\"/\x93\xfa?q=\x93\xfa\x96\x7b#f\x93\xfa\">x</a>", "http://example.com/%E6%97%A5?q=%93%FA%96%7B"},
		{"shift_jis meta", "text/html", "<meta charset=shift_jis><a href=\"s?q=\x93\xfa\">x</a>", "http://example.com/dir/s?q=%93%FA"},
		{"latin1", "text/html; charset=iso-8859-1", "<a href=\"/caf\xe9?q=caf\xe9&x=1\">x</a>", "http://example.com/caf%C3%A9?q=caf%E9&x=1"},
		{"windows-1252 unencodable entity", "text/html; charset=windows-1252", "<a href=\"/?q=&#26085;\">x</a>", "http://example.com/?q=%26%2326085%3B"},
		{"utf-8 unchanged", "text/html; charset=utf-8", "<a href=\"/?q=caf\xc3\xa9\">x</a>", "http://example.com/?q=caf%C3%A9"},
		{"ascii query untouched", "text/html; charset=iso-8859-1", "<a href=\"/?q=%E9\">x</a>", "http://example.com/?q=%E9"},
		// No declaration, an ASCII first kilobyte, UTF-8 after it: the
		// page is UTF-8 (windows-1252 would give /caf%C3%83%C2%A9).
		{"utf-8 past the sniffed kilobyte", "text/html", "<!--" + strings.Repeat("-", 1100) + "--><a href=\"/caf\xc3\xa9\">x</a>", "http://example.com/caf%C3%A9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := HTML(base, []byte(c.body), c.ct, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Links) != 1 {
				t.Fatalf("%d links (%+v), want 1", len(p.Links), p.Links)
			}
			if l := p.Links[0]; l.Abs != c.want || l.URL.String() != c.want {
				t.Errorf("Abs %q, URL %q; want %q", l.Abs, l.URL, c.want)
			}
		})
	}
}
