package crawl

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// TestCrawlDuplicateHosts: one site served under three names, all seeds,
// is crawled once: after its home page and one more page were found to
// be copies, each other name's URLs move to the first name (the Viuva
// Negra report's SameHomeAnd1Doc). Two sites whose home pages are equal
// but whose other pages differ (a shared "under construction" home) are
// both crawled whole. A resumed crawl keeps moving the duplicate host.
func TestCrawlDuplicateHosts(t *testing.T) {
	const pages = 30
	page := func(body string) string {
		return "<!DOCTYPE html><html><head><meta charset=utf-8><title>t</title></head><body>" + body + "</body></html>"
	}
	home := func(w http.ResponseWriter) {
		var b strings.Builder
		for i := range pages {
			fmt.Fprintf(&b, `<a href="/p%d.html">page %d</a> `, i, i)
		}
		io.WriteString(w, page(b.String()))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		switch {
		case r.URL.Path == "/robots.txt" || r.URL.Path == "/sitemap.xml":
			http.NotFound(w, r)
		case r.URL.Path == "/":
			home(w)
		case host == "dup.test" || host == "www.dup.test" || host == "mirror-dup.test" || r.URL.Path == "/new.html":
			io.WriteString(w, page("the same page "+r.URL.Path))
		default: // other.test and another.test: equal homes, own pages
			io.WriteString(w, page(host+" has its own page "+r.URL.Path))
		}
	}))
	defer srv.Close()
	res, err := resolve.New([]string{"*.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: time.Minute}
	sum := runCrawl(t, cfg, res, "http://dup.test/", "http://www.dup.test/", "http://mirror-dup.test/", "http://other.test/", "http://another.test/")
	if !sum.Finished {
		t.Fatalf("crawl not finished: %+v", sum)
	}
	byHost := map[string]map[string]bool{}
	for _, e := range logEntries(t, dir) {
		u, err := url.Parse(e.URL)
		if err != nil || e.Status != 200 || u.Path == "/robots.txt" {
			continue
		}
		if byHost[u.Host] == nil {
			byHost[u.Host] = map[string]bool{}
		}
		byHost[u.Host][u.Path] = true
	}
	paths := map[string]bool{}
	canonical := ""
	for _, h := range []string{"dup.test", "www.dup.test", "mirror-dup.test"} {
		for p := range byHost[h] {
			paths[p] = true
		}
		if len(byHost[h]) > pages/2 {
			if canonical != "" {
				t.Errorf("%s and %s both crawled whole (%d and %d pages)", canonical, h, len(byHost[canonical]), len(byHost[h]))
			}
			canonical = h
		} else if len(byHost[h]) > 6 {
			t.Errorf("%s: %d pages fetched before it was found a duplicate", h, len(byHost[h]))
		}
	}
	if canonical == "" || len(paths) != pages+1 {
		t.Errorf("duplicate site: %d distinct pages fetched over its names, want %d; canonical %q; per host %v", len(paths), pages+1, canonical, byHost)
	}
	for _, h := range []string{"other.test", "another.test"} {
		if len(byHost[h]) != pages+1 {
			t.Errorf("%s: %d pages fetched, want %d (equal home pages alone are not duplicate hosts)", h, len(byHost[h]), pages+1)
		}
	}
	if t.Failed() {
		return
	}

	// A resumed crawl (new seeds on the same state) moves a new URL of
	// an alias to the canonical host at once.
	alias := "www.dup.test"
	if canonical == alias {
		alias = "dup.test"
	}
	sum = runCrawl(t, cfg, res, "http://"+alias+"/new.html")
	got := ""
	for _, e := range logEntries(t, dir) {
		if strings.HasSuffix(e.URL, "/new.html") && e.Status == 200 {
			got = e.URL
		}
	}
	if want := "http://" + canonical + "/new.html"; got != want {
		t.Errorf("after a resume, the alias's new URL was fetched as %q, want %q", got, want)
	}
}

// TestSameHomeBounds: a pair remembers at most maxPairPages pages, all
// pairs together maxHeldPages; a page remembered still confirms a pair
// when the bound is reached, and one not remembered never does.
func TestSameHomeBounds(t *testing.T) {
	s := &sameHomes{}
	p := &homePair{pages: map[string]sidedDigest{}}
	for i := range maxPairPages + 10 {
		if s.seen(p, fmt.Sprintf("/p%d?", i), "d", true) {
			t.Fatalf("page %d confirmed from one side", i)
		}
	}
	if len(p.pages) != maxPairPages || s.held != maxPairPages {
		t.Fatalf("pair holds %d pages, held %d; want %d", len(p.pages), s.held, maxPairPages)
	}
	if !s.seen(p, "/p0?", "d", false) {
		t.Error("a remembered page seen on the other side did not confirm")
	}
	if s.seen(p, fmt.Sprintf("/p%d?", maxPairPages+1), "d", false) {
		t.Error("a page not remembered confirmed")
	}
	s.held = maxHeldPages
	q := &homePair{pages: map[string]sidedDigest{}}
	if s.seen(q, "/x?", "d", true); len(q.pages) != 0 {
		t.Errorf("a page remembered past maxHeldPages")
	}
}
