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
	"strconv"
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
	ids    map[string]*html.Node // element ids, built on first itemref
	order  map[*html.Node]int    // tree positions, built on first itemref
	typ    Term
}

// extractMicrodata converts the document's microdata items to triples.
func extractMicrodata(doc *html.Node, base string, s *sink, maxDepth int) (cut int) {
	m := &mdProc{s: s, base: htmlBase(doc, base), doc: doc, maxDep: maxDepth,
		memory: map[*html.Node]Term{}, typ: NewIRI(RDFType)}
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
		m.topLevel(c, depth+1)
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

// item generates the triples of the item on element e and returns its
// subject. vocab is the enclosing item's vocabulary.
func (m *mdProc) item(e *html.Node, vocab string, depth int) Term {
	if t, ok := m.memory[e]; ok {
		return t // already generated (or being generated: a cycle)
	}
	var subject Term
	if id, ok := attr(e, "itemid"); ok && strings.TrimSpace(id) != "" {
		subject = NewIRI(resolveIRI(m.base, strings.TrimSpace(id)))
	} else {
		subject = m.s.blank()
	}
	m.memory[e] = subject
	if depth >= m.maxDep {
		m.cut++
		return subject
	}
	if types, ok := attr(e, "itemtype"); ok {
		first := true
		for _, t := range strings.Fields(types) {
			if !hasScheme(t) {
				continue
			}
			if first {
				vocab = mdVocab(t)
				first = false
			}
			m.s.add(subject, m.typ, NewIRI(t))
		}
	}
	for _, p := range m.properties(e) {
		names, _ := attr(p, "itemprop")
		var value Term
		for _, name := range strings.Fields(names) {
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
			// value's kind.
			if name == "additionalType" && (vocab == "http://schema.org/" || vocab == "https://schema.org/") {
				m.s.add(subject, m.typ, value)
			}
		}
		// itemprop-reverse: (value, predicate, item), for a value that
		// is an item or an IRI; a literal cannot be a subject and is
		// ignored.
		rnames, _ := attr(p, "itemprop-reverse")
		for _, name := range strings.Fields(rnames) {
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
	for c := e.LastChild; c != nil; c = c.PrevSibling {
		pending = append(pending, c)
	}
	refs, hasRefs := attr(e, "itemref")
	if hasRefs {
		m.indexIDs()
		for _, id := range strings.Fields(refs) {
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
			for c := n.LastChild; c != nil; c = c.PrevSibling {
				pending = append(pending, c)
			}
		}
	}
	if hasRefs {
		sort.SliceStable(out, func(i, j int) bool { return m.order[out[i]] < m.order[out[j]] })
	}
	return out
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
		for c := n.LastChild; c != nil; c = c.PrevSibling {
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
		if v, ok := attr(p, "value"); ok {
			return NewLiteral(v, numberType(v), "")
		}
	case atom.Time:
		if v, ok := attr(p, "datetime"); ok {
			if dt := datetimeType(v); dt != "" {
				return NewLiteral(v, dt, "")
			}
			return NewLiteral(v, "", "")
		}
	}
	if urlAttr != "" {
		if v, ok := attr(p, urlAttr); ok {
			return NewIRI(resolveIRI(m.base, strings.TrimSpace(v)))
		}
		return NewLiteral("", "", "") // HTML: a missing URL is the empty string
	}
	return NewLiteral(textContent(p), "", m.lang(p))
}

// numberType types a data or meter value: xsd:integer, xsd:double, or
// none (a plain string) when it is not a number.
func numberType(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return nsXSD + "integer"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXpP_") &&
		!strings.EqualFold(strings.TrimLeft(v, "+-"), "inf") && !strings.EqualFold(strings.TrimLeft(v, "+-"), "infinity") &&
		!strings.EqualFold(v, "nan") {
		return nsXSD + "double"
	}
	return ""
}

// lang returns the language of n: its nearest lang attribute.
func (m *mdProc) lang(n *html.Node) string {
	for d := 0; n != nil && d < maxTreeDepth; n, d = n.Parent, d+1 {
		if n.Type != html.ElementNode {
			continue
		}
		if v, ok := attr(n, "lang"); ok {
			return v
		}
	}
	return ""
}
