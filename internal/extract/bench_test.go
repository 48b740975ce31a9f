package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"
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
