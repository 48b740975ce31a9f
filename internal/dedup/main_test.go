package dedup

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

func readGz(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Real documentation pages that the old fingerprint put at distance 0
// (testdata/docs/README.md) are far apart now, and so are two pages of
// one template; updated copies of the pages (a dated line added) mostly
// stay close (simhash's guarantee is probabilistic: docs/dedup.md has the
// rate over two whole documentation trees).
func TestRealDocsAreNotNearDuplicates(t *testing.T) {
	paths, err := filepath.Glob("testdata/docs/*.html.gz")
	if err != nil || len(paths) < 7 {
		t.Fatalf("testdata: %d pages, %v", len(paths), err)
	}
	hashes := make([]uint64, len(paths))
	updates := []string{"Updated 2026-11-25 10:42.", "This page was viewed 4711 times.", "Last modified on Tuesday, 25 November."}
	near, copies := 0, 0
	for i, p := range paths {
		b := readGz(t, p)
		h, words := Fingerprint(b)
		if words < MinWords {
			t.Fatalf("%s: %d words of main content", p, words)
		}
		hashes[i] = h
		// The same page updated: a dated line in its content.
		s := string(b)
		at := strings.Index(s, "</h1>")
		if at < 0 {
			at = strings.Index(s, "</h2>")
		}
		for _, line := range updates {
			upd := s[:at+5] + "<p>" + line + "</p>" + s[at+5:]
			copies++
			if h2, _ := Fingerprint([]byte(upd)); Hamming(h, h2) <= DefaultDistance {
				near++
			}
		}
	}
	if near < copies*8/10 {
		t.Errorf("%d of %d updated copies within %d bits", near, copies, DefaultDistance)
	}
	for i := range paths {
		for j := i + 1; j < len(paths); j++ {
			if d := Hamming(hashes[i], hashes[j]); d <= DefaultDistance+2 {
				t.Errorf("%s and %s: %d bits apart", filepath.Base(paths[i]), filepath.Base(paths[j]), d)
			}
		}
	}
}

func TestMainText(t *testing.T) {
	tests := []struct {
		name, html string
		want       string // words that must be there
		not        string // words that must not
	}{
		{"main element", `<html><head><title>T</title><style>x{}</style></head><body><nav>Home Menu</nav><main><h1>Alpha</h1><p>beta</p></main><footer>Copyright</footer></body></html>`,
			"alpha beta", "home menu copyright"},
		{"role main", `<div class="related">Prev Next</div><div role="main"><div><p>gamma</p></div><p>delta</p></div><div class="footer">Foot</div>`,
			"gamma delta", "prev next foot"},
		{"article without main", `<header>Brand</header><article>epsilon</article><aside>Popular</aside>`,
			"epsilon", "brand popular"},
		{"no landmarks: body minus boilerplate", `<div class="navheader">Up Home</div><div class="chapter"><p>zeta eta</p></div><div class="navfooter">Prev</div><script>var x</script>`,
			"zeta eta", "up home prev var"},
		{"main inside skipped region is skipped", `<nav><main>iota</main></nav><p>kappa</p>`, "kappa", "iota"},
		{"unclosed elements", `<main><p>lambda<div>mu`, "lambda mu", ""},
		{"nested same-name skip", `<div class="sidebar"><div>nu</div>xi</div><p>omicron</p>`, "omicron", "nu xi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Fields(strings.ToLower(MainText([]byte(tc.html))))
			has := map[string]bool{}
			for _, w := range got {
				has[w] = true
			}
			for _, w := range strings.Fields(tc.want) {
				if !has[w] {
					t.Errorf("main text %q lacks %q", got, w)
				}
			}
			for _, w := range strings.Fields(tc.not) {
				if has[w] {
					t.Errorf("main text %q has %q", got, w)
				}
			}
		})
	}
}

// On testweb's realistic profile, whose pages share a site's boilerplate,
// no two distinct pages of a site are near-duplicates, while the pages of
// neardup.test (one text, a changing stamp) all are.
func TestTestwebPages(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 1, Sites: 2, PagesPerSite: 80, Profile: testweb.ProfileRealistic, SlowDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := web.Handler()
	fetch := func(host, path string) []byte {
		t.Helper()
		rec := newRecorder()
		h.ServeHTTP(rec, mustRequest(t, "http://"+host+path))
		return rec.body.Bytes()
	}
	for _, s := range web.Sites()[:2] {
		type fp struct {
			url string
			h   uint64
		}
		var fps []fp
		for _, u := range web.Reachable(s) {
			res := web.Lookup(s.Host, strings.TrimPrefix(u, "http://"+s.Host))
			if res.DupOf != "" || res.Delay > 0 || res.Transient > 0 {
				continue // exact copies (found by digest), slow and flaky pages
			}
			b := fetch(s.Host, strings.TrimPrefix(u, "http://"+s.Host))
			f, words := Fingerprint(b)
			if words < MinWords {
				t.Fatalf("%s: %d words", u, words)
			}
			fps = append(fps, fp{u, f})
		}
		if len(fps) < 50 {
			t.Fatalf("%s: only %d pages", s.Host, len(fps))
		}
		for i := range fps {
			for j := i + 1; j < len(fps); j++ {
				if d := Hamming(fps[i].h, fps[j].h); d <= DefaultDistance {
					t.Errorf("%s and %s: %d bits apart", fps[i].url, fps[j].url, d)
				}
			}
		}
	}
	first, _ := Fingerprint(fetch("neardup.test", "/item/0"))
	for i := 1; i <= 30; i++ {
		f, words := Fingerprint(fetch("neardup.test", "/item/"+itoa(i)))
		if d := Hamming(first, f); d > DefaultDistance || words < MinWords {
			t.Errorf("neardup.test/item/%d: %d bits from /item/0, %d words", i, d, words)
		}
	}
}

func FuzzMainText(f *testing.F) {
	f.Add([]byte(`<main><p>a 1 b</p></main><nav>x</nav>`))
	f.Add([]byte(`<div role=main><div class=nav><div>x</div></div>y</div>`))
	f.Add([]byte("<svg><script>\x00</svg>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		text := MainText(b)
		if len(text) > 2*MaxMainText+2 {
			t.Fatalf("main text of %d bytes", len(text))
		}
		h, words := Fingerprint(b)
		if h2, w2 := Fingerprint(b); h2 != h || w2 != words {
			t.Fatal("not deterministic")
		}
		if words == 0 && h != 0 {
			t.Fatalf("no words hashed to %x", h)
		}
	})
}

type recorder struct {
	hdr  http.Header
	body bytes.Buffer
}

func newRecorder() *recorder                    { return &recorder{hdr: http.Header{}} }
func (r *recorder) Header() http.Header         { return r.hdr }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

func mustRequest(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func itoa(i int) string { return strconv.Itoa(i) }

// BenchmarkFingerprint fingerprints a page of the realistic profile (about
// 30 KB of HTML, boilerplate included): main-content extraction plus the
// weighted simhash. BenchmarkSimhashOfMainText is the simhash alone, for
// the split.
func BenchmarkFingerprint(b *testing.B) {
	page := realisticPage(b)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Fingerprint(page)
	}
}

func BenchmarkSimhashOfMainText(b *testing.B) {
	text := MainText(realisticPage(b))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Simhash(text)
	}
}

func realisticPage(b testing.TB) []byte {
	web, err := testweb.New(testweb.Config{Seed: 1, Sites: 1, PagesPerSite: 200, Plain: true, Profile: testweb.ProfileRealistic})
	if err != nil {
		b.Fatal(err)
	}
	// The page nearest the median size.
	var best []byte
	for _, u := range web.Reachable(web.Sites()[0])[:40] {
		rec := newRecorder()
		req, _ := http.NewRequest("GET", u, nil)
		web.Handler().ServeHTTP(rec, req)
		if d := rec.body.Len() - testweb.RealMedianBytes; best == nil || abs(d) < abs(len(best)-testweb.RealMedianBytes) {
			best = bytes.Clone(rec.body.Bytes())
		}
	}
	return best
}

func abs(x int) int { return max(x, -x) }
