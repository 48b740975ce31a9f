package rdf

// copyProperties performs HTML+RDFa property copying (rdfa:copy and
// rdfa:Pattern) over the quads from start on: each subject that copies a
// pattern gets the pattern's triples, and the copy triples and the
// patterns they reference are removed; a pattern no rdfa:copy references
// stays in the graph, as HTML+RDFa 1.1 §3.5.1 says. Patterns that copy
// patterns are expanded until nothing changes, a bounded number of rounds.
func copyProperties(s *sink, start int) {
	copyP := nsRDFa + "copy"
	pattern := nsRDFa + "Pattern"
	has := false
	for _, q := range s.quads[start:] {
		if q.P.Value == copyP {
			has = true
			break
		}
	}
	if !has {
		return
	}
	qs := s.quads[start:]
	referenced := map[Term]bool{}
	for round := 0; round < 16; round++ {
		patterns := map[Term]bool{}
		for _, q := range qs {
			if q.P.Value == RDFType && q.O.Kind == IRI && q.O.Value == pattern {
				patterns[q.S] = true
			}
		}
		var added []Quad
		changed := false
		out := qs[:0:0]
		for _, q := range qs {
			if q.P.Value == copyP && patterns[q.O] {
				changed = true
				referenced[q.O] = true
				for _, pq := range qs {
					if pq.S == q.O && !(pq.P.Value == RDFType && pq.O.Value == pattern) {
						added = append(added, Quad{S: q.S, P: pq.P, O: pq.O, G: q.G})
					}
				}
				continue
			}
			out = append(out, q)
		}
		qs = append(out, added...)
		if !changed {
			break
		}
	}
	// Drop the referenced patterns and duplicates.
	seen := map[Quad]bool{}
	final := s.quads[:start]
	for _, q := range qs {
		if referenced[q.S] || seen[q] {
			continue
		}
		seen[q] = true
		final = append(final, q)
	}
	s.quads = final
}
