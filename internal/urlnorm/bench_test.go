package urlnorm

import (
	"net/url"
	"testing"
)

// benchURL is a typical crawl URL: mixed-case host, default port, a dot
// segment, a query with a session id.
const benchURL = "http://WWW.Example.com:80/news/./2024/world-europe-40713813.html?page=2&PHPSESSID=d41d8cd98f00b204e9800998ecf8427e"

// BenchmarkNormalize compares Normalize with CrawlDefaults against the
// floor of url.Parse + String in one run; "x-floor" is the ratio of the
// two ns/op (run the whole benchmark, so that the floor runs first).
func BenchmarkNormalize(b *testing.B) {
	var floorNs float64
	b.Run("floor=url.Parse+String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u, err := url.Parse(benchURL)
			if err != nil {
				b.Fatal(err)
			}
			_ = u.String()
		}
		floorNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	o := CrawlDefaults()
	b.Run("Normalize+String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			u, err := Normalize(benchURL, o)
			if err != nil {
				b.Fatal(err)
			}
			_ = u.String()
		}
		if floorNs > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floorNs, "x-floor")
		}
	})
	b.Run("NormalizeString", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NormalizeString(benchURL, o); err != nil {
				b.Fatal(err)
			}
		}
		if floorNs > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floorNs, "x-floor")
		}
	})
}

// benchRefs are the references of a testweb page (seed 1, site-0000.test
// /about/c/page-46.html): root-relative, ../ relative, absolute URLs with
// mixed-case hosts and default ports, fragments.
var benchRefs = []string{
	"/", "../../", "http://site-0000.tesT:80/shop/c/page-47.html", "/shop/c/page-23.html",
	"http://site-0000.test/docs/a/page-49.html#s3", "http://siTe-0000.TeSt:80/news/c/page-8.html#s1",
	"http://siTe-0000.TeSt:80/news/b/page-40.html", "../../news/b/page-28.html#s2", "../../news/c/page-8.html",
	"http://site-0000.test/news/b/page-16.html", "/private/page-46.html", "http://sIte-0001.tESt/about/c/page-34.html",
	"http://site-0003.test:80/shop/c/page-11.html",
}

// BenchmarkResolve resolves the links of one page with the crawler's
// options: one op is the whole page (13 references), through ResolveBoth
// (the general path) and through one Resolver (its fast path).
func BenchmarkResolve(b *testing.B) {
	base, err := url.Parse("http://site-0000.test/about/c/page-46.html")
	if err != nil {
		b.Fatal(err)
	}
	o := CrawlDefaults()
	b.Run("ResolveBoth", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ref := range benchRefs {
				if _, _, err := ResolveBoth(base, ref, o); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("Resolver", func(b *testing.B) {
		b.ReportAllocs()
		var r Resolver
		for b.Loop() {
			r.Reset(base, o)
			for _, ref := range benchRefs {
				if _, _, err := r.Resolve(ref); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
