package crawl

import (
	"bytes"
	"crypto/sha1"
	"io"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/dedup"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/html"
)

// realisticPages returns the bodies of the 200 pages among the first of a
// testweb realistic site (heavy-tailed sizes, 20-60 links, boilerplate).
func realisticPages(tb testing.TB) [][]byte {
	tb.Helper()
	web, err := testweb.New(testweb.Config{Seed: 5, Sites: 1, PagesPerSite: 200, Plain: true, NoExternal: true, Profile: testweb.ProfileRealistic})
	if err != nil {
		tb.Fatal(err)
	}
	s := web.Sites()[0]
	h := web.Handler()
	var out [][]byte
	for _, u := range web.Reachable(s) {
		pu, _ := url.Parse(u)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", pu.RequestURI(), nil)
		req.Host = pu.Host
		h.ServeHTTP(rec, req)
		if rec.Code == 200 {
			out = append(out, rec.Body.Bytes())
		}
		if len(out) == 40 {
			break
		}
	}
	if len(out) == 0 {
		tb.Fatal("no page")
	}
	return out
}

// BenchmarkPageFloors measures, per realistic page, what each stage of
// the crawl costs alone: the floors next to which docs/performance.md puts
// the crawl's profile. tokenize is x/net/html reading every tag and
// attribute; extract is the crawler's parse (links resolved and
// normalized, text); fingerprint the near-duplicate simhash; sha1 one
// digest; gzip1 one level-1 gzip member of the body.
func BenchmarkPageFloors(b *testing.B) {
	pages := realisticPages(b)
	var total int64
	for _, p := range pages {
		total += int64(len(p))
	}
	base, _ := url.Parse("http://site-0000.test/docs/a/page-1.html")
	run := func(name string, fn func(p []byte)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(total / int64(len(pages)))
			i := 0
			for b.Loop() {
				fn(pages[i%len(pages)])
				i++
			}
		})
	}
	run("tokenize", func(p []byte) {
		z := html.NewTokenizer(bytes.NewReader(p))
		for z.Next() != html.ErrorToken {
			if _, more := z.TagName(); more {
				for more {
					_, _, more = z.TagAttr()
				}
			}
		}
	})
	norm := urlnorm.CrawlDefaults()
	run("extract", func(p []byte) {
		if _, err := extract.HTML(base, p, "text/html", extract.Options{Normalize: norm}); err != nil {
			b.Fatal(err)
		}
	})
	run("fingerprint", func(p []byte) { dedup.Fingerprint(p) })
	run("sha1", func(p []byte) { sha1.Sum(p) })
	zw, _ := gzip.NewWriterLevel(io.Discard, 1)
	run("gzip1", func(p []byte) {
		zw.Reset(io.Discard)
		zw.Write(p)
		zw.Close()
	})
}
