package rdf

import (
	"hash/fnv"
	"strconv"
)

// sink collects one page's quads: it names the page's blank nodes, drops
// quads with invalid IRIs and enforces the page's quad bound.
type sink struct {
	graph   Term
	quads   []Quad
	max     int    // most quads kept; further ones are counted in dropped
	prefix  string // blank node label prefix, unique to the page
	next    int
	dropped int
	invalid int
	// truncated is set once the bound stopped extraction.
	truncated bool
}

func newSink(graph string, max int) *sink {
	s := &sink{max: max}
	if graph != "" {
		s.graph = NewIRI(graph)
	}
	// Blank node labels are scoped per page: many pages share one N-Quads
	// file, where a label names the same node everywhere, so each page's
	// labels carry a hash of its URL.
	h := fnv.New64a()
	h.Write([]byte(graph))
	s.prefix = "b" + strconv.FormatUint(h.Sum64()&0xffffffffff, 36) + "x"
	return s
}

// blank returns a fresh blank node.
func (s *sink) blank() Term {
	s.next++
	return Term{Kind: Blank, Value: s.prefix + strconv.Itoa(s.next)}
}

// full reports whether the page's quad bound is reached, and notes it.
func (s *sink) full() bool {
	if s.max > 0 && len(s.quads) >= s.max {
		s.truncated = true
		return true
	}
	return false
}

// add appends the triple (sub, p, o) in the page's graph. It drops, and
// counts, triples whose IRIs are invalid and those past the bound.
func (s *sink) add(sub, p, o Term) {
	if sub.Kind == Literal || p.Kind != IRI || o.Kind == 0 {
		s.invalid++
		return
	}
	if (sub.Kind == IRI && !validIRI(sub.Value)) || !validIRI(p.Value) ||
		(o.Kind == IRI && !validIRI(o.Value)) ||
		(o.Kind == Literal && o.Datatype != "" && !validIRI(o.Datatype)) {
		s.invalid++
		return
	}
	if o.Kind == Literal && o.Lang != "" && !validLang(o.Lang) {
		o.Lang = "" // not a BCP 47 tag: keep the text as a plain string
		s.invalid++
	}
	if s.full() {
		s.dropped++
		return
	}
	s.quads = append(s.quads, Quad{S: sub, P: p, O: o, G: s.graph})
}

// validLang reports whether tag has the N-Quads LANGTAG form,
// [a-zA-Z]+ ("-" [a-zA-Z0-9]+)*.
func validLang(tag string) bool {
	seg, first := 0, true
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			seg++
		case c >= '0' && c <= '9' && !first:
			seg++
		case c == '-' && seg > 0:
			seg, first = 0, false
		default:
			return false
		}
	}
	return seg > 0
}
