package index

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"github.com/blevesearch/bleve/v2/search/query"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

var (
	typ     = rdf.NewIRI(rdf.RDFType)
	sname   = rdf.NewIRI("https://schema.org/name")
	person  = rdf.NewIRI("https://schema.org/Person")
	product = rdf.NewIRI("http://schema.org/Product")
)

func writeQuads(t *testing.T, dir string, pages ...[]rdf.Quad) {
	t.Helper()
	w, err := rdf.NewQuadFileWriter(rdf.QuadFileOptions{Dir: filepath.Join(dir, "rdf")})
	if err != nil {
		t.Fatal(err)
	}
	for _, qs := range pages {
		if err := w.WriteQuads(qs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func html(title, text string) string {
	return "<!doctype html><html><head><title>" + title + "</title></head><body><p>" + text + "</p></body></html>"
}

func newWARC(t testing.TB, dir string) *warc.Writer {
	t.Helper()
	w, err := warc.NewWriter(warc.Options{Dir: filepath.Join(dir, "warc"), Prefix: "test", NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func writePage(t testing.TB, w *warc.Writer, u, ct, body string) {
	t.Helper()
	hdr := "HTTP/1.1 200 OK\r\nContent-Type: " + ct + "\r\n\r\n"
	if _, err := w.WriteExchange(context.Background(), &warc.Exchange{
		URL: u, IP: "127.0.0.1", Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Request: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), ResponseHeader: []byte(hdr), Body: []byte(body),
	}); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, dir string) *Indexer {
	t.Helper()
	ix, err := Open(Options{DataDir: dir, BatchQuads: 3, Store: triplestore.Options{CacheBytes: 16 << 20, MemTableBytes: 4 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func search(t *testing.T, ix *Indexer, q string) []string {
	t.Helper()
	res, err := ix.Text().Search(bleve.NewSearchRequest(bleve.NewMatchQuery(q)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestIndexQuadsAndWARC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	p1, p2 := rdf.NewIRI("http://shop.test/anvil"), rdf.NewIRI("http://people.test/ada")
	writeQuads(t, dir,
		[]rdf.Quad{
			{S: rdf.NewBlank("b0"), P: typ, O: product, G: p1},
			{S: rdf.NewBlank("b0"), P: sname, O: rdf.NewLiteral("Acme Anvil", "", ""), G: p1},
		},
		[]rdf.Quad{
			{S: rdf.NewBlank("b0"), P: typ, O: person, G: p2},
			{S: rdf.NewBlank("b0"), P: sname, O: rdf.NewLiteral("Ada Lovelace", "", "en"), G: p2},
		})
	ww := newWARC(t, dir)
	writePage(t, ww, "http://shop.test/anvil", "text/html; charset=utf-8", html("The anvil shop", "Heavy iron for coyotes."))
	writePage(t, ww, "http://shop.test/logo.png", "image/png", "\x89PNG")
	if err := ww.Close(); err != nil {
		t.Fatal(err)
	}

	ix := open(t, dir)
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	st := ix.Stats()
	if st.Quads != 4 || st.NewQuads != 4 || st.Pages != 1 || st.Files != 2 || st.Commits < 2 {
		t.Fatalf("stats %+v", st)
	}
	// Blank nodes of two pages stay apart.
	pg, err := ix.Store().Match(triplestore.Pattern{P: sname}, "", 10)
	if err != nil || len(pg.Quads) != 2 || pg.Quads[0].S == pg.Quads[1].S {
		t.Fatalf("names %v %v", pg.Quads, err)
	}
	page, err := ix.Page("http://shop.test/anvil")
	if err != nil || page == nil {
		t.Fatal(page, err)
	}
	if page.Title != "The anvil shop" || !strings.Contains(page.Text, "coyotes") ||
		fmt.Sprint(page.Types) != "[http://schema.org/Product]" || fmt.Sprint(page.Vocabs) != "[http://schema.org/ http://www.w3.org/1999/02/22-rdf-syntax-ns#]" ||
		len(page.Literals) != 1 || page.Literals[0].V != "Acme Anvil" || page.Quads != 2 {
		t.Fatalf("page %+v", page)
	}
	for q, want := range map[string]string{
		"anvil": "http://shop.test/anvil", "coyotes": "http://shop.test/anvil", "lovelace": "http://people.test/ada",
	} {
		if got := search(t, ix, q); len(got) != 1 || got[0] != want {
			t.Errorf("search %q = %v, want %s", q, got, want)
		}
	}
	res, err := ix.Text().Search(bleve.NewSearchRequest(termQuery(FieldType, "http://schema.org/Person")))
	if err != nil || res.Total != 1 || res.Hits[0].ID != "http://people.test/ada" {
		t.Fatalf("type filter: %v %v", res, err)
	}

	// Nothing new: a second pass changes nothing.
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st2 := ix.Stats(); st2.Quads != st.Quads || st2.Records != st.Records {
		t.Fatalf("second pass read again: %+v", st2)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart goes on with new files only.
	writeQuads(t, dir, []rdf.Quad{{S: rdf.NewIRI("http://shop.test/anvil#it"), P: sname, O: rdf.NewLiteral("Anvil deluxe", "", ""), G: p1}})
	ix = open(t, dir)
	defer ix.Close()
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Quads != 1 || st.Records != 0 {
		t.Fatalf("after restart %+v", st)
	}
	if q, _, _ := ix.Store().Stats(); q != 5 {
		t.Fatalf("store holds %d quads, want 5", q)
	}
	page, _ = ix.Page("http://shop.test/anvil")
	if len(page.Literals) != 2 || page.Title != "The anvil shop" {
		t.Fatalf("merged page %+v", page)
	}
}

func termQuery(field, v string) *bleveTermQuery {
	q := bleve.NewTermQuery(v)
	q.SetField(field)
	return q
}

// TestFollowOpenWARC reads a WARC file while it is written: records
// flushed so far, then the rest after the writer goes on, then a torn
// record at the tail is left for later.
func TestFollowOpenWARC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	ww := newWARC(t, dir)
	writePage(t, ww, "http://a.test/1", "text/html", html("one", "first page"))
	if err := ww.Flush(); err != nil {
		t.Fatal(err)
	}
	ix := open(t, dir)
	defer ix.Close()
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, "first"); len(got) != 1 {
		t.Fatalf("open file not followed: %v (stats %+v)", got, ix.Stats())
	}
	writePage(t, ww, "http://a.test/2", "text/html", html("two", "second page"))
	if err := ww.Flush(); err != nil {
		t.Fatal(err)
	}
	// A torn record at the tail of the open file, as a reader may see
	// while the writer is in the middle of a member.
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.open"))
	if len(files) != 1 {
		t.Fatalf("open files %v", files)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0})
	f.Close()
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, "second"); len(got) != 1 {
		t.Fatalf("second record not indexed: %v", got)
	}
	if st := ix.Stats(); st.Pages != 2 || st.Files != 0 {
		t.Fatalf("stats %+v", st)
	}
	pr, err := ix.progress("warc", strings.TrimSuffix(filepath.Base(files[0]), ".open"))
	if err != nil || pr.done || pr.skip != 1 {
		t.Fatalf("progress %+v %v", pr, err)
	}
}

func TestBadQuadLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "rdf"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "<http://a.test/s> <http://a.test/p> \"ok\" <http://a.test/> .\nnot n-quads\n<rel> <http://a.test/p> \"x\" .\n"
	if err := os.WriteFile(filepath.Join(dir, "rdf", "x.nq.gz"), gz(t, body), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := open(t, dir)
	defer ix.Close()
	if err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Quads != 1 || st.BadLines != 2 || st.Files != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{}, {DataDir: "x", Poll: -1}, {DataDir: "x", BatchQuads: -1}} {
		if _, err := Open(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestVocab(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://schema.org/name": "http://schema.org/", "http://xmlns.com/foaf/0.1/name": "http://xmlns.com/foaf/0.1/",
		"http://www.w3.org/1999/02/22-rdf-syntax-ns#type": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
		"urn:isbn:123": "", "http://host": "",
	} {
		if got := Namespace(in); got != want {
			t.Errorf("Namespace(%q) = %q, want %q", in, got, want)
		}
	}
	if Expand("schema:Person") != "http://schema.org/Person" || Expand("http://x/y") != "http://x/y" || Expand("nope:x") != "nope:x" {
		t.Error("Expand")
	}
	if Compact("https://schema.org/Person") != "schema:Person" || Compact("http://x.test/a") != "http://x.test/a" {
		t.Error("Compact")
	}
}

type bleveTermQuery = query.TermQuery

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// TestDirtyPagesSurviveRestart: a pass that stops after committing page
// records but before writing their text documents (a crash) leaves them
// marked; the next pass writes them, though its files are all done.
func TestDirtyPagesSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	g := rdf.NewIRI("http://shop.test/kettle")
	writeQuads(t, dir, []rdf.Quad{{S: g, P: sname, O: rdf.NewLiteral("Copper kettle", "", ""), G: g}})
	ix := open(t, dir)
	if err := ix.catchUpQuads(ctx); err != nil { // no flushText: as if killed here
		t.Fatal(err)
	}
	if got := search(t, ix, "kettle"); len(got) != 0 {
		t.Fatalf("text written before flushText: %v", got)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = open(t, dir)
	defer ix.Close()
	if err := ix.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Quads != 0 {
		t.Fatalf("the finished file was read again: %+v", st)
	}
	if got := search(t, ix, "kettle"); len(got) != 1 || got[0] != g.Value {
		t.Fatalf("dirty page not indexed after restart: %v", got)
	}
}

func TestOpenBadTextIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A file where the text index's directory belongs.
	if err := os.MkdirAll(filepath.Join(dir, "index"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index", "text"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ix, err := Open(Options{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "text index") {
		if ix != nil {
			ix.Close()
		}
		t.Fatalf("Open = %v, want a text index error", err)
	}
}
