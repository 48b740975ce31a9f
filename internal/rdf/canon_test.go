package rdf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/piprate/json-gold/ld"
)

// canonical returns quads' default-graph triples as canonical N-Quads
// (RDF Dataset Canonicalization, URDNA2015, by json-gold), one sorted
// line each, duplicates dropped: a form two extractors' graphs can be
// compared in, whatever their blank node labels.
func canonical(quads []Quad) (string, error) {
	ds := ld.NewRDFDataset()
	seen := map[Quad]bool{}
	var list []*ld.Quad
	for _, q := range quads {
		q.G = Term{}
		if seen[q] {
			continue
		}
		seen[q] = true
		list = append(list, ld.NewQuad(ldNode(q.S), ldNode(q.P), ldNode(q.O), "@default"))
	}
	ds.Graphs["@default"] = list
	opts := ld.NewJsonLdOptions("")
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.Format = "application/n-quads"
	out, err := ld.NewJsonLdApi().Normalize(ds, opts)
	if err != nil {
		return "", fmt.Errorf("canonicalize: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out.(string)), "\n")
	sort.Strings(lines)
	return strings.TrimSpace(strings.Join(lines, "\n")), nil
}

func ldNode(t Term) ld.Node {
	switch t.Kind {
	case IRI:
		return ld.NewIRI(t.Value)
	case Blank:
		return ld.NewBlankNode("_:" + t.Value)
	default:
		dt := t.Datatype
		if dt == "" {
			dt = XSDString
			if t.Lang != "" {
				dt = RDFLangString
			}
		}
		return ld.NewLiteral(t.Value, dt, t.Lang)
	}
}

// canonicalLines canonicalizes hand-written N-Quads lines.
func canonicalLines(lines []string) (string, error) {
	opts := ld.NewJsonLdOptions("")
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.InputFormat = "application/n-quads"
	opts.Format = "application/n-quads"
	out, err := ld.NewJsonLdProcessor().Normalize(strings.Join(lines, "\n")+"\n", opts)
	if err != nil {
		return "", fmt.Errorf("canonicalize expected: %w", err)
	}
	ls := strings.Split(strings.TrimSpace(out.(string)), "\n")
	sort.Strings(ls)
	return strings.TrimSpace(strings.Join(ls, "\n")), nil
}
