package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// TestCrawlLogOneLinePerURLWithCuts: crawl.log keeps one line per URL when
// trap limits cut links. Every page links back to the home page and on to
// the next pages, so the links that a limit refuses include pages already
// fetched or queued: those keep their fetch line and get no cut line, and
// a depth cut gets none at all (the same URL may be reached by a shorter
// path, and then it is crawled).
func TestCrawlLogOneLinePerURLWithCuts(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := 0
		fmt.Sscanf(r.URL.Path, "/p%d", &n)
		fmt.Fprintf(w, `<html><body><a href="/">home</a> <a href="/p%d">next</a> <a href="/p%d">after</a> <a href="/p1">first</a></body></html>`, n+1, n+2)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := resolve.New([]string{"loop.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		limits traps.Limits
	}{
		{"depth", traps.Limits{MaxDepth: 2}},
		{"urls-per-site", traps.Limits{MaxURLsPerSite: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: time.Minute, Traps: tc.limits}
			c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := c.Run(ctx, []string{"http://loop.test/"}); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string][]string{}
			for _, ln := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				e, err := crawllog.Parse(ln)
				if err != nil {
					t.Fatalf("bad line %q: %v", ln, err)
				}
				lines[e.URL] = append(lines[e.URL], ln)
				if e.Status == crawllog.StatusTooManyHops {
					t.Errorf("depth cut logged: %s", ln)
				}
			}
			if len(lines["http://loop.test/"]) == 0 || len(lines["http://loop.test/p1"]) == 0 {
				t.Fatalf("home or first page not logged:\n%s", raw)
			}
			for u, ls := range lines {
				if len(ls) != 1 {
					t.Errorf("%s has %d crawl.log lines, want 1:\n%s", u, len(ls), strings.Join(ls, "\n"))
				}
			}
		})
	}
}
