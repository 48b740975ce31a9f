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
// when words >= MinWords.
func Fingerprint(page []byte) (h uint64, words int) {
	text := MainText(page)
	f := getFeatures()
	defer putFeatures(f)
	f.addText(text)
	return f.sum(), f.nw
}

// MainText returns the main content's text of an HTML page (see
// Fingerprint), at most MaxMainText bytes, blocks separated by newlines.
func MainText(page []byte) string {
	bufs := textPool.Get().(*[2]bytes.Buffer)
	defer func() {
		if bufs[0].Cap()+bufs[1].Cap() <= 2*MaxMainText+64<<10 {
			textPool.Put(bufs)
		}
	}()
	all, main := &bufs[0], &bufs[1]
	all.Reset()
	main.Reset()
	z := html.NewTokenizer(bytes.NewReader(page))
	z.SetMaxBuf(4 << 20)
	var (
		skip      atom.Atom // element whose content is skipped ("" none)
		skipName  string    // its name, for elements without an atom
		skipDepth int
		inMain    int    // depth inside the current main content element
		mainTag   string // its name
		sawMain   int    // best kind of main region seen: 1 article, 2 main
	)
	write := func(t []byte) {
		if all.Len() < MaxMainText {
			all.Write(t)
			all.WriteByte(' ')
		}
		if inMain > 0 && main.Len() < MaxMainText {
			main.Write(t)
			main.WriteByte(' ')
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			text := all.String()
			if sawMain > 0 && main.Len() > 0 {
				text = main.String()
			}
			return text
		case html.TextToken:
			if skipDepth == 0 {
				write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			// The tag is read raw: the tokenizer's TagName and TagAttr
			// allocate on every call, and only three attributes matter.
			var tag rawTag
			tag.parse(z.Raw())
			name, a := tag.name, tag.atom
			if skipDepth > 0 {
				if tt == html.StartTagToken && sameTag(a, name, skip, skipName) {
					skipDepth++
				}
				continue
			}
			role, class, id := tag.role, tag.class, tag.id
			if tt == html.SelfClosingTagToken || voidElement(a) {
				continue
			}
			if boilerplateElement(a, role, class, id) {
				skip, skipName, skipDepth = a, string(name), 1
				continue
			}
			kind := 0
			switch {
			case a == atom.Main || equalFold(role, "main"):
				kind = 2
			case a == atom.Article:
				kind = 1
			}
			if inMain > 0 {
				if sameTagName(name, mainTag) {
					inMain++
				}
				continue
			}
			if kind > 0 && kind >= sawMain {
				if kind > sawMain {
					main.Reset() // a better kind of region: drop articles for main
				}
				sawMain, mainTag, inMain = kind, string(name), 1
			}
		case html.EndTagToken:
			var tag rawTag
			tag.parse(z.Raw())
			name, a := tag.name, tag.atom
			if skipDepth > 0 {
				if sameTag(a, name, skip, skipName) {
					skipDepth--
				}
				continue
			}
			if inMain > 0 && sameTagName(name, mainTag) {
				inMain--
			}
			if blockElement(a) {
				write([]byte{'\n'})
			}
		}
	}
}

// rawTag is what MainText reads of a tag from its raw bytes: the name,
// lower-cased, and the role, class and id values as written (entities not
// decoded; the heuristics only look for words in them).
type rawTag struct {
	nameBuf         [32]byte
	name            []byte
	atom            atom.Atom
	role, class, id []byte
}

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
	t.name = t.nameBuf[:n]
	t.atom = atom.Lookup(t.name)
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

// textPool holds MainText's two buffers.
var textPool = sync.Pool{New: func() any { return new([2]bytes.Buffer) }}

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
