package rdf

import (
	"context"
	"strings"
	"testing"
)

// TestMicrodataAlgorithm checks the points of HTML's microdata algorithm
// (WHATWG HTML §5.2 and §5.3, as the note "Microdata to RDF" reads them)
// that real pages hit and the W3C suite does not cover.
func TestMicrodataAlgorithm(t *testing.T) {
	t.Parallel()
	const (
		s   = "http://schema.org/"
		typ = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
		xsd = "http://www.w3.org/2001/XMLSchema#"
	)
	tests := []struct {
		name string
		html string
		want []string // the expected triples as N-Triples, without " ."
	}{
		{"itemref cycle between two items", `<div itemscope itemtype="http://schema.org/Person" id="a" itemref="b">
			<span itemprop="name">A</span></div>
			<div id="b" itemprop="knows" itemscope itemref="a"><span itemprop="name">B</span></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Person>`, `_:e0 <` + s + `name> "A"`, `_:e0 <` + s + `knows> _:e1`,
				`_:e1 <` + s + `name> "B"`, // itemref="a" names an item: not crawled into
			}},
		{"nested itemscope without itemprop is its own item", `<div itemscope itemtype="http://schema.org/Person">
			<span itemprop="name">A</span>
			<div itemscope itemtype="http://schema.org/Place"><span itemprop="name">P</span></div></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Person>`, `_:e0 <` + s + `name> "A"`,
				`_:e1 ` + typ + ` <` + s + `Place>`, `_:e1 <` + s + `name> "P"`,
			}},
		{"values by element", `<base href="http://ex.org/dir/">
			<div itemscope itemtype="http://schema.org/Thing" lang="en">
			<meta itemprop="a" content="m"><a itemprop="b" href="x">t</a><link itemprop="c" href="/y">
			<img itemprop="d" src="i.png"><object itemprop="e" data="o.swf"></object>
			<time itemprop="f" datetime="2024-02-29">t</time><data itemprop="g" value="42">x</data>
			<meter itemprop="h" value="0.5">x</meter><span itemprop="i">text</span>
			<audio itemprop="j" src="a.ogg"></audio><area itemprop="k" href="#k"></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Thing>`,
				`_:e0 <` + s + `a> "m"@en`,
				`_:e0 <` + s + `b> <http://ex.org/dir/x>`,
				`_:e0 <` + s + `c> <http://ex.org/y>`,
				`_:e0 <` + s + `d> <http://ex.org/dir/i.png>`,
				`_:e0 <` + s + `e> <http://ex.org/dir/o.swf>`,
				`_:e0 <` + s + `f> "2024-02-29"^^<` + xsd + `date>`,
				`_:e0 <` + s + `g> "42"^^<` + xsd + `integer>`,
				`_:e0 <` + s + `h> "0.5"^^<` + xsd + `double>`,
				`_:e0 <` + s + `i> "text"@en`,
				`_:e0 <` + s + `j> <http://ex.org/dir/a.ogg>`,
				`_:e0 <` + s + `k> <http://ex.org/dir/#k>`,
			}},
		{"time without datetime: its text, typed by its form", `<div itemscope itemtype="http://schema.org/Event" lang="fr">
			<time itemprop="startDate">2024-05-01</time><time itemprop="endDate">demain</time>
			<time itemprop="doorTime">19:30:00</time></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Event>`,
				`_:e0 <` + s + `startDate> "2024-05-01"^^<` + xsd + `date>`,
				`_:e0 <` + s + `endDate> "demain"@fr`,
				`_:e0 <` + s + `doorTime> "19:30:00"^^<` + xsd + `time>`,
			}},
		{"Content-Language pragma: the default language, the last one wins", `<html><head>
			<meta http-equiv="Content-Language" content="de"><meta http-equiv="content-language" content=" fr  x">
			<meta http-equiv="content-language" content="en, es"></head><body>
			<div itemscope itemtype="http://schema.org/Thing"><span itemprop="name">a</span>
			<span itemprop="alternateName" lang="">b</span><meta itemprop="description" content="c" lang="it"></div></body></html>`,
			[]string{`_:e0 ` + typ + ` <` + s + `Thing>`, `_:e0 <` + s + `name> "a"@fr`, `_:e0 <` + s + `alternateName> "b"`, `_:e0 <` + s + `description> "c"@it`}},
		{"untyped datetime keeps the language", `<div itemscope itemtype="http://schema.org/Event" lang="en">
			<time itemprop="startDate" datetime="next week">soon</time></div>`,
			[]string{`_:e0 ` + typ + ` <` + s + `Event>`, `_:e0 <` + s + `startDate> "next week"@en`}},
		{"data and meter without value are empty", `<div itemscope itemtype="http://schema.org/Thing" lang="en">
			<data itemprop="a">7</data><meter itemprop="b">7</meter></div>`,
			[]string{`_:e0 ` + typ + ` <` + s + `Thing>`, `_:e0 <` + s + `a> ""`, `_:e0 <` + s + `b> ""`}},
		{"numbers by their XSD lexical form", `<div itemscope itemtype="http://schema.org/Thing">
			<data itemprop="a" value="123456789012345678901234567890"></data><data itemprop="b" value="-5"></data>
			<data itemprop="c" value="1e3"></data><data itemprop="d" value="INF"></data><data itemprop="e" value="NaN"></data>
			<data itemprop="f" value=".5"></data><data itemprop="g" value="inf"></data><data itemprop="h" value="0x1p3"></data>
			<data itemprop="i" value="Infinity"></data><data itemprop="j" value=" 5"></data><data itemprop="k" value="5."></data></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Thing>`,
				`_:e0 <` + s + `a> "123456789012345678901234567890"^^<` + xsd + `integer>`,
				`_:e0 <` + s + `b> "-5"^^<` + xsd + `integer>`,
				`_:e0 <` + s + `c> "1e3"^^<` + xsd + `double>`,
				`_:e0 <` + s + `d> "INF"^^<` + xsd + `double>`,
				`_:e0 <` + s + `e> "NaN"^^<` + xsd + `double>`,
				`_:e0 <` + s + `f> ".5"^^<` + xsd + `double>`,
				`_:e0 <` + s + `g> "inf"`,
				`_:e0 <` + s + `h> "0x1p3"`,
				`_:e0 <` + s + `i> "Infinity"`,
				`_:e0 <` + s + `j> " 5"`,
				`_:e0 <` + s + `k> "5."^^<` + xsd + `double>`,
			}},
		{"itemid relative, multiple types, first one's vocabulary", `<base href="http://ex.org/a/">
			<div itemscope itemid="../item#1" itemtype="http://ex.org/v/A http://schema.org/B relative">
			<span itemprop="name">n</span></div>`,
			[]string{
				`<http://ex.org/item#1> ` + typ + ` <http://ex.org/v/A>`,
				`<http://ex.org/item#1> ` + typ + ` <` + s + `B>`,
				`<http://ex.org/item#1> <http://ex.org/v/name> "n"`,
			}},
		{"empty itemid gives a blank node, not the page", `<div itemscope itemid=" " itemtype="http://schema.org/Thing">
			<span itemprop="name">a</span></div><div itemscope itemid="" itemtype="http://schema.org/Thing"><span itemprop="name">b</span></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Thing>`, `_:e0 <` + s + `name> "a"`,
				`_:e1 ` + typ + ` <` + s + `Thing>`, `_:e1 <` + s + `name> "b"`,
			}},
		{"itemprop names split on ASCII whitespace only", "<div itemscope itemtype=\"http://schema.org/Thing\">" +
			"<span itemprop=\" a\tb\nc\fd  a \">x</span><span itemprop=\"e\u00a0f\">y</span></div>",
			[]string{
				`_:e0 ` + typ + ` <` + s + `Thing>`,
				`_:e0 <` + s + `a> "x"`, `_:e0 <` + s + `b> "x"`, `_:e0 <` + s + `c> "x"`, `_:e0 <` + s + `d> "x"`,
				"_:e0 <" + s + "e\u00a0f> \"y\"",
			}},
		{"absolute itemprop names as they are", `<div itemscope itemtype="http://schema.org/Thing">
			<span itemprop="http://purl.org/dc/terms/title name">x</span></div>`,
			[]string{`_:e0 ` + typ + ` <` + s + `Thing>`, `_:e0 <http://purl.org/dc/terms/title> "x"`, `_:e0 <` + s + `name> "x"`}},
		{"additionalType expanded as a name or an IRI, in schema.org items only", `<div itemscope itemtype="http://schema.org/Thing">
			<link itemprop="http://schema.org/additionalType" href="http://ex.org/A"></div>
			<div itemscope itemtype="http://ex.org/v/T"><link itemprop="http://schema.org/additionalType" href="http://ex.org/B"></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Thing>`, `_:e0 ` + typ + ` <http://ex.org/A>`, `_:e0 <` + s + `additionalType> <http://ex.org/A>`,
				`_:e1 ` + typ + ` <http://ex.org/v/T>`, `_:e1 <` + s + `additionalType> <http://ex.org/B>`,
			}},
		{"untyped item in a typed one takes its vocabulary", `<div itemscope itemtype="http://ex.org/v#T">
			<div itemprop="p" itemscope><span itemprop="q">x</span></div></div>`,
			[]string{`_:e0 ` + typ + ` <http://ex.org/v#T>`, `_:e0 <http://ex.org/v#p> _:e1`, `_:e1 <http://ex.org/v#q> "x"`}},
		{"template contents are not in the document", `<template><div itemscope itemtype="http://schema.org/Product">
			<span itemprop="name">{{name}}</span></div><p id="t" itemprop="sku">{{sku}}</p></template>
			<div itemscope itemtype="http://schema.org/Product" itemref="t"><template><span itemprop="name">{{n}}</span></template>
			<span itemprop="name">real</span></div>`,
			[]string{`_:e0 ` + typ + ` <` + s + `Product>`, `_:e0 <` + s + `name> "real"`}},
		{"an item shared by two vocabularies gets properties in each", `<div itemscope itemtype="http://schema.org/Person" itemref="addr"></div>
			<div itemscope itemtype="http://xmlns.com/foaf/0.1/Person" itemref="addr"></div>
			<div id="addr" itemprop="address" itemscope><span itemprop="city">X</span></div>`,
			[]string{
				`_:e0 ` + typ + ` <` + s + `Person>`, `_:e0 <` + s + `address> _:e2`,
				`_:e1 ` + typ + ` <http://xmlns.com/foaf/0.1/Person>`, `_:e1 <http://xmlns.com/foaf/0.1/address> _:e2`,
				`_:e2 <` + s + `city> "X"`, `_:e2 <http://xmlns.com/foaf/0.1/city> "X"`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			quads, _, err := Extract(context.Background(), page, []byte(tc.html), Options{Syntaxes: Microdata})
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonical(quads)
			if err != nil {
				t.Fatal(err)
			}
			lines := make([]string, len(tc.want))
			for i, w := range tc.want {
				lines[i] = w + " ."
			}
			want, err := canonicalLines(lines)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestXSDNumber checks the lexical forms data and meter values are
// typed by.
func TestXSDNumber(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"0": "integer", "+7": "integer", "-007": "integer", "99999999999999999999999": "integer",
		"1.5": "double", "-.5": "double", "5.": "double", "1E-3": "double", "+1.0e+10": "double",
		"INF": "double", "-INF": "double", "+INF": "double", "NaN": "double",
		"": "", "+": "", ".": "", "e3": "", "1e": "", "inf": "", "nan": "", "Infinity": "",
		"0x10": "", "1_000": "", " 1": "", "1 ": "", "1,5": "", "--1": "", "-NaN": "",
	} {
		got := strings.TrimPrefix(numberType(v), nsXSD)
		if got != want {
			t.Errorf("numberType(%q) = %q, want %q", v, got, want)
		}
	}
}
