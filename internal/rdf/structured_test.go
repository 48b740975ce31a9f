package rdf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// TestStructuredExpected compares the extraction of some of testweb's
// structured pages, all syntaxes at once, with quads written by hand in
// testdata/structured, and checks the counters of the hostile ones.
func TestStructuredExpected(t *testing.T) {
	t.Parallel()
	pages := map[string][]byte{}
	for _, p := range testweb.StructuredPages() {
		pages[p.URL] = p.Body
	}
	tests := []struct {
		file, url string
		check     func(t *testing.T, st Stats)
	}{
		{"jsonld-person.nq", "http://structured-jsonld.test/person.html", nil},
		{"microdata-product.nq", "http://structured-microdata.test/product.html", nil},
		{"rdfa-event.nq", "http://structured-rdfa.test/event.html", nil},
		{"hostile-prefix-tricks.nq", "http://structured-hostile.test/prefix-tricks.html", nil},
		{"hostile-malformed-jsonld.nq", "http://structured-hostile.test/malformed-jsonld.html", func(t *testing.T, st Stats) {
			if st.JSONLDScripts != 4 || st.JSONLDMalformed != 2 || st.JSONLDRemoteRefused != 1 {
				t.Errorf("want 4 scripts, 2 malformed, 1 refused: %+v", st)
			}
		}},
		{"hostile-huge-jsonld.nq", "http://structured-hostile.test/huge-jsonld.html", func(t *testing.T, st Stats) {
			if st.JSONLDTooLarge != 1 {
				t.Errorf("want 1 script too large: %+v", st)
			}
		}},
		{"hostile-invalid-iris.nq", "http://structured-hostile.test/invalid-iris.html", func(t *testing.T, st Stats) {
			if st.Invalid < 7 {
				t.Errorf("want at least 7 invalid triples dropped: %+v", st)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			body, ok := pages[tc.url]
			if !ok {
				t.Fatalf("no structured page %s", tc.url)
			}
			raw, err := os.ReadFile(filepath.Join("testdata", "structured", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(string(raw), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					lines = append(lines, l)
				}
			}
			want, err := canonicalLines(lines)
			if err != nil {
				t.Fatal(err)
			}
			quads, st, err := Extract(context.Background(), tc.url, body, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range quads {
				if q.G != NewIRI(tc.url) {
					t.Fatalf("quad outside the page graph: %s", q)
				}
			}
			got, err := canonical(quads)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}
}

// TestStructuredDeep checks the deep page is cut at the depth bound in
// both microdata and JSON-LD, keeping what lies above it.
func TestStructuredDeep(t *testing.T) {
	t.Parallel()
	var body []byte
	const url = "http://structured-hostile.test/deep.html"
	for _, p := range testweb.StructuredPages() {
		if p.URL == url {
			body = p.Body
		}
	}
	quads, st, err := Extract(context.Background(), url, body, Options{MaxDepth: 50})
	if err != nil {
		t.Fatal(err)
	}
	if st.DepthCut < 2 {
		t.Errorf("want the microdata and the JSON-LD cut: %+v", st)
	}
	if st.Microdata < 50 || st.Microdata > 150 || st.JSONLD != 0 {
		t.Errorf("want about 2 quads per item level up to the bound and no JSON-LD: %+v", st)
	}
	if !strings.Contains(quads[1].String()+quads[0].String(), `"top"`) {
		t.Errorf("top item lost: %s / %s", quads[0], quads[1])
	}
}

// TestJSONLDPathsAgree checks that JSON-LD found by the tokenizer alone
// (JSON-LD only) equals JSON-LD found in the parsed tree (all syntaxes).
func TestJSONLDPathsAgree(t *testing.T) {
	t.Parallel()
	pages := testweb.StructuredPages()
	pages = append(pages, testweb.StructuredPage{URL: "http://ex.org/b", Body: []byte(`<html><head><base href="/dir/x#f"><script type="application/ld+json">{"@context":"https://schema.org","@id":"rel","name":"</p>"}</script>
		<svg><script type="application/ld+json">{"@context":"https://schema.org","@id":"svg","name":"in svg"}</script></svg>
		<script type="application/ld+json">{"@context":"https://schema.org","name":"unclosed"`)})
	for _, p := range pages {
		alone, sa, err := Extract(context.Background(), p.URL, p.Body, Options{Syntaxes: JSONLD})
		if err != nil {
			t.Fatal(err)
		}
		all, st, err := Extract(context.Background(), p.URL, p.Body, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sa.JSONLD != st.JSONLD || sa.JSONLDScripts != st.JSONLDScripts || sa.JSONLDMalformed != st.JSONLDMalformed {
			t.Errorf("%s: counts differ: alone %+v, with the tree %+v", p.URL, sa, st)
			continue
		}
		tail := all[st.RDFa+st.Microdata:]
		a, _ := canonical(alone)
		b, _ := canonical(tail)
		if a != b {
			t.Errorf("%s: JSON-LD differs:\nalone:\n%s\nwith the tree:\n%s", p.URL, a, b)
		}
	}
}

// TestExtractConcurrent runs extractions of every structured page on
// several goroutines (run with -race): the shared schema.org context must
// not be written to.
func TestExtractConcurrent(t *testing.T) {
	t.Parallel()
	pages := testweb.StructuredPages()
	pages = append(pages, testweb.StructuredPage{URL: "http://ex.org/arr", Body: []byte(
		`<script type="application/ld+json">{"@context":["https://schema.org",{"x":"http://ex.org/x"}],"@type":"Thing","x":"1","name":"n"}</script>`)})
	want := make([]int, len(pages))
	for i, p := range pages {
		q, _, _ := Extract(context.Background(), p.URL, p.Body, Options{})
		want[i] = len(q)
	}
	errs := make(chan string, 4*len(pages))
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i, p := range pages {
				q, _, err := Extract(context.Background(), p.URL, p.Body, Options{})
				if err != nil || len(q) != want[i] {
					errs <- fmt.Sprintf("%s: %d quads (want %d), err %v", p.URL, len(q), want[i], err)
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if want[len(want)-1] != 3 {
		t.Errorf("context array page: %d quads, want 3", want[len(want)-1])
	}
}
