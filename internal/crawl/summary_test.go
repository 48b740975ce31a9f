package crawl

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// TestSummaryCountsTruncatedPages: pages over the size cap are cut and
// the summary says how many, with the cap; the crawler's default cap is
// DefaultMaxPageSize, and a negative cap is none (not the fetcher's own
// 2 MiB).
func TestSummaryCountsTruncatedPages(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><a href="/big1">a</a> <a href="/big2">b</a> <a href="/small">c</a> <a href="/huge">d</a></body></html>`)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, strings.Repeat(big, 48)) }) // 3 MiB
	mux.HandleFunc("/big1", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big) })
	mux.HandleFunc("/big2", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big+"y") })
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "small page") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := resolve.New([]string{"big.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		limit     int64
		wantCap   int64
		truncated int64
	}{
		{"default cap", 0, DefaultMaxPageSize, 0},
		{"32 KiB cap", 32 << 10, 32 << 10, 3},
		{"no cap", -1, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{DataDir: t.TempDir(), Delay: -1, Workers: 2, MaxDuration: time.Minute, Traps: traps.Limits{MaxSize: tc.limit}}
			sum := runCrawl(t, cfg, res, "http://big.test/")
			if !sum.Finished || sum.Pages < 5 {
				t.Fatalf("finished %v, %d pages; want finished, at least 5", sum.Finished, sum.Pages)
			}
			if sum.MaxSize != tc.wantCap || sum.Truncated != tc.truncated {
				t.Errorf("cap %d, %d truncated; want cap %d, %d truncated", sum.MaxSize, sum.Truncated, tc.wantCap, tc.truncated)
			}
		})
	}
}

// TestPageUnderCapReadWhole: a page under the page cap but over the
// fetcher's and the extractor's 8 MiB defaults (a 9 MiB single-page
// manual) is read whole, sent plain or gzipped: not counted as cut, and
// the link at its end is followed.
func TestPageUnderCapReadWhole(t *testing.T) {
	big := "<html><body><p>" + strings.Repeat("lorem ipsum dolor sit amet ", 9<<20/27) + "</p>"
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	fmt.Fprint(zw, big+`<a href="/after-gzip">end</a></body></html>`)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><a href="/plain">plain</a> <a href="/gzip">gzip</a></body></html>`)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, big+`<a href="/after-plain">end</a></body></html>`)
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	})
	mux.HandleFunc("/after-plain", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "after") })
	mux.HandleFunc("/after-gzip", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "after") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := resolve.New([]string{"manual.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum := runCrawl(t, Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: time.Minute}, res, "http://manual.test/")
	if sum.Truncated != 0 {
		t.Errorf("%d pages cut, want 0 (cap %d)", sum.Truncated, sum.MaxSize)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://manual.test/after-plain", "http://manual.test/after-gzip"} {
		if !strings.Contains(string(raw), " "+u+" ") {
			t.Errorf("%s, linked at the end of a 9 MiB page, not fetched", u)
		}
	}
	if t.Failed() {
		t.Logf("crawl.log:\n%s", raw)
	}
}
