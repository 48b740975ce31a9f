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
)

// TestCrawlHTTPSCertificates crawls an https site whose certificate no
// system root signed: refused by default, crawled with its authority in
// tls.ca-file, and crawled with tls.insecure.
func TestCrawlHTTPSCertificates(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
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
	crawl := func(tc TLS, d time.Duration) *Summary {
		t.Helper()
		c, err := New(Config{DataDir: t.TempDir(), Delay: -1, MaxDuration: d, TLS: tc}, Options{Resolver: r, Logger: testLogger(t)})
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
