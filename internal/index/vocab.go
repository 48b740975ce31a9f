package index

import (
	"strings"
)

// Prefixes are the vocabularies the search site names by prefix, for
// display and for filters written as CURIEs (schema:Person).
var Prefixes = []struct{ Prefix, IRI string }{
	{"schema", "http://schema.org/"},
	{"rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"},
	{"rdfs", "http://www.w3.org/2000/01/rdf-schema#"},
	{"xsd", "http://www.w3.org/2001/XMLSchema#"},
	{"owl", "http://www.w3.org/2002/07/owl#"},
	{"foaf", "http://xmlns.com/foaf/0.1/"},
	{"dc", "http://purl.org/dc/elements/1.1/"},
	{"dcterms", "http://purl.org/dc/terms/"},
	{"og", "http://ogp.me/ns#"},
	{"skos", "http://www.w3.org/2004/02/skos/core#"},
	{"vcard", "http://www.w3.org/2006/vcard/ns#"},
	{"gr", "http://purl.org/goodrelations/v1#"},
	{"sioc", "http://rdfs.org/sioc/ns#"},
	{"cc", "http://creativecommons.org/ns#"},
}

// NormalizeClass returns the form of a class or vocabulary IRI kept in the
// text index: schema.org is written with http and https alike (the
// schema.org JSON-LD context says http, many pages say https), so both
// are indexed as http://schema.org/.
func NormalizeClass(iri string) string {
	if rest, ok := strings.CutPrefix(iri, "https://schema.org/"); ok {
		return "http://schema.org/" + rest
	}
	if rest, ok := strings.CutPrefix(iri, "https://www.schema.org/"); ok {
		return "http://schema.org/" + rest
	}
	if rest, ok := strings.CutPrefix(iri, "http://www.schema.org/"); ok {
		return "http://schema.org/" + rest
	}
	return iri
}

// Namespace returns the vocabulary of an IRI: everything up to its last
// '#' or '/', normalized as NormalizeClass does ("" when it has neither
// after the scheme).
func Namespace(iri string) string {
	iri = NormalizeClass(iri)
	i := strings.LastIndexAny(iri, "#/")
	if i < 0 || i < strings.Index(iri, ":") {
		return ""
	}
	if strings.HasSuffix(iri[:i+1], "//") { // "http://host" has no path
		return ""
	}
	return iri[:i+1]
}

// Expand turns a CURIE with a known prefix (schema:Person) into an IRI;
// anything else is returned unchanged.
func Expand(s string) string {
	p, local, ok := strings.Cut(s, ":")
	if !ok || strings.HasPrefix(local, "//") {
		return s
	}
	for _, k := range Prefixes {
		if k.Prefix == p {
			return k.IRI + local
		}
	}
	return s
}

// Compact writes an IRI as a CURIE when a known prefix covers it.
func Compact(iri string) string {
	n := NormalizeClass(iri)
	for _, k := range Prefixes {
		if local, ok := strings.CutPrefix(n, k.IRI); ok && local != "" && !strings.ContainsAny(local, "/#?") {
			return k.Prefix + ":" + local
		}
	}
	return iri
}
