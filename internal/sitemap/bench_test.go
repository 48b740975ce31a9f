package sitemap

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkParse parses a full 50,000-entry urlset (about 6 MB) with every
// field set, as a large site would serve it.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range DefaultMaxEntries {
		fmt.Fprintf(&buf, "<url><loc>https://www.example.com/news/2026/%d.html</loc><lastmod>2026-11-22T09:30:00+00:00</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>\n", i)
	}
	buf.WriteString("</urlset>")
	data := buf.Bytes()
	base := mustURL(b, "https://www.example.com/sitemap.xml")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sm, err := Parse(bytes.NewReader(data), base, Options{})
		if err != nil || len(sm.URLs) != DefaultMaxEntries {
			b.Fatalf("%d URLs, err %v", len(sm.URLs), err)
		}
	}
}
