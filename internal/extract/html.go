package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/courtesy-crawler/courtesy/internal/htmlenc"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/encoding"

	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// maxNest bounds how deep raw-text containers (noscript, noframes, iframe)
// are scanned again as HTML; one level is what real pages need, and a bound
// keeps a hostile page from costing more than a constant factor.
const maxNest = 1

// maxRescans bounds how many unterminated raw-text elements are read again
// as markup; each one re-reads the rest of the page once.
const maxRescans = 4

// rescannable reports the raw-text elements whose content is read as
// markup when their end tag is missing.
func rescannable(name string) bool {
	switch name {
	case "title", "textarea", "style", "xmp", "script":
		return true
	}
	return false
}

// maxTemplateDepth bounds the template nesting counter.
const maxTemplateDepth = 1 << 10

// HTML extracts the links and metadata of an HTML page. base is the URL the
// page was fetched from (absolute http or https); contentType is the
// Content-Type header ("" if none), consulted for the charset. HTML fails
// only for a bad base or invalid Options: malformed markup, undecodable
// bytes and bad URLs are tolerated and counted in Page.Problems.
func HTML(base *url.URL, body []byte, contentType string, o Options) (*Page, error) {
	s, body, err := start(base, body, o)
	if err != nil {
		return nil, err
	}
	defer putScanner(s)
	p, o := s.page, s.o
	body, p.Charset = decode(body, contentType)
	s.queryEnc = queryEncoding(p.Charset)
	// Room for the links a page of this size has (testweb and real pages:
	// one per 100 to 200 bytes), so that Links does not regrow link by
	// link; at most 64, beyond which append doubles as usual; made at the
	// first link, so that a page without links keeps nil.
	s.linkCap = min(max(len(body)/128, 4), 64, o.MaxLinks)
	s.sink = o.Tokens
	s.scan(body, 0)
	s.closeAnchor()
	p.Title = s.title.String()
	p.Text = s.text.String()
	p.HasText = p.HasText || p.Text != ""
	return p, nil
}

// start checks base and o, and returns a scanner for a page of base with
// the options' defaults filled in and its resolver set, and body cut at
// MaxBytes (the cut noted in the page). The caller puts the scanner back.
func start(base *url.URL, body []byte, o Options) (*scanner, []byte, error) {
	if !httpURL(base) {
		return nil, nil, ErrBase
	}
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	o = o.withDefaults()
	p := &Page{Base: base}
	if len(body) > o.MaxBytes {
		body = body[:o.MaxBytes]
		p.Truncated = true
	}
	s := getScanner(o, p)
	newResolver(&s.res, base, o.MaxURLLength, o.Normalize)
	if p.Truncated {
		s.problem(ProblemTruncated, fmt.Sprintf("%d bytes parsed", o.MaxBytes))
	}
	return s, body, nil
}

// decode converts body to UTF-8 following the HTML encoding sniffing rules
// (BOM, Content-Type charset, <meta charset> prescan of the first 1024
// bytes, else UTF-8 when the whole body is valid UTF-8, else windows-1252:
// htmlenc.Determine). UTF-8
// input is returned as is: invalid bytes are cleaned where strings are
// produced. The output of a legacy decoder is at most 3 bytes per input
// byte, so it stays bounded by Options.MaxBytes.
func decode(body []byte, contentType string) ([]byte, string) {
	if utf8ContentType(contentType) && !(len(body) >= 2 && (body[0] == 0xfe && body[1] == 0xff || body[0] == 0xff && body[1] == 0xfe)) {
		// What DetermineEncoding answers, without parsing the header:
		// a UTF-16 byte order mark first, else the header's charset.
		return body, "utf-8"
	}
	enc, name := htmlenc.Determine(body, contentType)
	if name == "utf-8" || enc == nil {
		return body, "utf-8"
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		// A decoder error leaves us the raw bytes; the tokenizer copes.
		return body, name
	}
	return out, name
}

// utf8ContentType reports the Content-Type values servers send most, which
// name UTF-8 (ASCII case-insensitively, as mime.ParseMediaType and the
// encoding labels compare them).
func utf8ContentType(ct string) bool {
	for _, v := range [...]string{"text/html; charset=utf-8", "text/html;charset=utf-8"} {
		if len(ct) == len(v) && urlnorm.EqualFoldASCII(ct, v) {
			return true
		}
	}
	return false
}

// scanners keeps scanners between pages: their text buffers and
// duplicate map would otherwise be allocated, and regrown, for every page
// (the text buffer alone is the size of the page's text). Nothing a Page
// holds points into them: every string is copied out.
var scanners = sync.Pool{New: func() any { return new(scanner) }}

// Bounds on what a pooled scanner keeps, so that one huge page does not
// pin its buffers for good.
const (
	maxPooledText = 64 << 10
	maxPooledSeen = 1 << 10
)

// getScanner returns a scanner ready for page p, with the buffers of an
// earlier one when there is one.
func getScanner(o Options, p *Page) *scanner {
	s := scanners.Get().(*scanner)
	text, anchorText, title, scratch, seen := s.text.b[:0], s.anchorText.b[:0], s.title.b[:0], s.scratch.b[:0], s.seen
	*s = scanner{o: o, page: p, anchor: -1, seen: seen}
	s.text.b, s.anchorText.b, s.title.b, s.scratch.b = text, anchorText, title, scratch
	return s
}

// putScanner returns s to the pool, without its page and with its
// buffers cleared or, when too big, dropped.
func putScanner(s *scanner) {
	for _, tb := range []*textBuf{&s.text, &s.anchorText, &s.title, &s.scratch} {
		if cap(tb.b) > maxPooledText {
			tb.b = nil
		}
	}
	if len(s.seen) > maxPooledSeen {
		s.seen = nil
	}
	clear(s.seen)
	s.page, s.useSeen = nil, false
	s.o.Tokens, s.sink = nil, nil       // the caller's, not to be kept
	s.res.Reset(nil, urlnorm.Options{}) // drop the base URL
	scanners.Put(s)
}

// scanner holds the state of one extraction.
type scanner struct {
	o       Options
	page    *Page
	res     urlnorm.Resolver     // resolves against the base: the page URL or <base href>
	baseSet bool                 // a <base href> was seen (usable or not): later ones are ignored
	seen    map[linkKey]struct{} // (Abs, Hop) of page.Links when useSeen (empty, kept from an earlier page, otherwise)
	useSeen bool                 // page.Links reached seenLinear: duplicates are looked up in seen
	linkCap int                  // capacity of page.Links when the first link comes
	// queryEnc encodes the query of the page's URLs: the document's
	// encoding, as browsers do (WHATWG URL); nil for UTF-8.
	queryEnc encoding.Encoding

	anchor     int // index in page.Links of the open <a>, -1 if none
	anchorOpen bool
	anchorText textBuf

	title     textBuf
	scratch   textBuf // for oneText
	titleSeen bool
	text      textBuf
	descSeen  bool
	langSeen  bool
	template  int // depth of <template>, whose content is inert
	rescans   int // unterminated raw-text elements read again as markup

	sink TokenSink // Options.Tokens until the top-level scan starts (nil in nested scans and rescans)
}

type linkKey struct {
	url string
	hop Hop
}

// scan tokenizes data; nest counts how many raw-text containers deep the
// data is.
func (s *scanner) scan(data []byte, nest int) {
	// Only the first, top-level scan shows its tokens to the sink: the
	// nested scans and rescans it starts read markup the page's own
	// tokenizer saw as text.
	sink := s.sink
	s.sink = nil
	z := html.NewTokenizer(bytes.NewReader(data))
	raw := ""       // raw-text element whose content the next text token is
	pending := ""   // raw-text element whose content was the last token
	var held []byte // that content, in case its end tag never comes
	for {
		tt := z.Next()
		ctx := raw
		raw = ""
		if tt == html.ErrorToken {
			// io.EOF or a tokenizer limit: either way the data ends here.
			if pending != "" && s.rescans < maxRescans {
				// An unclosed <title> or <style> swallows the rest of
				// the page as text; browsers show nothing, a crawler
				// loses every link. Read that text as markup instead.
				s.rescans++
				s.scan(held, nest)
			}
			return
		}
		pending = ""
		switch tt {
		case html.TextToken:
			t := z.Text()
			if sink != nil {
				sink.Text(t)
			}
			if ctx != "" && rescannable(ctx) {
				pending, held = ctx, append(held[:0], t...)
				if ctx == "title" {
					// Keep the title up to where markup seems to resume.
					if i := bytes.IndexByte(t, '<'); i >= 0 {
						t = t[:i]
					}
				}
			}
			s.onText(t, ctx, nest)
		case html.StartTagToken, html.SelfClosingTagToken:
			if sink != nil {
				sink.StartTag(z.Raw(), tt == html.SelfClosingTagToken)
			}
			n := tagName(z, 1)
			var a attrs
			a.read(z) // nothing when the tag has no attributes
			s.boundary(n)
			raw = s.onStart(n, &a)
		case html.EndTagToken:
			if sink != nil {
				sink.EndTag(z.Raw())
			}
			n := tagName(z, 2)
			s.boundary(n)
			s.onEnd(n)
		}
	}
}

// onStart handles a start tag and returns the name of the raw-text element
// it opens ("" if none).
func (s *scanner) onStart(name string, a *attrs) string {
	p := s.page
	if a.rdfa {
		p.Structured.RDFa = true
	}
	if a.microdata {
		p.Structured.Microdata = true
	}
	if s.o.Requisites {
		s.requisites(name, a)
	}
	switch name {
	case "a":
		s.closeAnchor()
		if a.hasHref {
			s.anchorOpen = true
			s.anchor = s.add(a.href, "a", "href", a.rel, nil, HopLink)
		}
	case "area":
		if a.hasHref {
			s.add(a.href, "area", "href", a.rel, a.alt, HopLink)
		}
	case "link":
		if a.hasHref {
			rel := lowerASCII(a.rel)
			hop := HopLink
			if embedRel(rel) {
				hop = HopEmbed
			}
			i := s.add(a.href, "link", "href", a.rel, nil, hop)
			if hasToken(rel, "canonical") && p.Canonical == nil {
				if i >= 0 {
					p.Canonical = p.Links[i].URL
				} else if u, _, _, _ := s.resolve(a.href); u != nil {
					p.Canonical = u
				}
			}
		}
	case "frame", "iframe":
		if a.src != nil {
			s.add(a.src, name, "src", nil, nil, HopEmbed)
		}
		if name == "iframe" {
			return name // its content is fallback markup, scanned in onText
		}
	case "img":
		if s.anchorOpen && len(a.alt) > 0 {
			s.anchorText.add(a.alt, s.o.MaxAnchorText)
		}
		if (s.o.Images || s.o.Requisites) && a.src != nil {
			s.add(a.src, "img", "src", nil, a.alt, HopEmbed)
		}
	case "form":
		m := strings.TrimSpace(string(lowerASCII(a.method)))
		if s.o.Forms && len(bytes.TrimSpace(a.action)) > 0 && (m == "" || m == "get") {
			s.add(a.action, "form", "action", nil, nil, HopLink)
		}
	case "base":
		if a.hasHref && !s.baseSet {
			s.baseSet = true
			// A base that is not a usable http(s) URL is ignored and
			// the page URL stays the base (HTML: fallback base URL).
			// Resolved without the crawler's heuristics: they are for
			// the URLs fetched, and could move a base's directory.
			var br urlnorm.Resolver
			newResolver(&br, s.res.Base(), s.o.MaxURLLength, urlnorm.Options{})
			if u, _, _, _ := resolveRef(&br, a.href, s.o.MaxURLLength); u != nil {
				p.Base = u
				newResolver(&s.res, u, s.o.MaxURLLength, s.o.Normalize)
			} else {
				s.problem(ProblemBadBase, string(a.href))
			}
		}
	case "meta":
		s.onMeta(a)
	case "html":
		if !s.langSeen && a.lang != nil {
			s.langSeen = true
			p.Lang = clip(strings.TrimSpace(strings.ToValidUTF8(string(a.lang), "")))
		}
	case "template":
		if s.template < maxTemplateDepth {
			s.template++
		}
	case "script":
		if bytes.EqualFold(bytes.TrimSpace(a.typ), []byte("application/ld+json")) {
			p.Structured.JSONLD = true
		}
		return name
	case "style", "textarea", "title", "xmp", "noembed", "noframes", "noscript", "plaintext":
		return name
	}
	return ""
}

// requisites adds what a browser loads to render the page, besides the
// stylesheets, icons and frames that are always read (Options.Requisites).
func (s *scanner) requisites(name string, a *attrs) {
	if a.style != nil {
		s.cssLinks(a.style, name, "style")
	}
	if a.background != nil {
		s.add(a.background, name, "background", nil, nil, HopEmbed)
	}
	switch name {
	case "script", "audio", "video", "source", "track", "embed":
		if a.src != nil {
			s.add(a.src, name, "src", nil, nil, HopEmbed)
		}
	case "input":
		if a.src != nil && bytes.EqualFold(bytes.TrimSpace(a.typ), []byte("image")) {
			s.add(a.src, name, "src", nil, nil, HopEmbed)
		}
	case "object":
		if a.data != nil {
			s.add(a.data, name, "data", nil, nil, HopEmbed)
		}
	}
	if a.poster != nil && name == "video" {
		s.add(a.poster, name, "poster", nil, nil, HopEmbed)
	}
	switch name {
	case "img", "source", "iframe", "video":
		// Lazy loading: the real URLs wait in data-* attributes for a
		// script to move them into src and srcset when the element
		// scrolls into view, which no crawler without a browser sees.
		if a.dataSrc != nil {
			s.add(a.dataSrc, name, "data-src", nil, nil, HopEmbed)
		}
		if a.dataOriginal != nil {
			s.add(a.dataOriginal, name, "data-original", nil, nil, HopEmbed)
		}
		s.srcsetLinks(a.srcset, name, "srcset")
		s.srcsetLinks(a.dataSrcset, name, "data-srcset")
	case "image", "use", "feimage":
		// SVG inline in the page: <image href>, <use href="sprite.svg#i">
		// (href in SVG 2, xlink:href before it).
		if a.hasHref {
			s.add(a.href, name, "href", nil, nil, HopEmbed)
		} else if a.xlinkHref != nil {
			s.add(a.xlinkHref, name, "xlink:href", nil, nil, HopEmbed)
		}
	}
}

// srcsetLinks adds the candidates of a srcset value v of img and source
// elements.
func (s *scanner) srcsetLinks(v []byte, name, attr string) {
	if v == nil || name != "img" && name != "source" {
		return
	}
	srcset(v, func(ref []byte) {
		s.add(ref, name, attr, nil, nil, HopEmbed)
	})
}

// srcset calls fn with each image candidate's URL of a srcset attribute,
// parsed as HTML's "parse a srcset attribute" does: candidates are
// separated by commas, a URL runs to white space (a comma at its end is
// the separator, so URLs may hold commas inside), and its descriptors
// ("2x", "480w") run to the next comma outside parentheses.
func srcset(v []byte, fn func(ref []byte)) {
	for i := 0; i < len(v); {
		for i < len(v) && (htmlSpace(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !htmlSpace(v[i]) {
			i++
		}
		ref := v[start:i]
		if n := len(ref); n > 0 && ref[n-1] == ',' {
			for len(ref) > 0 && ref[len(ref)-1] == ',' {
				ref = ref[:len(ref)-1]
			}
		} else {
			depth := 0
			for ; i < len(v); i++ {
				if c := v[i]; c == '(' {
					depth++
				} else if c == ')' && depth > 0 {
					depth--
				} else if c == ',' && depth == 0 {
					break
				}
			}
		}
		if len(ref) > 0 {
			fn(ref)
		}
	}
}

func (s *scanner) onMeta(a *attrs) {
	p := s.page
	switch {
	case a.httpEquiv != nil && bytes.EqualFold(bytes.TrimSpace(a.httpEquiv), []byte("refresh")):
		if ref, ok := refreshURL(a.content); ok {
			s.add(ref, "meta", "content", nil, nil, HopRedirect)
		}
	case a.name != nil && robots.MetaApplies(string(a.name), s.o.Agent):
		p.Robots = p.Robots.Merge(robots.ParseDirectives(string(a.content)))
	case a.name != nil && bytes.EqualFold(bytes.TrimSpace(a.name), []byte("description")):
		if !s.descSeen {
			s.descSeen = true
			p.Description = s.oneText(a.content, 4*s.o.MaxAnchorText)
		}
	}
}

func (s *scanner) onEnd(name string) {
	switch name {
	case "a":
		s.closeAnchor()
	case "template":
		if s.template > 0 {
			s.template--
		}
	}
}

// onText handles a text token; ctx is the raw-text element containing it.
func (s *scanner) onText(t []byte, ctx string, nest int) {
	switch ctx {
	case "title":
		if !s.titleSeen {
			s.titleSeen = true
			s.title.add(t, 4*s.o.MaxAnchorText)
		}
		return
	case "script":
		if s.o.ScriptURLs {
			s.patternURLs(t, "script", HopSpeculative)
		}
		return
	case "noscript", "noframes", "iframe":
		// Browsers that run scripts (or show frames) do not parse this
		// content, but a crawler should: it is where pages put the plain
		// links for clients like us.
		if nest < maxNest {
			s.scan(t, nest+1)
		}
		return
	case "style":
		if s.o.Requisites {
			s.cssLinks(t, "style", "")
		}
		return
	case "xmp", "noembed":
		return
	}
	if nest > 0 || s.template > 0 {
		return // fallback or inert content: links yes, visible text no
	}
	if s.anchorOpen {
		s.anchorText.add(t, s.o.MaxAnchorText)
	}
	if !s.o.NoText {
		s.text.add(t, s.o.MaxText)
	} else if !s.page.HasText {
		s.page.HasText = visible(t)
	}
	if s.o.TextURLs {
		s.patternURLs(t, "text", HopLink)
	}
}

// tagName returns the lower-cased name of the current start (skip 1, for
// "<") or end (skip 2, for "</") tag token, as z.TagName would, without
// its copy: the tokenizer copies every name it returns (one allocation per
// tag, the most frequent one of a page). The name is read from z.Raw(),
// where the tokenizer's tag-name state (readTagName) found it: from the
// first letter up to white space, '/' or '>'. Names with a NUL (which
// TagName turns into U+FFFD) or another shape go through TagName. Element
// names known to package atom come back as its strings, without
// allocating. TestTagNameMatchesTokenizer and FuzzTagName hold it to
// TagName.
func tagName(z *html.Tokenizer, skip int) string {
	if n, ok := rawTagName(z.Raw(), skip); ok {
		return n
	}
	name, _ := z.TagName()
	if a := atom.Lookup(name); a != 0 {
		return a.String()
	}
	return string(name)
}

// rawTagName is tagName's reading of the raw token; false when TagName
// must decide.
func rawTagName(raw []byte, skip int) (string, bool) {
	if len(raw) <= skip || raw[0] != '<' || skip == 2 && raw[1] != '/' {
		return "", false
	}
	name := raw[skip:]
	for i, c := range name {
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '/' || c == '>' {
			name = name[:i]
			break
		}
	}
	var low [16]byte
	if len(name) == 0 || len(name) > len(low) {
		return "", false
	}
	for i, c := range name {
		if c == 0 {
			return "", false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	if a := atom.Lookup(low[:len(name)]); a != 0 {
		return a.String(), true
	}
	return string(low[:len(name)]), true
}

// boundary separates words at block-level tags.
func (s *scanner) boundary(name string) {
	if !inline(name) {
		s.text.sep()
		s.anchorText.sep()
	}
}

// oneText returns t as textBuf.add would collect it alone, at most max
// bytes, collected in the scanner's scratch buffer.
func (s *scanner) oneText(t []byte, max int) string {
	s.scratch.reset()
	s.scratch.add(t, max)
	return s.scratch.String()
}

func (s *scanner) closeAnchor() {
	if s.anchorOpen && s.anchor >= 0 {
		s.page.Links[s.anchor].Text = s.anchorText.String()
	}
	s.anchorOpen, s.anchor = false, -1
	s.anchorText.reset()
}

// add resolves ref and appends a link; it returns the link's index, or -1
// when the link was dropped (bad, too long, duplicate, over the limit).
func (s *scanner) add(ref []byte, tag, attr string, rel, text []byte, hop Hop) int {
	u, abs, kind, ex := s.resolve(ref)
	if u == nil {
		if kind != "" {
			s.problem(kind, ex)
		}
		return -1
	}
	k := linkKey{abs, hop}
	if s.dup(k) {
		return -1
	}
	if len(s.page.Links) >= s.o.MaxLinks {
		s.problem(ProblemTooManyLinks, k.url)
		return -1
	}
	if s.useSeen {
		s.seen[k] = struct{}{}
	}
	if s.page.Links == nil {
		s.page.Links = make([]Link, 0, s.linkCap)
	}
	l := Link{URL: u, Abs: abs, Tag: tag, Attr: attr, Hop: hop}
	if len(rel) > 0 {
		r := lowerASCII(rel)
		l.Rel = clip(strings.ToValidUTF8(string(r), ""))
		l.NoFollow = hasToken(r, "nofollow")
	}
	if len(text) > 0 {
		l.Text = s.oneText(text, s.o.MaxAnchorText)
	}
	s.page.Links = append(s.page.Links, l)
	return len(s.page.Links) - 1
}

// seenLinear is the number of links up to which duplicates are found by
// scanning Page.Links rather than with a map: most pages have a few dozen
// links, and a map costs more to build than a short scan of them.
const seenLinear = 32

// dup reports whether k is already among the page's links.
func (s *scanner) dup(k linkKey) bool {
	links := s.page.Links
	if !s.useSeen {
		if len(links) < seenLinear {
			for i := range links {
				if links[i].Hop == k.hop && links[i].Abs == k.url {
					return true
				}
			}
			return false
		}
		if s.seen == nil {
			s.seen = make(map[linkKey]struct{}, 2*len(links))
		}
		s.useSeen = true
		for i := range links {
			s.seen[linkKey{links[i].Abs, links[i].Hop}] = struct{}{}
		}
	}
	_, ok := s.seen[k]
	return ok
}

// resolve makes ref absolute against the current base. It returns nil and
// a problem kind ("" when the reference is simply not crawlable, such as
// mailto: or an empty href) when no link results.
func (s *scanner) resolve(ref []byte) (u *url.URL, abs, kind, example string) {
	if s.queryEnc != nil {
		ref = encodeQuery(ref, s.queryEnc)
	}
	return resolveRef(&s.res, ref, s.o.MaxURLLength)
}

func (s *scanner) problem(kind, example string) {
	p := s.page
	for i := range p.Problems {
		if p.Problems[i].Kind == kind {
			p.Problems[i].Count++
			return
		}
	}
	p.Problems = append(p.Problems, Problem{Kind: kind, Count: 1, Example: clip(strings.ToValidUTF8(example, "\uFFFD"))})
}

// embedRel reports whether a link rel names a resource needed to render the
// page (hop E) rather than a page to navigate to.
func embedRel(rel []byte) bool {
	for _, t := range []string{"stylesheet", "icon", "apple-touch-icon", "preload", "modulepreload", "manifest", "mask-icon"} {
		if hasToken(rel, t) {
			return true
		}
	}
	return false
}

// hasToken reports whether the space-separated list holds tok.
func hasToken(list []byte, tok string) bool {
	for len(list) > 0 {
		i := bytes.Index(list, []byte(tok))
		if i < 0 {
			return false
		}
		end := i + len(tok)
		if (i == 0 || asciiSpace(list[i-1])) && (end == len(list) || asciiSpace(list[end])) {
			return true
		}
		list = list[end:]
	}
	return false
}

func lowerASCII(b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			out := make([]byte, len(b))
			for i, c := range b {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				out[i] = c
			}
			return out
		}
	}
	return b
}

// clip bounds a string kept as an example or attribute echo to 200 bytes.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
