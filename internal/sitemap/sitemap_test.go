package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return u
}

// dump renders a sitemap as stable text for golden files.
func dump(sm *Sitemap) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: %s\ntruncated: %v\n", sm.Kind, sm.Truncated)
	for _, e := range sm.URLs {
		lm := "-"
		if !e.LastMod.IsZero() {
			lm = e.LastMod.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(&b, "url %s lastmod=%s changefreq=%q priority=%v type=%q srcloc=%q otherhost=%v\n",
			e.Loc, lm, e.ChangeFreq, e.Priority, e.Type, e.SrcLoc, e.OtherHost)
	}
	for _, s := range sm.Sitemaps {
		fmt.Fprintf(&b, "sitemap %s\n", s)
	}
	for _, p := range sm.Problems {
		ex := p.Example
		if len(ex) > 60 {
			ex = ex[:60] + "…"
		}
		fmt.Fprintf(&b, "problem %s x%d line %d %q\n", p.Kind, p.Count, p.Line, ex)
	}
	return b.String()
}

// checkInvariants asserts what every result must satisfy.
func checkInvariants(t *testing.T, sm *Sitemap, o Options) {
	t.Helper()
	o = o.withDefaults()
	if n := len(sm.URLs) + len(sm.Sitemaps); n > o.MaxEntries {
		t.Errorf("%d entries, limit %d", n, o.MaxEntries)
	}
	if sm.Kind != KindIndex && len(sm.Sitemaps) > 0 {
		t.Errorf("%s with %d child sitemaps", sm.Kind, len(sm.Sitemaps))
	}
	if sm.Kind == KindIndex && len(sm.URLs) > 0 {
		t.Errorf("index with %d URLs", len(sm.URLs))
	}
	check := func(what, s string) {
		t.Helper()
		u, err := url.Parse(s)
		if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			t.Errorf("%s %q is not an absolute http(s) URL", what, s)
		}
		if len(s) > o.MaxURLLength {
			t.Errorf("%s of %d bytes, limit %d", what, len(s), o.MaxURLLength)
		}
	}
	for _, e := range sm.URLs {
		check("loc", e.Loc)
		if e.SrcLoc != "" {
			check("srcloc", e.SrcLoc)
		}
		if e.Priority != -1 && (e.Priority < 0 || e.Priority > 1 || math.IsNaN(e.Priority)) {
			t.Errorf("priority %v", e.Priority)
		}
		switch e.Type {
		case "", TypeData, TypeList, TypeOther:
		default:
			t.Errorf("type %q", e.Type)
		}
		if e.ChangeFreq != "" && !changeFreqs[e.ChangeFreq] {
			t.Errorf("changefreq %q", e.ChangeFreq)
		}
	}
	for _, s := range sm.Sitemaps {
		check("sitemap", s)
	}
	for _, p := range sm.Problems {
		if p.Count < 1 || len(p.Example) > 200 {
			t.Errorf("problem %+v", p)
		}
	}
}

func TestParseGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, base string
		o                Options
	}{
		{"urlset", "urlset.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"urlset gzip", "urlset.xml.gz", "http://www.example.com/sitemap.xml.gz", Options{}},
		{"urlset gzip without extension", "urlset.xml.gz", "http://www.example.com/sitemap", Options{}},
		{"regp type and srcloc", "regp.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"index", "index.xml", "http://www.example.com/sitemap_index.xml", Options{}},
		{"rss feed", "rss.xml", "http://www.example.com/feed.rss", Options{}},
		{"atom feed", "atom.xml", "http://www.example.com/feed.atom", Options{}},
		{"rss 1.0 feed", "rss1.xml", "http://www.example.com/feed.rdf", Options{}},
		{"text", "text.txt", "http://www.example.com/sitemap.txt", Options{}},
		{"text gzip", "text.gz", "http://www.example.com/sitemap.txt.gz", Options{}},
		{"bad values", "bad-values.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"broken xml", "broken.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"truncated xml", "truncated.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"latin1 encoding", "latin1.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"bom and blank lines", "bom.xml", "http://www.example.com/sitemap.xml", Options{}},
		{"gzip bad crc", "bad-crc.xml.gz", "http://www.example.com/sitemap.xml.gz", Options{}},
		{"corrupt gzip", "corrupt.xml.gz", "http://www.example.com/sitemap.xml.gz", Options{}},
		{"decompression bomb", "bomb.txt.gz", "http://www.example.com/sitemap.xml.gz", Options{}},
		{"max entries", "urlset.xml", "http://www.example.com/sitemap.xml", Options{MaxEntries: 2}},
		{"max bytes", "urlset.xml", "http://www.example.com/sitemap.xml", Options{MaxBytes: 700}},
		{"max url length", "urlset.xml", "http://www.example.com/sitemap.xml", Options{MaxURLLength: 40}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sm, err := Parse(f, mustURL(t, c.base), c.o)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			checkInvariants(t, sm, c.o)
			got := dump(sm)
			golden := filepath.Join("testdata", "golden", strings.ReplaceAll(c.name, " ", "-")+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create)", err)
			}
			if got != string(want) {
				t.Errorf("%s: got\n%s\nwant\n%s", golden, got, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	base := "http://www.example.com/sitemap.xml"
	html, err := os.ReadFile(filepath.Join("testdata", "html.xml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, base string
		in         io.Reader
		o          Options
		want       error  // errors.Is target, or nil to check text
		text       string // substring of the error
		partial    bool   // a partial result comes with the error
	}{
		{"nil-like relative base", "/sitemap.xml", strings.NewReader("http://x/"), Options{}, ErrBase, "", false},
		{"ftp base", "ftp://x/s", strings.NewReader("http://x/"), Options{}, ErrBase, "", false},
		{"negative entries", base, strings.NewReader(""), Options{MaxEntries: -1}, nil, "MaxEntries", false},
		{"negative bytes", base, strings.NewReader(""), Options{MaxBytes: -1}, nil, "MaxBytes", false},
		{"html page", base, bytes.NewReader(html), Options{}, ErrFormat, "root element <html>", false},
		{"xhtml page", base, strings.NewReader(`<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`), Options{}, ErrFormat, "<html>", false},
		{"empty", base, strings.NewReader(""), Options{}, ErrFormat, "empty", false},
		{"binary", base, strings.NewReader("%PDF-1.4\n\x00\x01\x02 stream"), Options{}, ErrFormat, "binary", false},
		{"white space only", base, strings.NewReader(" \n\t "), Options{}, ErrFormat, "empty", false},
		{"xml without root", base, strings.NewReader(`<?xml version="1.0"?><!-- nothing -->`), Options{}, ErrFormat, "", false},
		{"bad gzip header", base, bytes.NewReader([]byte{0x1f, 0x8b, 0, 0, 0}), Options{}, nil, "sitemap: bad gzip header", false},
		{"reader fails", base, io.MultiReader(strings.NewReader("<urlset><url><loc>http://www.example.com/a</loc></url>"), errReader{}), Options{}, errBroken, "sitemap: read", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sm, err := Parse(c.in, mustURL(t, c.base), c.o)
			if err == nil {
				t.Fatalf("no error; result %+v", sm)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.text) || !strings.HasPrefix(err.Error(), "sitemap: ") {
				t.Errorf("err = %q, want sitemap: …%s…", err, c.text)
			}
			if (sm != nil) != c.partial {
				t.Errorf("result %v, want partial=%v", sm, c.partial)
			}
			if c.partial && len(sm.URLs) != 1 {
				t.Errorf("partial result has %d URLs, want 1", len(sm.URLs))
			}
		})
	}
	if _, err := Parse(strings.NewReader(""), nil, Options{}); !errors.Is(err, ErrBase) {
		t.Errorf("nil base: %v", err)
	}
}

var errBroken = errors.New("connection reset")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

func TestParseLastMod(t *testing.T) {
	t.Parallel()
	cet := time.FixedZone("", 3600)
	cases := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"1997", time.Date(1997, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"1997-07", time.Date(1997, 7, 1, 0, 0, 0, 0, time.UTC), true},
		{"1997-07-16", time.Date(1997, 7, 16, 0, 0, 0, 0, time.UTC), true},
		{"1997-07-16T19:20+01:00", time.Date(1997, 7, 16, 19, 20, 0, 0, cet), true},
		{"1997-07-16T19:20:30+01:00", time.Date(1997, 7, 16, 19, 20, 30, 0, cet), true},
		{"1997-07-16T19:20:30.45+01:00", time.Date(1997, 7, 16, 19, 20, 30, 450e6, cet), true},
		{"1997-07-16T19:20:30Z", time.Date(1997, 7, 16, 19, 20, 30, 0, time.UTC), true},
		{" 1997-07-16 19:20:30 ", time.Date(1997, 7, 16, 19, 20, 30, 0, time.UTC), true},
		{"1997-07-16T19:20", time.Date(1997, 7, 16, 19, 20, 0, 0, time.UTC), true},
		{"16/07/1997", time.Time{}, false},
		{"1997-13-01", time.Time{}, false},
		{"", time.Time{}, false},
		{strings.Repeat("1", 100), time.Time{}, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := parseLastMod(c.in)
			if ok != c.ok || !got.Equal(c.want) {
				t.Errorf("parseLastMod(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestParsePriority(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.5", 0.5, true}, {" 1.0 ", 1, true}, {"0", 0, true}, {"1", 1, true},
		{"1.01", -1, false}, {"-0.1", -1, false}, {"NaN", -1, false}, {"Inf", -1, false},
		{"high", -1, false}, {"", -1, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := parsePriority(c.in)
			if ok != c.ok || got != c.want {
				t.Errorf("parsePriority(%q) = %v, %v", c.in, got, ok)
			}
		})
	}
}

func TestCleanURL(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"plain", "http://x/a", "http://x/a"},
		{"trimmed", " \n http://x/a \t\n", "http://x/a"},
		{"seed 002 line break", "http://x/newsItem.do?id=\n  1", "http://x/newsItem.do?id=1"},
		{"crlf and spaces before break", "http://x/a  \r\n   b", "http://x/ab"},
		{"tab inside", "http://x/a\tb", "http://x/ab"},
		{"inner space kept", "http://x/a b", "http://x/a b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := cleanURL(c.in); got != c.want {
				t.Errorf("cleanURL(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestProtocolLimits checks the entry limit: the sitemaps.org default
// (50,001 generated entries, about 3 MB of XML: 50,000 kept) and its
// edges with a small limit.
func TestProtocolLimits(t *testing.T) {
	t.Parallel()
	gen := func(n int, index bool) []byte {
		var b bytes.Buffer
		zw := &b // gzip is tested by the golden files; keep this fast
		outer, inner := "urlset", "url"
		if index {
			outer, inner = "sitemapindex", "sitemap"
		}
		fmt.Fprintf(zw, `<?xml version="1.0" encoding="UTF-8"?><%s xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, outer)
		for i := range n {
			fmt.Fprintf(zw, "<%s><loc>http://www.example.com/p/%d</loc></%s>\n", inner, i, inner)
		}
		fmt.Fprintf(zw, "</%s>", outer)
		return b.Bytes()
	}
	base := mustURL(t, "http://www.example.com/sitemap.xml")
	cases := []struct {
		name      string
		n         int
		index     bool
		o         Options
		kept      int
		truncated bool
	}{
		{"50001 urls, default limit", 50_001, false, Options{}, 50_000, true},
		{"limit exactly met", 10, false, Options{MaxEntries: 10}, 10, false},
		{"limit passed by one", 11, false, Options{MaxEntries: 10}, 10, true},
		{"index limit passed by one", 11, true, Options{MaxEntries: 10}, 10, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sm, err := Parse(bytes.NewReader(gen(c.n, c.index)), base, c.o)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, sm, c.o)
			if got := len(sm.URLs) + len(sm.Sitemaps); got != c.kept || sm.Truncated != c.truncated {
				t.Errorf("kept %d truncated %v; want %d %v (problems %+v)", got, sm.Truncated, c.kept, c.truncated, sm.Problems)
			}
			if c.truncated && (len(sm.Problems) != 1 || sm.Problems[0].Kind != ProblemTooManyEntries) {
				t.Errorf("problems %+v", sm.Problems)
			}
		})
	}
}

// TestBombSmallLimit shows the decompression guard with a small limit: a
// few KB of gzip that expand to 8 MiB stop at the limit (the padding line
// is also reported as url-too-long).
func TestBombSmallLimit(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, "http://www.example.com/first\n")
	zw.Write(bytes.Repeat([]byte(" "), 8<<20))
	io.WriteString(zw, "http://www.example.com/after\n")
	zw.Close()
	sm, err := Parse(&b, mustURL(t, "http://www.example.com/s.txt.gz"), Options{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if sm.Kind != KindText || len(sm.URLs) != 1 || !sm.Truncated || len(sm.Problems) != 2 || sm.Problems[1].Kind != ProblemTooLarge {
		t.Errorf("got %s", dump(sm))
	}
}

func TestDoubleGzip(t *testing.T) {
	t.Parallel()
	wrap := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		zw.Write(b)
		zw.Close()
		return out.Bytes()
	}
	xml := []byte(`<urlset><url><loc>http://www.example.com/twice</loc></url></urlset>`)
	cases := []struct {
		name   string
		layers int
		urls   int
		err    bool
	}{
		{"plain", 0, 1, false},
		{"one layer", 1, 1, false},
		{"two layers", 2, 1, false},
		{"three layers is not a sitemap", 3, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := xml
			for range c.layers {
				data = wrap(data)
			}
			sm, err := Parse(bytes.NewReader(data), mustURL(t, "http://www.example.com/s.xml.gz"), Options{})
			if (err != nil) != c.err {
				t.Fatalf("err = %v", err)
			}
			if err == nil && len(sm.URLs) != c.urls {
				t.Errorf("got %s", dump(sm))
			}
		})
	}
}

// TestRelativeLocSlips covers the two readings of a loc without a scheme
// that are not paths: an entity left unexpanded, and a host name first.
func TestRelativeLocSlips(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://www.example.com/sitemap.xml")
	cases := []struct {
		in             string
		entity, hosted bool
	}{
		{"&secret;", true, false},
		{"/a?x=1&y=2", false, false},
		{"/a?x=1&y;", true, false},
		{"/a?x=&;", false, false},
		{"www.example.com/", false, true},
		{"WWW.EXAMPLE.COM", false, true},
		{"www.other.org/x?q", false, true},
		{"www.html", false, false},
		{"relative/page.html", false, false},
		{"example.com.html", false, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := entityRef(c.in); got != c.entity {
				t.Errorf("entityRef(%q) = %v", c.in, got)
			}
			if got := hostFirst(c.in, base); got != c.hosted {
				t.Errorf("hostFirst(%q) = %v", c.in, got)
			}
		})
	}
}

// TestLocAsEntryText: a URL given as the text of <sitemap> (no <loc>) is
// kept, and one longer than the field bound is dropped whole, never cut.
func TestLocAsEntryText(t *testing.T) {
	t.Parallel()
	in := "<sitemapindex><sitemap>http://www.example.com/" + strings.Repeat("a", 300) +
		"</sitemap><sitemap>\n http://www.example.com/ok \n</sitemap></sitemapindex>"
	sm, err := Parse(strings.NewReader(in), mustURL(t, "http://www.example.com/s.xml"), Options{MaxURLLength: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(sm.Sitemaps) != 1 || sm.Sitemaps[0] != "http://www.example.com/ok" ||
		len(sm.Problems) != 1 || sm.Problems[0].Kind != ProblemURLTooLong {
		t.Errorf("got %s", dump(sm))
	}
}
