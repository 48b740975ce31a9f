// Package search serves the structured-data index (package index) over
// HTTP: a plain HTML search site (a query box, filters by rdf:type and by
// vocabulary, results with the page, its title, a snippet and the matching
// triples, and a page per subject to browse the graph) and a JSON API,
// including triple patterns in N-Quads or JSON-LD.
//
//	srv, err := search.New(ix) // ix from index.Open
//	http.ListenAndServe(addr, srv.Handler())
//
// Routes:
//
//	GET /                    the search page (?q=&type=&vocab=&from=)
//	GET /subject?s=TERM      a subject's triples, and those pointing to it
//	GET /api/search          the search as JSON (same parameters, size=)
//	GET /api/triples         ?s=&p=&o=&g=&limit=&cursor=, N-Quads or JSON-LD
//	GET /api/types           quads per rdf:type class
//	GET /api/predicates      quads per predicate
//
// The pages need no script; they carry no external resource.
package search

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/courtesy-crawler/courtesy/internal/index"
)

// Bounds of a search request.
const (
	DefaultSize   = 10
	MaxSize       = 100
	MaxFrom       = 10_000
	maxQueryBytes = 1 << 10
	maxMatching   = 5 // matching triples shown per result
	snippetBytes  = 240
)

// ErrBadQuery is wrapped by errors that come from the request (HTTP 400).
var ErrBadQuery = errors.New("search: bad request")

// Query is one search.
type Query struct {
	// Text is what the user typed; "" lists the pages that pass the
	// filters.
	Text string
	// Type keeps pages with a subject of this rdf:type (an IRI or a
	// CURIE such as schema:Person); "" means any.
	Type string
	// Vocab keeps pages using this vocabulary (a namespace IRI or a
	// known prefix such as "schema"); "" means any.
	Vocab string
	// From and Size page the results; Size 0 means DefaultSize.
	From, Size int
}

// Facet is a filter value with the number of results it would keep.
type Facet struct {
	Value string `json:"value"` // IRI
	Label string `json:"label"` // CURIE when a known prefix covers it
	Count int    `json:"count"`
}

// Triple is a triple shown in a result, with the subject in N-Quads form
// (for the subject page's link) and a display form.
type Triple struct {
	S      string `json:"s"`
	P      string `json:"p"`
	O      string `json:"o"`
	SLabel string `json:"-"`
	PLabel string `json:"-"`
}

// Hit is one result: a page.
type Hit struct {
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Snippet  string   `json:"snippet"` // HTML: escaped text with <mark> around matches
	Types    []string `json:"types"`
	Matching []Triple `json:"matching"`
	Score    float64  `json:"score"`
}

// Results are a page of hits and the facets of the whole result set.
type Results struct {
	Query  Query   `json:"-"`
	Total  uint64  `json:"total"`
	Hits   []Hit   `json:"hits"`
	Types  []Facet `json:"types"`
	Vocabs []Facet `json:"vocabs"`
	// Next is the From of the next page, 0 when there is none.
	Next int `json:"next,omitempty"`
}

// Validate reports a query the server refuses, wrapping ErrBadQuery.
func (q *Query) Validate() error {
	switch {
	case len(q.Text) > maxQueryBytes:
		return fmt.Errorf("%w: query over %d bytes", ErrBadQuery, maxQueryBytes)
	case q.From < 0 || q.From > MaxFrom:
		return fmt.Errorf("%w: from %d out of 0..%d", ErrBadQuery, q.From, MaxFrom)
	case q.Size < 0 || q.Size > MaxSize:
		return fmt.Errorf("%w: size %d out of 0..%d", ErrBadQuery, q.Size, MaxSize)
	case len(q.Type) > maxQueryBytes || len(q.Vocab) > maxQueryBytes:
		return fmt.Errorf("%w: filter over %d bytes", ErrBadQuery, maxQueryBytes)
	}
	return nil
}

// typeIRI expands a type filter.
func typeIRI(s string) string { return index.NormalizeClass(index.Expand(strings.TrimSpace(s))) }

// vocabIRI expands a vocabulary filter: a known prefix or a namespace.
func vocabIRI(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range index.Prefixes {
		if s == p.Prefix || s == p.Prefix+":" {
			return p.IRI
		}
	}
	return index.NormalizeClass(s)
}

// Search runs a query against the text index.
func (s *Server) Search(ctx context.Context, q Query) (*Results, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if q.Size == 0 {
		q.Size = DefaultSize
	}
	var must []query.Query
	words := terms(q.Text)
	if len(words) > 0 {
		text := strings.Join(words, " ")
		field := func(f string, boost float64) query.Query {
			m := bleve.NewMatchQuery(text)
			m.SetField(f)
			m.SetOperator(query.MatchQueryOperatorAnd)
			m.SetBoost(boost)
			return m
		}
		must = append(must, bleve.NewDisjunctionQuery(
			field(index.FieldTitle, 3), field(index.FieldLiterals, 2), field(index.FieldText, 1)))
	}
	if q.Type != "" {
		t := bleve.NewTermQuery(typeIRI(q.Type))
		t.SetField(index.FieldType)
		must = append(must, t)
	}
	if q.Vocab != "" {
		t := bleve.NewTermQuery(vocabIRI(q.Vocab))
		t.SetField(index.FieldVocab)
		must = append(must, t)
	}
	var bq query.Query = bleve.NewMatchAllQuery()
	if len(must) > 0 {
		bq = bleve.NewConjunctionQuery(must...)
	}
	req := bleve.NewSearchRequestOptions(bq, q.Size, q.From, false)
	req.AddFacet("types", bleve.NewFacetRequest(index.FieldType, 30))
	req.AddFacet("vocabs", bleve.NewFacetRequest(index.FieldVocab, 30))
	res, err := s.ix.Text().SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := &Results{Query: q, Total: res.Total, Hits: []Hit{}}
	if uint64(q.From+q.Size) < res.Total {
		out.Next = q.From + q.Size
	}
	for name, f := range res.Facets {
		var list []Facet
		for _, t := range f.Terms.Terms() {
			list = append(list, Facet{Value: t.Term, Label: index.Compact(t.Term), Count: t.Count})
		}
		if name == "types" {
			out.Types = list
		} else {
			out.Vocabs = list
		}
	}
	for _, h := range res.Hits {
		hit := Hit{URL: h.ID, Score: h.Score}
		pg, err := s.ix.Page(h.ID)
		if err != nil {
			return nil, err
		}
		if pg != nil {
			hit.Title = pg.Title
			for _, t := range pg.Types {
				hit.Types = append(hit.Types, index.Compact(t))
			}
			hit.Matching = matching(pg, words)
			hit.Snippet = snippet(pg, words)
		}
		out.Hits = append(out.Hits, hit)
	}
	return out, nil
}

// terms splits a query into the words the analyser would index.
func terms(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(f) > 32 {
		f = f[:32]
	}
	return f
}

// matching returns the page's literal triples whose value holds one of the
// words (all of the page's literals when there are no words).
func matching(pg *index.Page, words []string) []Triple {
	var out []Triple
	for _, l := range pg.Literals {
		v := strings.ToLower(l.V)
		hit := len(words) == 0
		for _, w := range words {
			if strings.Contains(v, strings.ToLower(w)) {
				hit = true
				break
			}
		}
		if hit {
			out = append(out, Triple{S: l.S, P: l.P, O: l.V, SLabel: termLabel(l.S), PLabel: index.Compact(l.P)})
			if len(out) == maxMatching {
				break
			}
		}
	}
	return out
}

// snippet returns, as HTML, a window of the page's text (or of its literal
// values) around the first query word found, the words marked; the start
// of the text when none is found.
func snippet(pg *index.Page, words []string) string {
	texts := []string{pg.Desc + " " + pg.Text}
	for _, l := range pg.Literals {
		texts = append(texts, l.V)
	}
	for _, t := range texts {
		if s, ok := window(strings.TrimSpace(t), words); ok {
			return s
		}
	}
	return window0(strings.TrimSpace(texts[0]))
}

func window0(t string) string {
	return html.EscapeString(cut(t, 0, snippetBytes)) + ellipsis(len(t) > snippetBytes)
}

func ellipsis(b bool) string {
	if b {
		return "…"
	}
	return ""
}

// window finds the first word in t (ASCII case folded, so that byte
// offsets stay valid) and marks every word in a window around it.
func window(t string, words []string) (string, bool) {
	if len(words) == 0 || t == "" {
		return "", false
	}
	low := asciiLower(t)
	first := -1
	for _, w := range words {
		if i := strings.Index(low, asciiLower(w)); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return "", false
	}
	start := max(0, first-snippetBytes/3)
	for start > 0 && !utf8.RuneStart(t[start]) {
		start--
	}
	end := min(len(t), start+snippetBytes)
	for end < len(t) && !utf8.RuneStart(t[end]) {
		end++
	}
	seg, lseg := t[start:end], low[start:end]
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	for i := 0; i < len(seg); {
		m := 0
		for _, w := range words {
			if lw := asciiLower(w); lw != "" && strings.HasPrefix(lseg[i:], lw) && len(lw) > m {
				m = len(lw)
			}
		}
		if m > 0 {
			b.WriteString("<mark>" + html.EscapeString(seg[i:i+m]) + "</mark>")
			i += m
			continue
		}
		_, size := utf8.DecodeRuneInString(seg[i:])
		b.WriteString(html.EscapeString(seg[i : i+size]))
		i += size
	}
	b.WriteString(ellipsis(end < len(t)))
	return b.String(), true
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// cut returns t[from:from+n] moved to rune boundaries.
func cut(t string, from, n int) string {
	end := min(len(t), from+n)
	for end < len(t) && end > from && !utf8.RuneStart(t[end]) {
		end--
	}
	return t[from:end]
}
