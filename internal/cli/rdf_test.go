package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

const rdfPage = `<html><body><div itemscope itemtype="http://schema.org/Product"><span itemprop="name">Lamp</span></div>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Person","name":"Ada"}</script>
<script type="application/ld+json">{broken</script></body></html>`

func TestRDFExtractFile(t *testing.T) {
	p := writeFile(t, "p.html", rdfPage)
	code, out, errOut := run(t, "", "rdf", "extract", "--base", "http://ex.org/p", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 quads, got %d:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, " <http://ex.org/p> .") {
			t.Errorf("quad not in the page graph: %s", l)
		}
	}
	for _, want := range []string{`<http://schema.org/name> "Lamp"`, `<http://schema.org/name> "Ada"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "malformed 1") {
		t.Errorf("summary does not count the malformed script: %s", errOut)
	}

	// Without --base the graph is the file: URL.
	_, out, _ = run(t, "", "rdf", "extract", "--syntax", "microdata", p)
	if !strings.Contains(out, "<file://") || strings.Count(out, "\n") != 2 {
		t.Errorf("file URL graph, microdata only: got\n%s", out)
	}
}

func TestRDFExtractUsage(t *testing.T) {
	for _, args := range [][]string{
		{"rdf"}, {"rdf", "nope"}, {"rdf", "extract"}, {"rdf", "extract", "--base", "rel", "x"},
		{"rdf", "extract", "--syntax", "turtle", "x"},
	} {
		if code, _, _ := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, _ := run(t, "", "rdf", "extract", filepath.Join(t.TempDir(), "missing.html")); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
}

func TestRDFExtractWARC(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Prefix: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ex := range []struct{ url, ct, body string }{
		{"http://a.test/1", "text/html; charset=utf-8", rdfPage},
		{"http://a.test/2", "text/plain", rdfPage}, // not HTML: skipped
		{"http://a.test/3", "text/html", `<p vocab="http://schema.org/" typeof="Event"><span property="name">Gig</span></p>`},
	} {
		h := http.Header{"Content-Type": {ex.ct}}
		_, err := w.WriteExchange(ctx, &warc.Exchange{
			URL: ex.url, IP: "127.0.0.1", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Request:        []byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"),
			ResponseHeader: warc.HTTPHeader("HTTP/1.1 200 OK", h),
			Body:           []byte(ex.body),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("want one WARC file, got %v", files)
	}
	code, out, errOut := run(t, "", "rdf", "extract", files[0])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, "<http://a.test/1> .\n"); n != 4 {
		t.Errorf("page 1: %d quads, want 4:\n%s", n, out)
	}
	if strings.Contains(out, "<http://a.test/2>") {
		t.Errorf("text/plain record extracted")
	}
	if n := strings.Count(out, "<http://a.test/3> .\n"); n != 3 { // type, name, usesVocabulary
		t.Errorf("page 3: %d quads, want 3:\n%s", n, out)
	}
	if !strings.Contains(errOut, "2 pages") {
		t.Errorf("summary: %s", errOut)
	}
}

func TestRDFExtractURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/p" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(rdfPage))
	}))
	defer srv.Close()
	code, out, errOut := run(t, "", "rdf", "extract", srv.URL+"/p")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, "<"+srv.URL+"/p> .\n"); n != 4 {
		t.Errorf("%d quads in the page graph, want 4:\n%s", n, out)
	}
	if code, _, _ := run(t, "", "rdf", "extract", srv.URL+"/missing"); code != 1 {
		t.Errorf("404: exit %d, want 1", code)
	}
}

func TestTestwebStructuredFlag(t *testing.T) {
	code, out, errOut := run(t, "", "testweb", "sites", "--structured", "--sites", "1")
	if code != 0 || !strings.Contains(out, "structured-rdfa.test") {
		t.Errorf("exit %d, stderr %s; structured sites not listed:\n%s", code, errOut, out)
	}
	_, out, _ = run(t, "", "testweb", "sites", "--sites", "1")
	if strings.Contains(out, "structured-rdfa.test") {
		t.Error("structured sites listed without --structured")
	}
}

// TestRDFExtractTestweb fetches a structured testweb page by its name
// through --resolve, as from a crawl.
func TestRDFExtractTestweb(t *testing.T) {
	web, err := testweb.New(testweb.Config{Structured: true, Sites: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	page := "http://structured-jsonld.test/person.html"
	code, out, errOut := run(t, "", "rdf", "extract", "--resolve", "*.test="+addr, page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, "<"+page+"> .\n"); n != 14 {
		t.Errorf("%d quads, want the 14 of the page:\n%s", n, out)
	}
	if code, _, _ := run(t, "", "rdf", "extract", "--resolve", "nonsense", page); code != 2 {
		t.Errorf("bad --resolve: exit %d, want 2", code)
	}
}
