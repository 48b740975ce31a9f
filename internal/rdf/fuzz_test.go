package rdf

import (
	"context"
	"strings"
	"testing"
)

// fuzzCheck extracts page with one syntax and checks the invariants every
// output must keep, whatever the input: no panic, quads within bounds,
// all in the page graph, every IRI valid, every line N-Quads.
func fuzzCheck(t *testing.T, syntax Syntax, page []byte) {
	opts := Options{Syntaxes: syntax, MaxQuads: 2000, MaxDepth: 64, MaxJSONLDBytes: 64 << 10}
	quads, st, err := Extract(context.Background(), "http://fuzz.example/p", page, opts)
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	if len(quads) > opts.MaxQuads {
		t.Fatalf("%d quads past the bound %d", len(quads), opts.MaxQuads)
	}
	if st.Quads() != len(quads) {
		t.Fatalf("stats say %d quads, got %d", st.Quads(), len(quads))
	}
	for _, q := range quads {
		if q.G.Value != "http://fuzz.example/p" {
			t.Fatalf("quad outside the page graph: %s", q)
		}
		for _, term := range []Term{q.S, q.P, q.O} {
			if term.Kind == IRI && !validIRI(term.Value) {
				t.Fatalf("invalid IRI in %s", q)
			}
		}
		if q.P.Kind != IRI || q.S.Kind == Literal {
			t.Fatalf("bad triple shape: %s", q)
		}
		if s := q.String(); strings.ContainsAny(s, "\n\r") {
			t.Fatalf("N-Quads line breaks: %q", s)
		}
	}
}

func FuzzRDFa(f *testing.F) {
	addSeeds(f, "rdfa")
	f.Fuzz(func(t *testing.T, page []byte) { fuzzCheck(t, RDFa, page) })
}

func FuzzMicrodata(f *testing.F) {
	addSeeds(f, "microdata")
	f.Fuzz(func(t *testing.T, page []byte) { fuzzCheck(t, Microdata, page) })
}

func FuzzJSONLD(f *testing.F) {
	addSeeds(f, "jsonld")
	f.Fuzz(func(t *testing.T, page []byte) { fuzzCheck(t, JSONLD, page) })
}

// addSeeds adds a few hand-written pages; testdata/fuzz/FuzzX holds more.
func addSeeds(f *testing.F, kind string) {
	seeds := map[string][]string{
		"rdfa": {
			`<html prefix="ex: http://ex.org/"><body vocab="http://schema.org/"><div typeof="Person" about="#a"><span property="name">A</span><a rel="knows" href="#b">b</a><ol><li inlist property="ex:l">1</li></ol></div></body></html>`,
			`<div rel="ex:p" rev="ex:q"><span about="[_:x]" typeof="_:t" property=":v" datatype="xsd:int" content="1">x</span><time property="ex:t">2012-01-01</time></div>`,
			`<link property="rdfa:copy" resource="_:p"/><p resource="_:p" typeof="rdfa:Pattern"><span property="http://a/b">c</span></p>`,
		},
		"microdata": {
			`<div itemscope itemtype="http://schema.org/Product" itemid="#p" itemref="r"><span itemprop="name">n</span><div itemprop="offers" itemscope><data itemprop="price" value="1.5"></data></div></div><p id="r"><a itemprop="url" href="/x">x</a></p>`,
			`<div itemscope id="a" itemref="a"><meta itemprop="x" content="y"><time itemprop="t" datetime="P1D"></time></div>`,
			"<meta http-equiv=content-language content=fr><template><p id=t itemprop=a>1</p></template><div itemscope itemtype=\"http://a/T\" itemref=s><time itemprop=\"d e\u00a0f\">2024-01-01</time></div><div itemscope itemtype=\"https://schema.org/T\" itemref=s></div><div id=s itemprop=x itemscope><meter itemprop=m>INF</meter><data itemprop=n value=-INF></data></div>",
		},
		"jsonld": {
			`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Recipe","name":"r","recipeIngredient":["a","b"],"author":{"@type":"Person","name":"p"}}</script>`,
			`<script type="application/ld+json">[{"@context":{"@vocab":"http://ex.org/"},"@graph":[{"@id":"_:a","l":{"@list":[1,2.5,true]}}]}]</script>`,
			`<script type="application/ld+json">{"@context":{"x":{"@reverse":"http://ex.org/r"}},"x":{"@id":"http://ex.org/y"}}</script>`,
		},
	}
	for _, s := range seeds[kind] {
		f.Add([]byte(s))
	}
}
