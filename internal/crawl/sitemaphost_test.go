package crawl

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// urlset is a sitemap listing locs.
func urlset(locs ...string) string {
	s := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
	for _, l := range locs {
		s += "<url><loc>" + l + "</loc></url>"
	}
	return s + "</urlset>"
}

// TestSitemapCrossHost: a sitemap lists URLs of its own host; an entry on
// another host is refused (sitemaps.org), even when that host is in
// scope, unless that host's robots.txt submitted the sitemap. The refusal
// is annotated on the sitemap's crawl.log line.
func TestSitemapCrossHost(t *testing.T) {
	w := &recordingWeb{pages: map[string]string{
		"xs.test /robots.txt":  "User-agent: *\nAllow: /\nSitemap: /s.xml\n",
		"xs.test /":            "home",
		"xs.test /s.xml":       urlset("http://xs.test/own", "http://other.test/foreign", "http://xs.test/idx.xml"),
		"xs.test /own":         "own",
		"xs.test /sitemap.xml": `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://xs.test/child.xml</loc></sitemap></sitemapindex>`,
		"xs.test /child.xml":   urlset("http://xs.test/from-child", "http://other.test/foreign-child"),
		"xs.test /from-child":  "c",
		"xs.test /for-sub.xml": urlset("http://sub.test/vouched", "http://other.test/not-vouched"),
		"other.test /":         "other",
		"sub.test /robots.txt": "User-agent: *\nAllow: /\nSitemap: http://xs.test/for-sub.xml\n",
		"sub.test /":           "sub",
		"sub.test /vouched":    "listed by a sitemap sub.test's robots.txt names",
	}}
	r := serveRecording(t, w)
	data := t.TempDir()
	cfg := Config{DataDir: data, Delay: 5 * time.Millisecond, MaxDuration: time.Minute, Workers: 4,
		UserAgent: "courtesy-test/1.0", EgressIPs: []string{"127.0.0.1"}}
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Run(ctx, []string{"http://xs.test/", "http://other.test/", "http://sub.test/"}); err != nil {
		t.Fatal(err)
	}
	reqs := w.requests()
	for _, want := range []string{"xs.test /own", "xs.test /from-child", "xs.test /for-sub.xml", "sub.test /vouched"} {
		if !slices.Contains(reqs, want) {
			t.Errorf("no request %q; requests %q", want, reqs)
		}
	}
	for _, bad := range []string{"other.test /foreign", "other.test /foreign-child", "other.test /not-vouched"} {
		if slices.Contains(reqs, bad) {
			t.Errorf("request %q: a sitemap on another host listed it", bad)
		}
	}
	log, err := os.ReadFile(filepath.Join(data, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	var annotated bool
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "http://xs.test/s.xml ") && strings.Contains(line, "sitemap:other-host-refused:1") {
			annotated = true
		}
	}
	if !annotated {
		t.Errorf("no sitemap:other-host-refused:1 on the line of http://xs.test/s.xml:\n%s", log)
	}
}

// TestSitemapRedirect: a sitemap that redirects (/sitemap.xml to
// /sitemap_index.xml, or to another host) is still read as a sitemap at
// its new address, and still speaks for the host whose robots.txt named it.
func TestSitemapRedirect(t *testing.T) {
	w := &recordingWeb{pages: map[string]string{
		"rd.test /robots.txt":        "User-agent: *\nAllow: /\nSitemap: /moved.xml\n",
		"rd.test /":                  "home",
		"rd.test /sitemap_index.xml": `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://rd.test/posts.xml</loc></sitemap></sitemapindex>`,
		"rd.test /posts.xml":         urlset("http://rd.test/post-1"),
		"rd.test /post-1":            "post",
		"rd.test /from-moved":        "listed by a sitemap that moved to another host",
		"maps.test /":                "maps",
		"maps.test /rd.xml":          urlset("http://rd.test/from-moved"),
	}}
	redirects := map[string]string{
		"rd.test /sitemap.xml": "/sitemap_index.xml",
		"rd.test /moved.xml":   "http://maps.test/rd.xml",
	}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if to, ok := redirects[host+" "+r.URL.Path]; ok {
			w.mu.Lock()
			w.log = append(w.log, host+" "+r.URL.Path)
			w.mu.Unlock()
			http.Redirect(rw, r, to, http.StatusMovedPermanently)
			return
		}
		w.ServeHTTP(rw, r)
	})
	res := serveHandler(t, h)
	data := t.TempDir()
	cfg := Config{DataDir: data, Delay: 5 * time.Millisecond, MaxDuration: time.Minute, Workers: 4,
		UserAgent: "courtesy-test/1.0", EgressIPs: []string{"127.0.0.1"}}
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Run(ctx, []string{"http://rd.test/", "http://maps.test/"}); err != nil {
		t.Fatal(err)
	}
	reqs := w.requests()
	for _, want := range []string{"rd.test /sitemap_index.xml", "rd.test /posts.xml", "rd.test /post-1", "maps.test /rd.xml", "rd.test /from-moved"} {
		if !slices.Contains(reqs, want) {
			t.Errorf("no request %q; requests %q", want, reqs)
		}
	}
	if t.Failed() {
		log, _ := os.ReadFile(filepath.Join(data, "crawl.log"))
		t.Logf("crawl.log:\n%s", log)
	}
}

// TestSitemapOverPageCap: a sitemap is read up to the protocol's 50 MB
// (sitemaps.org), not cut at the page size cap. Here the cap is 64 KiB
// and the sitemap, plain XML, 200 KB: its last entry is crawled and the
// sitemap is not logged size-truncated. Before, a 15 MB sitemap of 50,000
// URLs lost every entry past the default 10 MiB cap.
func TestSitemapOverPageCap(t *testing.T) {
	t.Parallel()
	locs := make([]string, 0, 2001)
	for i := range 2000 {
		locs = append(locs, "http://elsewhere.test/"+strings.Repeat("p", 60)+"/"+strconv.Itoa(i))
	}
	locs = append(locs, "http://big.test/last")
	w := &recordingWeb{pages: map[string]string{
		"big.test /robots.txt": "User-agent: *\nAllow: /\nSitemap: /big.xml\n",
		"big.test /":           "home",
		"big.test /big.xml":    urlset(locs...),
		"big.test /last":       "the last entry",
	}}
	if n := len(w.pages["big.test /big.xml"]); n < 128<<10 {
		t.Fatalf("sitemap of %d bytes, want over twice the cap", n)
	}
	r := serveRecording(t, w)
	dir := t.TempDir()
	runCrawl(t, Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: time.Minute, Traps: traps.Limits{MaxSize: 64 << 10}}, r, "http://big.test/")
	if !slices.Contains(w.requests(), "big.test /last") {
		t.Errorf("the sitemap's last entry was not fetched; requests %q", w.requests())
	}
	for _, e := range logEntries(t, dir) {
		if e.URL == "http://big.test/big.xml" && slices.Contains(e.Annotations, crawllog.AnnotationSizeTruncated) {
			t.Errorf("sitemap logged %v", e.Annotations)
		}
	}
}
