package crawl

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// TestDedupIndexAcrossCrawls: a second crawl of a site, given the first
// crawl's CDXJ indexes, archives every unchanged page as a revisit record
// that points at the first capture (URL and date), and the changed page in
// full; bad lines in an index are skipped; a missing index is refused.
func TestDedupIndexAcrossCrawls(t *testing.T) {
	version := "one"
	const many = 15 // chained pages, over the duplicate limit of 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("User-agent: *\nDisallow:\n"))
		case "/chain/a", "/chain/b", "/chain/c", "/chain/d", "/chain/e", "/chain/f", "/chain/g", "/chain/h",
			"/chain/i", "/chain/j", "/chain/k", "/chain/l", "/chain/m", "/chain/n", "/chain/o":
			// Pages that link each other in a chain (named, not
			// numbered: the numbered-depth limit stays out of it),
			// each unchanged since the first crawl.
			c := r.URL.Path[len("/chain/")]
			if next := c + 1; next < 'a'+many {
				fmt.Fprintf(w, `page %c <a href="/chain/%c">next</a>`, c, next)
			} else {
				fmt.Fprintf(w, "page %c, the last", c)
			}
		case "/":
			w.Write([]byte(`<a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/news.html">news</a> <a href="/chain/a">chain</a>`))
		case "/a.html", "/b.html":
			w.Write([]byte("the page " + r.URL.Path + ", unchanged"))
		case "/news.html":
			w.Write([]byte("the news, version " + version)) // changes between the crawls
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var logs bytes.Buffer
	crawl := func(dir string, indexes []string) *Summary {
		t.Helper()
		logs.Reset()
		c, err := New(Config{DataDir: dir, Delay: -1, MaxDuration: 30 * time.Second, DedupIndexes: indexes}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Run(context.Background(), []string{srv.URL + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Finished {
			t.Fatal("crawl not finished")
		}
		return sum
	}
	first := t.TempDir()
	crawl(first, nil)
	indexes, _ := filepath.Glob(filepath.Join(first, "warc", "*.cdxj"))
	if len(indexes) == 0 {
		t.Fatal("the first crawl wrote no CDXJ index")
	}
	// A line that is not CDXJ is skipped, not fatal.
	b, err := os.ReadFile(indexes[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(indexes[0], append([]byte("not a cdxj line\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	firstDates := map[string]string{} // URL -> WARC-Date of its response
	for _, p := range mustGlob(t, filepath.Join(first, "warc", "*.warc.gz")) {
		readWARC(t, p, func(rec *warc.Record) {
			if rec.Header.Type() == warc.TypeResponse {
				firstDates[rec.Header.TargetURI()] = rec.Header.Get("WARC-Date")
			}
		})
	}

	version = "two"
	second := t.TempDir()
	sum := crawl(second, indexes)
	// Unchanged pages are not duplicates: with more than the site's
	// duplicate limit of them (15 > 3 here), the site is not stopped.
	if sum.Revisits != 3+many || sum.Unchanged != 3+many || sum.Duplicates != 0 || len(sum.Stopped) != 0 {
		t.Errorf("%d revisit records, %d unchanged, %d duplicates, stopped %v; want %d, %d, none, none",
			sum.Revisits, sum.Unchanged, sum.Duplicates, sum.Stopped, 3+many, 3+many)
	}
	if !strings.Contains(logs.String(), "bad_lines=1") {
		t.Errorf("the bad line is not counted in the log:\n%s", logs.String())
	}
	types := map[string]warc.Type{}
	for _, p := range mustGlob(t, filepath.Join(second, "warc", "*.warc.gz")) {
		readWARC(t, p, func(rec *warc.Record) {
			u := rec.Header.TargetURI()
			switch rec.Header.Type() {
			case warc.TypeRevisit:
				types[u] = warc.TypeRevisit
				ref, date := rec.Header.Get("WARC-Refers-To-Target-URI"), rec.Header.Get("WARC-Refers-To-Date")
				// The CDXJ timestamp has seconds: the date is the first
				// capture's, to the second.
				if ref != u || len(date) < 19 || !strings.HasPrefix(firstDates[u], date[:19]) {
					t.Errorf("revisit of %s refers to %s at %s; the first capture was at %s", u, ref, date, firstDates[u])
				}
			case warc.TypeResponse:
				types[u] = warc.TypeResponse
			}
		})
	}
	if n := len(types); n != 4+many+2 { // and robots.txt, /sitemap.xml (404)
		t.Errorf("%d URLs archived in the second crawl, want %d", n, 4+many+2)
	}
	for u, want := range map[string]warc.Type{
		srv.URL + "/": warc.TypeRevisit, srv.URL + "/a.html": warc.TypeRevisit, srv.URL + "/b.html": warc.TypeRevisit,
		srv.URL + "/news.html": warc.TypeResponse,
	} {
		if types[u] != want {
			t.Errorf("%s archived as %q, want %q", u, types[u], want)
		}
	}
	// Run again on the same state, the indexes are not read again.
	crawl(second, indexes)
	if strings.Contains(logs.String(), "dedup index read") {
		t.Errorf("the indexes were read again:\n%s", logs.String())
	}
	if err := (Config{DedupIndexes: []string{filepath.Join(first, "missing.cdxj")}}).Validate(); err == nil {
		t.Error("a missing dedup index passed Validate")
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("no file matches %s (%v)", pattern, err)
	}
	return m
}
