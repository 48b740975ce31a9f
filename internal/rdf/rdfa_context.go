package rdf

import "strings"

// Namespaces used by the RDFa processor.
const (
	nsRDF   = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsXSD   = "http://www.w3.org/2001/XMLSchema#"
	nsXHV   = "http://www.w3.org/1999/xhtml/vocab#"
	nsRDFa  = "http://www.w3.org/ns/rdfa#"
	rdfXML  = nsRDF + "XMLLiteral"
	rdfHTML = nsRDF + "HTML"
)

// rdfaPrefixes is the RDFa 1.1 initial context's prefix mappings (the
// W3C's rdfa-1.1 context document): vocabularies the W3C publishes and
// widely used ones. A document's own prefix and xmlns: declarations
// override them.
var rdfaPrefixes = map[string]string{
	"as":      "https://www.w3.org/ns/activitystreams#",
	"csvw":    "http://www.w3.org/ns/csvw#",
	"dcat":    "http://www.w3.org/ns/dcat#",
	"dqv":     "http://www.w3.org/ns/dqv#",
	"duv":     "https://www.w3.org/ns/duv#",
	"grddl":   "http://www.w3.org/2003/g/data-view#",
	"jsonld":  "http://www.w3.org/ns/json-ld#",
	"ldp":     "http://www.w3.org/ns/ldp#",
	"ma":      "http://www.w3.org/ns/ma-ont#",
	"oa":      "http://www.w3.org/ns/oa#",
	"odrl":    "http://www.w3.org/ns/odrl/2/",
	"org":     "http://www.w3.org/ns/org#",
	"owl":     "http://www.w3.org/2002/07/owl#",
	"prov":    "http://www.w3.org/ns/prov#",
	"qb":      "http://purl.org/linked-data/cube#",
	"rdf":     nsRDF,
	"rdfa":    nsRDFa,
	"rdfs":    "http://www.w3.org/2000/01/rdf-schema#",
	"rif":     "http://www.w3.org/2007/rif#",
	"rr":      "http://www.w3.org/ns/r2rml#",
	"sd":      "http://www.w3.org/ns/sparql-service-description#",
	"skos":    "http://www.w3.org/2004/02/skos/core#",
	"skosxl":  "http://www.w3.org/2008/05/skos-xl#",
	"sosa":    "http://www.w3.org/ns/sosa/",
	"ssn":     "http://www.w3.org/ns/ssn/",
	"time":    "http://www.w3.org/2006/time#",
	"void":    "http://rdfs.org/ns/void#",
	"wdr":     "http://www.w3.org/2007/05/powder#",
	"wdrs":    "http://www.w3.org/2007/05/powder-s#",
	"xhv":     nsXHV,
	"xml":     "http://www.w3.org/XML/1998/namespace",
	"xsd":     nsXSD,
	"cc":      "http://creativecommons.org/ns#",
	"ctag":    "http://commontag.org/ns#",
	"dc":      "http://purl.org/dc/terms/",
	"dc11":    "http://purl.org/dc/elements/1.1/",
	"dcterms": "http://purl.org/dc/terms/",
	"foaf":    "http://xmlns.com/foaf/0.1/",
	"gr":      "http://purl.org/goodrelations/v1#",
	"ical":    "http://www.w3.org/2002/12/cal/icaltzd#",
	"og":      "http://ogp.me/ns#",
	"rev":     "http://purl.org/stuff/rev#",
	"sioc":    "http://rdfs.org/sioc/ns#",
	"v":       "http://rdf.data-vocabulary.org/#",
	"vcard":   "http://www.w3.org/2006/vcard/ns#",
	"schema":  "http://schema.org/",
}

// rdfaTerms is the initial context's terms.
var rdfaTerms = map[string]string{
	"describedby": "http://www.w3.org/2007/05/powder-s#describedby",
	"license":     nsXHV + "license",
	"role":        nsXHV + "role",
}

// mappings is the prefix and term state of an RDFa evaluation context.
// Maps are shared between contexts and copied on write.
type mappings struct {
	prefixes map[string]string // nil means rdfaPrefixes alone
	terms    map[string]string // nil means rdfaTerms alone
	vocab    string
}

func (m *mappings) prefix(p string) (string, bool) {
	if m.prefixes != nil {
		v, ok := m.prefixes[p]
		return v, ok
	}
	v, ok := rdfaPrefixes[p]
	return v, ok
}

// setPrefixes applies a prefix attribute ("p1: iri1 p2: iri2 ...") and
// xmlns:p attributes, copying the map first.
func (m *mappings) setPrefixes(attr string, xmlns [][2]string) {
	src := m.prefixes
	if src == nil {
		src = rdfaPrefixes
	}
	n := make(map[string]string, len(src)+4)
	for k, v := range src {
		n[k] = v
	}
	for _, x := range xmlns {
		if p := strings.ToLower(x[0]); p != "" && p != "_" && x[1] != "" {
			n[p] = x[1]
		}
	}
	f := strings.Fields(attr)
	for i := 0; i+1 < len(f); i++ {
		p := f[i]
		if len(p) < 1 || p[len(p)-1] != ':' || strings.HasSuffix(f[i+1], ":") {
			continue
		}
		p = strings.ToLower(p[:len(p)-1])
		i++
		// "_" may not be mapped (RDFa Core §7.5 step 3); an empty prefix
		// is not an NCName either.
		if p == "" || p == "_" || !isNCName(p) {
			continue
		}
		n[p] = f[i]
	}
	m.prefixes = n
}

func (m *mappings) term(t string) (string, bool) {
	terms := m.terms
	if terms == nil {
		terms = rdfaTerms
	}
	if v, ok := terms[t]; ok {
		return v, true
	}
	v, ok := terms[strings.ToLower(t)]
	return v, ok
}

// isNCName reports whether s is an XML NCName, loosely: a letter or "_"
// then letters, digits, ".", "-", "_" (non-ASCII letters allowed).
func isNCName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= 0x80:
		case i > 0 && (r >= '0' && r <= '9' || r == '.' || r == '-'):
		default:
			return false
		}
	}
	return true
}

// isTerm reports whether s has the RDFa term form: an NCName in which "/"
// may also appear.
func isTerm(s string) bool {
	if s == "" || s[0] == '/' {
		return false
	}
	return isNCName(strings.ReplaceAll(s, "/", "_"))
}
