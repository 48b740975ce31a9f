package rdf

// RDFa value resolution: CURIEs, safe CURIEs, terms and IRIs (RDFa Core
// 1.1 §6 and §7.4), and the datatypes HTML+RDFa gives @datetime values.

import (
	"regexp"
	"strings"
)

var datetimeTypes = []struct {
	re *regexp.Regexp
	dt string
}{
	{regexp.MustCompile(`^-?P(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$`), nsXSD + "duration"},
	{regexp.MustCompile(`^-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$`), nsXSD + "dateTime"},
	{regexp.MustCompile(`^-?\d{4,}-\d{2}-\d{2}(Z|[+-]\d{2}:?\d{2})?$`), nsXSD + "date"},
	{regexp.MustCompile(`^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$`), nsXSD + "time"},
	{regexp.MustCompile(`^-?\d{4,}-\d{2}$`), nsXSD + "gYearMonth"},
	{regexp.MustCompile(`^-?\d{4,}$`), nsXSD + "gYear"},
}

// datetimeType returns the XSD datatype HTML+RDFa gives a @datetime
// value by its lexical form, or "" when none matches.
func datetimeType(v string) string {
	if v == "" || v == "P" || v == "-P" || strings.HasSuffix(v, "T") {
		return ""
	}
	for _, d := range datetimeTypes {
		if d.re.MatchString(v) {
			return d.dt
		}
	}
	return ""
}

// dropTerms removes plain terms (values without a colon) from a @rel or
// @rev value, keeping CURIEs and IRIs.
func dropTerms(v string) string {
	var keep []string
	for _, f := range strings.Fields(v) {
		if strings.Contains(f, ":") {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// blankFor maps a document's blank node label ("_:x", or "_:" alone) to a
// page-scoped blank node.
func (p *rdfaProc) blankFor(label string) Term {
	if t, ok := p.docBN[label]; ok {
		return t
	}
	if p.docBN == nil {
		p.docBN = map[string]Term{}
	}
	t := p.s.blank()
	p.docBN[label] = t
	return t
}

// curie resolves v as a CURIE ("prefix:reference", "_:label" or
// ":reference"); ok is false when its prefix is not mapped.
func (p *rdfaProc) curie(v string, m *mappings) (Term, bool) {
	i := strings.IndexByte(v, ':')
	if i < 0 {
		return Term{}, false
	}
	prefix, ref := v[:i], v[i+1:]
	switch prefix {
	case "_":
		return p.blankFor(ref), true
	case "":
		return NewIRI(nsXHV + ref), true
	}
	if ns, ok := m.prefix(strings.ToLower(prefix)); ok {
		return NewIRI(ns + ref), true
	}
	return Term{}, false
}

// safeCURIEorIRI resolves an @about or @resource value: a safe CURIE
// "[...]" (ignored unless its prefix is mapped), a CURIE, else an IRI
// relative to the base.
func (p *rdfaProc) safeCURIEorIRI(v string, m *mappings) Term {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' {
		t, _ := p.curie(v[1:len(v)-1], m)
		return t
	}
	if i := strings.IndexByte(v, ':'); i > 0 {
		// An unsafe CURIE needs a mapped prefix; "_:" is one too.
		if t, ok := p.curie(v, m); ok && (v[:i] == "_" || !strings.HasPrefix(v[i+1:], "//")) {
			return t
		}
	}
	return NewIRI(resolveIRI(p.base, v))
}

// termOrCURIEorIRI resolves a @typeof, @property, @rel, @rev or @datatype
// value. Blank nodes may only be types (RDF has no blank predicates).
func (p *rdfaProc) termOrCURIEorIRI(v string, m *mappings, allowBlank bool) Term {
	if !strings.Contains(v, ":") {
		if !isTerm(v) {
			return Term{}
		}
		if m.vocab != "" {
			return NewIRI(m.vocab + v)
		}
		if iri, ok := m.term(v); ok {
			return NewIRI(iri)
		}
		return Term{}
	}
	if strings.HasPrefix(v, "_:") {
		if !allowBlank {
			return Term{}
		}
		return p.blankFor(v[2:])
	}
	if t, ok := p.curie(v, m); ok {
		return t
	}
	if hasScheme(v) {
		return NewIRI(v)
	}
	return Term{}
}
