package index

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
)

// Bounds of a page record (and so of a page's text document).
const (
	maxText     = 32 << 10 // visible text kept per page, bytes
	maxTitle    = 1 << 10
	maxLiterals = 256 // literal triples kept per page
	maxLitBytes = 1 << 10
	maxClasses  = 64 // types and vocabularies per page
)

// Fields of the text index's documents.
const (
	FieldURL      = "url"
	FieldTitle    = "title"
	FieldText     = "text"
	FieldLiterals = "literals"
	FieldType     = "type"
	FieldVocab    = "vocab"
)

// Literal is one triple of a page whose object is a literal, as kept for
// search: the subject in N-Quads form, the predicate IRI and the value.
type Literal struct {
	S string `json:"s"`
	P string `json:"p"`
	V string `json:"v"`
}

// Page is what the indexer knows of one page (a graph name of the quad
// files, a target URI of the WARC files).
type Page struct {
	URL   string `json:"u"`
	Title string `json:"t,omitempty"`
	Desc  string `json:"d,omitempty"`
	// Text is the visible text, at most 32 KiB.
	Text string `json:"x,omitempty"`
	// Fetched is true once the page's WARC response was indexed.
	Fetched bool `json:"f,omitempty"`
	// Types are the rdf:type classes of its subjects (normalized IRIs).
	Types []string `json:"ty,omitempty"`
	// Vocabs are the namespaces of its predicates and classes.
	Vocabs []string `json:"vo,omitempty"`
	// Literals are its first literal-valued triples.
	Literals []Literal `json:"l,omitempty"`
	// Quads counts the quads indexed with the page as graph.
	Quads int64 `json:"q,omitempty"`
}

const prefixPage = "x/pg/"

// textDoc is the text index's document for a page.
type textDoc struct {
	URL      string   `json:"url"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	Literals string   `json:"literals"`
	Type     []string `json:"type"`
	Vocab    []string `json:"vocab"`
}

func (p *Page) doc() textDoc {
	var lits strings.Builder
	for _, l := range p.Literals {
		lits.WriteString(l.V)
		lits.WriteString("\n")
	}
	text := p.Text
	if p.Desc != "" {
		text = p.Desc + "\n" + text
	}
	return textDoc{URL: p.URL, Title: p.Title, Text: text, Literals: lits.String(), Type: p.Types, Vocab: p.Vocabs}
}

// textMapping is the mapping of the text index: title, text and literal
// values are analysed (Bleve's standard analyser: Unicode word breaks,
// lower case, no stemming, so it suits any language); url, type and vocab
// are kept whole for exact filters.
func textMapping() mapping.IndexMapping {
	// Nothing is stored and no term vectors are kept: titles and snippets
	// come from the page records, which halves the index's size and a
	// third of its CPU.
	text := bleve.NewTextFieldMapping()
	text.Analyzer = "standard"
	text.Store = false
	text.IncludeTermVectors = false
	keyword := bleve.NewKeywordFieldMapping()
	keyword.IncludeInAll = false
	keyword.Store = false
	url := bleve.NewKeywordFieldMapping()
	url.Store = false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(FieldURL, url)
	doc.AddFieldMappingsAt(FieldTitle, text)
	doc.AddFieldMappingsAt(FieldText, text)
	doc.AddFieldMappingsAt(FieldLiterals, text)
	doc.AddFieldMappingsAt(FieldType, keyword)
	doc.AddFieldMappingsAt(FieldVocab, keyword)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = "standard"
	return m
}

func decodePage(v []byte) (*Page, error) {
	p := &Page{}
	if err := json.Unmarshal(v, p); err != nil {
		return nil, err
	}
	return p, nil
}

func putPageBatch(b *triplestore.Batch, p *Page) error {
	v, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("index: page record %s: %w", p.URL, err)
	}
	return b.Set([]byte(prefixPage+p.URL), v)
}

// addClass adds v to a bounded sorted set.
func addClass(set []string, v string) []string {
	if v == "" || len(set) >= maxClasses {
		return set
	}
	i, found := slices.BinarySearch(set, v)
	if found {
		return set
	}
	return slices.Insert(set, i, v)
}

// addLiteral adds a literal triple unless present or over the bound.
func (p *Page) addLiteral(l Literal) {
	if len(p.Literals) >= maxLiterals || strings.TrimSpace(l.V) == "" {
		return
	}
	l.V = truncate(l.V, maxLitBytes)
	for _, o := range p.Literals {
		if o == l {
			return
		}
	}
	p.Literals = append(p.Literals, l)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
