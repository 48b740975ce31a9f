package index

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

// indexQuadFile indexes one finished quad file from statement skip on,
// committing every BatchQuads quads with the file's progress.
func (ix *Indexer) indexQuadFile(ctx context.Context, path, name string, skip int64) error {
	p := ix.newPending()
	var (
		graph  rdf.Term
		scope  string
		page   *Page
		bytesN int64
	)
	flush := func(n int64, done bool) error {
		if err := setProgress(p.b, "rdf", name, progress{done: done, pos: n}); err != nil {
			return err
		}
		if err := p.commit(); err != nil {
			return err
		}
		ix.count(func(s *Stats) { s.Bytes += bytesN })
		bytesN = 0
		p = ix.newPending()
		page = nil
		graph = rdf.Term{}
		return nil
	}
	n, err := rdf.ReadQuadFile(ctx, path, skip, rdf.QuadReaderOptions{}, func(q rdf.Quad, n int64) error {
		bytesN += int64(len(q.S.Value) + len(q.P.Value) + len(q.O.Value) + len(q.G.Value) + 12)
		if q.G != graph {
			graph = q.G
			scope = blankScope(q.G)
			page = nil
			if q.G.Kind == rdf.IRI {
				pg, err := p.page(q.G.Value)
				if err != nil {
					return err
				}
				page = pg
			}
		}
		q.S = skolem(q.S, scope)
		q.O = skolem(q.O, scope)
		added, err := p.b.Add(q)
		if err != nil {
			ix.count(func(s *Stats) { s.BadLines++ })
			ix.opts.Logf("index: %s statement %d: %v", name, n, err)
		} else {
			ix.count(func(s *Stats) {
				s.Quads++
				if added {
					s.NewQuads++
				}
			})
			if page != nil {
				notePage(page, q, added)
			}
		}
		if p.b.Len()+p.cost >= ix.opts.BatchQuads || len(p.pages) >= ix.opts.BatchQuads/10 {
			return flush(n, false)
		}
		return nil
	}, func(err error) error {
		ix.count(func(s *Stats) { s.BadLines++ })
		ix.opts.Logf("index: %v (skipped)", err)
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: %s: %w", name, err)
	}
	if err := flush(n, true); err != nil {
		return err
	}
	ix.count(func(s *Stats) { s.Files++ })
	return nil
}

// notePage records a quad's contribution to its page's search document.
func notePage(pg *Page, q rdf.Quad, added bool) {
	if added {
		pg.Quads++
	}
	pg.Vocabs = addClass(pg.Vocabs, Namespace(q.P.Value))
	switch {
	case q.P.Value == rdf.RDFType && q.O.Kind == rdf.IRI:
		c := NormalizeClass(q.O.Value)
		pg.Types = addClass(pg.Types, c)
		pg.Vocabs = addClass(pg.Vocabs, Namespace(c))
	case q.O.Kind == rdf.Literal:
		pg.addLiteral(Literal{S: q.S.String(), P: q.P.Value, V: q.O.Value})
	}
}

// blankScope is the prefix given to the blank nodes of a graph: labels are
// scoped per page by the extractor, so two pages' _:b0 are different
// nodes.
func blankScope(g rdf.Term) string {
	h := fnv.New64a()
	h.Write([]byte(g.String()))
	return "g" + strconv.FormatUint(h.Sum64(), 36) + "x"
}

func skolem(t rdf.Term, scope string) rdf.Term {
	if t.Kind == rdf.Blank {
		t.Value = scope + t.Value
	}
	return t
}
