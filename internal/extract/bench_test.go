package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// BenchmarkHTML extracts a typical 20 KB news page (testdata/bench-20k.html:
// 90 links, 6 images, scripts, 40 paragraphs).
func BenchmarkHTML(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "bench-20k.html"))
	if err != nil {
		b.Fatal(err)
	}
	base := mustURL(b, "https://www.example.com/news/2026/11/22/day.html")
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"defaults", Options{Agent: "courtesy"}},
		{"all-options", Options{Agent: "courtesy", Images: true, Forms: true, ScriptURLs: true, TextURLs: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := HTML(base, body, "text/html; charset=utf-8", c.o)
				if err != nil || len(p.Links) < 50 {
					b.Fatalf("links %d, err %v", len(p.Links), err)
				}
			}
		})
	}
}

// crawlOptions are the options the crawler passes (internal/crawl
// worker.go): its agent and urlnorm.CrawlDefaults.
func crawlOptions() Options {
	return Options{Agent: "courtesy", Normalize: urlnorm.CrawlDefaults()}
}

// realWorldPages are the hand-written pages shaped like common sites, with
// the URL each pretends to come from.
var realWorldPages = []struct{ name, file, base string }{
	{"wiki", "wiki-article.html", "https://en.example.org/wiki/Copper_lantern"},
	{"shop", "shop-listing.html", "https://shop.example.de/kategorie/schuhe/index.html"},
	{"blog", "blog-post.html", "https://blog.example.com/2026/11/22/lantern-wicks.html"},
}

// BenchmarkPage extracts pages with the crawler's options (cpu-ns/op is
// the process CPU time per page, see reportCPU). "testweb" is
// the crawl benchmark's page: each op is one page of 40 taken
// from testweb's generator (about 2,100 bytes and 15 links each), cycled;
// the others are the real-world-shaped pages of testdata/.
func BenchmarkPage(b *testing.B) {
	o := crawlOptions()
	b.Run("testweb", func(b *testing.B) {
		pages := testwebPages(b, 4, 10)
		n := 0
		for _, p := range pages {
			n += len(p.body)
		}
		b.SetBytes(int64(n / len(pages)))
		b.ReportAllocs()
		i := 0
		cpu := cpuclock.Process()
		for b.Loop() {
			p := &pages[i%len(pages)]
			i++
			pg, err := HTML(p.base, p.body, p.contentType, o)
			if err != nil || len(pg.Links) < 5 {
				b.Fatalf("%s: links %d, err %v", p.base, len(pg.Links), err)
			}
		}
		reportCPU(b, cpu)
	})
	for _, c := range realWorldPages {
		b.Run(c.name, func(b *testing.B) {
			body, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				b.Fatal(err)
			}
			base := mustURL(b, c.base)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			cpu := cpuclock.Process()
			for b.Loop() {
				pg, err := HTML(base, body, "text/html; charset=utf-8", o)
				if err != nil || len(pg.Links) < 5 {
					b.Fatalf("links %d, err %v", len(pg.Links), err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU adds the process CPU time per op since start ("cpu-ns/op",
// garbage collection included): the figure the crawl benchmark watches, and steadier
// than ns/op on a machine other jobs share.
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(cpuclock.Process()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkTokenizerOnly is the floor: the x/net/html tokenizer reading
// every tag name and attribute of the same page, with no extraction.
func BenchmarkTokenizerOnly(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "bench-20k.html"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		z := html.NewTokenizer(bytes.NewReader(body))
		for z.Next() != html.ErrorToken {
			if _, more := z.TagName(); more {
				for more {
					_, _, more = z.TagAttr()
				}
			}
		}
	}
}
