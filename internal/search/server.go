package search

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/index"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Server answers the search site's requests. It is safe for concurrent
// use.
type Server struct {
	ix   *index.Indexer
	tmpl *template.Template
	now  func() time.Time
	// filters caches the filter choices of the search page (the facets
	// of every page in the index), which cost a pass over all documents.
	filters struct {
		sync.Mutex
		docs          uint64
		at            time.Time
		types, vocabs []Facet
		ok            bool
	}
}

// filtersTTL is how long the search page's filter choices are reused
// while the index grows.
const filtersTTL = 30 * time.Second

// filterChoices returns the classes and vocabularies of the whole index,
// recomputed when the index changed and the last computation is older
// than filtersTTL (or never happened).
func (s *Server) filterChoices(ctx context.Context) ([]Facet, []Facet, error) {
	docs, err := s.ix.Text().DocCount()
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	s.filters.Lock()
	defer s.filters.Unlock()
	now := s.now()
	if s.filters.ok && (docs == s.filters.docs || now.Sub(s.filters.at) < filtersTTL) {
		return s.filters.types, s.filters.vocabs, nil
	}
	all, err := s.Search(ctx, Query{Size: 1})
	if err != nil {
		return nil, nil, err
	}
	s.filters.docs, s.filters.at, s.filters.ok = docs, now, true
	s.filters.types, s.filters.vocabs = all.Types, all.Vocabs
	return all.Types, all.Vocabs, nil
}

// New returns a server over an open index.
func New(ix *index.Indexer) (*Server, error) {
	t, err := template.New("").Funcs(template.FuncMap{
		"subject": func(nq string) string { return "/subject?s=" + url.QueryEscape(nq) },
		"safe":    func(s string) template.HTML { return template.HTML(s) }, // only for snippet's escaped output
		"inc":     func(n int) int { return n + 1 },
	}).ParseFS(assets, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("search: templates: %w", err)
	}
	return &Server{ix: ix, tmpl: t, now: time.Now}, nil
}

// Handler returns the site's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.handleHome)
	mux.HandleFunc("GET /subject", s.handleSubject)
	mux.HandleFunc("GET /api/search", s.handleAPISearch)
	mux.HandleFunc("GET /api/triples", s.handleTriples)
	mux.HandleFunc("GET /api/types", s.handleCounts(s.ix.Store().CountsByType))
	mux.HandleFunc("GET /api/predicates", s.handleCounts(s.ix.Store().CountsByPredicate))
	return securityHeaders(mux)
}

// securityHeaders forbids scripts and framing: the pages need neither, and
// they show text from crawled pages.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// httpError writes a plain-text or JSON error.
func httpError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, ErrBadQuery) || errors.Is(err, triplestore.ErrCursor) {
		code = http.StatusBadRequest
	}
	msg := err.Error()
	if code == http.StatusInternalServerError {
		msg = "search: internal error"
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	http.Error(w, msg, code)
}

func intParam(v url.Values, name string) (int, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a number", ErrBadQuery, name, s)
	}
	return n, nil
}

func parseQuery(r *http.Request) (Query, error) {
	v := r.URL.Query()
	q := Query{Text: v.Get("q"), Type: v.Get("type"), Vocab: v.Get("vocab")}
	var err error
	if q.From, err = intParam(v, "from"); err != nil {
		return q, err
	}
	if q.Size, err = intParam(v, "size"); err != nil {
		return q, err
	}
	return q, q.Validate()
}

func (s *Server) handleAPISearch(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		httpError(w, r, err)
		return
	}
	res, err := s.Search(r.Context(), q)
	if err != nil {
		httpError(w, r, err)
		return
	}
	writeJSON(w, "application/json", res)
}

func writeJSON(w http.ResponseWriter, ct string, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, "search: encoding", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b.Bytes())
}

type homeData struct {
	Q       Query
	Res     *Results
	Types   []Facet // the filter choices: all classes in the store
	Vocabs  []Facet
	NextURL string
	PrevURL string
	Err     string
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		s.render(w, "home.html", homeData{Q: q, Err: err.Error()})
		return
	}
	d := homeData{Q: q}
	// The filter choices are every class and vocabulary indexed, from
	// the facets of an empty query, so that a filter can be chosen
	// before any search.
	if d.Types, d.Vocabs, err = s.filterChoices(r.Context()); err != nil {
		httpError(w, r, err)
		return
	}
	if q.Text != "" || q.Type != "" || q.Vocab != "" {
		if d.Res, err = s.Search(r.Context(), q); err != nil {
			httpError(w, r, err)
			return
		}
		page := func(from int) string {
			v := url.Values{"q": {q.Text}, "type": {q.Type}, "vocab": {q.Vocab}, "from": {strconv.Itoa(from)}}
			return "/?" + v.Encode()
		}
		if d.Res.Next > 0 {
			d.NextURL = page(d.Res.Next)
		}
		if q.From > 0 {
			d.PrevURL = page(max(0, q.From-max(q.Size, DefaultSize)))
		}
	}
	s.render(w, "home.html", d)
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "search: template: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// termParam reads a term from a request parameter: N-Quads syntax
// (<iri>, _:label, "literal"@lang), a CURIE with a known prefix, or a bare
// absolute IRI. "" is unbound.
func termParam(v url.Values, name string) (rdf.Term, error) {
	s := strings.TrimSpace(v.Get(name))
	if s == "" {
		return rdf.Term{}, nil
	}
	if len(s) > 8<<10 {
		return rdf.Term{}, fmt.Errorf("%w: %s is over 8 KiB", ErrBadQuery, name)
	}
	switch s[0] {
	case '<', '"', '_':
		t, err := rdf.ParseTerm(s)
		if err != nil {
			return rdf.Term{}, fmt.Errorf("%w: %s: %v", ErrBadQuery, name, err)
		}
		return t, nil
	}
	t, err := rdf.ParseTerm("<" + index.Expand(s) + ">")
	if err != nil {
		return rdf.Term{}, fmt.Errorf("%w: %s=%q is not an absolute IRI, a CURIE or an N-Quads term", ErrBadQuery, name, s)
	}
	return t, nil
}

// handleTriples answers a triple pattern, in N-Quads (the default) or in
// JSON-LD when Accept prefers application/ld+json or application/json.
// The next page's URL is in a Link header (rel="next").
func (s *Server) handleTriples(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	var p triplestore.Pattern
	var err error
	for _, f := range []struct {
		name string
		t    *rdf.Term
	}{{"s", &p.S}, {"p", &p.P}, {"o", &p.O}, {"g", &p.G}} {
		if *f.t, err = termParam(v, f.name); err != nil {
			httpError(w, r, err)
			return
		}
	}
	switch {
	case p.S.Kind == rdf.Literal:
		httpError(w, r, fmt.Errorf("%w: a subject cannot be a literal", ErrBadQuery))
		return
	case !p.P.IsZero() && p.P.Kind != rdf.IRI:
		httpError(w, r, fmt.Errorf("%w: a predicate is an IRI", ErrBadQuery))
		return
	case p.G.Kind == rdf.Literal:
		httpError(w, r, fmt.Errorf("%w: a graph cannot be a literal", ErrBadQuery))
		return
	}
	limit, err := intParam(v, "limit")
	if err != nil {
		httpError(w, r, err)
		return
	}
	if limit < 0 || limit > 1000 {
		httpError(w, r, fmt.Errorf("%w: limit %d out of 1..1000", ErrBadQuery, limit))
		return
	}
	cursor := v.Get("cursor")
	if len(cursor) > 1024 {
		httpError(w, r, fmt.Errorf("%w: cursor too long", ErrBadQuery))
		return
	}
	page, err := s.ix.Store().Match(p, cursor, limit)
	if err != nil {
		httpError(w, r, err)
		return
	}
	if page.Next != "" {
		nv := url.Values{}
		for k, vs := range v {
			nv[k] = vs
		}
		nv.Set("cursor", page.Next)
		w.Header().Set("Link", fmt.Sprintf("</api/triples?%s>; rel=\"next\"", nv.Encode()))
	}
	w.Header().Add("Vary", "Accept")
	if wantsJSONLD(r.Header.Get("Accept")) {
		writeJSON(w, "application/ld+json", toJSONLD(page.Quads))
		return
	}
	w.Header().Set("Content-Type", "application/n-quads")
	var b strings.Builder
	for _, q := range page.Quads {
		b.WriteString(q.String())
		b.WriteByte('\n')
	}
	_, _ = w.Write([]byte(b.String()))
}

// wantsJSONLD reports whether an Accept header ranks JSON-LD (or JSON)
// above N-Quads.
func wantsJSONLD(accept string) bool {
	best, bestQ := "", -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil {
				q = f
			}
		}
		switch mt {
		case "application/ld+json", "application/json", "application/n-quads":
			if q > bestQ {
				best, bestQ = mt, q
			}
		}
	}
	return best == "application/ld+json" || best == "application/json"
}

// toJSONLD writes quads as expanded JSON-LD: one node object per subject,
// inside a named graph object per graph.
func toJSONLD(quads []rdf.Quad) []any {
	type node = map[string]any
	var out []any
	graphs := map[rdf.Term]*[]any{}
	nodes := map[[2]rdf.Term]node{}
	var order []rdf.Term
	for _, q := range quads {
		gl, ok := graphs[q.G]
		if !ok {
			gl = &[]any{}
			graphs[q.G] = gl
			order = append(order, q.G)
		}
		n, ok := nodes[[2]rdf.Term{q.G, q.S}]
		if !ok {
			n = node{"@id": idOf(q.S)}
			nodes[[2]rdf.Term{q.G, q.S}] = n
			*gl = append(*gl, n)
		}
		var obj map[string]any
		switch q.O.Kind {
		case rdf.Literal:
			obj = map[string]any{"@value": q.O.Value}
			if q.O.Lang != "" {
				obj["@language"] = q.O.Lang
			} else if q.O.Datatype != "" {
				obj["@type"] = q.O.Datatype
			}
		default:
			obj = map[string]any{"@id": idOf(q.O)}
		}
		list, _ := n[q.P.Value].([]any)
		n[q.P.Value] = append(list, obj)
	}
	for _, g := range order {
		if g.IsZero() {
			out = append(out, *graphs[g]...)
			continue
		}
		out = append(out, map[string]any{"@id": idOf(g), "@graph": *graphs[g]})
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func idOf(t rdf.Term) string {
	if t.Kind == rdf.Blank {
		return "_:" + t.Value
	}
	return t.Value
}

// termLabel is a short display form of a term in N-Quads form.
func termLabel(nq string) string {
	t, err := rdf.ParseTerm(nq)
	if err != nil {
		return nq
	}
	return label(t)
}

func label(t rdf.Term) string {
	switch t.Kind {
	case rdf.IRI:
		return index.Compact(t.Value)
	case rdf.Blank:
		return "_:" + t.Value
	}
	return t.Value
}

func (s *Server) handleCounts(f func(limit int) ([]triplestore.Count, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		counts, err := f(0)
		if err != nil {
			httpError(w, r, err)
			return
		}
		type row struct {
			IRI   string `json:"iri"`
			Label string `json:"label"`
			Quads int64  `json:"quads"`
		}
		out := []row{}
		for _, c := range counts {
			out = append(out, row{IRI: c.Term.Value, Label: index.Compact(c.Term.Value), Quads: c.N})
		}
		writeJSON(w, "application/json", out)
	}
}

// subjectRow is one triple on a subject page.
type subjectRow struct {
	S, P, O        rdf.Term
	SLink, OLink   string // subject page links ("" for literals)
	SLabel, PLabel string
	OLabel         string
	Lit            bool
	Graph          string
}

type subjectData struct {
	Term     string
	Label    string
	Out, In  []subjectRow
	MoreOut  bool
	MoreIn   bool
	Page     *index.Page
	TripleAP string
}

func (s *Server) handleSubject(w http.ResponseWriter, r *http.Request) {
	t, err := termParam(r.URL.Query(), "s")
	if err == nil && t.IsZero() {
		err = fmt.Errorf("%w: s is required", ErrBadQuery)
	}
	if err == nil && t.Kind == rdf.Literal {
		err = fmt.Errorf("%w: a literal has no page", ErrBadQuery)
	}
	if err != nil {
		httpError(w, r, err)
		return
	}
	d := subjectData{Term: t.String(), Label: label(t),
		TripleAP: "/api/triples?s=" + url.QueryEscape(t.String())}
	rows := func(p triplestore.Pattern) ([]subjectRow, bool, error) {
		page, err := s.ix.Store().Match(p, "", 500)
		if err != nil {
			return nil, false, err
		}
		var out []subjectRow
		for _, q := range page.Quads {
			row := subjectRow{S: q.S, P: q.P, O: q.O, SLabel: label(q.S), PLabel: label(q.P), OLabel: label(q.O), Lit: q.O.Kind == rdf.Literal}
			row.SLink = "/subject?s=" + url.QueryEscape(q.S.String())
			if !row.Lit {
				row.OLink = "/subject?s=" + url.QueryEscape(q.O.String())
			}
			if q.G.Kind == rdf.IRI {
				row.Graph = q.G.Value
			}
			out = append(out, row)
		}
		return out, page.Next != "", nil
	}
	if d.Out, d.MoreOut, err = rows(triplestore.Pattern{S: t}); err != nil {
		httpError(w, r, err)
		return
	}
	if d.In, d.MoreIn, err = rows(triplestore.Pattern{O: t}); err != nil {
		httpError(w, r, err)
		return
	}
	if t.Kind == rdf.IRI {
		if d.Page, err = s.ix.Page(t.Value); err != nil {
			httpError(w, r, err)
			return
		}
	}
	if len(d.Out) == 0 && len(d.In) == 0 && d.Page == nil {
		w.WriteHeader(http.StatusNotFound)
	}
	s.render(w, "subject.html", d)
}
