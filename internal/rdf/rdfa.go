package rdf

// RDFa 1.1 Core processing (the W3C Recommendation's §7.5 sequence) with
// the HTML+RDFa 1.1 host language rules: head and body take the parent
// object as subject, time/@datetime literals get their datatype from their
// lexical form, @rel and @rev lose their plain terms next to @property,
// and rdfa:copy property copying runs after the walk.

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// rdfaDir is the direction of an incomplete triple.
type rdfaDir uint8

const (
	dirForward rdfaDir = iota
	dirReverse
	dirList
)

type incomplete struct {
	p    Term
	dir  rdfaDir
	list *rdfaList // for dirList
}

type rdfaList struct{ items []Term }

// listMapping maps predicates (IRIs) to lists, in insertion order.
type listMapping struct {
	keys  []string
	lists map[string]*rdfaList
}

func (l *listMapping) get(p string) *rdfaList {
	if l.lists == nil {
		l.lists = map[string]*rdfaList{}
	}
	if x, ok := l.lists[p]; ok {
		return x
	}
	x := &rdfaList{}
	l.lists[p] = x
	l.keys = append(l.keys, p)
	return x
}

// evalContext is RDFa's evaluation context (RDFa Core §7.1).
type evalContext struct {
	parentSubject Term
	parentObject  Term // zero when null
	incomplete    []incomplete
	lists         *listMapping
	lang          string
	m             *mappings
}

type rdfaProc struct {
	s       *sink
	base    string
	root    *html.Node
	docBN   map[string]Term // document blank node labels to page labels
	depth   int
	maxDep  int
	cut     int // subtrees skipped past maxDep
	typeIRI Term
}

// extractRDFa runs the RDFa processor over doc, whose document URL is base.
func extractRDFa(doc *html.Node, base string, s *sink, maxDepth int) (cut int) {
	root := documentElement(doc)
	if root == nil {
		return 0
	}
	p := &rdfaProc{s: s, base: htmlBase(doc, base), root: root, maxDep: maxDepth,
		typeIRI: NewIRI(RDFType)}
	start := len(s.quads)
	ctx := &evalContext{parentSubject: NewIRI(p.base), lists: &listMapping{}, m: &mappings{}}
	p.walk(root, ctx)
	copyProperties(s, start)
	return p.cut
}

// rdfaAttrs is an element's RDFa attributes.
type rdfaAttrs struct {
	about, resource, href, src, vocab, prefix, typeof, property, rel, rev,
	content, datatype, datetime, lang string
	has   uint32
	xmlns [][2]string
}

const (
	hasAbout = 1 << iota
	hasResource
	hasHref
	hasSrc
	hasVocab
	hasPrefix
	hasTypeof
	hasProperty
	hasRel
	hasRev
	hasContent
	hasDatatype
	hasDatetime
	hasLang
	hasInlist
)

func readAttrs(n *html.Node) (a rdfaAttrs) {
	for _, x := range n.Attr {
		switch x.Key {
		case "about":
			a.about, a.has = x.Val, a.has|hasAbout
		case "resource":
			a.resource, a.has = x.Val, a.has|hasResource
		case "href":
			a.href, a.has = x.Val, a.has|hasHref
		case "src":
			a.src, a.has = x.Val, a.has|hasSrc
		case "vocab":
			a.vocab, a.has = x.Val, a.has|hasVocab
		case "prefix":
			a.prefix, a.has = x.Val, a.has|hasPrefix
		case "typeof":
			a.typeof, a.has = x.Val, a.has|hasTypeof
		case "property":
			a.property, a.has = x.Val, a.has|hasProperty
		case "rel":
			a.rel, a.has = x.Val, a.has|hasRel
		case "rev":
			a.rev, a.has = x.Val, a.has|hasRev
		case "content":
			a.content, a.has = x.Val, a.has|hasContent
		case "datatype":
			a.datatype, a.has = x.Val, a.has|hasDatatype
		case "datetime":
			a.datetime, a.has = x.Val, a.has|hasDatetime
		case "inlist":
			a.has |= hasInlist
		case "lang":
			if a.has&hasLang == 0 || a.lang == "" {
				a.lang, a.has = x.Val, a.has|hasLang
			}
		case "xml:lang":
			a.lang, a.has = x.Val, a.has|hasLang
		default:
			if strings.HasPrefix(x.Key, "xmlns:") {
				a.xmlns = append(a.xmlns, [2]string{x.Key[6:], x.Val})
			}
		}
	}
	return a
}

func (a *rdfaAttrs) is(f uint32) bool { return a.has&f != 0 }

func (p *rdfaProc) walk(n *html.Node, ctx *evalContext) {
	if p.depth >= p.maxDep {
		p.cut++
		return
	}
	if p.s.full() {
		return
	}
	p.depth++
	defer func() { p.depth-- }()

	a := readAttrs(n)
	// RDFa attributes are rare: an element without any, outside the
	// root/head/body subject rules, only passes the context on.
	if a.has&^hasLang == 0 && len(a.xmlns) == 0 && n != p.root &&
		n.DataAtom != atom.Head && n.DataAtom != atom.Body && n.DataAtom != atom.Time {
		child := ctx
		if a.is(hasLang) && a.lang != ctx.lang {
			c := *ctx
			c.lang = a.lang
			child = &c
		}
		p.children(n, child)
		return
	}

	skip := false
	var newSubject, currentObject, typedResource Term
	m := ctx.m
	lang := ctx.lang
	lists := ctx.lists
	var localIncomplete []incomplete

	// Steps 2 and 3: vocabulary and prefixes.
	if a.is(hasVocab) || a.is(hasPrefix) || len(a.xmlns) > 0 {
		nm := *m
		m = &nm
		if a.is(hasVocab) {
			v := strings.TrimSpace(a.vocab)
			if v == "" {
				m.vocab = "" // HTML has no default vocabulary
			} else {
				m.vocab = resolveIRI(p.base, v)
				p.s.add(NewIRI(p.base), NewIRI(nsRDFa+"usesVocabulary"), NewIRI(m.vocab))
			}
		}
		if a.is(hasPrefix) || len(a.xmlns) > 0 {
			m.setPrefixes(a.prefix, a.xmlns)
		}
	}
	// Step 4: language.
	if a.is(hasLang) {
		lang = a.lang
	}

	// HTML+RDFa: next to @property, @rel and @rev keep only CURIEs and
	// IRIs; one left empty counts as absent.
	rel, rev := a.rel, a.rev
	if a.is(hasProperty) {
		if a.is(hasRel) {
			rel = dropTerms(rel)
			if rel == "" {
				a.has &^= hasRel
			}
		}
		if a.is(hasRev) {
			rev = dropTerms(rev)
			if rev == "" {
				a.has &^= hasRev
			}
		}
	}

	isRoot := n == p.root
	headBody := n.DataAtom == atom.Head || n.DataAtom == atom.Body
	var about Term
	if a.is(hasAbout) {
		about = p.safeCURIEorIRI(a.about, m)
	}
	resObj := p.resourceAttr(&a, m)

	if !a.is(hasRel) && !a.is(hasRev) {
		if a.is(hasProperty) && !a.is(hasContent) && !a.is(hasDatatype) {
			// Step 5.1.
			switch {
			case !about.IsZero():
				newSubject = about
			case isRoot:
				newSubject = NewIRI(p.base)
			case headBody && !ctx.parentObject.IsZero():
				newSubject = ctx.parentObject
			case !ctx.parentObject.IsZero():
				newSubject = ctx.parentObject
			}
			if a.is(hasTypeof) {
				switch {
				case !about.IsZero():
					typedResource = about
				case isRoot:
					typedResource = NewIRI(p.base)
				case !resObj.IsZero():
					typedResource = resObj
				default:
					typedResource = p.s.blank()
				}
				currentObject = typedResource
			}
		} else {
			// Step 5.2.
			switch {
			case !about.IsZero():
				newSubject = about
			case !resObj.IsZero():
				newSubject = resObj
			case isRoot:
				newSubject = NewIRI(p.base)
			case headBody && !ctx.parentObject.IsZero():
				newSubject = ctx.parentObject
			case a.is(hasTypeof):
				newSubject = p.s.blank()
			case !ctx.parentObject.IsZero():
				newSubject = ctx.parentObject
				if !a.is(hasProperty) {
					skip = true
				}
			}
			if a.is(hasTypeof) {
				typedResource = newSubject
			}
		}
	} else {
		// Step 6.
		switch {
		case !about.IsZero():
			newSubject = about
		case isRoot:
			newSubject = NewIRI(p.base)
		case headBody && !ctx.parentObject.IsZero():
			newSubject = ctx.parentObject
		case !ctx.parentObject.IsZero():
			newSubject = ctx.parentObject
		}
		if a.is(hasTypeof) && !about.IsZero() {
			typedResource = about
		}
		if !resObj.IsZero() {
			currentObject = resObj
		} else if a.is(hasTypeof) && about.IsZero() {
			currentObject = p.s.blank()
		}
		if a.is(hasTypeof) && about.IsZero() {
			typedResource = currentObject
		}
	}

	// Step 7: types.
	if !typedResource.IsZero() && a.is(hasTypeof) {
		for _, t := range strings.Fields(a.typeof) {
			if ty := p.termOrCURIEorIRI(t, m, true); !ty.IsZero() {
				p.s.add(typedResource, p.typeIRI, ty)
			}
		}
	}

	// Step 8: a new subject starts a new list mapping.
	ownLists := false
	if !newSubject.IsZero() && newSubject != ctx.parentObject {
		lists = &listMapping{}
		ownLists = true
	}

	inlist := a.is(hasInlist)
	// Step 9: triples with the current object resource.
	if !currentObject.IsZero() {
		for _, r := range strings.Fields(rel) {
			pr := p.termOrCURIEorIRI(r, m, false)
			if pr.IsZero() {
				continue
			}
			if inlist {
				l := lists.get(pr.Value)
				l.items = append(l.items, currentObject)
			} else if !newSubject.IsZero() {
				p.s.add(newSubject, pr, currentObject)
			}
		}
		for _, r := range strings.Fields(rev) {
			if pr := p.termOrCURIEorIRI(r, m, false); !pr.IsZero() && !newSubject.IsZero() {
				p.s.add(currentObject, pr, newSubject)
			}
		}
	} else if a.is(hasRel) || a.is(hasRev) {
		// Step 10: no object yet: incomplete triples, completed by the
		// next subject found below; the children hang off a fresh blank
		// node meanwhile.
		for _, r := range strings.Fields(rel) {
			pr := p.termOrCURIEorIRI(r, m, false)
			if pr.IsZero() {
				continue
			}
			if inlist {
				localIncomplete = append(localIncomplete, incomplete{p: pr, dir: dirList, list: lists.get(pr.Value)})
			} else {
				localIncomplete = append(localIncomplete, incomplete{p: pr, dir: dirForward})
			}
		}
		for _, r := range strings.Fields(rev) {
			if pr := p.termOrCURIEorIRI(r, m, false); !pr.IsZero() {
				localIncomplete = append(localIncomplete, incomplete{p: pr, dir: dirReverse})
			}
		}
		currentObject = p.s.blank()
	}

	// Step 11: @property.
	if a.is(hasProperty) && !newSubject.IsZero() {
		var value Term
		for _, pv := range strings.Fields(a.property) {
			pr := p.termOrCURIEorIRI(pv, m, false)
			if pr.IsZero() {
				continue
			}
			if value.IsZero() {
				value = p.propertyValue(n, &a, m, lang, resObj, typedResource)
			}
			if inlist {
				l := lists.get(pr.Value)
				l.items = append(l.items, value)
			} else {
				p.s.add(newSubject, pr, value)
			}
		}
	}

	// Step 12: complete the parent's incomplete triples.
	if !skip && !newSubject.IsZero() {
		for _, it := range ctx.incomplete {
			switch it.dir {
			case dirList:
				it.list.items = append(it.list.items, newSubject)
			case dirForward:
				p.s.add(ctx.parentSubject, it.p, newSubject)
			case dirReverse:
				p.s.add(newSubject, it.p, ctx.parentSubject)
			}
		}
	}

	// Step 13: the children.
	var child evalContext
	var objectLists *listMapping
	if skip {
		child = *ctx
		child.lang = lang
		child.m = m
	} else {
		child = evalContext{
			parentSubject: ctx.parentSubject,
			incomplete:    localIncomplete,
			lists:         lists,
			lang:          lang,
			m:             m,
		}
		if !newSubject.IsZero() {
			child.parentSubject = newSubject
		}
		switch {
		case !currentObject.IsZero():
			child.parentObject = currentObject
			if currentObject != newSubject {
				// Values the children put in lists are about the
				// current object resource, not about this element's
				// subject: they get their own list mapping (W3C
				// RDFa test 0226).
				objectLists = &listMapping{}
				child.lists = objectLists
			}
		case !newSubject.IsZero():
			child.parentObject = newSubject
		default:
			child.parentObject = ctx.parentSubject
		}
	}
	p.children(n, &child)

	// Step 14: lists started on this element.
	if objectLists != nil {
		for _, k := range objectLists.keys {
			p.emitList(currentObject, NewIRI(k), objectLists.lists[k].items)
		}
	}
	if ownLists {
		for _, k := range lists.keys {
			p.emitList(newSubject, NewIRI(k), lists.lists[k].items)
		}
	}
}

func (p *rdfaProc) children(n *html.Node, ctx *evalContext) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			p.walk(c, ctx)
		}
	}
}

// emitList writes an RDF collection (rdf:first/rdf:rest) and links it.
func (p *rdfaProc) emitList(sub, pred Term, items []Term) {
	if len(items) == 0 {
		p.s.add(sub, pred, NewIRI(nsRDF+"nil"))
		return
	}
	head := p.s.blank()
	p.s.add(sub, pred, head)
	cur := head
	for i, it := range items {
		p.s.add(cur, NewIRI(nsRDF+"first"), it)
		if i == len(items)-1 {
			p.s.add(cur, NewIRI(nsRDF+"rest"), NewIRI(nsRDF+"nil"))
		} else {
			next := p.s.blank()
			p.s.add(cur, NewIRI(nsRDF+"rest"), next)
			cur = next
		}
	}
}

// resourceAttr returns the first of @resource, @href, @src as a resource.
func (p *rdfaProc) resourceAttr(a *rdfaAttrs, m *mappings) Term {
	if a.is(hasResource) {
		if t := p.safeCURIEorIRI(a.resource, m); !t.IsZero() {
			return t
		}
	}
	if a.is(hasHref) {
		return NewIRI(resolveIRI(p.base, strings.TrimSpace(a.href)))
	}
	if a.is(hasSrc) {
		return NewIRI(resolveIRI(p.base, strings.TrimSpace(a.src)))
	}
	return Term{}
}

// propertyValue is RDFa Core §7.5 step 11's current property value, with
// HTML+RDFa's @datetime and <time> rules.
func (p *rdfaProc) propertyValue(n *html.Node, a *rdfaAttrs, m *mappings, lang string, resObj, typed Term) Term {
	dt := ""
	if a.is(hasDatatype) {
		if d := strings.TrimSpace(a.datatype); d != "" {
			if t := p.termOrCURIEorIRI(d, m, false); !t.IsZero() {
				dt = t.Value
			}
		}
	}
	switch {
	case dt == rdfXML || dt == rdfHTML:
		return NewLiteral(innerHTML(n), dt, "")
	case dt != "":
		v := a.content
		if !a.is(hasContent) {
			if a.is(hasDatetime) {
				v = a.datetime
			} else {
				v = textContent(n)
			}
		}
		return NewLiteral(v, dt, "")
	case a.is(hasDatatype): // datatype="": a plain literal
		if a.is(hasContent) {
			return NewLiteral(a.content, "", lang)
		}
		return NewLiteral(textContent(n), "", lang)
	case a.is(hasContent):
		return NewLiteral(a.content, "", lang)
	case a.is(hasDatetime) || n.DataAtom == atom.Time:
		v := a.datetime
		if !a.is(hasDatetime) {
			v = textContent(n)
		}
		if d := datetimeType(v); d != "" {
			return NewLiteral(v, d, "")
		}
		return NewLiteral(v, "", lang)
	case !a.is(hasRel) && !a.is(hasRev) && !resObj.IsZero():
		return resObj
	case a.is(hasTypeof) && !a.is(hasAbout) && !typed.IsZero():
		// "@about is not present" is about the attribute: about="[]"
		// counts as present though it names nothing (the suite's 0297).
		return typed
	}
	return NewLiteral(textContent(n), "", lang)
}
