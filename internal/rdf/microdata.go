package rdf

// HTML microdata to RDF, as the W3C Interest Group Note "Microdata to RDF"
// (second edition) maps it: each top-level item (itemscope without
// itemprop) becomes a subject, its itemid IRI or a blank node; itemtype
// gives rdf:type triples and the vocabulary that turns plain itemprop
// names into property IRIs; nested items become the values of the
// properties they carry; itemref brings in properties from elsewhere.
// The note's itemprop-reverse (its appendix, an experimental attribute)
// states the triple the other way: the value is the subject, the item the
// object.

import (
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// mdVocabs is the note's vocabulary registry, for the vocabularies it
// names: property IRIs are the vocabulary IRI and the name, and
// schema.org's additionalType is also an rdf:type (vocabulary expansion).
// schema.org is "unordered": a property with many values gives many
// triples, never an rdf:List.
var mdVocabs = []string{"http://schema.org/", "https://schema.org/", "http://microformats.org/profile/hcard"}

type mdProc struct {
	s      *sink
	base   string
	doc    *html.Node
	maxDep int
	cut    int
	memory map[*html.Node]Term
	done   map[mdGen]bool        // items whose triples are generated, per vocabulary
	ids    map[string]*html.Node // element ids, built on first itemref
	order  map[*html.Node]int    // tree positions, built on first itemref
	typ    Term
	// pragma is the pragma-set default language, found on first use.
	pragma     string
	pragmaDone bool
}

// extractMicrodata converts the document's microdata items to triples.
func extractMicrodata(doc *html.Node, base string, s *sink, maxDepth int) (cut int) {
	m := &mdProc{s: s, base: htmlBase(doc, base), doc: doc, maxDep: maxDepth,
		memory: map[*html.Node]Term{}, done: map[mdGen]bool{}, typ: NewIRI(RDFType)}
	m.topLevel(doc, 0)
	return m.cut
}

// topLevel finds the top-level items: elements with itemscope and
// neither itemprop nor itemprop-reverse, anywhere in the document.
func (m *mdProc) topLevel(n *html.Node, depth int) {
	if depth > maxTreeDepth {
		m.cut++
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if hasAttr(c, "itemscope") && !hasAttr(c, "itemprop") && !hasAttr(c, "itemprop-reverse") {
			m.item(c, "", 0)
			if m.s.full() {
				return
			}
		}
		if c.DataAtom != atom.Template {
			m.topLevel(c, depth+1)
		}
	}
}

// maxTreeDepth bounds recursion over the parsed tree when looking for
// items; the tree is as deep as the page's tags nest.
const maxTreeDepth = 1024

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return true
		}
	}
	return false
}

// mdGen is an item generated under a vocabulary.
type mdGen struct {
	e     *html.Node
	vocab string
}

// item generates the triples of the item on element e and returns its
// subject. vocab is the enclosing item's vocabulary.
//
// An item keeps the subject memory gave it the first time. The note's
// algorithm generates an item's triples each time it is reached; an
// untyped item reached from items of two vocabularies (a shared itemref)
// so gets its properties named in each. Generating once per item and
// vocabulary gives the same graph and cuts cycles.
func (m *mdProc) item(e *html.Node, vocab string, depth int) Term {
	subject, ok := m.memory[e]
	if !ok {
		subject = m.subject(e)
		m.memory[e] = subject
	}
	if depth >= m.maxDep {
		if !ok {
			m.cut++
		}
		return subject
	}
	var types []string
	if v, ok := attr(e, "itemtype"); ok {
		for _, t := range htmlFields(v) {
			if hasScheme(t) {
				types = append(types, t)
			}
		}
	}
	if len(types) > 0 {
		vocab = mdVocab(types[0])
	}
	gen := mdGen{e, vocab}
	if m.done[gen] {
		return subject // already generated (or being generated: a cycle)
	}
	m.done[gen] = true
	for _, t := range types {
		m.s.add(subject, m.typ, NewIRI(t))
	}
	for _, p := range m.properties(e) {
		names, _ := attr(p, "itemprop")
		var value Term
		for _, name := range htmlFields(names) {
			pred := m.propertyIRI(name, vocab)
			if pred.IsZero() {
				continue
			}
			if value.IsZero() {
				value = m.value(p, vocab, depth)
			}
			m.s.add(subject, pred, value)
			// Vocabulary expansion: the registry makes schema.org's
			// additionalType a sub-property of rdf:type, whatever the
			// value's kind, in items of that vocabulary, written as a
			// name or as the absolute IRI.
			if (vocab == "http://schema.org/" || vocab == "https://schema.org/") && pred.Value == vocab+"additionalType" {
				m.s.add(subject, m.typ, value)
			}
		}
		// itemprop-reverse: (value, predicate, item), for a value that
		// is an item or an IRI; a literal cannot be a subject and is
		// ignored.
		rnames, _ := attr(p, "itemprop-reverse")
		for _, name := range htmlFields(rnames) {
			pred := m.propertyIRI(name, vocab)
			if pred.IsZero() {
				continue
			}
			if value.IsZero() {
				value = m.value(p, vocab, depth)
			}
			if value.Kind == Literal {
				break
			}
			m.s.add(value, pred, subject)
		}
		if m.s.full() {
			break
		}
	}
	return subject
}

// subject is the subject of the item on e: its global identifier (the
// itemid resolved against the base), else a fresh blank node. An itemid
// that resolves to an invalid IRI is kept, so the sink drops the item's
// triples, as it drops every triple with an invalid IRI.
func (m *mdProc) subject(e *html.Node) Term {
	if id, ok := attr(e, "itemid"); ok {
		// The URL parser strips leading and trailing C0 controls and spaces.
		if id = strings.TrimFunc(id, func(r rune) bool { return r <= ' ' }); id != "" {
			return NewIRI(resolveIRI(m.base, id))
		}
	}
	return m.s.blank()
}

// htmlFields splits an attribute value on ASCII whitespace, as HTML's
// token lists (itemprop, itemtype, itemref) are split, dropping repeated
// tokens: U+00A0 and other Unicode spaces belong to the token.
func htmlFields(v string) []string {
	f := strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
	})
	if len(f) < 2 {
		return f
	}
	seen := make(map[string]bool, len(f))
	out := f[:0]
	for _, t := range f {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// mdVocab is the vocabulary of a type IRI: a registered vocabulary it
// starts with, else the IRI up to its fragment, else up to its last "/".
func mdVocab(t string) string {
	for _, v := range mdVocabs {
		if strings.HasPrefix(t, v) {
			if !strings.HasSuffix(v, "/") {
				return v + "#"
			}
			return v
		}
	}
	if i := strings.IndexByte(t, '#'); i > 0 {
		return t[:i+1]
	}
	return resolveIRI(t, ".")
}

// propertyIRI is the note's property URI generation: an absolute name as
// is, else the vocabulary and the name, else (no type anywhere) the
// document base with the name as fragment.
func (m *mdProc) propertyIRI(name, vocab string) Term {
	switch {
	case hasScheme(name):
		return NewIRI(name)
	case vocab != "":
		return NewIRI(vocab + name)
	}
	b := m.base
	if i := strings.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	return NewIRI(b + "#" + name)
}

// properties returns the property elements of the item on e, in tree
// order: elements with itemprop below e, not inside nested items, and in
// the subtrees its itemref ids name (HTML "the properties of an item").
// Elements with itemprop-reverse are found by the same crawl (the note's
// "reverse properties of an item") and returned with them.
func (m *mdProc) properties(e *html.Node) []*html.Node {
	var out []*html.Node
	var pending []*html.Node
	for c := mdChildren(e); c != nil; c = c.PrevSibling {
		pending = append(pending, c)
	}
	refs, hasRefs := attr(e, "itemref")
	if hasRefs {
		m.indexIDs()
		for _, id := range htmlFields(refs) {
			if n, ok := m.ids[id]; ok && n != e {
				pending = append(pending, n)
			}
		}
	}
	seen := map[*html.Node]bool{}
	for len(pending) > 0 && len(out) < m.s.max {
		n := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if n.Type != html.ElementNode || seen[n] || n == e {
			continue
		}
		seen[n] = true
		if hasAttr(n, "itemprop") || hasAttr(n, "itemprop-reverse") {
			out = append(out, n)
		}
		if !hasAttr(n, "itemscope") {
			for c := mdChildren(n); c != nil; c = c.PrevSibling {
				pending = append(pending, c)
			}
		}
	}
	if hasRefs {
		sort.SliceStable(out, func(i, j int) bool { return m.order[out[i]] < m.order[out[j]] })
	}
	return out
}

// mdChildren returns n's last child, to walk its children backwards, or
// nil for a template: the parser puts a template's contents under it, but
// in the DOM they are a separate fragment, outside the document's items,
// properties and ids (client-side templates hold placeholders such as
// {{name}}, not data).
func mdChildren(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == atom.Template {
		return nil
	}
	return n.LastChild
}

// indexIDs maps element ids, and tree positions, once per document.
func (m *mdProc) indexIDs() {
	if m.ids != nil {
		return
	}
	m.ids = map[string]*html.Node{}
	m.order = map[*html.Node]int{}
	stack := []*html.Node{m.doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode {
			m.order[n] = len(m.order)
			if id, ok := attr(n, "id"); ok {
				if _, dup := m.ids[id]; !dup {
					m.ids[id] = n
				}
			}
		}
		for c := mdChildren(n); c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
}

// value is the property value of element p (the note's "Property value"
// and HTML's itemprop value rules).
func (m *mdProc) value(p *html.Node, vocab string, depth int) Term {
	if hasAttr(p, "itemscope") {
		return m.item(p, vocab, depth+1)
	}
	if c, ok := attr(p, "content"); ok {
		return NewLiteral(c, "", m.lang(p))
	}
	urlAttr := ""
	switch p.DataAtom {
	case atom.A, atom.Area, atom.Link:
		urlAttr = "href"
	case atom.Audio, atom.Embed, atom.Iframe, atom.Img, atom.Source, atom.Track, atom.Video:
		urlAttr = "src"
	case atom.Object:
		urlAttr = "data"
	case atom.Data, atom.Meter:
		// HTML: the value attribute, or the empty string; the note types
		// it as a number or leaves it a simple literal.
		v, _ := attr(p, "value")
		return NewLiteral(v, numberType(v), "")
	case atom.Time:
		// HTML's datetime value: the datetime attribute, else the
		// element's child text content, typed by its XSD form or else
		// a string in the element's language.
		v, ok := attr(p, "datetime")
		if !ok {
			v = childText(p)
		}
		if dt := datetimeType(v); dt != "" {
			return NewLiteral(v, dt, "")
		}
		return NewLiteral(v, "", m.lang(p))
	}
	if urlAttr != "" {
		if v, ok := attr(p, urlAttr); ok {
			return NewIRI(resolveIRI(m.base, strings.TrimSpace(v)))
		}
		return NewLiteral("", "", "") // HTML: a missing URL is the empty string
	}
	return NewLiteral(textContent(p), "", m.lang(p))
}

// numberType types a data or meter value by its lexical form (XML
// Schema 1.1 Part 2): xsd:integer ([+-]?digits, of any length),
// xsd:double (decimal digits with a point or an exponent, [+-]?INF,
// NaN), or none (a simple literal) for anything else, spaces included.
func numberType(v string) string {
	switch v {
	case "INF", "+INF", "-INF", "NaN":
		return nsXSD + "double"
	}
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	intDigits := digits(v[i:])
	i += intDigits
	if i == len(v) {
		if intDigits == 0 {
			return ""
		}
		return nsXSD + "integer"
	}
	fracDigits := 0
	if v[i] == '.' {
		i++
		fracDigits = digits(v[i:])
		i += fracDigits
	}
	if intDigits+fracDigits == 0 {
		return ""
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		n := digits(v[i:])
		if n == 0 {
			return ""
		}
		i += n
	}
	if i != len(v) {
		return ""
	}
	return nsXSD + "double"
}

// digits counts the ASCII digits v starts with.
func digits(v string) int {
	n := 0
	for n < len(v) && v[n] >= '0' && v[n] <= '9' {
		n++
	}
	return n
}

// childText is the concatenation of n's text children (HTML's "child
// text content"), without its descendants' text.
func childText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// lang returns the language of n (HTML's "language of a node"): its
// nearest lang attribute (lang="" is unknown: no language), else the
// document's pragma-set default language.
func (m *mdProc) lang(n *html.Node) string {
	for d := 0; n != nil && d < maxTreeDepth; n, d = n.Parent, d+1 {
		if n.Type != html.ElementNode {
			continue
		}
		if v, ok := attr(n, "lang"); ok {
			return v
		}
	}
	if !m.pragmaDone {
		m.pragma, m.pragmaDone = pragmaLang(m.doc), true
	}
	return m.pragma
}

// pragmaLang is the document's pragma-set default language: from the last
// <meta http-equiv="content-language" content="..."> in tree order, the
// first token of a content without a comma (HTML §4.2.5.3).
func pragmaLang(doc *html.Node) string {
	lang := ""
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode && n.DataAtom == atom.Meta {
			he, _ := attr(n, "http-equiv")
			c, _ := attr(n, "content")
			if f := htmlFields(c); strings.EqualFold(he, "content-language") && len(f) > 0 && !strings.Contains(c, ",") {
				lang = f[0]
			}
		}
		for c := mdChildren(n); c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return lang
}
