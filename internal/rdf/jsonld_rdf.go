package rdf

// The JSON-LD 1.1 "Deserialize JSON-LD to RDF" step, over the expanded
// form json-gold produces. json-gold's own toRDF spends most of its time
// validating every IRI with a large regular expression (the sink checks
// IRIs far more cheaply) and builds a node map first; walking the
// expanded tree directly gives the same triples at a fraction of the cost.
// Every named graph goes into the page's graph.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/piprate/json-gold/ld"
)

type ldConv struct {
	s    *sink
	bn   map[string]Term // the script's blank node labels to page labels
	seen map[[3]Term]bool
	typ  Term
}

func newLDConv(s *sink) *ldConv {
	return &ldConv{s: s, bn: map[string]Term{}, seen: map[[3]Term]bool{}, typ: NewIRI(RDFType)}
}

func (c *ldConv) add(s, p, o Term) {
	k := [3]Term{s, p, o}
	if c.seen[k] {
		return // the same triple stated twice in one script
	}
	c.seen[k] = true
	c.s.add(s, p, o)
}

// id turns a node identifier into a term: a blank node for "_:" labels,
// else an IRI (one left relative is dropped, as invalid, by the sink).
func (c *ldConv) id(s string) Term {
	if len(s) >= 2 && s[0] == '_' && s[1] == ':' {
		if t, ok := c.bn[s]; ok {
			return t
		}
		t := c.s.blank()
		c.bn[s] = t
		return t
	}
	return NewIRI(s)
}

// expanded converts json-gold's expanded output: an array of node objects.
func (c *ldConv) expanded(v []any) {
	for _, n := range v {
		if m, ok := n.(map[string]any); ok {
			c.node(m)
		}
		if c.s.full() {
			return
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func asArray(v any) []any {
	if a, ok := v.([]any); ok {
		return a
	}
	return []any{v}
}

// node converts a node object and returns its subject.
func (c *ldConv) node(n map[string]any) Term {
	var subject Term
	if id, ok := n["@id"].(string); ok {
		subject = c.id(id)
	} else {
		subject = c.s.blank()
	}
	for _, key := range sortedKeys(n) {
		val := n[key]
		switch key {
		case "@id", "@index", "@context":
		case "@type":
			for _, t := range asArray(val) {
				if ts, ok := t.(string); ok {
					c.add(subject, c.typ, c.id(ts))
				}
			}
		case "@reverse":
			rev, _ := val.(map[string]any)
			for _, p := range sortedKeys(rev) {
				if !hasScheme(p) {
					continue
				}
				for _, v := range asArray(rev[p]) {
					if o := c.object(v); o.Kind == IRI || o.Kind == Blank {
						c.add(o, NewIRI(p), subject)
					}
				}
			}
		case "@graph", "@included":
			// A named graph's triples go into the page's graph; a graph
			// named by an invalid IRI is rejected whole, as toRDF does.
			if key == "@graph" && subject.Kind == IRI && !validIRI(subject.Value) {
				c.s.invalid++
				continue
			}
			for _, v := range asArray(val) {
				if m, ok := v.(map[string]any); ok {
					c.node(m)
				}
			}
		default:
			// Keywords left, blank node predicates (generalized RDF) and
			// relative IRIs give no triples.
			if key == "" || key[0] == '@' || !hasScheme(key) || (len(key) > 1 && key[0] == '_' && key[1] == ':') {
				continue
			}
			p := NewIRI(key)
			for _, v := range asArray(val) {
				if o := c.object(v); !o.IsZero() {
					c.add(subject, p, o)
				}
			}
		}
	}
	return subject
}

// object converts a value, list or node object.
func (c *ldConv) object(v any) Term {
	m, ok := v.(map[string]any)
	if !ok {
		return Term{}
	}
	if val, ok := m["@value"]; ok {
		return c.literal(m, val)
	}
	if l, ok := m["@list"]; ok {
		return c.list(asArray(l))
	}
	return c.node(m)
}

// list writes an RDF collection and returns its head.
func (c *ldConv) list(items []any) Term {
	var terms []Term
	for _, it := range items {
		if t := c.object(it); !t.IsZero() {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return NewIRI(nsRDF + "nil")
	}
	head := c.s.blank()
	cur := head
	for i, t := range terms {
		c.add(cur, NewIRI(nsRDF+"first"), t)
		if i == len(terms)-1 {
			c.add(cur, NewIRI(nsRDF+"rest"), NewIRI(nsRDF+"nil"))
		} else {
			next := c.s.blank()
			c.add(cur, NewIRI(nsRDF+"rest"), next)
			cur = next
		}
	}
	return head
}

// literal converts a value object (JSON-LD 1.1 API §8.6 "Object to RDF"):
// booleans and numbers get XSD datatypes and canonical forms, @json
// values become rdf:JSON, language-tagged strings keep their language.
func (c *ldConv) literal(m map[string]any, val any) Term {
	dt, ok := m["@type"].(string)
	if !ok && m["@type"] != nil {
		// A value object's @type must be one IRI ("invalid typed
		// value"); json-gold's expansion lets an array through. Reject
		// the triple rather than drop the datatype.
		c.s.invalid++
		return Term{}
	}
	if dt == "@json" {
		// Sorted keys, no HTML escaping: close to the JSON
		// Canonicalization Scheme the spec asks for.
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(val); err != nil {
			return Term{}
		}
		return NewLiteral(strings.TrimSuffix(b.String(), "\n"), nsRDF+"JSON", "")
	}
	switch v := val.(type) {
	case bool:
		if dt == "" {
			dt = nsXSD + "boolean"
		}
		return NewLiteral(strconv.FormatBool(v), dt, "")
	case float64:
		isInt := v == float64(int64(v))
		if !isInt || dt == nsXSD+"double" {
			if dt == "" {
				dt = nsXSD + "double"
			}
			return NewLiteral(ld.GetCanonicalDouble(v), dt, "")
		}
		if dt == "" {
			dt = nsXSD + "integer"
		}
		return NewLiteral(fmt.Sprintf("%d", int64(v)), dt, "")
	case string:
		if lang, ok := m["@language"].(string); ok && dt == "" {
			if !validLang(lang) {
				// JSON-LD rejects the triple (the other syntaxes keep the
				// text without its tag).
				c.s.invalid++
				return Term{}
			}
			return NewLiteral(v, "", lang)
		}
		return NewLiteral(v, dt, "")
	}
	return Term{}
}
