package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// TestCrawlRelNofollow: a rel=nofollow link is left by default and
// followed with FollowRelNofollow; a page's meta robots nofollow holds
// either way.
func TestCrawlRelNofollow(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`<a href=/plain.html>p</a> <a rel="external nofollow" href=/source.txt>s</a> <a href=/meta.html>m</a>`))
		case "/meta.html":
			w.Write([]byte(`<meta name=robots content=nofollow><a href=/behind-meta.html>b</a>`))
		case "/plain.html", "/source.txt", "/behind-meta.html":
			w.Write([]byte(`leaf`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	res, err := resolve.New([]string{"site.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		follow bool
		want   []string
	}{
		{false, []string{"/", "/meta.html", "/plain.html", "/robots.txt", "/sitemap.xml"}},
		{true, []string{"/", "/meta.html", "/plain.html", "/robots.txt", "/sitemap.xml", "/source.txt"}},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		c, err := New(Config{DataDir: t.TempDir(), Delay: time.Millisecond, FollowRelNofollow: tc.follow, MaxDuration: 30 * time.Second},
			Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Run(context.Background(), []string{"http://site.test/"})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Finished {
			t.Errorf("follow %v: crawl not finished", tc.follow)
		}
		mu.Lock()
		fetched := slices.Clone(got)
		mu.Unlock()
		slices.Sort(fetched)
		if !slices.Equal(fetched, tc.want) {
			t.Errorf("follow-rel-nofollow %v: fetched %q, want %q", tc.follow, fetched, tc.want)
		}
	}
}
