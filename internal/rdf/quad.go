// Package rdf is Courtesy's RDF data model and structured-data extraction:
// terms and quads, their N-Quads form, and (in files of their own) the
// extractors that turn a page's RDFa, microdata and JSON-LD into quads.
package rdf

import (
	"strings"
)

// Kind says what a Term is.
type Kind uint8

// The kinds of RDF term. The zero Kind is not a valid term.
const (
	IRI Kind = iota + 1
	Blank
	Literal
)

// XSDString and RDFLangString are the datatypes of plain and
// language-tagged literals (RDF 1.1 §3.3).
const (
	XSDString     = "http://www.w3.org/2001/XMLSchema#string"
	RDFLangString = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
	RDFType       = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
)

// Term is an RDF term. For an IRI, Value is the absolute IRI; for a blank
// node, Value is its label without "_:"; for a literal, Value is the lexical
// form, Datatype its datatype IRI (empty means xsd:string, or rdf:langString
// when Lang is set) and Lang its language tag.
type Term struct {
	Kind     Kind
	Value    string
	Datatype string
	Lang     string
}

// NewIRI, NewBlank and NewLiteral build terms.
func NewIRI(v string) Term   { return Term{Kind: IRI, Value: v} }
func NewBlank(v string) Term { return Term{Kind: Blank, Value: v} }

// NewLiteral returns a literal with an optional datatype (empty or
// xsd:string for a plain string) and language tag.
func NewLiteral(v, datatype, lang string) Term {
	if datatype == XSDString || (lang != "" && datatype == RDFLangString) {
		datatype = ""
	}
	return Term{Kind: Literal, Value: v, Datatype: datatype, Lang: lang}
}

// IsZero reports whether t is the zero Term (as the graph of a triple).
func (t Term) IsZero() bool { return t.Kind == 0 }

// Quad is a triple in a named graph; a zero Graph is the default graph.
type Quad struct {
	S, P, O, G Term
}

// String returns the term in N-Quads syntax.
func (t Term) String() string {
	var b strings.Builder
	t.appendTo(&b)
	return b.String()
}

func (t Term) appendTo(b *strings.Builder) {
	switch t.Kind {
	case IRI:
		b.WriteByte('<')
		escapeIRI(b, t.Value)
		b.WriteByte('>')
	case Blank:
		b.WriteString("_:")
		b.WriteString(t.Value)
	case Literal:
		b.WriteByte('"')
		escapeString(b, t.Value)
		b.WriteByte('"')
		switch {
		case t.Lang != "":
			b.WriteByte('@')
			b.WriteString(t.Lang)
		case t.Datatype != "" && t.Datatype != XSDString:
			b.WriteString("^^<")
			escapeIRI(b, t.Datatype)
			b.WriteByte('>')
		}
	}
}

// String returns the quad as one N-Quads line without the newline.
func (q Quad) String() string {
	var b strings.Builder
	q.S.appendTo(&b)
	b.WriteByte(' ')
	q.P.appendTo(&b)
	b.WriteByte(' ')
	q.O.appendTo(&b)
	if !q.G.IsZero() {
		b.WriteByte(' ')
		q.G.appendTo(&b)
	}
	b.WriteString(" .")
	return b.String()
}

// escapeString escapes a literal's lexical form as canonical N-Quads does
// (RDF 1.1 N-Quads §4 and the canonical form of RDF Dataset Canonicalization):
// only \\, \", \n and \r, other control characters as \uXXXX.
func escapeString(b *strings.Builder, s string) {
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			const hex = "0123456789ABCDEF"
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
}

// escapeIRI writes an IRI, escaping the characters N-Quads forbids inside
// <> as \uXXXX so that any string yields a parseable line.
func escapeIRI(b *strings.Builder, s string) {
	for _, r := range s {
		if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
			const hex = "0123456789ABCDEF"
			b.WriteString(`\u00`)
			b.WriteByte(hex[(r>>4)&0xf])
			b.WriteByte(hex[r&0xf])
			continue
		}
		b.WriteRune(r)
	}
}
