package rdf

import (
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

const page = "http://ex.org/p"

func TestExtractSyntaxes(t *testing.T) {
	t.Parallel()
	g := " <" + page + "> ."
	tests := []struct {
		name   string
		syntax Syntax
		html   string
		want   []string // the expected triples as N-Triples, without " ."
	}{
		{"microdata person", Microdata, `<div itemscope itemtype="https://schema.org/Person">
			<span itemprop="name">Ada</span><a itemprop="url" href="/ada">home</a>
			<time itemprop="birthDate" datetime="1815-12-10">10 Dec</time>
			<meta itemprop="jobTitle" content="Analyst"><data itemprop="age" value="36">36</data></div>`,
			[]string{
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://schema.org/Person>`,
				`_:c14n0 <https://schema.org/name> "Ada"`,
				`_:c14n0 <https://schema.org/url> <http://ex.org/ada>`,
				`_:c14n0 <https://schema.org/birthDate> "1815-12-10"^^<http://www.w3.org/2001/XMLSchema#date>`,
				`_:c14n0 <https://schema.org/jobTitle> "Analyst"`,
				`_:c14n0 <https://schema.org/age> "36"^^<http://www.w3.org/2001/XMLSchema#integer>`,
			}},
		{"microdata nested itemid itemref", Microdata, `<div itemscope itemtype="http://schema.org/Product" itemid="#p1" itemref="extra">
			<span itemprop="name">Lamp</span>
			<div itemprop="offers" itemscope itemtype="http://schema.org/Offer"><span itemprop="price">9.5</span>
			<link itemprop="availability" href="http://schema.org/InStock"></div></div>
			<p id="extra"><span itemprop="color" lang="en">red</span></p>`,
			[]string{
				`<http://ex.org/p#p1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Product>`,
				`<http://ex.org/p#p1> <http://schema.org/name> "Lamp"`,
				`<http://ex.org/p#p1> <http://schema.org/offers> _:c14n0`,
				`<http://ex.org/p#p1> <http://schema.org/color> "red"@en`,
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Offer>`,
				`_:c14n0 <http://schema.org/price> "9.5"`,
				`_:c14n0 <http://schema.org/availability> <http://schema.org/InStock>`,
			}},
		{"microdata itemref cycle", Microdata, `<div id="a" itemscope itemtype="http://schema.org/Thing" itemref="a b"><span itemprop="name">x</span></div>
			<div id="b"><span itemprop="name">y</span></div>`,
			[]string{
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Thing>`,
				`_:c14n0 <http://schema.org/name> "x"`,
				`_:c14n0 <http://schema.org/name> "y"`,
			}},
		{"microdata untyped", Microdata, `<div itemscope><span itemprop="name">z</span></div>`,
			[]string{`_:c14n0 <http://ex.org/p#name> "z"`}},
		{"microdata itemprop-reverse", Microdata, `<div itemscope itemtype="http://schema.org/Store">
			<span itemprop="name">Mall</span>
			<link itemprop-reverse="owns" href="/owner"><meta itemprop-reverse="owns" content="a literal cannot be a subject">
			<div itemprop-reverse="containedIn" itemscope itemtype="http://schema.org/Bakery"><span itemprop="name">Bread</span></div>
			<div itemprop="employee" itemprop-reverse="worksFor" itemscope><span itemprop="name">Al</span></div></div>`,
			[]string{
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Store>`,
				`_:c14n0 <http://schema.org/name> "Mall"`,
				`<http://ex.org/owner> <http://schema.org/owns> _:c14n0`,
				`_:c14n1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Bakery>`,
				`_:c14n1 <http://schema.org/name> "Bread"`,
				`_:c14n1 <http://schema.org/containedIn> _:c14n0`,
				`_:c14n0 <http://schema.org/employee> _:c14n2`,
				`_:c14n2 <http://schema.org/worksFor> _:c14n0`,
				`_:c14n2 <http://schema.org/name> "Al"`,
			}},
		{"microdata additionalType expanded for schema.org only", Microdata, `<div itemscope itemtype="https://schema.org/Person">
			<link itemprop="additionalType" href="http://ex.org/Chef"></div>
			<div itemscope itemtype="http://ex.org/schema.org/Person"><link itemprop="additionalType" href="http://ex.org/Cook"></div>`,
			[]string{
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://schema.org/Person>`,
				`_:c14n0 <https://schema.org/additionalType> <http://ex.org/Chef>`,
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Chef>`,
				`_:c14n1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/schema.org/Person>`,
				`_:c14n1 <http://ex.org/schema.org/additionalType> <http://ex.org/Cook>`,
			}},
		{"json-ld schema.org context", JSONLD, `<script type="application/ld+json">{"@context":"https://schema.org",
			"@type":"Event","name":"Gig","url":"/gig","startDate":"2026-05-01","location":{"@type":"Place","name":"Hall"}}</script>`,
			[]string{
				`_:c14n0 <http://schema.org/location> _:c14n1`,
				`_:c14n0 <http://schema.org/name> "Gig"`,
				`_:c14n0 <http://schema.org/startDate> "2026-05-01"`,
				`_:c14n0 <http://schema.org/url> <http://ex.org/gig>`,
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Event>`,
				`_:c14n1 <http://schema.org/name> "Hall"`,
				`_:c14n1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Place>`,
			}},
		{"json-ld list and graph", JSONLD, `<script type="application/ld+json">{"@context":{"@vocab":"http://schema.org/"},
			"@graph":[{"@id":"http://ex.org/r","@type":"Recipe","recipeIngredient":{"@list":["a","b"]}}]}</script>`,
			[]string{
				`<http://ex.org/r> <http://schema.org/recipeIngredient> _:c14n1`,
				`<http://ex.org/r> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Recipe>`,
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> "b"`,
				`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#rest> <http://www.w3.org/1999/02/22-rdf-syntax-ns#nil>`,
				`_:c14n1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#first> "a"`,
				`_:c14n1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#rest> _:c14n0`,
			}},
		{"json-ld value object with many types", JSONLD, `<script type="application/ld+json">{"@context":{"@vocab":"http://schema.org/"},
			"name":{"@value":"x","@type":["http://ex.org/a","http://ex.org/b"]},"description":"kept"}</script>`,
			[]string{`_:c14n0 <http://schema.org/description> "kept"`}},
		{"rdfa lite", RDFa, `<div vocab="https://schema.org/" typeof="Person" resource="#me"><span property="name">Bo</span></div>`,
			[]string{
				`<http://ex.org/p#me> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://schema.org/Person>`,
				`<http://ex.org/p#me> <https://schema.org/name> "Bo"`,
				`<http://ex.org/p> <http://www.w3.org/ns/rdfa#usesVocabulary> <https://schema.org/>`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			quads, st, err := Extract(context.Background(), page, []byte(tc.html), Options{Syntaxes: tc.syntax})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range quads {
				if !strings.HasSuffix(q.String(), g) {
					t.Errorf("quad not in the page graph: %s", q)
				}
			}
			if st.Quads() != len(quads) {
				t.Errorf("stats count %d quads, got %d", st.Quads(), len(quads))
			}
			got, err := canonical(quads)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				// json-gold's canonicalization mislabels input that
				// already uses its c14n labels: write them as _:e.
				want[i] = strings.ReplaceAll(w, "_:c14n", "_:e") + " ."
			}
			wantC, err := canonicalLines(want)
			if err != nil {
				t.Fatal(err)
			}
			if got != wantC {
				t.Errorf("got:\n%s\nwant:\n%s", got, wantC)
			}
		})
	}
}

func TestExtractBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var many strings.Builder
	for range 50 {
		many.WriteString(`<div itemscope itemtype="http://schema.org/Thing"><span itemprop="name">n</span></div>`)
	}
	deep := strings.Repeat(`<div itemprop="subjectOf" itemscope>`, 40)
	tests := []struct {
		name  string
		html  string
		opts  Options
		check func(t *testing.T, q []Quad, st Stats)
	}{
		{"quad bound", many.String(), Options{MaxQuads: 10}, func(t *testing.T, q []Quad, st Stats) {
			if len(q) != 10 || !st.Truncated {
				t.Errorf("got %d quads, truncated %v; want 10, truncated", len(q), st.Truncated)
			}
		}},
		{"microdata depth", `<div itemscope itemtype="http://schema.org/Thing">` + deep, Options{MaxDepth: 5, Syntaxes: Microdata}, func(t *testing.T, q []Quad, st Stats) {
			if st.DepthCut == 0 || len(q) > 10 {
				t.Errorf("depth not cut: %d quads, stats %+v", len(q), st)
			}
		}},
		{"rdfa depth", strings.Repeat(`<div property="http://ex.org/v">`, 60) + "x", Options{MaxDepth: 20, Syntaxes: RDFa}, func(t *testing.T, q []Quad, st Stats) {
			if st.DepthCut == 0 || len(q) > 20 {
				t.Errorf("depth not cut: %d quads, stats %+v", len(q), st)
			}
		}},
		{"json-ld malformed", `<script type="application/ld+json">{"@type": </script><script type="application/ld+json">{"@context":{"@vocab":"http://schema.org/"},"name":"ok"}</script>`,
			Options{}, func(t *testing.T, q []Quad, st Stats) {
				if st.JSONLDMalformed != 1 || st.JSONLDScripts != 2 || len(q) != 1 {
					t.Errorf("want 1 malformed of 2 and 1 quad, got %d quads, %+v", len(q), st)
				}
			}},
		{"json-ld too large", `<script type="application/ld+json">{"@context":{"@vocab":"http://schema.org/"},"name":"` + strings.Repeat("x", 2000) + `"}</script>`,
			Options{MaxJSONLDBytes: 1000}, func(t *testing.T, q []Quad, st Stats) {
				if st.JSONLDTooLarge != 1 || len(q) != 0 {
					t.Errorf("want it skipped, got %d quads, %+v", len(q), st)
				}
			}},
		{"json-ld deep", `<script type="application/ld+json">` + strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300) + `</script>`,
			Options{}, func(t *testing.T, q []Quad, st Stats) {
				if st.DepthCut != 1 {
					t.Errorf("want it cut, got %+v", st)
				}
			}},
		{"json-ld remote context refused", `<script type="application/ld+json">{"@context":"http://127.0.0.1:1/ctx","name":"x"}</script>`,
			Options{}, func(t *testing.T, q []Quad, st Stats) {
				if st.JSONLDRemoteRefused != 1 || len(q) != 0 {
					t.Errorf("want refused, got %d quads, %+v", len(q), st)
				}
			}},
		{"invalid iris dropped", `<div itemscope itemtype="http://schema.org/Thing"><a itemprop="url" href="http://a b/<x>">x</a><span itemprop="name">n</span></div>`,
			Options{}, func(t *testing.T, q []Quad, st Stats) {
				if st.Invalid != 1 || len(q) != 2 {
					t.Errorf("want 1 invalid and 2 quads, got %d quads, %+v", len(q), st)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, st, err := Extract(ctx, page, []byte(tc.html), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, q, st)
		})
	}
	if _, _, err := Extract(ctx, page, make([]byte, 100), Options{MaxHTMLBytes: 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized page: err %v, want ErrTooLarge", err)
	}
	if _, _, err := Extract(ctx, "relative", nil, Options{}); err == nil {
		t.Error("relative page URL accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Extract(cctx, page, []byte("<p>"), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
}

func TestBlankNodesScopedPerPage(t *testing.T) {
	t.Parallel()
	doc := []byte(`<div itemscope itemtype="http://schema.org/Thing"><span itemprop="name">n</span></div>
		<script type="application/ld+json">{"@context":{"@vocab":"http://schema.org/"},"@id":"_:b0","name":"m"}</script>
		<div vocab="http://schema.org/" typeof="Thing" resource="_:b0"><span property="name">o</span></div>`)
	qa, _, _ := Extract(context.Background(), "http://ex.org/a", doc, Options{})
	qb, _, _ := Extract(context.Background(), "http://ex.org/b", doc, Options{})
	blanks := func(qs []Quad) map[string]bool {
		m := map[string]bool{}
		for _, q := range qs {
			for _, t := range []Term{q.S, q.O} {
				if t.Kind == Blank {
					m[t.Value] = true
				}
			}
		}
		return m
	}
	a, b := blanks(qa), blanks(qb)
	if len(a) != 3 {
		t.Errorf("page a: %d blank nodes, want 3 (one per syntax's item): %v", len(a), a)
	}
	for l := range a {
		if b[l] {
			t.Errorf("label %s used on two pages", l)
		}
	}
}

func TestDeepPages(t *testing.T) {
	t.Parallel()
	// Past 512 open elements the HTML parser gives up: RDFa and microdata
	// are cut, JSON-LD is still read.
	deep := `<script type="application/ld+json">{"@context":"https://schema.org","name":"kept"}</script>` +
		`<div about="http://ex.org/s" property="http://ex.org/p">` + strings.Repeat("<span>", 1000) + "x"
	q, st, err := Extract(context.Background(), page, []byte(deep), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 1 || q[0].O.Value != "kept" || st.DepthCut != 1 {
		t.Fatalf("want the JSON-LD only and one cut, got %v, %+v", q, st)
	}
	shallow := `<div about="http://ex.org/s" property="http://ex.org/p" datatype="rdf:XMLLiteral">a<b>c</b></div>`
	q, _, _ = Extract(context.Background(), page, []byte(shallow), Options{Syntaxes: RDFa})
	if len(q) != 1 || q[0].O.Value != "a<b>c</b>" || q[0].O.Datatype != rdfXML {
		t.Fatalf("want the markup, got %v", q)
	}
	n := &html.Node{}
	cur := n
	for range 10 {
		c := &html.Node{Type: html.ElementNode}
		cur.AppendChild(c)
		cur = c
	}
	if !deeperThan(n, 5) || deeperThan(n, 10) || deeperThan(&html.Node{}, 0) {
		t.Error("deeperThan wrong")
	}
}

// TestRDFaPropertyCopying checks HTML+RDFa property copying: a subject
// gets the triples of each rdfa:Pattern it copies, the copy triples and
// the referenced patterns go, and a pattern nothing copies stays as it is.
func TestRDFaPropertyCopying(t *testing.T) {
	t.Parallel()
	const (
		typ     = `<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>`
		pattern = `<http://www.w3.org/ns/rdfa#Pattern>`
		vocab   = `<http://ex.org/p> <http://www.w3.org/ns/rdfa#usesVocabulary> <http://ex.org/v#>`
	)
	tests := []struct {
		name string
		html string
		want []string // the expected triples as N-Triples, without " ."
	}{
		{"unreferenced pattern kept", `<body vocab="http://ex.org/v#">
			<div resource="#a" typeof="T"><link property="rdfa:copy" resource="#used"></div>
			<p resource="#used" typeof="rdfa:Pattern"><span property="n">x</span></p>
			<p resource="#spare" typeof="rdfa:Pattern"><span property="n">y</span></p></body>`,
			[]string{
				`<http://ex.org/p#a> ` + typ + ` <http://ex.org/v#T>`,
				`<http://ex.org/p#a> <http://ex.org/v#n> "x"`,
				`<http://ex.org/p#spare> ` + typ + ` ` + pattern,
				`<http://ex.org/p#spare> <http://ex.org/v#n> "y"`,
				vocab,
			}},
		{"pattern copying a pattern", `<body vocab="http://ex.org/v#">
			<div resource="#a"><link property="rdfa:copy" resource="#p1"></div>
			<div resource="#p1" typeof="rdfa:Pattern"><span property="n">x</span><link property="rdfa:copy" resource="#p2"></div>
			<div resource="#p2" typeof="rdfa:Pattern"><span property="m">z</span></div></body>`,
			[]string{
				`<http://ex.org/p#a> <http://ex.org/v#n> "x"`,
				`<http://ex.org/p#a> <http://ex.org/v#m> "z"`,
				vocab,
			}},
		{"no copy leaves patterns alone", `<body vocab="http://ex.org/v#">
			<p resource="#spare" typeof="rdfa:Pattern"><span property="n">y</span></p></body>`,
			[]string{
				`<http://ex.org/p#spare> ` + typ + ` ` + pattern,
				`<http://ex.org/p#spare> <http://ex.org/v#n> "y"`,
				vocab,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkRDFa(t, tc.html, tc.want)
		})
	}
}

// checkRDFa extracts the RDFa of html (at page) and compares its canonical
// form with want, triples as N-Triples without " .".
func checkRDFa(t *testing.T, html string, want []string) {
	t.Helper()
	quads, _, err := Extract(context.Background(), page, []byte(html), Options{Syntaxes: RDFa})
	if err != nil {
		t.Fatal(err)
	}
	got, err := canonical(quads)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, len(want))
	for i, w := range want {
		lines[i] = w + " ."
	}
	wantC, err := canonicalLines(lines)
	if err != nil {
		t.Fatal(err)
	}
	if got != wantC {
		t.Errorf("got:\n%s\nwant:\n%s", got, wantC)
	}
}

// TestRDFaLists: the values a list collects belong to the subject they
// were given for. Under an element with a current object resource (rel
// and resource), an inlist property of a child is about that resource, so
// it starts that resource's list, not one for the element's subject; the
// children share it (the shape of W3C RDFa test 0226, which the HTML5
// cases do not cover).
func TestRDFaLists(t *testing.T) {
	t.Parallel()
	const (
		first = `<http://www.w3.org/1999/02/22-rdf-syntax-ns#first>`
		rest  = `<http://www.w3.org/1999/02/22-rdf-syntax-ns#rest>`
		nil_  = `<http://www.w3.org/1999/02/22-rdf-syntax-ns#nil>`
		v     = `<http://ex.org/v>`
		res   = `<http://ex.org/res>`
	)
	tests := []struct {
		name string
		html string
		want []string
	}{
		{"lists of two subjects stay apart", `<body prefix="ex: http://ex.org/"><div about="">
			<p property="ex:v" inlist>Foo</p>
			<div rel="ex:r" resource="/res"><p property="ex:v" inlist>Bar</p></div></div></body>`,
			[]string{
				`<http://ex.org/p> <http://ex.org/r> ` + res,
				`<http://ex.org/p> ` + v + ` _:a`, `_:a ` + first + ` "Foo"`, `_:a ` + rest + ` ` + nil_,
				res + ` ` + v + ` _:b`, `_:b ` + first + ` "Bar"`, `_:b ` + rest + ` ` + nil_,
			}},
		{"siblings fill one list of the resource", `<body prefix="ex: http://ex.org/"><div about="">
			<div rel="ex:r" resource="/res"><p property="ex:v" inlist>A</p><p property="ex:v" inlist>B</p></div></div></body>`,
			[]string{
				`<http://ex.org/p> <http://ex.org/r> ` + res,
				res + ` ` + v + ` _:a`, `_:a ` + first + ` "A"`, `_:a ` + rest + ` _:b`,
				`_:b ` + first + ` "B"`, `_:b ` + rest + ` ` + nil_,
			}},
		{"a list on the element itself", `<body prefix="ex: http://ex.org/"><div about="">
			<p property="ex:v" inlist>A</p><p property="ex:v" inlist>B</p></div></body>`,
			[]string{
				`<http://ex.org/p> ` + v + ` _:a`, `_:a ` + first + ` "A"`, `_:a ` + rest + ` _:b`,
				`_:b ` + first + ` "B"`, `_:b ` + rest + ` ` + nil_,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkRDFa(t, tc.html, tc.want)
		})
	}
}

// TestBaseHrefFallback: a <base href> that is not a URL leaves the page
// URL as the base of every syntax (HTML's frozen base URL), while a valid
// one, IRIs included, is used.
func TestBaseHrefFallback(t *testing.T) {
	t.Parallel()
	body := func(href string) []byte {
		return []byte(`<html><head><base href="` + href + `">
<script type="application/ld+json">{"@id":"ld","http://schema.org/name":"a"}</script></head>
<body><div itemscope itemid="md" itemtype="http://schema.org/Thing"><span itemprop="name">b</span></div>
<p about="rdfa" property="http://schema.org/name">c</p></body></html>`)
	}
	for _, tc := range []struct {
		href, dir string
		ids       []string
	}{
		{"http://[bad/", "http://ex.org/dir/", []string{"ld", "md", "rdfa"}},
		{"http://ex.org:99999999999/x/", "http://ex.org/dir/", []string{"ld", "md", "rdfa"}},
		{"/other/", "http://ex.org/other/", []string{"ld", "md", "rdfa"}},
		// json-gold writes the IRI percent-encoded: RDFa and microdata only.
		{"http://ex.org/ü/", "http://ex.org/ü/", []string{"md", "rdfa"}},
	} {
		quads, _, err := Extract(context.Background(), "http://ex.org/dir/page.html", body(tc.href), Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.href, err)
		}
		subjects := map[string]bool{}
		for _, q := range quads {
			subjects[q.S.Value] = true
		}
		for _, id := range tc.ids {
			if !subjects[tc.dir+id] {
				t.Errorf("base %q: no subject %s%s in %v", tc.href, tc.dir, id, subjects)
			}
		}
	}
}
