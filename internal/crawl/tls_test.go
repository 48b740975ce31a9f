package crawl

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// TestCrawlHTTPSCertificates crawls an https site whose certificate no
// system root signed: refused by default, crawled with its authority in
// tls.ca-file, and crawled with tls.insecure. Its WARC records keep the
// bytes of the exchange (a lower-case field name as sent), as over
// http://, robots.txt's too.
func TestCrawlHTTPSCertificates(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header()["x-as-sent"] = []string{"lower case"}
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow:\n"))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="/a.html">a</a>`))
		case "/a.html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`page a`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// httptest's certificate names example.com.
	r, err := resolve.New([]string{"example.com=" + strings.TrimPrefix(srv.URL, "https://")})
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	var dir string
	crawl := func(tc TLS, d time.Duration) *Summary {
		t.Helper()
		dir = t.TempDir()
		c, err := New(Config{DataDir: dir, Delay: -1, MaxDuration: d, TLS: tc}, Options{Resolver: r, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Run(context.Background(), []string{"https://example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	for _, tc := range []struct {
		name string
		tls  TLS
	}{{"ca-file", TLS{CAFile: ca}}, {"insecure", TLS{Insecure: true}}} {
		hits.Store(0)
		if sum := crawl(tc.tls, 30*time.Second); !sum.Finished || sum.Pages < 2 || hits.Load() < 3 {
			t.Errorf("%s: finished %v, %d pages, %d requests; want robots.txt and both pages", tc.name, sum.Finished, sum.Pages, hits.Load())
		}
		wire := map[string]bool{}
		files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
		for _, p := range files {
			readWARC(t, p, func(rec *warc.Record) {
				block := string(rec.Block)
				switch rec.Header.Get("WARC-Type") {
				case "response":
					wire[rec.Header.Get("WARC-Target-URI")] = strings.HasPrefix(block, "HTTP/1.1 200 OK\r\n") && strings.Contains(block, "\r\nx-as-sent: lower case\r\n")
				case "request":
					if !strings.HasPrefix(block, "GET /") || !strings.Contains(block, " HTTP/1.1\r\nHost: example.com\r\n") {
						t.Errorf("%s: request record %q", tc.name, block)
					}
				}
			})
		}
		for _, u := range []string{"https://example.com/robots.txt", "https://example.com/", "https://example.com/a.html"} {
			if !wire[u] {
				t.Errorf("%s: the response record of %s does not keep the header as sent (%v)", tc.name, u, wire)
			}
		}
	}
	// By default the certificate is refused: no request gets through
	// (the crawl waits for robots.txt to be had, until its time is up).
	hits.Store(0)
	if sum := crawl(TLS{}, 2*time.Second); sum.Finished || sum.Pages != 0 || hits.Load() != 0 {
		t.Errorf("default: finished %v, %d pages, %d requests; want none", sum.Finished, sum.Pages, hits.Load())
	}
	// Bad files are refused at start.
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	os.WriteFile(notPEM, []byte("no certificate here"), 0o644)
	for _, f := range []string{notPEM, filepath.Join(t.TempDir(), "missing.pem")} {
		if err := (Config{TLS: TLS{CAFile: f}}).Validate(); err == nil || !strings.Contains(err.Error(), "ca-file") {
			t.Errorf("ca-file %s: Validate = %v", f, err)
		}
	}
}
