package extract

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden returns the content of testdata/golden/name; with -update it
// writes got there instead and reports false (nothing to compare).
func golden(t *testing.T, name, got string) (string, bool) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return "", false
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create)", err)
	}
	return string(want), true
}

// dump renders a page as stable text for golden files.
func dump(p *Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "base: %s\n", p.Base)
	fmt.Fprintf(&b, "charset: %s\n", p.Charset)
	fmt.Fprintf(&b, "title: %q\n", p.Title)
	fmt.Fprintf(&b, "lang: %q\n", p.Lang)
	fmt.Fprintf(&b, "description: %q\n", p.Description)
	if p.Canonical != nil {
		fmt.Fprintf(&b, "canonical: %s\n", p.Canonical)
	}
	fmt.Fprintf(&b, "robots: %s\n", robotsString(p.Robots))
	fmt.Fprintf(&b, "structured: %+v\n", p.Structured)
	fmt.Fprintf(&b, "truncated: %v\n", p.Truncated)
	fmt.Fprintf(&b, "text: %q\n", p.Text)
	for _, l := range p.Links {
		fmt.Fprintf(&b, "link %s %s/%s rel=%q nofollow=%v text=%q %s\n", l.Hop, l.Tag, l.Attr, l.Rel, l.NoFollow, l.Text, l.URL)
	}
	for _, pr := range p.Problems {
		fmt.Fprintf(&b, "problem %s x%d %q\n", pr.Kind, pr.Count, pr.Example)
	}
	return b.String()
}

// robotsString lists the directives that are set, so that golden files do
// not change when package robots grows new fields.
func robotsString(d Directives) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{
		{d.NoIndex, "noindex"}, {d.NoFollow, "nofollow"}, {d.NoArchive, "noarchive"},
		{d.NoSnippet, "nosnippet"}, {d.NoImageIndex, "noimageindex"}, {d.NoTranslate, "notranslate"},
	} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if !d.UnavailableAfter.IsZero() {
		f = append(f, "unavailable_after="+d.UnavailableAfter.UTC().Format(time.RFC3339))
	}
	return strings.Join(f, ",")
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return u
}

func TestHTMLGolden(t *testing.T) {
	t.Parallel()
	all := Options{Agent: "courtesy", Images: true, Forms: true, ScriptURLs: true, TextURLs: true}
	cases := []struct {
		name, file, base, contentType string
		o                             Options
	}{
		{"every tag, defaults", "every-tag.html", "http://example.com/dir/page.html", "text/html", Options{}},
		{"every tag, all options", "every-tag.html", "http://example.com/dir/page.html", "text/html; charset=utf-8", all},
		{"base href relative", "base-href.html", "http://example.com/a/b/page.html", "", Options{}},
		{"base href unusable", "base-bad.html", "http://example.com/a/page.html", "", Options{}},
		{"meta refresh variants", "refresh.html", "http://example.com/r/", "", Options{}},
		{"malformed", "malformed.html", "http://example.com/m/", "text/html", Options{}},
		{"meta robots for agent", "meta-robots.html", "http://example.com/", "", Options{Agent: "courtesy"}},
		{"meta robots no agent", "meta-robots.html", "http://example.com/", "", Options{}},
		{"noscript scripts structured", "noscript.html", "https://example.com/", "", all},
		{"noscript defaults", "noscript.html", "https://example.com/", "", Options{}},
		{"latin1 by meta charset", "latin1.html", "http://example.com/", "text/html", Options{}},
		{"shift_jis by header", "shiftjis.html", "http://example.jp/", "text/html; charset=Shift_JIS", Options{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := HTML(mustURL(t, c.base), body, c.contentType, c.o)
			if err != nil {
				t.Fatalf("HTML: %v", err)
			}
			checkInvariants(t, p, c.o.withDefaults())
			got := dump(p)
			if want, ok := golden(t, strings.ReplaceAll(c.name, " ", "-")+".golden", got); ok && got != want {
				t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, want)
			}
		})
	}
}

// checkInvariants asserts what every page must satisfy, whatever the input.
func checkInvariants(t *testing.T, p *Page, o Options) {
	t.Helper()
	if len(p.Links) > o.MaxLinks {
		t.Errorf("%d links, limit %d", len(p.Links), o.MaxLinks)
	}
	seen := map[linkKey]bool{}
	for _, l := range p.Links {
		if !httpURL(l.URL) {
			t.Errorf("link %q is not absolute http(s)", l.URL)
			continue
		}
		s := l.URL.String()
		if l.Abs != s {
			t.Errorf("link Abs %q, URL.String() %q", l.Abs, s)
		}
		if l.URL.Fragment != "" || strings.Contains(s, "#") {
			t.Errorf("link %q keeps a fragment", s)
		}
		if len(s) > o.MaxURLLength {
			t.Errorf("link of %d bytes, limit %d", len(s), o.MaxURLLength)
		}
		if len(l.Text) > o.MaxAnchorText {
			t.Errorf("anchor text of %d bytes, limit %d", len(l.Text), o.MaxAnchorText)
		}
		if seen[linkKey{s, l.Hop}] {
			t.Errorf("duplicate link %s %s", l.Hop, s)
		}
		seen[linkKey{s, l.Hop}] = true
		switch l.Hop {
		case HopLink, HopEmbed, HopRedirect, HopSpeculative:
		default:
			t.Errorf("bad hop %q", l.Hop)
		}
	}
	if len(p.Text) > o.MaxText {
		t.Errorf("text of %d bytes, limit %d", len(p.Text), o.MaxText)
	}
	if len(p.Title) > 4*o.MaxAnchorText || len(p.Description) > 4*o.MaxAnchorText {
		t.Errorf("title %d / description %d bytes over limit", len(p.Title), len(p.Description))
	}
	if !p.Robots.UnavailableAfter.IsZero() && p.Robots.UnavailableAfter.Year() < 1 {
		t.Errorf("bad unavailable_after %v", p.Robots.UnavailableAfter)
	}
}
