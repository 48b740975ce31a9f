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
