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
	"io"
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
		// A fresh copy each time: json-gold may keep or change what it
		// is given, and extraction runs on many goroutines.
		var doc any
		if err := json.Unmarshal(schemaOrgContext, &doc); err != nil {
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
	return isLDType(t)
}

// isLDType reports whether a script type names JSON-LD.
func isLDType(t string) bool {
	t = strings.TrimSpace(t)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return strings.EqualFold(t, "application/ld+json")
}

// ldScriptsInTree returns the text of every ld+json script in doc.
func ldScriptsInTree(doc *html.Node) []string {
	var scripts []string
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
				scripts = append(scripts, textContent(c))
				continue
			}
			find(c, d+1)
		}
	}
	find(doc, 0)
	return scripts
}

// ldScriptsTokenized returns the text of every ld+json script of a page,
// and the href of its first <base>, with the tokenizer alone: when only
// JSON-LD is wanted, building the whole tree is wasted work.
func ldScriptsTokenized(r io.Reader) (scripts []string, baseHref string, hasBase bool) {
	z := html.NewTokenizer(r)
	inLD := false
	var buf strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			if inLD {
				scripts = append(scripts, buf.String())
			}
			return scripts, baseHref, hasBase
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			switch {
			case string(name) == "script":
				t := ""
				for more {
					var k, v []byte
					k, v, more = z.TagAttr()
					if string(k) == "type" {
						t = string(v)
					}
				}
				if isLDType(t) {
					inLD = true
					buf.Reset()
				}
			case string(name) == "base" && !hasBase:
				for more {
					var k, v []byte
					k, v, more = z.TagAttr()
					if string(k) == "href" {
						baseHref, hasBase = string(v), true
						break
					}
				}
			}
		case html.TextToken:
			if inLD {
				buf.Write(z.Text())
			}
		case html.EndTagToken:
			if inLD {
				if name, _ := z.TagName(); string(name) == "script" {
					scripts = append(scripts, buf.String())
					inLD = false
				}
			}
		}
	}
}

// extractJSONLD converts the page's ld+json scripts, base being the
// page's base IRI. A script that is not JSON, not valid JSON-LD, too
// large, too deep or needs a refused context is skipped and counted; only
// the end of ctx is an error.
func extractJSONLD(ctx context.Context, scripts []string, base, pageURL string, s *sink, opts Options, st *Stats) error {
	for _, text := range scripts {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("rdf: extract %s: %w", pageURL, err)
		}
		if s.full() {
			break
		}
		st.JSONLDScripts++
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
		expanded, err := jsonLDExpand(v, base, l)
		if err != nil {
			if l.refused {
				st.JSONLDRemoteRefused++
			} else {
				st.JSONLDMalformed++
			}
			continue
		}
		newLDConv(s).expanded(expanded)
	}
	return nil
}

// jsonLDExpand runs json-gold's expansion on one document. json-gold is a
// large library fed hostile input: a panic in it is turned into an error.
func jsonLDExpand(v any, base string, l *ctxLoader) (out []any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rdf: json-ld processor failed: %v", r)
		}
	}()
	o := ld.NewJsonLdOptions(base)
	o.DocumentLoader = l
	o.ProcessingMode = ld.JsonLd_1_1
	if l.next == nil {
		if out, ok, err := expandSchemaOrg(v, base, o); ok {
			return out, err
		}
	}
	out, err = ld.NewJsonLdProcessor().Expand(v, o)
	if err != nil {
		return nil, fmt.Errorf("rdf: json-ld: %w", err)
	}
	return out, nil
}

// schemaOrgActive is the bundled schema.org context, processed once.
// Processing a context costs more than expanding a typical page's data,
// and nearly every page names schema.org's.
var schemaOrgActive = sync.OnceValues(func() (*ld.Context, error) {
	doc, err := schemaOrgDoc()
	if err != nil {
		return nil, err
	}
	o := ld.NewJsonLdOptions("")
	o.DocumentLoader = &ctxLoader{ctx: context.Background()}
	o.ProcessingMode = ld.JsonLd_1_1
	m, _ := doc.(map[string]any)
	return ld.NewContext(nil, o).Parse(m["@context"])
})

// expandSchemaOrg expands a document whose top-level objects all name
// schema.org's context, and nothing else, as their @context: each object is
// expanded, without its @context, in a copy of the processed context. This
// is what expansion does, less the context processing. ok is false for
// other documents.
func expandSchemaOrg(v any, base string, o *ld.JsonLdOptions) (out []any, ok bool, err error) {
	objs, isArr := v.([]any)
	if !isArr {
		objs = []any{v}
	}
	for _, x := range objs {
		m, isMap := x.(map[string]any)
		if !isMap {
			return nil, false, nil
		}
		c, _ := m["@context"].(string)
		if !isSchemaOrgContext(c) {
			return nil, false, nil
		}
	}
	active, err := schemaOrgActive()
	if err != nil {
		return nil, false, nil
	}
	api := ld.NewJsonLdApi()
	for _, x := range objs {
		m := x.(map[string]any)
		doc := make(map[string]any, len(m))
		for k, val := range m {
			if k != "@context" {
				doc[k] = val
			}
		}
		c := ld.CopyContext(active)
		c.Values.Base = base
		e, err := api.Expand(c, "", doc, o, false, nil)
		if err != nil {
			return nil, true, fmt.Errorf("rdf: json-ld: %w", err)
		}
		// The end of the expansion algorithm: a lone @graph is unwrapped,
		// the result is an array.
		switch e := e.(type) {
		case map[string]any:
			if g, has := e["@graph"]; has && len(e) == 1 {
				out = append(out, asArray(g)...)
			} else if len(e) > 0 {
				out = append(out, e)
			}
		case []any:
			out = append(out, e...)
		}
	}
	return out, true, nil
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
