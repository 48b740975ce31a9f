package urlnorm

import (
	"errors"
	"net/url"
	"testing"
)

// FuzzNormalize checks, for every option set used by the crawler, that no
// input panics, that errors are typed, and that a result is idempotent,
// parses with net/url to the same text, and matches Normalize's *url.URL;
// and that IRILength stays within its bounds.
// Seeds: the inputs of the table tests, the http(s) inputs of the WHATWG
// URL tests (testdata/urltestdata.json) and testdata/fuzz/FuzzNormalize.
func FuzzNormalize(f *testing.F) {
	for _, c := range loadWPT(f) {
		if wptHTTP(c.Input) {
			f.Add(c.Input)
		}
	}
	for _, s := range []string{
		"http://www.site.com/dir/./index.html",
		"HTTP://WWW.Example.COM:80/a/../b/./Stra%c3%9fe%20x/Ü ö/index.html#top",
		"http://apache.clix.pt/foundation/press/kit/?N=D",
		"http://h.com/a/b.jsp;jsessionid=0A1B2C?x=1&PHPSESSID=2",
		"http://[2001:DB8::1]:443/",
		"https://0x7f.1/%zz?%",
		`http:\\h.com\a\..\b?c\d#e`,
		"http://u:p@ss@www.www.h.com/index.html/index.html/",
		"http://bücher。example/",
		"http://xn--bcher-kva.example/",
		"mailto:a@b",
	} {
		f.Add(s)
	}
	opts := []Options{{}, CrawlDefaults(), DedupDefaults(), {KeepFragment: true, LowercasePath: true, CollapseSlashes: true, WWW: WWWAdd}}
	f.Fuzz(func(t *testing.T, raw string) {
		// A character of the IRI takes 1 to 12 bytes (%F0%9F%98%80).
		if n := IRILength(raw); n > len(raw) || 12*n < len(raw) {
			t.Fatalf("IRILength(%q) = %d for %d bytes", clip(raw), n, len(raw))
		}
		for _, o := range opts {
			s, err := NormalizeString(raw, o)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrScheme) {
					t.Fatalf("NormalizeString(%q): untyped error %v", clip(raw), err)
				}
				continue
			}
			again, err := NormalizeString(s, o)
			if err != nil || again != s {
				t.Fatalf("not idempotent with %+v: %q -> %q -> %q, %v", o, clip(raw), clip(s), clip(again), err)
			}
			u, err := Normalize(raw, o)
			if err != nil || u.String() != s {
				t.Fatalf("Normalize(%q).String() = %v, %v; want %q", clip(raw), u, err, clip(s))
			}
			pu, err := url.Parse(s)
			if err != nil || pu.String() != s {
				t.Fatalf("url.Parse(%q) = %v, %v", clip(s), pu, err)
			}
		}
		base, _ := url.Parse("http://h.com/a/b?q")
		if s, err := ResolveString(base, raw, CrawlDefaults()); err == nil {
			if again, err := NormalizeString(s, CrawlDefaults()); err != nil || again != s {
				t.Fatalf("Resolve result %q not normalized: %q, %v", clip(s), clip(again), err)
			}
		}
	})
}
