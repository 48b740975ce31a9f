package robots

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// addConformanceSeeds adds every robots body of the conformance set (and
// the REGP listings) with one of its URLs.
func addConformanceSeeds(f *testing.F) {
	c := loadConformance(f)
	for _, tc := range c.AllowCases {
		body := []byte(nil)
		if tc.Robots != nil {
			body = []byte(*tc.Robots)
		} else if b, err := base64.StdEncoding.DecodeString(tc.RobotsBase64); err == nil {
			body = b
		}
		f.Add(body, tc.Agent, RequestPath(tc.URL))
	}
	names, _ := filepath.Glob(filepath.Join("testdata", "regp", "*.txt"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b, "infoseeker", "/info/hot/x")
		}
	}
}

func FuzzParse(f *testing.F) {
	addConformanceSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		file := Parse(body)
		lines := 1 + strings.Count(string(body), "\n") + strings.Count(string(body), "\r")
		for _, p := range file.Problems() {
			if p.Line < 0 || p.Line > lines {
				t.Fatalf("problem line %d beyond %d lines", p.Line, lines)
			}
		}
		for _, a := range []string{agent, "", "*"} {
			g := file.Group(a)
			if !g.Allowed("/robots.txt") {
				t.Fatalf("/robots.txt disallowed for %q", a)
			}
			first := g.Allowed(path)
			if again := file.Allowed(a, path); again != first {
				t.Fatalf("Allowed not deterministic for %q %q", a, path)
			}
			if d := g.Explain(path); d.Allowed != first {
				t.Fatalf("Explain %+v disagrees with Allowed %v", d, first)
			}
			_, _ = g.CrawlDelayFor(path)
			_ = g.MinInterval(path, time.Unix(1700000000, 0))
			_ = g.NextVisit(time.Unix(1700000000, 0))
			_ = g.IndexPage(path)
			_, _ = g.ChangeFreq(path)
		}
		_ = file.Sitemaps()
		_ = file.Extensions()
		_ = ParseDirectives(string(body))
		_ = XRobotsTag([]string{string(body)}, agent)
	})
}

// reference matches with a regular expression built from the pattern's
// segments: an independent implementation of `*` and `$`.
func reference(p *pattern, path string) bool {
	var b strings.Builder
	b.WriteString(`^`)
	if p.fold {
		b.WriteString(`(?i)`)
	}
	if !p.wild {
		b.WriteString(regexp.QuoteMeta(p.lit))
	} else {
		for i, s := range p.segs {
			if i > 0 {
				b.WriteString(`.*`)
			}
			b.WriteString(regexp.QuoteMeta(s))
		}
	}
	if p.anchored {
		b.WriteString(`$`)
	}
	return regexp.MustCompile(b.String()).MatchString(path)
}

func FuzzMatch(f *testing.F) {
	seeds := [][2]string{
		{"/fish", "/fish.html"}, {"/*.php$", "/a.php"}, {"/*fish*.php", "/a/fishy/b.php"},
		{"/a%2A", "/a*"}, {"/%7Emak", "/~mak"}, {"/ツ", "/%E3%83%84"}, {"*", "/"},
		{"/a$b$", "/a$b"}, {"/a***b", "/axb"}, {"/%", "/%25"}, {"", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, pat, path string, fold bool) {
		if len(pat) > 200 || len(path) > 400 {
			return // keep the regexp reference cheap
		}
		p := compilePattern(pat, fold)
		norm := normalizePath(path)
		got := p.match(norm)
		if want := reference(&p, norm); got != want {
			t.Fatalf("match(%q, %q) = %v, reference %v (norm %q)", pat, path, got, want, norm)
		}
		if normalizePath(norm) != norm {
			t.Fatalf("normal form not stable: %q -> %q", norm, normalizePath(norm))
		}
		// A pattern without wildcards matches its own text as a path.
		if !strings.ContainsAny(pat, "*$") && pat != "" && !p.match(normalizePath(pat)) {
			t.Fatalf("pattern %q does not match itself", pat)
		}
	})
}
