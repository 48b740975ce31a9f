package crawl

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// TestCrawlFetchesDocTreeNames crawls a small documentation tree served
// from files, whose pages have the names and links documentation
// generators write, and checks that every page is fetched: Texinfo's
// index.html beside Index.html, a directory linked without its slash,
// spaces, '+', brackets, non-ASCII and upper-case names, frames, image
// maps, <link rel=next>, <base> and meta refresh.
func TestCrawlFetchesDocTreeNames(t *testing.T) {
	page := func(body string) string {
		return "<!DOCTYPE html><html><head><meta charset=utf-8><title>t</title></head><body>" + body + "</body></html>"
	}
	files := map[string]string{
		"index.html": page(`<a href="Index.html">Index</a> <a href="with space.html">a</a> <a href="plus+sign.html">b</a>
			<a href="bracket[1].html">c</a> <a href="caf%C3%A9.html">d</a> <a href="naïve.html">e</a> <a href="UPPER.HTML">f</a>
			<a href="sub">g</a> <a href="frames.html">h</a> <a href="map.html">i</a> <a href="refresh.html">j</a>
			<a href="base/page.html">k</a> <a href="chapter/../next.html">l</a> <a href="default.html">m</a>`),
		"Index.html":      page("<p>The index node: every term of the manual, and where it is explained.</p>"),
		"with space.html": page("space"),
		"plus+sign.html":  page("plus"),
		"bracket[1].html": page("bracket"),
		"café.html":       page("café"),
		"naïve.html":      page("naïve"),
		"UPPER.HTML":      page("upper"),
		"sub/index.html":  page(`<a href="deeper.html">deeper</a>`),
		"sub/deeper.html": page("deeper"),
		"frames.html":     `<!DOCTYPE html><html><head><title>f</title></head><frameset><frame src="left.html"><frame src="right.html"></frameset></html>`,
		"left.html":       page("left"),
		"right.html":      page("right"),
		"map.html":        page(`<img src="m.png" usemap="#m"><map name="m"><area shape="rect" coords="0,0,9,9" href="area.html"></map>`),
		"area.html":       page("area"),
		"refresh.html":    `<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0; url=moved.html"><link rel="next" href="linked.html"><title>r</title></head><body></body></html>`,
		"moved.html":      page("moved"),
		"linked.html":     page("linked"),
		"base/page.html":  `<!DOCTYPE html><html><head><base href="/other/"><title>b</title></head><body><a href="rel.html">rel</a></body></html>`,
		"other/rel.html":  page("rel"),
		"next.html":       page("next"),
		"default.html":    page("default"),
	}
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := crawlDocsTest(t, http.FileServer(http.Dir(root)))
	got := map[string]bool{}
	for _, e := range logEntries(t, dir) {
		if e.Status != 200 {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil {
			t.Fatal(err)
		}
		p := strings.TrimPrefix(u.Path, "/")
		if p == "" || strings.HasSuffix(p, "/") {
			p += "index.html"
		}
		got[p] = true
	}
	for name := range files {
		if !got[name] {
			t.Errorf("%s not fetched", name)
		}
	}
	if t.Failed() {
		t.Logf("fetched: %v", got)
	}
}

// TestCrawlVersionedDocTree: a documentation tree under a version
// directory (/docs/15/) is crawled past the depth limit of numbered URLs,
// since its pages inherit the number from the pages that link them,
// while calendars that count from one page to the next, beside it and
// inside it, are still cut at that depth.
func TestCrawlVersionedDocTree(t *testing.T) {
	const chain = 9 // /docs/15/c1.html ... c9.html, depths 2 to 10
	page := func(links ...string) string {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><meta charset=utf-8><title>t</title></head><body>")
		for _, l := range links {
			b.WriteString(`<a href="` + l + `">link</a> `)
		}
		return b.String() + "</body></html>"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page("/docs/15/index.html", "/calendar/2026/1/"))
	})
	mux.HandleFunc("/docs/15/{name...}", func(w http.ResponseWriter, r *http.Request) {
		next := 1
		if n, ok := strings.CutPrefix(r.PathValue("name"), "c"); ok {
			next, _ = strconv.Atoi(strings.TrimSuffix(n, ".html"))
			next++
		}
		links := []string{"cal/2026/1/"}
		if next <= chain {
			links = append(links, fmt.Sprintf("c%d.html", next))
		}
		io.WriteString(w, page(links...))
	})
	calendar := func(w http.ResponseWriter, r *http.Request) {
		m, _ := strconv.Atoi(r.PathValue("m"))
		io.WriteString(w, page(fmt.Sprintf("../%d/", m+1)))
	}
	mux.HandleFunc("/calendar/2026/{m}/", calendar)
	mux.HandleFunc("/docs/15/cal/2026/{m}/", calendar)
	dir := crawlDocsTest(t, mux)
	fetched := map[string]bool{}
	for _, e := range logEntries(t, dir) {
		if e.Status == 200 {
			fetched[strings.TrimPrefix(e.URL, "http://docs.test")] = true
		}
	}
	for i := 1; i <= chain; i++ {
		if p := fmt.Sprintf("/docs/15/c%d.html", i); !fetched[p] {
			t.Errorf("%s (depth %d) not fetched", p, i+1)
		}
	}
	// The top calendar's month m is at depth m, the one in the tree at
	// depth m+1 (linked from /docs/15/, depth 1): both stop at depth 5.
	for m := 1; m <= 7; m++ {
		if want, p := m <= 5, fmt.Sprintf("/calendar/2026/%d/", m); fetched[p] != want {
			t.Errorf("%s fetched %v, want %v", p, fetched[p], want)
		}
		if want, p := m+1 <= 5, fmt.Sprintf("/docs/15/cal/2026/%d/", m); fetched[p] != want {
			t.Errorf("%s fetched %v, want %v", p, fetched[p], want)
		}
	}
	if t.Failed() {
		t.Logf("fetched: %v", fetched)
	}
}

// crawlDocsTest crawls http://docs.test/ served by h with the defaults
// (no delay), checks that the crawl finished with nothing failed, and
// returns its data directory.
func crawlDocsTest(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	res, err := resolve.New([]string{"docs.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum := runCrawl(t, Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: time.Minute}, res, "http://docs.test/")
	if !sum.Finished || sum.Failed != 0 {
		t.Errorf("finished %v, %d failed; want finished, none failed", sum.Finished, sum.Failed)
	}
	return dir
}
