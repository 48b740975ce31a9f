package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/index"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/search"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
	"github.com/courtesy-crawler/courtesy/internal/warc"
	"github.com/piprate/json-gold/ld"
)

// serveStructuredWeb serves the structured-data sites and a few plain
// sites on a loopback port.
func serveStructuredWeb(t *testing.T) string {
	t.Helper()
	web, err := testweb.New(testweb.Config{Seed: 1, Sites: 2, PagesPerSite: 15, Plain: true, NoExternal: true, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: web.Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// readQuadDir returns every line of the finished quad files in dir.
func readQuadDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), rdf.OpenSuffix) {
			t.Errorf("quad file left open: %s", e.Name())
		}
	}
	names, err := rdf.QuadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, n := range names {
		if _, err := rdf.ReadQuadFile(context.Background(), filepath.Join(dir, n), 0, rdf.QuadReaderOptions{},
			func(q rdf.Quad, _ int64) error { lines = append(lines, q.String()); return nil },
			func(err error) error { return err }); err != nil {
			t.Fatal(err)
		}
	}
	return lines
}

// TestCrawlStructuredData is the whole chain on the command line: a crawl
// of the structured-data sites with --structured-data, its quad files
// checked against extraction over the WARC files it wrote (`rdf
// extract`), against hand-written quads, and against the counts in the
// WARC metadata records; then `index --once`, and the search API finds a
// product by name and filters people by type.
func TestCrawlStructuredData(t *testing.T) {
	addr := serveStructuredWeb(t)
	data := t.TempDir()
	seeds := []string{"http://structured-jsonld.test/", "http://structured-microdata.test/", "http://structured-rdfa.test/",
		"http://structured-hostile.test/", "http://site-0000.test/", "http://site-0001.test/"}
	args := append([]string{"crawl", "--data", data, "--structured-data", "--delay", "0", "--workers", "8",
		"--resolve", "*.test=" + addr, "--log-level", "error"}, seeds...)
	code, out, errOut := run(t, "", args...)
	if code != 0 || !strings.Contains(out, "finished") {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, out, errOut)
	}
	got := readQuadDir(t, filepath.Join(data, "rdf"))
	if want := fmt.Sprintf("structured data     %s (%d quads from ", filepath.Join(data, "rdf"), len(got)); !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}

	// The same pages, from the WARC files, through rdf.Extract.
	warcs, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	if len(warcs) == 0 {
		t.Fatal("no WARC file")
	}
	code, extracted, errOut := run(t, "", append([]string{"rdf", "extract"}, warcs...)...)
	if code != 0 {
		t.Fatalf("rdf extract: exit %d: %s", code, errOut)
	}
	want := strings.Split(strings.TrimSpace(extracted), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if len(got) < 100 || !slices.Equal(got, want) {
		t.Fatalf("crawl wrote %d quads, extraction over its WARC files gives %d; they differ:\n%s", len(got), len(want), firstDiff(got, want))
	}

	t.Logf("%d quads from the crawl, equal to extraction over its WARC files", len(got))
	byGraph := map[string][]string{}
	for _, l := range got {
		q, err := rdf.ParseQuad(l)
		if err != nil {
			t.Fatal(err)
		}
		byGraph[q.G.Value] = append(byGraph[q.G.Value], l)
	}
	// Every structured page has quads (the hostile ones included: their
	// valid parts are kept).
	for _, p := range testweb.StructuredPages() {
		if len(byGraph[p.URL]) == 0 {
			t.Errorf("no quads for %s", p.URL)
		}
	}
	// Hand-written expected quads, canonicalized (blank nodes relabelled).
	for file, page := range map[string]string{
		"jsonld-person.nq":     "http://structured-jsonld.test/person.html",
		"microdata-product.nq": "http://structured-microdata.test/product.html",
		"rdfa-event.nq":        "http://structured-rdfa.test/event.html",
	} {
		raw, err := os.ReadFile(filepath.Join("..", "rdf", "testdata", "structured", file))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for l := range strings.SplitSeq(string(raw), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		var crawled []string
		for _, l := range byGraph[page] {
			// The expected files are triples: drop the graph.
			q, _ := rdf.ParseQuad(l)
			q.G = rdf.Term{}
			crawled = append(crawled, q.String())
		}
		if w, g := urdna(t, lines), urdna(t, crawled); w != g {
			t.Errorf("%s: crawled quads differ from %s:\n got %s\nwant %s", page, file, g, w)
		}
	}

	// The metadata record of every page counts its quads.
	counted := 0
	for _, p := range warcs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := warc.NewReader(f, warc.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := rd.ReadRecord()
			if err != nil {
				break
			}
			if rec.Header.Type() != warc.TypeMetadata {
				continue
			}
			fields, _ := url.ParseQuery(strings.ReplaceAll(strings.ReplaceAll(string(rec.Block), ": ", "="), "\r\n", "&"))
			if n := fields.Get("rdf-quads"); n != "" {
				counted++
				if n != fmt.Sprint(len(byGraph[rec.Header.Get("WARC-Target-URI")])) {
					t.Errorf("%s: metadata says %s quads, the files hold %d", rec.Header.Get("WARC-Target-URI"), n, len(byGraph[rec.Header.Get("WARC-Target-URI")]))
				}
			}
		}
		f.Close()
	}
	if counted < len(testweb.StructuredPages()) {
		t.Errorf("%d metadata records count quads, want at least %d", counted, len(testweb.StructuredPages()))
	}

	// Index, then search.
	code, out, errOut = run(t, "", "index", "--data", data, "--once")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d quads (%d new)", len(got), len(got))) {
		t.Fatalf("index --once: exit %d\n%s\n%s", code, out, errOut)
	}
	ix, err := index.Open(index.Options{DataDir: data, Store: triplestore.Options{CacheBytes: 16 << 20, MemTableBytes: 4 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	srv, err := search.New(ix)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	hits := func(q, typ string) []string {
		t.Helper()
		resp, err := http.Get(hs.URL + "/api/search?" + url.Values{"q": {q}, "type": {typ}, "size": {"100"}}.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Hits []struct {
				URL string `json:"url"`
			} `json:"hits"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("search %q %q: %d %v", q, typ, resp.StatusCode, err)
		}
		var urls []string
		for _, h := range r.Hits {
			urls = append(urls, h.URL)
		}
		sort.Strings(urls)
		return urls
	}
	if h := hits("copper kettle", ""); !slices.Contains(h, "http://structured-rdfa.test/product.html") {
		t.Errorf("product by name: %v", h)
	}
	people := hits("", "schema:Person")
	for _, u := range []string{"http://structured-jsonld.test/person.html", "http://structured-microdata.test/person.html", "http://structured-rdfa.test/person.html"} {
		if !slices.Contains(people, u) {
			t.Errorf("people filter lacks %s: %v", u, people)
		}
	}
	for _, u := range people {
		if strings.HasSuffix(u, "/product.html") || strings.HasPrefix(u, "http://site-") {
			t.Errorf("people filter lists %s", u)
		}
	}
	if all := hits("", ""); len(people) >= len(all) {
		t.Errorf("the type filter did not narrow: %d people of %d pages", len(people), len(all))
	}
}

// urdna canonicalizes N-Triples lines (URDNA2015), sorted.
func urdna(t *testing.T, lines []string) string {
	t.Helper()
	opts := ld.NewJsonLdOptions("")
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.InputFormat = "application/n-quads"
	opts.Format = "application/n-quads"
	out, err := ld.NewJsonLdProcessor().Normalize(strings.Join(lines, "\n")+"\n", opts)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSpace(out.(string)), "\n")
	sort.Strings(ls)
	return strings.Join(ls, "\n")
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("line %d:\n %s\n %s", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}
