package search

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawl"
	"github.com/courtesy-crawler/courtesy/internal/index"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
)

// crawlStructured crawls the testweb's structured-data sites (and two
// plain sites) with structured data on, indexes the result as `courtesy
// index --once` does, and serves the search site on it.
func crawlStructured(t *testing.T) (*httptest.Server, int64) {
	t.Helper()
	web, err := testweb.New(testweb.Config{Seed: 2, Sites: 2, PagesPerSite: 10, Plain: true, NoExternal: true, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ws := &http.Server{Handler: web.Handler()}
	go ws.Serve(ln)
	t.Cleanup(func() { ws.Close() })
	r, err := resolve.New([]string{"*.test=" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []string
	for _, s := range web.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	data := t.TempDir()
	c, err := crawl.New(crawl.Config{DataDir: data, StructuredData: true, Delay: -1, Workers: 8}, crawl.Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	sum, err := c.Run(ctx, seeds)
	if err != nil || !sum.Finished {
		t.Fatalf("crawl: %v (summary %+v)", err, sum)
	}
	ix, err := index.Open(index.Options{DataDir: data, Store: triplestore.Options{CacheBytes: 16 << 20, MemTableBytes: 4 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Quads < 100 || st.Pages < int64(len(testweb.StructuredPages())) {
		t.Fatalf("indexed %+v after the crawl", st)
	}
	srv, err := New(ix)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs, ix.Stats().Pages
}

// TestBrowserAfterCrawl is the whole chain in a real browser: a crawl of
// the structured-data sites, the index, then Chromium on `courtesy
// search` finds a product by its name and the type filter narrows to
// people, without a console error.
func TestBrowserAfterCrawl(t *testing.T) {
	hs, pages := crawlStructured(t)
	b := startBrowser(t, hs.URL)

	// The microdata product, by its name.
	got := b.search("paper lantern", "")
	if !slices.Contains(got, "http://structured-microdata.test/product.html") {
		t.Fatalf("search for the product: %v", got)
	}
	if title := b.text(`a.hit-title[href="http://structured-microdata.test/product.html"]`); title != "Paper lantern" {
		t.Fatalf("product hit title %q", title)
	}
	// "grace" is a person (microdata), the author of a recipe and a
	// colleague in an organisation: the type filter keeps the pages that
	// have a schema:Person, and drops the product-only pages.
	people := b.search("", "schema:Person")
	for _, u := range []string{"http://structured-jsonld.test/person.html", "http://structured-microdata.test/person.html", "http://structured-rdfa.test/person.html"} {
		if !slices.Contains(people, u) {
			t.Errorf("people filter lacks %s: %v", u, people)
		}
	}
	for _, u := range people {
		if strings.HasSuffix(u, "/product.html") || strings.HasPrefix(u, "http://site-") {
			t.Errorf("people filter lists %s", u)
		}
	}
	if len(people) == 0 || int64(len(people)) >= pages {
		t.Errorf("filter did not narrow: %d people of %d pages", len(people), pages)
	}
	if got := b.search("hopper", "schema:Person"); !slices.Contains(got, "http://structured-microdata.test/person.html") {
		t.Errorf("hopper among people: %v", got)
	}
	b.checkConsole("lamp")
}
