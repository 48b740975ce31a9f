package rdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/courtesy-crawler/courtesy/internal/htmlenc"
	"golang.org/x/net/html"
)

// Syntax selects structured-data syntaxes; the zero value means all.
type Syntax uint8

// The syntaxes Extract reads.
const (
	RDFa Syntax = 1 << iota
	Microdata
	JSONLD
	AllSyntaxes = RDFa | Microdata | JSONLD
)

// Options bounds and tunes Extract. The zero value is usable: every
// syntax, the default bounds, no remote JSON-LD contexts.
type Options struct {
	// Syntaxes to extract; zero means AllSyntaxes.
	Syntaxes Syntax
	// MaxHTMLBytes is the largest page extracted (default 16 MiB); a
	// larger one is an error, ErrTooLarge.
	MaxHTMLBytes int
	// MaxQuads is the most quads kept per page (default 100 000); more
	// are counted in Stats.Dropped.
	MaxQuads int
	// MaxDepth bounds nesting: element depth for RDFa, item depth for
	// microdata, JSON depth for JSON-LD (default 128). Deeper parts are
	// skipped and counted in Stats.DepthCut.
	MaxDepth int
	// MaxJSONLDBytes is the largest JSON-LD script read (default
	// 1 MiB); larger ones are skipped and counted.
	MaxJSONLDBytes int
	// ContextLoader resolves remote JSON-LD contexts. Nil means the
	// bundled schema.org context only: nothing is fetched.
	ContextLoader ContextLoader
	// ContentType is the page's Content-Type header, consulted for its
	// charset; pages not in UTF-8 are decoded first (BOM, header, then
	// <meta charset>, as browsers do). Empty means sniff only.
	ContentType string
}

// Default bounds.
const (
	DefaultMaxHTMLBytes   = 16 << 20
	DefaultMaxQuads       = 100_000
	DefaultMaxDepth       = 128
	DefaultMaxJSONLDBytes = 1 << 20
)

func (o Options) withDefaults() Options {
	if o.Syntaxes == 0 {
		o.Syntaxes = AllSyntaxes
	}
	if o.MaxHTMLBytes <= 0 {
		o.MaxHTMLBytes = DefaultMaxHTMLBytes
	}
	if o.MaxQuads <= 0 {
		o.MaxQuads = DefaultMaxQuads
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxJSONLDBytes <= 0 {
		o.MaxJSONLDBytes = DefaultMaxJSONLDBytes
	}
	return o
}

// Stats counts what Extract found and what it skipped on one page.
type Stats struct {
	RDFa, Microdata, JSONLD int  // quads from each syntax
	JSONLDScripts           int  // ld+json scripts seen
	JSONLDMalformed         int  // scripts skipped: invalid JSON or JSON-LD
	JSONLDTooLarge          int  // scripts skipped: over MaxJSONLDBytes
	JSONLDRemoteRefused     int  // scripts skipped: remote context not allowed
	DepthCut                int  // subtrees, items or scripts cut at MaxDepth
	Dropped                 int  // quads dropped past MaxQuads
	Invalid                 int  // triples dropped for invalid IRIs or terms
	Truncated               bool // MaxQuads was reached: the page has more
}

// Quads returns the number of quads extracted.
func (s Stats) Quads() int { return s.RDFa + s.Microdata + s.JSONLD }

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.RDFa += o.RDFa
	s.Microdata += o.Microdata
	s.JSONLD += o.JSONLD
	s.JSONLDScripts += o.JSONLDScripts
	s.JSONLDMalformed += o.JSONLDMalformed
	s.JSONLDTooLarge += o.JSONLDTooLarge
	s.JSONLDRemoteRefused += o.JSONLDRemoteRefused
	s.DepthCut += o.DepthCut
	s.Dropped += o.Dropped
	s.Invalid += o.Invalid
	s.Truncated = s.Truncated || o.Truncated
}

// ErrTooLarge is returned for a page over Options.MaxHTMLBytes.
var ErrTooLarge = errors.New("rdf: page too large")

// Extract returns the RDF that a page carries as RDFa, microdata and
// JSON-LD, in the named graph pageURL (which is also the base IRI, unless
// the page has a <base>). Bad markup is skipped and counted in stats,
// never fatal; err is non-nil only when the page is over the size bound,
// pageURL is not absolute, or ctx ends.
func Extract(ctx context.Context, pageURL string, page []byte, opts Options) ([]Quad, Stats, error) {
	opts = opts.withDefaults()
	var st Stats
	if len(page) > opts.MaxHTMLBytes {
		return nil, st, fmt.Errorf("%w: %d bytes, bound %d", ErrTooLarge, len(page), opts.MaxHTMLBytes)
	}
	if !hasScheme(pageURL) {
		return nil, st, fmt.Errorf("rdf: page URL %q is not absolute", pageURL)
	}
	if err := ctx.Err(); err != nil {
		return nil, st, fmt.Errorf("rdf: extract %s: %w", pageURL, err)
	}
	s := newSink(pageURL, opts.MaxQuads)
	var doc *html.Node
	if opts.Syntaxes != JSONLD {
		var err error
		doc, err = html.Parse(utf8Reader(page, opts.ContentType))
		if err != nil {
			// The parser refuses pages nesting more than 512 open
			// elements. Such a page gets no RDFa or microdata (counted as
			// cut at depth); its JSON-LD is still read.
			st.DepthCut++
			doc = nil
		}
	}
	if doc == nil {
		if opts.Syntaxes&JSONLD != 0 {
			// JSON-LD alone needs the scripts and <base>, not the tree.
			scripts, href, ok := ldScriptsTokenized(utf8Reader(page, opts.ContentType))
			base := pageURL
			if ok {
				base = baseFrom(pageURL, href)
			}
			if err := extractJSONLD(ctx, scripts, base, pageURL, s, opts, &st); err != nil {
				return nil, st, err
			}
			st.JSONLD = len(s.quads)
		}
	} else {
		if opts.Syntaxes&RDFa != 0 {
			n := len(s.quads)
			st.DepthCut += extractRDFa(doc, pageURL, s, opts.MaxDepth)
			st.RDFa = len(s.quads) - n
		}
		if opts.Syntaxes&Microdata != 0 {
			n := len(s.quads)
			st.DepthCut += extractMicrodata(doc, pageURL, s, opts.MaxDepth)
			st.Microdata = len(s.quads) - n
		}
		if opts.Syntaxes&JSONLD != 0 {
			n := len(s.quads)
			if err := extractJSONLD(ctx, ldScriptsInTree(doc), htmlBase(doc, pageURL), pageURL, s, opts, &st); err != nil {
				return nil, st, err
			}
			st.JSONLD = len(s.quads) - n
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, st, fmt.Errorf("rdf: extract %s: %w", pageURL, err)
	}
	st.Dropped, st.Invalid, st.Truncated = s.dropped, s.invalid, s.truncated || s.dropped > 0
	return s.quads, st, nil
}

// ContextLoader returns the JSON-LD context document at url, as decoded
// JSON. It is how a deployment allows remote contexts.
type ContextLoader interface {
	LoadContext(ctx context.Context, url string) (any, error)
}

// utf8Reader returns page as UTF-8 text: as is when it is UTF-8 (or
// ASCII), else through the decoder of its detected encoding.
func utf8Reader(page []byte, contentType string) io.Reader {
	enc, name := htmlenc.Determine(page, contentType)
	if name == "utf-8" || name == "windows-1252" && htmlenc.ASCII(page) {
		return bytes.NewReader(page)
	}
	return enc.NewDecoder().Reader(bytes.NewReader(page))
}
