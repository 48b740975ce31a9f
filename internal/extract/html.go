package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

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

// rescannable lists the raw-text elements whose content is read as markup
// when their end tag is missing.
var rescannable = map[string]bool{"title": true, "textarea": true, "style": true, "xmp": true, "script": true}

// maxTemplateDepth bounds the template nesting counter.
const maxTemplateDepth = 1 << 10

// HTML extracts the links and metadata of an HTML page. base is the URL the
// page was fetched from (absolute http or https); contentType is the
// Content-Type header ("" if none), consulted for the charset. HTML fails
// only for a bad base or invalid Options: malformed markup, undecodable
// bytes and bad URLs are tolerated and counted in Page.Problems.
func HTML(base *url.URL, body []byte, contentType string, o Options) (*Page, error) {
	if !httpURL(base) {
		return nil, ErrBase
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	p := &Page{Base: base}
	if len(body) > o.MaxBytes {
		body = body[:o.MaxBytes]
		p.Truncated = true
	}
	s := &scanner{o: o, page: p, base: base, anchor: -1}
	// Most of a page's bytes are markup: half its size holds the text of
	// nearly every page, and saves the buffer's regrowth.
	s.text.b = make([]byte, 0, min(o.MaxText, len(body)/2+16))
	if p.Truncated {
		s.problem(ProblemTruncated, fmt.Sprintf("%d bytes parsed", o.MaxBytes))
	}
	body, p.Charset = decode(body, contentType)
	s.scan(body, 0)
	s.closeAnchor()
	p.Title = s.title.String()
	p.Text = s.text.String()
	return p, nil
}

// decode converts body to UTF-8 following the HTML encoding sniffing rules
// (BOM, Content-Type charset, <meta charset> prescan of the first 1024
// bytes, else windows-1252 or UTF-8 when the bytes are valid UTF-8). UTF-8
// input is returned as is: invalid bytes are cleaned where strings are
// produced. The output of a legacy decoder is at most 3 bytes per input
// byte, so it stays bounded by Options.MaxBytes.
func decode(body []byte, contentType string) ([]byte, string) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
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

// scanner holds the state of one extraction.
type scanner struct {
	o       Options
	page    *Page
	base    *url.URL
	baseSet bool // a <base href> was seen (usable or not): later ones are ignored
	seen    map[linkKey]struct{}

	anchor     int // index in page.Links of the open <a>, -1 if none
	anchorOpen bool
	anchorText textBuf

	title     textBuf
	titleSeen bool
	text      textBuf
	descSeen  bool
	langSeen  bool
	template  int // depth of <template>, whose content is inert
	rescans   int // unterminated raw-text elements read again as markup
}

type linkKey struct {
	url string
	hop Hop
}

// scan tokenizes data; nest counts how many raw-text containers deep the
// data is.
func (s *scanner) scan(data []byte, nest int) {
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
			if rescannable[ctx] {
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
			name, hasAttr := z.TagName()
			var a attrs
			if hasAttr {
				a.read(z)
			}
			n := intern(name)
			s.boundary(n)
			raw = s.onStart(n, &a)
		case html.EndTagToken:
			name, _ := z.TagName()
			n := intern(name)
			s.boundary(n)
			s.onEnd(n)
		}
	}
}

// attrs holds the attributes extraction looks at; values are only valid
// until the tokenizer's next token.
type attrs struct {
	href, src, rel, alt, name, httpEquiv, content, lang, action, method, typ []byte
	hasHref, rdfa, microdata                                                 bool
}

func (a *attrs) read(z *html.Tokenizer) {
	// Bound the attributes examined: a tag with a million attributes is
	// hostile, the first 256 are plenty for any real tag.
	for i := 0; i < 256; i++ {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "href":
			if !a.hasHref { // first attribute of a name wins, as in browsers
				a.href, a.hasHref = v, true
			}
		case "src":
			a.src = first(a.src, v)
		case "rel":
			a.rel = first(a.rel, v)
		case "alt":
			a.alt = first(a.alt, v)
		case "name":
			a.name = first(a.name, v)
		case "http-equiv":
			a.httpEquiv = first(a.httpEquiv, v)
		case "content":
			a.content = first(a.content, v)
		case "lang":
			a.lang = first(a.lang, v)
		case "action":
			a.action = first(a.action, v)
		case "method":
			a.method = first(a.method, v)
		case "type":
			a.typ = first(a.typ, v)
		case "property", "typeof", "vocab", "about":
			a.rdfa = true
		case "itemscope":
			a.microdata = true
		}
		if !more {
			return
		}
	}
}

func first(old, v []byte) []byte {
	if old != nil {
		return old
	}
	if v == nil {
		return []byte{}
	}
	return v
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
		if s.o.Images && a.src != nil {
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
			if u, _, _, _ := resolveRef(s.base, a.href, s.o.MaxURLLength, urlnorm.Options{}); u != nil {
				s.base, p.Base = u, u
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
			var b textBuf
			b.add(a.content, 4*s.o.MaxAnchorText)
			p.Description = b.String()
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
	case "style", "xmp", "noembed":
		return
	}
	if nest > 0 || s.template > 0 {
		return // fallback or inert content: links yes, visible text no
	}
	if s.anchorOpen {
		s.anchorText.add(t, s.o.MaxAnchorText)
	}
	s.text.add(t, s.o.MaxText)
	if s.o.TextURLs {
		s.patternURLs(t, "text", HopLink)
	}
}

// tagNames are the element names interned by intern.
var tagNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		"a", "abbr", "area", "b", "base", "big", "blockquote", "body", "br", "button",
		"caption", "cite", "code", "col", "dd", "del", "div", "dl", "dt", "em",
		"figcaption", "figure", "font", "footer", "form", "frame", "h1", "h2", "h3",
		"h4", "h5", "h6", "head", "header", "hr", "html", "i", "iframe", "img",
		"input", "ins", "label", "li", "link", "main", "map", "meta", "nav",
		"noframes", "noscript", "ol", "option", "p", "picture", "pre", "s",
		"script", "section", "select", "small", "source", "span", "strong", "style",
		"sub", "sup", "svg", "table", "tbody", "td", "template", "textarea", "th",
		"thead", "title", "tr", "u", "ul", "article", "aside", "time", "xmp",
		"noembed", "plaintext", "path", "g",
	} {
		m[n] = n
	}
	return m
}()

// intern returns the tag name as a string without allocating for the
// common elements (a page has hundreds of tags; this is one allocation
// each saved).
func intern(b []byte) string {
	if n, ok := tagNames[string(b)]; ok {
		return n
	}
	return string(b)
}

// boundary separates words at block-level tags.
func (s *scanner) boundary(name string) {
	if !inline[name] {
		s.text.sep()
		s.anchorText.sep()
	}
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
	if _, dup := s.seen[k]; dup {
		return -1
	}
	if len(s.page.Links) >= s.o.MaxLinks {
		s.problem(ProblemTooManyLinks, k.url)
		return -1
	}
	if s.seen == nil {
		s.seen = make(map[linkKey]struct{})
	}
	s.seen[k] = struct{}{}
	l := Link{URL: u, Abs: abs, Tag: tag, Attr: attr, Hop: hop}
	if len(rel) > 0 {
		r := lowerASCII(rel)
		l.Rel = clip(strings.ToValidUTF8(string(r), ""))
		l.NoFollow = hasToken(r, "nofollow")
	}
	if len(text) > 0 {
		var b textBuf
		b.add(text, s.o.MaxAnchorText)
		l.Text = b.String()
	}
	s.page.Links = append(s.page.Links, l)
	return len(s.page.Links) - 1
}

// resolve makes ref absolute against the current base. It returns nil and
// a problem kind ("" when the reference is simply not crawlable, such as
// mailto: or an empty href) when no link results.
func (s *scanner) resolve(ref []byte) (u *url.URL, abs, kind, example string) {
	return resolveRef(s.base, ref, s.o.MaxURLLength, s.o.Normalize)
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
