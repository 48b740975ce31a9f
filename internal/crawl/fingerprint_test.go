package crawl

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/dedup"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// extractFingerprint is what the worker does with an HTML page: extract
// its links with a dedup.Content as token sink, then fingerprint it; fast
// reports whether the fingerprint came from the extractor's tokens.
func extractFingerprint(t testing.TB, body []byte, contentType string) (h uint64, words int, fast bool) {
	t.Helper()
	base, _ := url.Parse("http://fp.test/dir/page.html")
	content := dedup.NewContent()
	defer content.Release()
	page, err := extract.HTML(base, body, contentType, extract.Options{Normalize: urlnorm.CrawlDefaults(), Tokens: content})
	if err != nil {
		t.Fatal(err)
	}
	h, words = fingerprint(page, content, body)
	fast = page.Charset == "utf-8" && len(body) < dedup.MaxTokenized
	return h, words, fast
}

// checkFingerprints compares, page by page, the crawler's one-pass
// fingerprint with dedup.Fingerprint's own pass, and returns how many
// pages took the one-pass path.
func checkFingerprints(t *testing.T, name string, pages map[string][]byte, contentType string) int {
	t.Helper()
	if len(pages) == 0 {
		t.Fatalf("%s: no pages", name)
	}
	fast := 0
	for p, body := range pages {
		want, wantWords := dedup.Fingerprint(body)
		got, gotWords, f := extractFingerprint(t, body, contentType)
		if got != want || gotWords != wantWords {
			t.Errorf("%s %s: one pass gives %016x (%d words), dedup.Fingerprint %016x (%d words)", name, p, got, gotWords, want, wantWords)
		}
		if f {
			fast++
		}
	}
	return fast
}

// readPages reads the files under dir whose names end in one of exts,
// gunzipping .gz files.
func readPages(t *testing.T, dir string, exts ...string) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	dir, err := filepath.EvalSymlinks(dir) // Debian's python3.11-doc/html is a link
	if err != nil {
		t.Fatalf("%v: run scripts/install-test-deps (Debian's python3.11-doc and postgresql-doc-15)", err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if strings.HasSuffix(p, ".gz") {
					z, err := gzip.NewReader(bytes.NewReader(b))
					if err != nil {
						return err
					}
					if b, err = io.ReadAll(z); err != nil {
						return err
					}
				}
				pages[p] = b
				return nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// TestFingerprintOnePassMatches: the fingerprint the crawler computes from
// the extractor's tokens is exactly dedup.Fingerprint, on the dedup and
// extract test pages, on realistic testweb pages, and on every page of
// Debian's Python and PostgreSQL HTML documentation (installed by
// scripts/install-test-deps; the test fails without them).
func TestFingerprintOnePassMatches(t *testing.T) {
	t.Run("testdata", func(t *testing.T) {
		pages := readPages(t, "../dedup/testdata", ".html.gz")
		for p, b := range readPages(t, "../extract/testdata", ".html") {
			pages[p] = b
		}
		if len(pages) < 20 {
			t.Fatalf("%d test pages, want the dedup and extract ones", len(pages))
		}
		// As served without a charset (the extractor sniffs it: pages
		// in legacy charsets, or with no <meta charset> and ASCII in
		// their first 1,024 bytes, are decoded, and take the two-pass
		// path) and as declared UTF-8.
		if fast := checkFingerprints(t, "sniffed", pages, "text/html"); fast == 0 {
			t.Errorf("no page of %d in one pass", len(pages))
		}
		if fast := checkFingerprints(t, "utf-8", pages, "text/html; charset=utf-8"); fast != len(pages) {
			t.Errorf("%d of %d UTF-8 pages in one pass", fast, len(pages))
		}
	})
	t.Run("realistic", func(t *testing.T) {
		pages := map[string][]byte{}
		for i, b := range realisticPages(t) {
			pages["page "+string(rune('A'+i%26))+string(rune('a'+i/26))] = b
		}
		if fast := checkFingerprints(t, "realistic", pages, "text/html; charset=utf-8"); fast != len(pages) {
			t.Errorf("%d of %d pages in one pass", fast, len(pages))
		}
	})
	for _, dir := range []string{"/usr/share/doc/python3.11-doc/html", "/usr/share/doc/postgresql-doc-15/html"} {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			pages := readPages(t, dir, ".html")
			if len(pages) < 500 {
				t.Fatalf("%s: %d pages", dir, len(pages))
			}
			if fast := checkFingerprints(t, dir, pages, "text/html"); fast < len(pages)*9/10 {
				t.Errorf("%d of %d pages in one pass", fast, len(pages))
			}
		})
	}
}

// FuzzFingerprintOnePass: on any bytes declared UTF-8, the one-pass
// fingerprint is dedup.Fingerprint.
func FuzzFingerprintOnePass(f *testing.F) {
	for _, s := range []string{
		"<main><p>one two three</p></main><nav>x y</nav>",
		"<article>a b</article><div role=main>c d e</div>",
		"<title>t</title><noscript><main>hidden</main></noscript>body text",
		"<div class=sidebar><div>x</div></div>text <my-el role=main>in</my-el>",
		"<style>unterminated <main>a b c",
		"<p>caf\xc3\xa9 1.2.3</p><script>if (a<b) x</script>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantWords := dedup.Fingerprint(b)
		got, gotWords, _ := extractFingerprint(t, b, "text/html; charset=utf-8")
		if got != want || gotWords != wantWords {
			t.Errorf("one pass %016x (%d words), dedup.Fingerprint %016x (%d words)", got, gotWords, want, wantWords)
		}
	})
}
