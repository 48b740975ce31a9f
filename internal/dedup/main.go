package dedup

import (
	"bytes"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MinWords is the fewest words of main content Fingerprint compares:
// shorter pages (redirect stubs, index pages of a few links, error pages)
// have too few features for a 64-bit simhash to tell them apart, so their
// fingerprint is not worth a near-duplicate verdict. Exact duplicates are
// still found by digest.
const MinWords = 40

// MaxMainText bounds the main text Fingerprint hashes, in bytes.
const MaxMainText = 256 << 10

// Fingerprint returns the simhash of the main content of an HTML page and
// the number of words it holds. The main content is the text inside the
// page's <main> elements, elements with role="main", or, when it has
// neither, <article> elements; failing those, the whole body. In every case
// the parts every page of a site repeats are left out: <nav>, <header>,
// <footer>, <aside>, <form>, scripts and style sheets, elements whose role is
// navigation, banner, contentinfo, complementary or search, and elements
// whose class or id names navigation, menus, sidebars, footers,
// breadcrumbs or related links (Sphinx's "related" and "sphinxsidebar",
// DocBook's "navheader" and "navfooter"). Callers should compare pages only
// when words >= MinWords. A caller that tokenizes the page anyway can get
// the same result from its own tokens with a Content.
func Fingerprint(page []byte) (h uint64, words int) {
	c := NewContent()
	defer c.Release()
	c.read(page)
	return c.Fingerprint()
}

// MainText returns the main content's text of an HTML page (see
// Fingerprint), at most MaxMainText bytes, blocks separated by newlines.
func MainText(page []byte) string {
	c := NewContent()
	defer c.Release()
	c.read(page)
	return string(c.text())
}

// MaxTokenized is the size from which a page's fingerprint depends on how
// it is tokenized: Fingerprint's tokenizer buffers at most this many
// bytes of one token (x/net/html's SetMaxBuf), so a page this long may end
// early for it. Below it, the tokens of any x/net/html tokenizer run over
// the page, given to a Content, give Fingerprint's result.
const MaxTokenized = 4 << 20

// Content gathers the main content of an HTML page (see Fingerprint) from
// the page's tokens, for a caller that tokenizes the page for its own
// needs (the crawler's link extraction): one pass over the page serves
// both. Give it, in document order, every start, self-closing and end tag
// (StartTag, EndTag: the raw token, z.Raw(), read before any TagName or
// TagAttr call, which rewrite the token's bytes in place) and every text
// token (Text: z.Text()) of an x/net/html tokenizer over the page, until
// its first error token; then Fingerprint equals the package function
// Fingerprint of the page when the page is shorter than MaxTokenized.
// Comments and doctypes are not needed. Get one with NewContent and give
// it back with Release; it is not safe for concurrent use.
type Content struct {
	all, main bytes.Buffer
	skip      atom.Atom // element whose content is skipped (0: none, or one without an atom)
	skipName  string    // its name, for elements without an atom
	skipDepth int
	inMain    int    // depth inside the current main content element
	mainTag   string // its name
	sawMain   int    // best kind of main region seen: 1 article, 2 main
}

// contentPool keeps Contents and their two buffers between pages.
var contentPool = sync.Pool{New: func() any { return new(Content) }}

// NewContent returns an empty Content, from a pool.
func NewContent() *Content {
	c := contentPool.Get().(*Content)
	c.reset()
	return c
}

// Release gives c back to the pool; c must not be used after.
func (c *Content) Release() {
	if c.all.Cap()+c.main.Cap() <= 2*MaxMainText+64<<10 {
		contentPool.Put(c)
	}
}

func (c *Content) reset() {
	c.all.Reset()
	c.main.Reset()
	c.skip, c.skipName, c.skipDepth = 0, "", 0
	c.inMain, c.mainTag, c.sawMain = 0, "", 0
}

// read tokenizes page into c, as Fingerprint does.
func (c *Content) read(page []byte) {
	z := html.NewTokenizer(bytes.NewReader(page))
	z.SetMaxBuf(MaxTokenized)
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			c.Text(z.Text())
		case html.StartTagToken:
			c.StartTag(z.Raw(), false)
		case html.SelfClosingTagToken:
			c.StartTag(z.Raw(), true)
		case html.EndTagToken:
			c.EndTag(z.Raw())
		}
	}
}

// text returns the main content's text gathered so far: the main region's
// when the page has one with text, else all of it. It is valid until c
// changes.
func (c *Content) text() []byte {
	if c.sawMain > 0 && c.main.Len() > 0 {
		return c.main.Bytes()
	}
	return c.all.Bytes()
}

// Fingerprint returns the simhash of the main content given so far and
// its number of words (see the package function Fingerprint).
func (c *Content) Fingerprint() (h uint64, words int) {
	f := getFeatures()
	defer putFeatures(f)
	f.addText(c.text())
	return f.sum(), f.nw
}

func (c *Content) write(t []byte) {
	if c.all.Len() < MaxMainText {
		c.all.Write(t)
		c.all.WriteByte(' ')
	}
	if c.inMain > 0 && c.main.Len() < MaxMainText {
		c.main.Write(t)
		c.main.WriteByte(' ')
	}
}

// Text gives c a text token (z.Text()); c copies what it keeps.
func (c *Content) Text(t []byte) {
	if c.skipDepth == 0 {
		c.write(t)
	}
}

// StartTag gives c a start tag, or a self-closing one, as raw bytes
// (z.Raw()).
func (c *Content) StartTag(raw []byte, selfClosing bool) {
	// The tag is read raw: the tokenizer's TagName and TagAttr
	// allocate on every call, and only three attributes matter.
	var tag rawTag
	tag.parse(raw)
	name, a := tag.name(), tag.atom
	if c.skipDepth > 0 {
		if !selfClosing && sameTag(a, name, c.skip, c.skipName) {
			c.skipDepth++
		}
		return
	}
	if selfClosing || voidElement(a) {
		return
	}
	if boilerplateElement(a, tag.role, tag.class, tag.id) {
		c.skip, c.skipName, c.skipDepth = a, "", 1
		if a == 0 {
			c.skipName = string(name) // only unknown elements are told apart by name
		}
		return
	}
	kind := 0
	switch {
	case a == atom.Main || equalFold(tag.role, "main"):
		kind = 2
	case a == atom.Article:
		kind = 1
	}
	if c.inMain > 0 {
		if sameTagName(name, c.mainTag) {
			c.inMain++
		}
		return
	}
	if kind > 0 && kind >= c.sawMain {
		if kind > c.sawMain {
			c.main.Reset() // a better kind of region: drop articles for main
		}
		c.sawMain, c.inMain = kind, 1
		if a != 0 {
			c.mainTag = a.String() // atom strings cost no allocation
		} else {
			c.mainTag = string(name)
		}
	}
}

// EndTag gives c an end tag as raw bytes (z.Raw()).
func (c *Content) EndTag(raw []byte) {
	var tag rawTag
	tag.parse(raw)
	name, a := tag.name(), tag.atom
	if c.skipDepth > 0 {
		if sameTag(a, name, c.skip, c.skipName) {
			c.skipDepth--
		}
		return
	}
	if c.inMain > 0 && sameTagName(name, c.mainTag) {
		c.inMain--
	}
	if blockElement(a) {
		c.write(newline)
	}
}

var newline = []byte{'\n'}

// rawTag is what MainText reads of a tag from its raw bytes: the name,
// lower-cased, and the role, class and id values as written (entities not
// decoded; the heuristics only look for words in them).
type rawTag struct {
	nameBuf         [32]byte
	nameLen         int
	atom            atom.Atom
	role, class, id []byte
}

// name returns the tag's name. (Kept as a length, not a slice of
// nameBuf: a struct pointing into itself escapes to the heap, which cost
// one allocation per tag.)
func (t *rawTag) name() []byte { return t.nameBuf[:t.nameLen] }

// parse reads raw, a start or end tag as the tokenizer returned it. Names
// longer than 32 bytes are kept cut (no element that matters is that long).
func (t *rawTag) parse(raw []byte) {
	i := 1 // after '<'
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if n < len(t.nameBuf) {
			t.nameBuf[n] = c
			n++
		}
	}
	t.nameLen = n
	t.atom = atom.Lookup(t.nameBuf[:n])
	for attrs := 0; i < len(raw) && attrs < 256; attrs++ {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\f' || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			return
		}
		ks := i
		for i < len(raw) && raw[i] != '=' && raw[i] != '>' && raw[i] != ' ' && raw[i] != '\t' && raw[i] != '\n' && raw[i] != '\r' && raw[i] != '\f' && raw[i] != '/' {
			i++
		}
		key := raw[ks:i]
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\f') {
			i++
		}
		var val []byte
		if i < len(raw) && raw[i] == '=' {
			i++
			for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\f') {
				i++
			}
			if i < len(raw) && (raw[i] == '"' || raw[i] == '\'') {
				q := raw[i]
				i++
				vs := i
				for i < len(raw) && raw[i] != q {
					i++
				}
				val = raw[vs:i]
				if i < len(raw) {
					i++
				}
			} else {
				vs := i
				for i < len(raw) && raw[i] != '>' && raw[i] != ' ' && raw[i] != '\t' && raw[i] != '\n' && raw[i] != '\r' && raw[i] != '\f' {
					i++
				}
				val = raw[vs:i]
			}
		}
		switch {
		case equalFold(key, "role") && t.role == nil:
			t.role = val
		case equalFold(key, "class") && t.class == nil:
			t.class = val
		case equalFold(key, "id") && t.id == nil:
			t.id = val
		}
	}
}

// equalFold reports whether b is s in any ASCII case; s is lower case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func sameTag(a atom.Atom, name []byte, b atom.Atom, bname string) bool {
	if a != 0 || b != 0 {
		return a == b
	}
	return string(name) == bname
}

func sameTagName(name []byte, tag string) bool { return string(name) == tag }

// voidElement reports elements that never have content or an end tag.
func voidElement(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// blockElement reports elements whose end separates blocks of text.
func blockElement(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Li, atom.Dd, atom.Dt, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Tr, atom.Pre, atom.Blockquote, atom.Section, atom.Table:
		return true
	}
	return false
}

// boilerplateElement reports elements whose content a site repeats on
// every page, or that hold no visible text.
func boilerplateElement(a atom.Atom, role, class, id []byte) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Title,
		atom.Nav, atom.Header, atom.Footer, atom.Aside, atom.Form, atom.Button, atom.Select,
		atom.Svg, atom.Iframe, atom.Object:
		return true
	}
	for _, r := range []string{"navigation", "banner", "contentinfo", "complementary", "search"} {
		if equalFold(role, r) {
			return true
		}
	}
	return boilerplateName(class) || boilerplateName(id)
}

// boilerplateWords are the parts of class and id names that mark
// navigation and other repeated blocks.
var boilerplateWords = [][]byte{[]byte("nav"), []byte("menu"), []byte("sidebar"), []byte("footer"), []byte("breadcrumb"),
	[]byte("related"), []byte("cookie"), []byte("masthead"), []byte("toolbar"), []byte("skip-link"), []byte("site-header"), []byte("page-header")}

func boilerplateName(v []byte) bool {
	if len(v) == 0 || len(v) > 256 {
		return false
	}
	var low [256]byte
	for i, c := range v {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	for _, w := range boilerplateWords {
		if bytes.Contains(low[:len(v)], w) {
			return true
		}
	}
	return false
}
