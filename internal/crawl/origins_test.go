package crawl

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// TestUnreachableOriginKeepsHost crawls a site that answers on one origin
// and links to an origin of the same host that does not answer (a port the
// server leaks in its redirects, or https on an http-only server): that
// origin's robots.txt is unavailable. Only its URLs may be held back and
// given up; the host's other pages must still be crawled at once, and the
// host not retired.
func TestUnreachableOriginKeepsHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String() // nothing listens there once closed
	_, deadPort, _ := net.SplitHostPort(dead)
	ln.Close()

	const n = 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		var links strings.Builder
		switch {
		case r.URL.Path == "/":
			// The other origin first, so that it is met before the pages.
			fmt.Fprintf(&links, `<a href="http://docs.test:%s/moved/">moved</a>`, deadPort)
			for i := range n {
				fmt.Fprintf(&links, `<a href="/p%d.html">p%d</a>`, i, i)
			}
		case strings.HasPrefix(r.URL.Path, "/p"):
			fmt.Fprintf(&links, `<a href="/q%s">next</a>`, strings.TrimPrefix(r.URL.Path, "/p"))
		case strings.HasPrefix(r.URL.Path, "/q"):
		default:
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%s</title></head><body><p>Page %s.</p>%s</body></html>",
			r.URL.Path, r.URL.Path, links.String())
	}))
	defer srv.Close()
	res, err := resolve.New([]string{"docs.test:" + deadPort + "=" + dead, "docs.test=" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Without the fix the host's queue is held for the other origin's
	// robots.txt retry (a minute and more), then the host is retired.
	// The other port is out of the seeds scope (seedKey): an include
	// pattern brings it in, as a link to https on an http-only server
	// would be.
	cfg := Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: 20 * time.Second,
		RetryDelay: 50 * time.Millisecond, MaxRetryDelay: 200 * time.Millisecond,
		Scope: Scope{Mode: ScopeSeeds, Include: []string{`^http://docs\.test:` + deadPort + `/`}}}
	sum := runCrawl(t, cfg, res, "http://docs.test/")
	if !sum.Finished || len(sum.Retired) != 0 {
		t.Errorf("finished %v, retired %v; want finished, none retired", sum.Finished, sum.Retired)
	}
	got := map[string]int{}
	for _, e := range logEntries(t, dir) {
		got[e.URL] = e.Status
	}
	for i := range n {
		for _, p := range []string{"p", "q"} {
			if u := fmt.Sprintf("http://docs.test/%s%d.html", p, i); got[u] != 200 {
				t.Errorf("%s: status %d, want 200", u, got[u])
			}
		}
	}
	if u := "http://docs.test:" + deadPort + "/moved/"; got[u] != crawllog.StatusPrereqRobotsFailed {
		t.Errorf("%s: status %d, want %d (robots.txt unavailable)", u, got[u], crawllog.StatusPrereqRobotsFailed)
	}
}

func TestOriginAlone(t *testing.T) {
	main := map[string]bool{"http://docs.test": true}
	tests := []struct {
		name     string
		answered map[string]bool
		origin   string
		status   int
		want     bool
	}{
		{"no answer from a port nobody else uses", main, "http://docs.test:8080", 0, true},
		{"401 from another origin", main, "https://docs.test", 401, true},
		{"403 from another origin", main, "https://docs.test", 403, true},
		{"503 from another origin: the server in trouble", main, "https://docs.test", 503, false},
		{"429 from another origin", main, "https://docs.test", 429, false},
		{"the origin answered before", map[string]bool{"http://docs.test": true, "https://docs.test": true}, "https://docs.test", 0, false},
		{"only this origin answered", main, "http://docs.test", 0, false},
		{"nothing answered yet", nil, "http://docs.test", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := originAlone(tc.answered, tc.origin, tc.status); got != tc.want {
				t.Errorf("originAlone = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLeakedPortOutOfScope: a server that leaks another port in its
// redirects (nginx's port_in_redirect behind a port mapping), where the
// same tree answers, is not crawled a second time on that port: the seeds
// scope keys on host and port (seedKey). Before, the tree's pages were
// fetched twice and the copies found from copies could stop the site.
// A state from before that key keeps its scope by host name on resume.
func TestLeakedPortOutOfScope(t *testing.T) {
	const n = 12
	var other string // the second server's port, set below
	tree := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
			return
		case r.URL.Path == "/" || r.URL.Path == "/dir/":
		case strings.HasPrefix(r.URL.Path, "/dir"):
			// A directory named without its slash: the redirect names
			// the port the server believes it listens on.
			http.Redirect(w, r, "http://docs.test:"+other+r.URL.Path+"/", http.StatusMovedPermanently)
			return
		case strings.HasPrefix(r.URL.Path, "/p"):
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%s</title></head><body><p>Page %s of the tree.</p><a href=\"/dir\">dir</a>", r.URL.Path, r.URL.Path)
		for i := range n {
			fmt.Fprintf(w, `<a href="/p%d.html">p%d</a>`, i, i)
		}
		fmt.Fprint(w, "</body></html>")
	})
	a := httptest.NewServer(tree)
	defer a.Close()
	b := httptest.NewServer(tree)
	defer b.Close()
	_, other, _ = net.SplitHostPort(b.Listener.Addr().String())
	res, err := resolve.New([]string{"docs.test:" + other + "=" + b.Listener.Addr().String(), "docs.test=" + a.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	leaked := func(dir string) (fetched, onOther int) {
		for _, e := range logEntries(t, dir) {
			if e.Status == 200 {
				fetched++
				if strings.Contains(e.URL, ":"+other+"/") {
					onOther++
				}
			}
		}
		return fetched, onOther
	}
	cfg := Config{Delay: -1, Workers: 2, MaxDuration: 20 * time.Second}

	cfg.DataDir = t.TempDir()
	sum := runCrawl(t, cfg, res, "http://docs.test/")
	fetched, onOther := leaked(cfg.DataDir)
	if !sum.Finished || fetched != n+1 || onOther != 0 {
		t.Errorf("finished %v, %d pages fetched, %d on port %s; want finished, %d, none there", sum.Finished, fetched, onOther, other, n+1)
	}

	// The same state with its seeds stored by host name, as before the
	// key: the mark removed, the crawl run again from scratch but for it.
	cfg.DataDir = t.TempDir()
	db, err := kv.Open(filepath.Join(cfg.DataDir, "state"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Bucket("C/seedhost/").Set([]byte("docs.test"), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	sum = runCrawl(t, cfg, res, "http://docs.test/")
	if fetched, onOther := leaked(cfg.DataDir); !sum.Finished || onOther == 0 {
		t.Errorf("state by host name: finished %v, %d fetched, %d on port %s; want the other port in scope", sum.Finished, fetched, onOther, other)
	}
}
