package rdf

// JSON-LD in <script type="application/ld+json">: each script is one
// JSON-LD document, expanded and turned into RDF by json-gold. Contexts
// naming schema.org are served from a context bundled in the binary;
// other remote contexts are refused unless Options.ContextLoader allows
// them, so extraction never reaches the network on its own.

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/piprate/json-gold/ld"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

//go:embed contexts/schemaorg.jsonld
var schemaOrgContext []byte

var schemaOrgDoc = sync.OnceValues(func() (any, error) {
	var v any
	err := json.Unmarshal(schemaOrgContext, &v)
	return v, err
})

// isSchemaOrgContext reports whether u names schema.org's context: the
// site itself, with or without scheme variations and trailing slash, or
// its context document.
func isSchemaOrgContext(u string) bool {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	u = strings.TrimPrefix(u, "www.")
	switch strings.TrimSuffix(u, "/") {
	case "schema.org", "schema.org/docs/jsonldcontext.json", "schema.org/docs/jsonldcontext.jsonld":
		return true
	}
	return false
}

// errRemoteContext is what a script gets for a remote context that is
// neither bundled nor allowed.
var errRemoteContext = errors.New("rdf: remote JSON-LD context not allowed")

// ctxLoader is json-gold's document loader for one script.
type ctxLoader struct {
	ctx     context.Context
	next    ContextLoader
	refused bool
	loads   int
}

// maxContextLoads bounds the remote contexts one script may pull in
// (contexts may import contexts).
const maxContextLoads = 8

func (l *ctxLoader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	l.loads++
	if l.loads > maxContextLoads {
		return nil, fmt.Errorf("rdf: more than %d remote contexts", maxContextLoads)
	}
	if isSchemaOrgContext(u) {
		doc, err := schemaOrgDoc()
		if err != nil {
			return nil, fmt.Errorf("rdf: bundled schema.org context: %w", err)
		}
		return &ld.RemoteDocument{DocumentURL: u, Document: doc}, nil
	}
	if l.next == nil {
		l.refused = true
		return nil, fmt.Errorf("%w: %s", errRemoteContext, u)
	}
	doc, err := l.next.LoadContext(l.ctx, u)
	if err != nil {
		return nil, fmt.Errorf("rdf: load context %s: %w", u, err)
	}
	return &ld.RemoteDocument{DocumentURL: u, Document: doc}, nil
}

// isLDScript reports whether n is a <script type="application/ld+json">.
func isLDScript(n *html.Node) bool {
	if n.DataAtom != atom.Script {
		return false
	}
	t, _ := attr(n, "type")
	t = strings.TrimSpace(t)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return strings.EqualFold(t, "application/ld+json")
}

// extractJSONLD converts every ld+json script of doc. A script that is not
// JSON, not valid JSON-LD, too large, too deep or needs a refused context
// is skipped and counted; only the end of ctx is an error.
func extractJSONLD(ctx context.Context, doc *html.Node, pageURL string, s *sink, opts Options, st *Stats) error {
	base := ""
	var scripts []*html.Node
	var find func(n *html.Node, d int)
	find = func(n *html.Node, d int) {
		if d > maxTreeDepth {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if isLDScript(c) {
				scripts = append(scripts, c)
				continue
			}
			find(c, d+1)
		}
	}
	find(doc, 0)
	for _, sc := range scripts {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rdf: extract %s: %w", pageURL, err)
		}
		if s.full() {
			break
		}
		st.JSONLDScripts++
		if base == "" {
			base = htmlBase(doc, pageURL)
		}
		text := textContent(sc)
		if len(text) > opts.MaxJSONLDBytes {
			st.JSONLDTooLarge++
			continue
		}
		if jsonDepth(text) > opts.MaxDepth {
			st.DepthCut++
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			st.JSONLDMalformed++
			continue
		}
		l := &ctxLoader{ctx: ctx, next: opts.ContextLoader}
		ds, err := jsonLDToRDF(v, base, l)
		if err != nil {
			if l.refused {
				st.JSONLDRemoteRefused++
			} else {
				st.JSONLDMalformed++
			}
			continue
		}
		addDataset(s, ds)
	}
	return nil
}

// jsonLDToRDF runs json-gold's toRDF on one document. json-gold is a large
// library fed hostile input: a panic in it is turned into an error.
func jsonLDToRDF(v any, base string, l *ctxLoader) (ds *ld.RDFDataset, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rdf: json-ld processor failed: %v", r)
		}
	}()
	o := ld.NewJsonLdOptions(base)
	o.DocumentLoader = l
	o.ProcessingMode = ld.JsonLd_1_1
	out, err := ld.NewJsonLdProcessor().ToRDF(v, o)
	if err != nil {
		return nil, fmt.Errorf("rdf: json-ld: %w", err)
	}
	ds, ok := out.(*ld.RDFDataset)
	if !ok {
		return nil, fmt.Errorf("rdf: json-ld: unexpected result %T", out)
	}
	return ds, nil
}

// addDataset adds a script's triples to the page: all of its graphs go
// into the page's graph (the graph name is the page), and its blank nodes
// get page-scoped labels.
func addDataset(s *sink, ds *ld.RDFDataset) {
	bn := map[string]Term{}
	conv := func(n ld.Node) Term {
		switch n := n.(type) {
		case ld.IRI:
			return NewIRI(n.Value)
		case ld.BlankNode:
			if t, ok := bn[n.Attribute]; ok {
				return t
			}
			t := s.blank()
			bn[n.Attribute] = t
			return t
		case ld.Literal:
			return NewLiteral(n.Value, n.Datatype, n.Language)
		}
		return Term{}
	}
	// Graph order: the default graph first, then named ones by name, so
	// that output is deterministic.
	names := make([]string, 0, len(ds.Graphs))
	for g := range ds.Graphs {
		if g != "@default" {
			names = append(names, g)
		}
	}
	sort.Strings(names)
	names = append([]string{"@default"}, names...)
	for _, g := range names {
		for _, q := range ds.Graphs[g] {
			if q == nil {
				continue
			}
			s.add(conv(q.Subject), conv(q.Predicate), conv(q.Object))
		}
	}
}

// jsonDepth returns the deepest nesting of arrays and objects in JSON
// text, without decoding it (strings are skipped).
func jsonDepth(text string) int {
	depth, max := 0, 0
	inStr, esc := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > max {
				max = depth
			}
		case ']', '}':
			depth--
		}
	}
	return max
}
