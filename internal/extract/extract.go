package extract

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// Defaults applied when an Options field is zero.
const (
	DefaultMaxLinks      = 10_000
	DefaultMaxURLLength  = 2048
	DefaultMaxBytes      = 8 << 20
	DefaultMaxText       = 256 << 10
	DefaultMaxAnchorText = 256
)

// Hop is the kind of hop a link adds to a crawl path, with the letters of
// the Heritrix crawl log, so that a crawl log's hop path reads the same.
type Hop byte

const (
	HopLink        Hop = 'L' // navigation: a, area, link (non-embed), form
	HopEmbed       Hop = 'E' // needed to render the page: img, frame, stylesheet, script
	HopRedirect    Hop = 'R' // HTTP redirect or meta refresh
	HopSpeculative Hop = 'X' // found by pattern in a script, may not be a URL
)

// String returns the letter.
func (h Hop) String() string { return string(rune(h)) }

// Options tunes extraction. The zero value is ready to use: every zero limit
// means its default; negative limits are rejected by Validate.
type Options struct {
	// Agent is the crawler's product token (e.g. "courtesy"). Meta robots
	// tags named "robots" always apply; those named Agent (compared
	// case-insensitively) apply too and are merged. "" means only "robots".
	Agent string

	// Images adds img src links (hop E). Default off: images rarely lead to
	// new pages and cost a fetch each.
	Images bool
	// Requisites adds everything else a browser loads to render the page
	// (wget --page-requisites, Heritrix's embeds), hop E: img src and
	// srcset, picture source srcset, script src, audio, video, source and
	// track src, video poster, embed src, object data, input type=image
	// src, background attributes, lazy images' data-src, data-srcset and
	// data-original, inline SVG's image and use href, and the url(),
	// image-set() and @import references of style attributes and <style>
	// elements. Stylesheets, icons, preloads and frames are read without
	// it. Default off.
	Requisites bool
	// Forms adds the action of GET forms (hop L). Default off: form
	// submissions without input are mostly noise.
	Forms bool
	// ScriptURLs adds absolute http(s) URLs found by pattern in inline
	// scripts (hop X). Default off (the Viuva Negra report §4.2: links in JavaScript).
	ScriptURLs bool
	// TextURLs adds absolute http(s) URLs written in the visible text
	// (hop L). Default off.
	TextURLs bool

	// Normalize are the urlnorm options applied to every link after RFC
	// 3986 resolution and normalization; the zero value adds no
	// heuristics. A crawler passes its own (urlnorm.CrawlDefaults) so each
	// link is parsed and normalized once. MaxLength is ignored (the limit
	// is MaxURLLength).
	Normalize urlnorm.Options

	// NoText leaves Page.Text empty: the visible text is not collected,
	// only whether there is any (Page.HasText). For a caller that reads
	// links only (the crawler): collecting the text of a text-heavy page
	// is a tenth of extraction. Default off.
	NoText bool

	// Tokens, when not nil, is given the page's tokens as the tokenizer
	// reads them, in the same pass as extraction: a caller that needs
	// another view of the page (the crawler's near-duplicate fingerprint,
	// dedup.Content) gets it without tokenizing the page again. Only the
	// page's own top-level tokens are given, in document order: not the
	// markup read inside noscript, noframes and iframe, nor what an
	// unterminated raw-text element is read again as. The tokens are those
	// of the decoded body (Page.Charset "utf-8": the body as fetched) up to
	// MaxBytes. Default nil: none.
	Tokens TokenSink

	// MaxLinks is the number of links kept per page; more are dropped and
	// counted. Default DefaultMaxLinks (10,000).
	MaxLinks int
	// MaxURLLength is the longest absolute URL kept, in bytes; longer ones
	// are dropped and counted (traps start far lower, the Viuva Negra report §6: 200
	// characters, that is the traps package's call). Default 2048.
	MaxURLLength int
	// MaxBytes is the number of body bytes parsed; the rest is ignored and
	// Page.Truncated set. Default 8 MiB.
	MaxBytes int
	// MaxText is the size of Page.Text in bytes. Default 256 KiB.
	MaxText int
	// MaxAnchorText is the size of Link.Text (and of Page.Title and
	// Page.Description, times four) in bytes. Default 256.
	MaxAnchorText int
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"MaxLinks", o.MaxLinks}, {"MaxURLLength", o.MaxURLLength},
		{"MaxBytes", o.MaxBytes}, {"MaxText", o.MaxText},
		{"MaxAnchorText", o.MaxAnchorText},
	} {
		if f.v < 0 {
			return fmt.Errorf("extract: option %s is negative (%d)", f.name, f.v)
		}
	}
	return nil
}

// withDefaults returns o with every zero limit replaced by its default.
func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxLinks, DefaultMaxLinks)
	def(&o.MaxURLLength, DefaultMaxURLLength)
	def(&o.MaxBytes, DefaultMaxBytes)
	def(&o.MaxText, DefaultMaxText)
	def(&o.MaxAnchorText, DefaultMaxAnchorText)
	return o
}

// TokenSink receives the tokens of a page (Options.Tokens). The slices are
// the tokenizer's and valid only during the call.
type TokenSink interface {
	// StartTag is given a start tag or, selfClosing, a self-closing one:
	// the raw token (html.Tokenizer.Raw), before extraction reads its name
	// and attributes (which rewrites the bytes of some).
	StartTag(raw []byte, selfClosing bool)
	// EndTag is given an end tag, raw.
	EndTag(raw []byte)
	// Text is given a text token (html.Tokenizer.Text).
	Text(t []byte)
}

// Link is one outlink of a page.
type Link struct {
	// URL is absolute, http or https, without fragment, RFC 3986
	// normalized plus the heuristics of Options.Normalize.
	URL *url.URL
	// Abs is URL's text (URL.String()), computed once.
	Abs string
	// Tag and Attr say where the link was found: "a"/"href",
	// "meta"/"content" (refresh), "script"/"" (pattern), "text"/"",
	// "http"/"location" (redirect), "div"/"style" (a style attribute),
	// "style"/"" (a <style> element), "css"/"" (a stylesheet).
	Tag, Attr string
	// Rel is the rel attribute as written, lower-cased ("" if none).
	Rel string
	// NoFollow is true when Rel holds the token "nofollow".
	NoFollow bool
	// Text is the anchor text (a), alt text (area, img) or "", whitespace
	// collapsed, at most Options.MaxAnchorText bytes.
	Text string
	// Hop is the kind of link.
	Hop Hop
}

// Context says where the link was found as Heritrix's outlink records do:
// "img/@src", or the tag alone when there is no attribute ("style").
func (l Link) Context() string {
	if l.Attr == "" {
		return l.Tag
	}
	return l.Tag + "/@" + l.Attr
}

// Directives are the meta robots directives of a page; the semantics
// (tokens, merging) are package robots'.
type Directives = robots.Directives

// Structured says which kinds of structured data a page carries (the RDFa spider report
// §3: a repository of pages that carry RDFa for an indexer).
type Structured struct {
	RDFa      bool // an element with property, typeof, vocab or about
	Microdata bool // an element with itemscope
	JSONLD    bool // a <script type="application/ld+json">
}

// Problem is one kind of trouble met while extracting, with how often it
// happened and the first example.
type Problem struct {
	Kind    string // one of the Problem* constants
	Count   int
	Example string // first offending value, at most 200 bytes
}

// Problem kinds.
const (
	ProblemTooManyLinks = "too-many-links" // over MaxLinks, dropped
	ProblemURLTooLong   = "url-too-long"   // over MaxURLLength, dropped
	ProblemBadURL       = "bad-url"        // unparsable reference, dropped
	ProblemTruncated    = "truncated"      // body over MaxBytes, cut
	ProblemBadBase      = "bad-base"       // unusable <base href>, ignored
)

// Page is what HTML found in a page.
type Page struct {
	// Base is the URL relative links were resolved against: the page URL
	// or the first usable <base href>.
	Base *url.URL
	// Links in document order, deduplicated by (URL, Hop).
	Links []Link
	// Title is the first <title>, whitespace collapsed, bounded.
	Title string
	// Canonical is the first <link rel=canonical> href, or nil.
	Canonical *url.URL
	// Robots merges every meta robots tag that applies to Options.Agent
	// (robots.MetaApplies, robots.ParseDirectives, Directives.Merge).
	Robots robots.Directives
	// Lang is the lang attribute of <html>, as written ("" if none).
	Lang string
	// Description is the content of <meta name=description>, bounded.
	Description string
	// Charset is the name of the encoding the body was decoded from.
	Charset string
	// Text is the visible text (no script, style, template, title),
	// whitespace collapsed, at most Options.MaxText bytes; "" with
	// Options.NoText.
	Text string
	// HasText is true when the page has visible text: when Text is not
	// "", or would not be without Options.NoText.
	HasText bool
	// Structured says which structured-data kinds were seen.
	Structured Structured
	// Truncated is true when the body was longer than Options.MaxBytes.
	Truncated bool
	// Problems lists what was dropped or ignored, in order of first
	// occurrence; nil when nothing was.
	Problems []Problem
}

// ErrBase is returned when the base URL is nil, not absolute or not http(s).
var ErrBase = errors.New("extract: base URL must be absolute http or https")
