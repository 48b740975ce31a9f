package extract

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// samplePage is one fetched page: what the crawler hands to HTML.
type samplePage struct {
	base        *url.URL
	body        []byte
	contentType string
}

// testwebPages returns up to max pages of the synthetic web the crawl
// benchmark uses (docs/performance.md "Crawl benchmark": generic sites
// only), taken from testweb's generator through its handler, in memory,
// without a listener. Pages are found breadth-first from each site's home
// page, following same-site links, so the mix of page depths, relative
// forms and <base href> pages is the crawl's.
func testwebPages(tb testing.TB, sites, perSite int) []samplePage {
	tb.Helper()
	return crawlTestweb(tb, testweb.Config{Seed: 1, Sites: sites, PagesPerSite: 50, Plain: true}, perSite)
}

// crawlTestweb returns up to perSite HTML pages of every site of the web
// cfg describes, except the slow and endless traps (whose answers take
// seconds by design).
func crawlTestweb(tb testing.TB, cfg testweb.Config, perSite int) []samplePage {
	tb.Helper()
	w, err := testweb.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	h := w.Handler()
	var out []samplePage
	for _, s := range w.Sites() {
		if s.HasKind(testweb.KindTrap) && (s.Host == "slow.test" || s.Host == "endless.test") {
			continue
		}
		queue := []string{"http://" + s.Host + "/"}
		seen := map[string]bool{queue[0]: true}
		got := 0
		// Bounded: at most perSite pages and 4*perSite requests a site.
		for tries := 0; len(queue) > 0 && got < perSite && tries < 4*perSite; tries++ {
			target := queue[0]
			queue = queue[1:]
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			ct := rec.Header().Get("Content-Type")
			if rec.Code != http.StatusOK || !strings.HasPrefix(ct, "text/html") {
				continue
			}
			base := mustURL(tb, target)
			body := rec.Body.Bytes()
			out = append(out, samplePage{base, body, ct})
			got++
			p, err := HTML(base, body, ct, Options{})
			if err != nil {
				tb.Fatal(err)
			}
			for _, l := range p.Links {
				if l.URL.Host == s.Host && !l.NoFollow && !seen[l.Abs] {
					seen[l.Abs] = true
					queue = append(queue, l.Abs)
				}
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("testweb served no HTML page")
	}
	return out
}
