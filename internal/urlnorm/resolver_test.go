package urlnorm

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// resolverOptions are the option sets the differential tests try: the
// zero value, the crawler's and the dedup defaults, every switch that
// touches path, query, fragment or host, and limits the fast path must
// check as the general one does.
var resolverOptions = []Options{
	{},
	CrawlDefaults(),
	DedupDefaults(),
	{KeepFragment: true, LowercasePath: true, CollapseSlashes: true, WWW: WWWAdd, SortQuery: true},
	{RemoveUserinfo: true, TrailingSlash: SlashRemove, WWW: WWWRemove},
	{MaxLength: 40},
	{MaxLength: 4 * 2048, RemoveIndexFiles: true, IndexFiles: []string{}},
	{MaxLength: -1},
}

// sameResolve fails t unless r.Resolve(ref) and ResolveBoth give the same
// URL (every field), text and error.
func sameResolve(t *testing.T, r *Resolver, ref string) {
	t.Helper()
	fu, fs, ferr := r.Resolve(ref)
	su, ss, serr := ResolveBoth(r.Base(), ref, r.o)
	if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
		t.Fatalf("base %v ref %q opts %+v: error %v, want %v", r.Base(), ref, r.o, ferr, serr)
	}
	if fs != ss || !reflect.DeepEqual(fu, su) {
		t.Fatalf("base %v ref %q opts %+v:\n got %q %#v\nwant %q %#v", r.Base(), ref, r.o, fs, fu, ss, su)
	}
}

// resolverRefs are references of every shape, the common ones first.
var resolverRefs = []string{
	"/news/a/page-3.html", "page-4.html", "./page-5.html", "../b/page-6.html",
	"../../docs/c/page-7.html#s2", "/", "?page=2&sort=price", "?", "#top", "",
	"http://Site-0001.test:80/news/a/page-1.html", "HTTP://site-0001.TEST/x?y#z",
	"https://other.example:443/a/./b/../c", "//upload.example.org/thumb/a.jpg",
	"/wiki/Caf%C3%A9", "/wiki/Copper_(element)", "/a/index.html", "/a/index.html?x",
	"/dir/?C=N;O=D", "/a;jsessionid=0A1B/b.jsp?PHPSESSID=2&x=1", "a?b?c#d#e",
	"/Ü ö", " /trim ", "/a\tb", `\a\b`, "http:foo", "http:/x", "http:///x.com/",
	"mailto:a@b", "javascript:void(0)", "ftp://h/", "//", "///x", "http://", "http://?x",
	"http://u:p@h.com/", "http://@h.com/x", "http://h.com:99999/", "http://a b/",
	"http://[::1]:80/", "http://127.1/", "http://xn--bcher-kva.example/", "http://bücher.example/",
	"100%", "/%2e%2E/x", "/a/%2F/b", "a:b", "1a:b", "/a/b/../../../..", "/./", ".", "..",
	"/" + strings.Repeat("x", 50), "?" + strings.Repeat("q", 50),
	"http://www.example.co.uk/", "http://example.com./a", "/a//b//c/",
	// Authorities that differ only in case share a cache entry.
	"http://SITE-0000.test/x", "http://site-0000.TEST:80/y", "http://Site-0001.TEST:80/z",
	"http://[2001:DB8::1]/", "http://[2001:db8::1]/", "http://XN--BCHER-KVA.example/", "http://xn--bcher-kva.EXAMPLE/",
	"http://H.COM/", "http://h.com:080/", "http://h.com:8O/", "http://WWW.Example.co.uk/", "http://Www.example.CO.UK/",
}

// resolverBases are bases of every shape, some made by hand as url.Parse
// would never return them.
func resolverBases(t testing.TB) []*url.URL {
	t.Helper()
	var out []*url.URL
	for _, s := range []string{
		"http://site-0000.test/", "http://site-0000.test/news/a/page-2.html",
		"https://en.example.org/wiki/Copper_lantern", "HTTP://WWW.Example.COM:80/a/b/c?q=1",
		"http://h.com/a/b?q", "http://h.com", "http://u:p@h.com/a/", "https://[2001:db8::1]:8443/x/y",
		"http://h.com/a%20b/c", "http://h.com/a b/c", "http://h.com/(x)/y", "ftp://h.com/",
		"http://h.com/a/b?", "http://bad host/", "http://h.com:99999/",
	} {
		u, err := url.Parse(s)
		if err != nil {
			continue // "http://bad host/": net/url refuses it, the hand-made one below does not
		}
		out = append(out, u)
	}
	out = append(out,
		&url.URL{Scheme: "http", Host: "bad host", Path: "/x"},
		&url.URL{Scheme: "http", Host: "h.com/evil", Path: "/x"},
		&url.URL{Scheme: "http", Host: "h.com", Path: "x/y"},
		&url.URL{Scheme: "http", Host: "h.com", Path: "/a?b#c"},
		&url.URL{Scheme: "http", Host: "h.com", Path: `/a\b/c`},
		&url.URL{Scheme: "http", Host: "h.com", Path: "/a", RawQuery: "x#y"},
		&url.URL{Scheme: "http", Host: "", Path: "/a"},
		&url.URL{Scheme: "http", Host: "h.com", Opaque: "x"},
		&url.URL{Scheme: "http", Host: "h.com\t", Path: "/"},
	)
	return out
}

func TestResolverMatchesResolveBoth(t *testing.T) {
	t.Parallel()
	for _, base := range resolverBases(t) {
		for _, o := range resolverOptions {
			// One resolver for every reference, so the authority cache
			// is exercised with hits, misses and evictions.
			r := NewResolver(base, o)
			for _, ref := range resolverRefs {
				sameResolve(t, r, ref)
			}
		}
	}
}

// TestResolverFastPathTaken checks that the common references do take the
// fast path (the differential tests alone would pass if it never did).
func TestResolverFastPathTaken(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("http://site-0000.test/news/a/page-2.html")
	cases := []struct {
		name, ref string
		fast      bool
	}{
		{"absolute path", "/news/a/page-3.html", true},
		{"relative path", "page-4.html", true},
		{"dot relative", "../b/page-6.html#s1", true},
		{"query only", "?page=2", true},
		{"absolute URL mixed case", "http://Site-0001.test:80/news/a/page-1.html", true},
		{"network path", "//upload.example.org/a.jpg", true},
		{"percent", "/wiki/Caf%C3%A9", true},
		{"space", "/a b", false},
		{"backslash", `\a`, false},
		{"empty", "", false},
		{"fragment only", "#x", false},
		{"mailto", "mailto:a@b", false},
		{"scheme without slashes", "http:foo", false},
		{"userinfo", "http://u@h.com/", false},
		{"bad host", "http://a_b..c/", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewResolver(base, CrawlDefaults())
			if _, ok := r.resolveFast(c.ref); ok != c.fast {
				t.Errorf("resolveFast(%q) ok = %v, want %v", c.ref, ok, c.fast)
			}
			sameResolve(t, r, c.ref)
		})
	}
}

func TestResolverReset(t *testing.T) {
	t.Parallel()
	a, _ := url.Parse("http://a.example/x/y")
	b, _ := url.Parse("https://b.example/p/q")
	r := NewResolver(a, Options{})
	if _, s, _ := r.Resolve("z"); s != "http://a.example/x/z" {
		t.Fatalf("before Reset: %q", s)
	}
	r.Reset(b, CrawlDefaults())
	if r.Base() != b {
		t.Fatalf("Base() = %v, want %v", r.Base(), b)
	}
	if _, s, _ := r.Resolve("z/index.html"); s != "https://b.example/p/z/" {
		t.Fatalf("after Reset: %q", s)
	}
	// The zero Resolver has a nil base: absolute URLs only, as ResolveBoth.
	var zero Resolver
	if _, s, err := zero.Resolve("HTTP://H.example/x"); err != nil || s != "http://h.example/x" {
		t.Fatalf("zero Resolver, absolute URL: %q, %v", s, err)
	}
	if _, _, err := zero.Resolve("/x"); err == nil {
		t.Fatal("zero Resolver resolved a relative reference")
	}
}

// FuzzFastResolve compares Resolver.Resolve (fast path where it applies)
// with ResolveBoth (the general path) on random bases and references,
// under every option set of resolverOptions: the same URL field for
// field, the same text, the same error. Two references go through one
// Resolver, so the authority cache is part of what is compared. Seeds
// also hold the WHATWG URL tests with an http(s) base
// (testdata/urltestdata.json).
func FuzzFastResolve(f *testing.F) {
	bases := []string{"http://site-0000.test/news/a/page-2.html", "https://en.example.org/wiki/Copper_lantern",
		"HTTP://WWW.Example.COM:80/a/b/c?q=1", "http://h.com", "http://[::1]/a/"}
	for i, ref := range resolverRefs {
		f.Add(bases[i%len(bases)], ref, resolverRefs[(i*7+3)%len(resolverRefs)], uint8(i))
	}
	for i, c := range loadWPT(f) {
		if c.Base != nil && wptHTTP(*c.Base) {
			f.Add(*c.Base, c.Input, resolverRefs[i%len(resolverRefs)], uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, rawBase, ref1, ref2 string, oi uint8) {
		base, err := url.Parse(rawBase)
		if err != nil {
			base = &url.URL{Scheme: "http", Host: rawBase, Path: "/"}
		}
		r := NewResolver(base, resolverOptions[int(oi)%len(resolverOptions)])
		sameResolve(t, r, ref1)
		sameResolve(t, r, ref2)
		sameResolve(t, r, ref1)
	})
}

// removeDotSegmentsSplit is the split-and-join removeDotSegments this
// package had before the one-buffer version: the reference it must match.
func removeDotSegmentsSplit(path string) string {
	if !hasDotSegment(path) {
		return path
	}
	segs := strings.Split(path, "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs[1:] {
		last := i == len(segs)-2
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/")
}

func TestRemoveDotSegmentsMatchesSplit(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"/", "/.", "/..", "/./", "/../", "/a/./b", "/a/../b", "/a/b/..", "/a/b/.", "/a/b/../..",
		"/a/b/../../..", "//..", "//../x", "/a//../b", "/.../x", "/..a/b", "/a/.b/c", "/a/b/./../c/",
		"/" + strings.Repeat("seg/", 40) + strings.Repeat("../", 20) + "x",
		"/" + strings.Repeat("x", 300) + "/../y/./z", "/" + strings.Repeat("../", 50),
		"/news/a/../../docs/c/page-7.html", "/a/b/c/./../../g", "/mid/content=5/../6",
	} {
		if got, want := removeDotSegments(p), removeDotSegmentsSplit(p); got != want {
			t.Errorf("removeDotSegments(%q) = %q, want %q", p, got, want)
		}
	}
}

// FuzzRemoveDotSegments holds the one-buffer removeDotSegments to the
// split-and-join reference on any absolute path.
func FuzzRemoveDotSegments(f *testing.F) {
	for _, s := range []string{"/a/./b/../c", "//..", "/../../x/", "/a/b/.", "/.../."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		p = "/" + p
		if got, want := removeDotSegments(p), removeDotSegmentsSplit(p); got != want {
			t.Fatalf("removeDotSegments(%q) = %q, want %q", p, got, want)
		}
	})
}
