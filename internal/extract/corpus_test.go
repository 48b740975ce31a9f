package extract

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// corpusOptions are the option sets the corpus is extracted with: the
// crawler's, the zero value, and everything on.
var corpusOptions = []struct {
	name string
	o    Options
}{
	{"crawl", Options{Agent: "courtesy", Normalize: urlnorm.CrawlDefaults()}},
	{"zero", Options{}},
	{"all", Options{Agent: "courtesy", Images: true, Forms: true, ScriptURLs: true, TextURLs: true, Normalize: urlnorm.DedupDefaults()}},
}

// TestTestwebCorpusGolden pins the whole output (dump) of every page of a
// small testweb, hazard sites included, under three option sets: one line
// per page and option set with a digest of the dump. It guards the fast
// paths of extraction (seen in crawl profiles) against any change of output; the
// digests were recorded with the extractor before those fast paths. On a
// mismatch the current dump is printed; -update rewrites the file.
func TestTestwebCorpusGolden(t *testing.T) {
	t.Parallel()
	pages := crawlTestweb(t, testweb.Config{Seed: 1, Sites: 4, PagesPerSite: 30}, 12)
	if len(pages) < 100 {
		t.Fatalf("only %d pages", len(pages))
	}
	var got strings.Builder
	dumps := map[string]string{}
	for _, p := range pages {
		for _, c := range corpusOptions {
			pg, err := HTML(p.base, p.body, p.contentType, c.o)
			if err != nil {
				t.Fatalf("%s: %v", p.base, err)
			}
			d := dump(pg) + urlFields(pg)
			key := fmt.Sprintf("%s %s", c.name, p.base)
			dumps[key] = d
			fmt.Fprintf(&got, "%s %x\n", key, sha256.Sum256([]byte(d)))
		}
	}
	want, ok := golden(t, "testweb-corpus.golden", got.String())
	if !ok {
		return
	}
	gl, wl := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
	if len(gl) != len(wl) {
		t.Errorf("%d lines, golden has %d", len(gl), len(wl))
	}
	bad := 0
	for i := 0; i < min(len(gl), len(wl)); i++ {
		if gl[i] == wl[i] {
			continue
		}
		bad++
		if bad <= 3 {
			key := gl[i][:strings.LastIndexByte(gl[i], ' ')]
			t.Errorf("line %d: got %q, golden %q; dump now:\n%s", i+1, gl[i], wl[i], dumps[key])
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pages differ from testweb-corpus.golden", bad, len(gl))
	}
}

// urlFields renders the net/url fields of every URL of p: two URLs with
// the same text can differ there (Path against RawPath, ForceQuery), and
// the crawler reads them.
func urlFields(p *Page) string {
	var b strings.Builder
	one := func(what string, u *url.URL) {
		if u == nil {
			return
		}
		fmt.Fprintf(&b, "%s %q %v %q %q %q %v %q %q %v %q\n", what, u.Scheme, u.User, u.Host, u.Path, u.RawPath,
			u.ForceQuery, u.RawQuery, u.Fragment, u.OmitHost, u.Opaque)
	}
	one("base", p.Base)
	one("canonical", p.Canonical)
	for _, l := range p.Links {
		one("link", l.URL)
		if l.Abs != l.URL.String() {
			fmt.Fprintf(&b, "abs %q\n", l.Abs)
		}
	}
	return b.String()
}

// TestRealWorldGolden pins the full output of the real-world-shaped pages
// of the benchmark under the crawler's options.
func TestRealWorldGolden(t *testing.T) {
	t.Parallel()
	for _, c := range realWorldPages {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			o := crawlOptions()
			p, err := HTML(mustURL(t, c.base), body, "text/html; charset=utf-8", o)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, p, o.withDefaults())
			got := dump(p)
			if want, ok := golden(t, "realworld-"+c.name+".golden", got); ok && got != want {
				t.Errorf("realworld-%s: got\n%s\nwant\n%s", c.name, got, want)
			}
		})
	}
}
