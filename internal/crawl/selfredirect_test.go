package crawl

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
)

// TestSelfRedirect: a page that redirects to itself is asked once more,
// and no more. A site that sets a cookie and redirects to the same URL
// (a session, a consent wall) answers the second request with the page,
// whose links are followed; a page that always redirects to itself is
// logged with its redirect after two tries. Before, the redirect was
// queued as a link, dropped as already seen, and the page never fetched.
func TestSelfRedirect(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]int{}
	res := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/cookie">c</a><a href="/always">a</a>`)
		case "/cookie":
			if c, err := r.Cookie("s"); err != nil || c.Value != "1" {
				http.SetCookie(w, &http.Cookie{Name: "s", Value: "1", Path: "/"})
				http.Redirect(w, r, "http://SELF.test/cookie#top", http.StatusFound)
				return
			}
			fmt.Fprint(w, `<a href="/behind">b</a>`)
		case "/always":
			http.Redirect(w, r, "/always", http.StatusMovedPermanently)
		case "/behind":
			fmt.Fprint(w, "behind the wall")
		default:
			http.NotFound(w, r)
		}
	}))
	dir := t.TempDir()
	runCrawl(t, Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: 30 * time.Second}, res, "http://self.test/")
	got := map[string]crawllog.Entry{}
	for _, e := range logEntries(t, dir) {
		got[e.URL] = e
	}
	for _, tc := range []struct {
		url    string
		status int
		tries  string
	}{
		{"http://self.test/cookie", 200, "2t"},
		{"http://self.test/behind", 200, ""},
		{"http://self.test/always", 301, "2t"},
	} {
		e, ok := got[tc.url]
		if !ok || e.Status != tc.status || tc.tries != "" && !slices.Contains(e.Annotations, tc.tries) {
			t.Errorf("%s: logged %v, status %d, annotations %v; want %d, %q", tc.url, ok, e.Status, e.Annotations, tc.status, tc.tries)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["/always"] != 2 || asked["/cookie"] != 2 {
		t.Errorf("asked /always %d times, /cookie %d times; want 2 each (%s)", asked["/always"], asked["/cookie"], strings.TrimSpace(fmt.Sprint(asked)))
	}
}

// TestSeedRedirectIsSeed: a seed that redirects to another site (example.org
// to www.example.org, through https or not) makes that site a seed site,
// as Heritrix's seedsRedirectNewSeeds does; a redirect met further on, or
// a link, does not. Before, the seeds scope dropped the target and the
// crawl of a site typed without its www ended with the redirect.
func TestSeedRedirectIsSeed(t *testing.T) {
	t.Parallel()
	w := &recordingWeb{pages: map[string]string{
		"www.start.test /":           `<a href="/page">p</a><a href="http://elsewhere.test/">e</a>`,
		"www.start.test /page":       "inside",
		"plain.test /":               `<a href="/moved">m</a>`,
		"far.test /":                 "not a seed site",
		"elsewhere.test /":           "not a seed site",
		"www.start.test /robots.txt": "User-agent: *\nAllow: /\n",
	}}
	res := serveHandler(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.Host + " " + r.URL.Path {
		case "start.test /":
			http.Redirect(rw, r, "http://start2.test/", http.StatusMovedPermanently)
		case "start2.test /":
			http.Redirect(rw, r, "http://www.start.test/", http.StatusFound)
		case "plain.test /moved":
			http.Redirect(rw, r, "http://far.test/", http.StatusMovedPermanently)
		default:
			w.ServeHTTP(rw, r)
		}
	}))
	runCrawl(t, Config{DataDir: t.TempDir(), Delay: -1, Workers: 2, MaxDuration: 30 * time.Second}, res, "http://start.test/", "http://plain.test/")
	reqs := w.requests()
	for _, want := range []string{"www.start.test /", "www.start.test /page"} {
		if !slices.Contains(reqs, want) {
			t.Errorf("no request %q; requests %q", want, reqs)
		}
	}
	for _, not := range []string{"far.test /", "elsewhere.test /"} {
		if slices.Contains(reqs, not) {
			t.Errorf("request %q: not a seed site", not)
		}
	}
}
