package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// TestHeadBeforeGetAndREGPHeaders: a PDF link is checked with HEAD and not
// downloaded, and the REGP Language and Cookie directives
// of robots.txt go into the requests.
func TestHeadBeforeGetAndREGPHeaders(t *testing.T) {
	var mu sync.Mutex
	var pdfGets, pdfHeads int
	var lang, cookie string
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Robot-version: 3.0\nUser-agent: *\nLanguage: pt\nCookie: visitor=crawler\nDisallow:\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/":
			lang, cookie = r.Header.Get("Accept-Language"), r.Header.Get("Cookie")
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="/doc.pdf">pdf</a>`))
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			if r.Method == http.MethodHead {
				pdfHeads++
				return
			}
			pdfGets++
			w.Write([]byte("%PDF-1.4 ..."))
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r, err := resolve.New([]string{"h.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := New(Config{DataDir: dir, Delay: 10 * time.Millisecond, HeadBeforeGet: true, MaxDuration: 30 * time.Second}, Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(context.Background(), []string{"http://h.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Finished {
		t.Error("crawl not finished")
	}
	mu.Lock()
	defer mu.Unlock()
	if pdfHeads != 1 || pdfGets != 0 {
		t.Errorf("pdf: %d HEAD, %d GET; want 1 HEAD, no GET", pdfHeads, pdfGets)
	}
	if lang != "pt" || !strings.Contains(cookie, "visitor=crawler") {
		t.Errorf("REGP headers: Accept-Language %q, Cookie %q", lang, cookie)
	}
	log, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "head:skipped") {
		t.Errorf("crawl.log does not say the GET was skipped:\n%s", log)
	}
}
