package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/traps"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

func TestIsRequisite(t *testing.T) {
	for _, tc := range []struct {
		path string
		hop  extract.Hop
		want bool
	}{
		{"", extract.HopEmbed, true},                      // a seed's stylesheet
		{"L", extract.HopEmbed, true},                     // a page's image
		{"LE", extract.HopEmbed, true},                    // a stylesheet's font
		{"LEE", extract.HopEmbed, true},                   // an imported stylesheet's font
		{"LEEE", extract.HopEmbed, false},                 // a fourth embed in a row
		{"LER", extract.HopEmbed, true},                   // redirects do not count
		{"LE", extract.HopRedirect, true},                 // an image that moved
		{"LERRRR", extract.HopRedirect, false},            // but not without end
		{"L", extract.HopLink, false},                     // navigation
		{"LE", extract.HopLink, false},                    // a frame's links
		{"L", extract.HopRedirect, false},                 // a page that moved
		{"LEL", extract.HopEmbed, true},                   // an embed of a page found from a frame
		{"LLLLLLLLLLLLLLLLLLLLE", extract.HopEmbed, true}, // depth is not the rule's business
	} {
		if got := isRequisite(tc.path, tc.hop); got != tc.want {
			t.Errorf("isRequisite(%q, %c) = %v, want %v", tc.path, tc.hop, got, tc.want)
		}
	}
}

func embeds(t *testing.T, urls ...string) []extract.Link {
	t.Helper()
	out := links(t, urls...)
	for i := range out {
		out[i].Hop = extract.HopEmbed
	}
	return out
}

// TestOutlinksRequisites: with PageRequisites, an in-scope page's embeds
// are queued wherever they are, at the page's depth, not replaced by
// their host's home page; a stylesheet's embeds too, but not a fourth
// embed in a row, and never an off-scope page's navigation links.
func TestOutlinksRequisites(t *testing.T) {
	c := testCrawler(t, Scope{Mode: ScopeSeeds, ExternalLinks: PolicyHomePage}, traps.Limits{MaxDepth: 1})
	c.cfg.PageRequisites = true
	src := mustURL(t, "http://a.test/p")
	lease := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://a.test/p", Key: "a.test", Depth: 1, Metadata: map[string][]string{mdPath: {"L"}}}}
	in := append(embeds(t, "http://cdn.test/s.css", "http://a.test/i.png", "http://b.test/x.js"),
		links(t, "http://cdn.test/page", "http://a.test/deeper")...)
	items := c.outlinks(lease, src, in, false)
	if got, want := itemURLs(items), []string{"http://cdn.test/s.css", "http://a.test/i.png", "http://b.test/x.js"}; !slices.Equal(got, want) {
		t.Fatalf("outlinks = %v, want %v", got, want)
	}
	for _, it := range items {
		if it.Info.Depth != 1 || md1(it.Info.Metadata, mdPath) != "LE" {
			t.Errorf("%s: depth %d path %q, want the page's depth 1 and path LE", it.Info.URL, it.Info.Depth, md1(it.Info.Metadata, mdPath))
		}
	}
	if md1(items[0].Info.Metadata, mdOff) != "1" || md1(items[1].Info.Metadata, mdOff) != "" {
		t.Errorf("off-scope count: %v and %v", items[0].Info.Metadata, items[1].Info.Metadata)
	}

	css := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://cdn.test/s.css", Key: "cdn.test", Depth: 1,
		Metadata: map[string][]string{mdPath: {"LE"}, mdOff: {"1"}}}}
	got := itemURLs(c.outlinks(css, mustURL(t, "http://cdn.test/s.css"), append(embeds(t, "http://fonts.test/f.woff2"), links(t, "http://cdn.test/about")...), false))
	if want := []string{"http://fonts.test/f.woff2"}; !slices.Equal(got, want) {
		t.Errorf("from the off-scope stylesheet: %v, want %v", got, want)
	}
	font := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://fonts.test/t.css", Key: "fonts.test", Depth: 1,
		Metadata: map[string][]string{mdPath: {"LEEE"}, mdOff: {"3"}}}}
	if got := itemURLs(c.outlinks(font, mustURL(t, "http://fonts.test/t.css"), embeds(t, "http://fonts.test/deep.png"), false)); got != nil {
		t.Errorf("a fourth embed out of scope followed: %v", got)
	}

	c.cfg.PageRequisites = false
	if got := itemURLs(c.outlinks(lease, src, in, false)); got != nil {
		t.Errorf("without PageRequisites: %v, want none (off scope, or at depth 2 over the limit)", got)
	}
}

// TestCrawlPageRequisites crawls a site whose page needs a stylesheet, a
// script and a font from a CDN host out of scope, and images of its own:
// with page-requisites every one is fetched (an imported stylesheet's
// font too), the CDN's own pages are not, nor a fourth embed in a row;
// without it, only the pages.
func TestCrawlPageRequisites(t *testing.T) {
	var mu sync.Mutex
	var got []string
	heads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		mu.Lock()
		if r.Method == http.MethodHead {
			heads++
		} else {
			got = append(got, host+r.URL.Path)
		}
		mu.Unlock()
		page := func(ct, body string) {
			w.Header().Set("Content-Type", ct)
			w.Write([]byte(body))
		}
		switch host + r.URL.Path {
		case "site.test/robots.txt", "cdn.test/robots.txt":
			page("text/plain", "User-agent: *\nDisallow: /private/\n")
		case "site.test/":
			page("text/html", `<html><head><link rel=stylesheet href=http://cdn.test/s.css>
<script src=//cdn.test/app.js></script><style>h1{background:url(/h1.png)}</style></head>
<body><img src=/i.png srcset="/i2.png 2x, /private/i3.png 3x"><a href=/next.html>next</a>
<a href=http://cdn.test/page.html>cdn page</a><div style="background:url('/div.png')">x</div></body></html>`)
		case "site.test/next.html":
			page("text/html", `<img src=/n.png><a href=/beyond.html>beyond the depth limit</a>`)
		case "cdn.test/s.css":
			page("text/css", `@import "t.css"; body{background:url(/bg.png)}`)
		case "cdn.test/t.css":
			page("text/css", `@import "u.css"; @font-face{src:url(/f.woff2)}`)
		case "cdn.test/u.css":
			page("text/css", `a{background:url(/deep.png)}`)
		case "cdn.test/f.woff2", "cdn.test/app.js", "cdn.test/bg.png", "site.test/i.png", "site.test/i2.png",
			"site.test/n.png", "site.test/h1.png", "site.test/div.png":
			page("application/octet-stream", "bytes of "+r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	r, err := resolve.New([]string{"site.test=" + addr, "cdn.test=" + addr})
	if err != nil {
		t.Fatal(err)
	}
	var sum *Summary
	crawl := func(requisites bool) ([]string, string, string) {
		mu.Lock()
		got = nil
		mu.Unlock()
		dir := t.TempDir()
		// HEAD-before-GET on: requisites are fetched whatever their
		// type, without a HEAD (.png, .woff2 and the like would get one).
		c, err := New(Config{DataDir: dir, Delay: 5 * time.Millisecond, PageRequisites: requisites, HeadBeforeGet: true, MaxDuration: 30 * time.Second,
			Traps: traps.Limits{MaxDepth: 1}}, Options{Resolver: r})
		if err != nil {
			t.Fatal(err)
		}
		sum, err = c.Run(context.Background(), []string{"http://site.test/"})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Finished {
			t.Error("crawl not finished")
		}
		log, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
		if err != nil {
			t.Fatal(err)
		}
		// The metadata records: their outlink lines.
		var meta strings.Builder
		files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
		for _, p := range files {
			readWARC(t, p, func(rec *warc.Record) {
				if rec.Header.Get("WARC-Type") == "metadata" {
					meta.Write(rec.Block)
				}
			})
		}
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(got)
		slices.Sort(out)
		return slices.Compact(out), string(log), meta.String()
	}

	fetched, log, meta := crawl(true)
	// The requisites fetched: 6 on the CDN (s.css, t.css, u.css,
	// f.woff2, app.js, bg.png), 5 of the site's own (i.png, i2.png,
	// h1.png, div.png, n.png; i3.png is disallowed).
	if sum.Requisites != 11 || sum.RequisitesOffScope != 6 {
		t.Errorf("summary: %d requisites, %d out of scope; want 11 and 6", sum.Requisites, sum.RequisitesOffScope)
	}
	if heads != 0 {
		t.Errorf("%d HEAD requests for requisites, want none", heads)
	}
	want := []string{
		"cdn.test/app.js", "cdn.test/bg.png", "cdn.test/f.woff2", "cdn.test/robots.txt", "cdn.test/s.css", "cdn.test/t.css", "cdn.test/u.css",
		"site.test/", "site.test/div.png", "site.test/h1.png", "site.test/i.png", "site.test/i2.png",
		"site.test/n.png", "site.test/next.html", "site.test/robots.txt", "site.test/sitemap.xml",
	}
	if !slices.Equal(fetched, want) {
		t.Errorf("with page-requisites fetched\n %q\nwant\n %q", fetched, want)
	}
	for _, line := range []string{" LE http://site.test/next.html ", " EE http://cdn.test/s.css ", " EEE http://cdn.test/t.css "} {
		if !strings.Contains(log, line) {
			t.Errorf("crawl.log has no line with %q:\n%s", line, log)
		}
	}
	if !strings.Contains(log, "http://site.test/private/i3.png") {
		t.Errorf("the image robots.txt disallows is not in crawl.log:\n%s", log)
	}
	// Each outlink in the WARC metadata record says where it was found.
	for _, line := range []string{
		"outlink: http://cdn.test/app.js E script/@src", "outlink: http://site.test/i2.png E img/@srcset",
		"outlink: http://site.test/h1.png E style", "outlink: http://site.test/div.png E div/@style",
		"outlink: http://cdn.test/t.css E css", "outlink: http://site.test/next.html L a/@href",
		"outlink: http://cdn.test/s.css E link/@href",
	} {
		if !strings.Contains(meta, line+"\r\n") {
			t.Errorf("no %q in the WARC metadata records:\n%s", line, meta)
		}
	}

	fetched, _, _ = crawl(false)
	if want := []string{"site.test/", "site.test/next.html", "site.test/robots.txt", "site.test/sitemap.xml"}; !slices.Equal(fetched, want) {
		t.Errorf("without page-requisites fetched %q, want %q", fetched, want)
	}
}
