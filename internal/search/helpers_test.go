package search

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/index"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// buildData writes testdata as a crawl would: the quads in DATA/rdf as
// rotated gzip files (one WriteQuads per page), the HTML pages as WARC
// responses in DATA/warc. It returns DATA.
func buildData(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open("testdata/quads.nq")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qw, err := rdf.NewQuadFileWriter(rdf.QuadFileOptions{Dir: filepath.Join(dir, "rdf"), MaxFileBytes: 1500})
	if err != nil {
		t.Fatal(err)
	}
	d := rdf.NewQuadReader(f, rdf.QuadReaderOptions{})
	var page []rdf.Quad
	for {
		q, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 0 && page[0].G != q.G {
			if err := qw.WriteQuads(page); err != nil {
				t.Fatal(err)
			}
			page = nil
		}
		page = append(page, q)
	}
	if err := qw.WriteQuads(page); err != nil {
		t.Fatal(err)
	}
	if err := qw.Close(); err != nil {
		t.Fatal(err)
	}

	ww, err := warc.NewWriter(warc.Options{Dir: filepath.Join(dir, "warc"), Prefix: "test", NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.Open("testdata/pages.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer list.Close()
	sc := bufio.NewScanner(list)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		u, file, _ := strings.Cut(line, " ")
		body, err := os.ReadFile(filepath.Join("testdata/pages", file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ww.WriteExchange(context.Background(), &warc.Exchange{
			URL: u, IP: "127.0.0.1", Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Request:        []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			ResponseHeader: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"),
			Body:           body,
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ww.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newTestServer indexes the testdata and serves it.
func newTestServer(t testing.TB) (*Server, *httptest.Server) {
	t.Helper()
	dir := buildData(t)
	ix, err := index.Open(index.Options{DataDir: dir, Store: triplestore.Options{CacheBytes: 16 << 20, MemTableBytes: 4 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Quads != 20 || st.Pages != 5 {
		t.Fatalf("indexed %+v, want 20 quads and 5 pages", st)
	}
	srv, err := New(ix)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs
}
