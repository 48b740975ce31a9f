package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// The attributes of one start tag: read from the tokenizer, or scanned
// straight from the raw tag bytes when that is cheaper.

// attrs holds the attributes extraction looks at; values are only valid
// until the tokenizer's next token.
type attrs struct {
	href, src, rel, alt, name, httpEquiv, content, lang, action, method, typ []byte
	srcset, poster, data, style, background                                  []byte // page requisites
	dataSrc, dataSrcset, dataOriginal, xlinkHref                             []byte // lazy images, SVG
	hasHref, rdfa, microdata                                                 bool
}

// maxAttrs bounds the attributes examined: a tag with a million
// attributes is hostile, the first 256 are plenty for any real tag.
const maxAttrs = 256

// read fills a from the current start tag: from z.Raw() when it can (see
// readRaw), else with z.TagAttr.
func (a *attrs) read(z *html.Tokenizer) {
	if a.readRaw(z.Raw()) {
		return
	}
	*a = attrs{}
	for i := 0; i < maxAttrs; i++ {
		k, v, more := z.TagAttr()
		a.set(k, v)
		if !more {
			return
		}
	}
}

// readRaw fills a from the raw start tag, as z.TagAttr would, without the
// two copies TagAttr makes of every attribute (key and value: the most
// frequent allocations of extraction once tag names are read raw). It
// gives up, returning false with a half filled, when the tokenizer would
// change a value extraction uses (an entity to unescape: '&'; a "\r" to
// convert; a NUL to replace), when the tag has more than maxAttrs
// attributes, or when its own reading of the tag does not end where the
// token does. Duplicate attributes, which the tokenizer drops, need no
// care: set keeps the first of a name, as the tokenizer does.
// TestRawAttrsMatchTokenizer and FuzzRawAttrs hold it to TagAttr.
func (a *attrs) readRaw(raw []byte) bool {
	var sc attrScanner
	if !sc.start(raw) {
		return false
	}
	for n := 0; ; n++ {
		k, v, ok, done := sc.next()
		switch {
		case !ok:
			return false
		case done:
			return true
		case n >= maxAttrs:
			return false
		}
		var low [16]byte
		if len(k) > len(low) {
			continue // longer than any name set looks at
		}
		for i, c := range k {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			low[i] = c
		}
		key := low[:len(k)]
		if valueUsed(key) && !plainValue(v) {
			return false
		}
		if len(v) == 0 {
			v = nil // as TagAttr returns an empty value
		}
		a.set(key, v)
	}
}

// valueUsed reports the attributes whose value set keeps.
func valueUsed(key []byte) bool {
	switch string(key) {
	case "href", "src", "rel", "alt", "name", "http-equiv", "content", "lang", "action", "method", "type",
		"srcset", "poster", "data", "style", "background", "data-src", "data-srcset", "data-original", "xlink:href":
		return true
	}
	return false
}

// plainValue reports whether TagAttr would return v unchanged: no entity,
// no carriage return, no NUL.
func plainValue(v []byte) bool {
	for _, c := range v {
		if c == '&' || c == '\r' || c == 0 {
			return false
		}
	}
	return true
}

// set records one attribute; k is lower case.
func (a *attrs) set(k, v []byte) {
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
	case "srcset":
		a.srcset = first(a.srcset, v)
	case "poster":
		a.poster = first(a.poster, v)
	case "data":
		a.data = first(a.data, v)
	case "style":
		a.style = first(a.style, v)
	case "background":
		a.background = first(a.background, v)
	case "data-src":
		a.dataSrc = first(a.dataSrc, v)
	case "data-srcset":
		a.dataSrcset = first(a.dataSrcset, v)
	case "data-original":
		a.dataOriginal = first(a.dataOriginal, v)
	case "xlink:href":
		a.xlinkHref = first(a.xlinkHref, v)
	case "property", "typeof", "vocab", "about":
		a.rdfa = true
	case "itemscope":
		a.microdata = true
	}
}

// attrScanner reads the attributes of a raw start tag ("<name k=v ...>")
// following the tokenizer's states step by step (x/net/html readTag,
// readTagName, readTagAttrKey, readTagAttrVal, skipWhiteSpace: the WHATWG
// tag, attribute name and attribute value states), so that it finds the
// same keys and values.
type attrScanner struct {
	raw []byte
	p   int // next byte to read
}

func htmlSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' }

// start reads "<", the tag name and the white space after it.
func (s *attrScanner) start(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '<' {
		return false
	}
	s.raw, s.p = raw, 2 // "<" and the name's first letter
	for {
		if s.p >= len(raw) {
			return false
		}
		c := raw[s.p]
		s.p++
		if htmlSpace(c) {
			break
		}
		if c == '/' || c == '>' {
			s.p--
			break
		}
	}
	return s.skipSpace()
}

// skipSpace skips white space; false at the end of raw, where a complete
// tag never is before its '>'.
func (s *attrScanner) skipSpace() bool {
	for s.p < len(s.raw) && htmlSpace(s.raw[s.p]) {
		s.p++
	}
	return s.p < len(s.raw)
}

// next returns the next attribute with a non-empty key (the tokenizer
// keeps no other), or done at the tag's '>'; ok is false when the reading
// goes wrong.
func (s *attrScanner) next() (k, v []byte, ok, done bool) {
	raw := s.raw
	for s.p < len(raw) {
		if raw[s.p] == '>' {
			s.p++
			return nil, nil, s.p == len(raw), true
		}
		// Attribute name: up to '=', white space, '/' or '>'; an '='
		// first is part of the name (WHATWG 13.2.5.32).
		k0 := s.p
		for {
			if s.p >= len(raw) {
				return nil, nil, false, false
			}
			c := raw[s.p]
			s.p++
			if c == '=' && s.p == k0+1 {
				continue
			}
			if c == '=' || htmlSpace(c) || c == '/' || c == '>' {
				s.p--
				break
			}
		}
		k1 := s.p
		// Attribute value, if an '=' follows.
		v0, v1 := s.p, s.p
		if !s.skipSpace() {
			return nil, nil, false, false
		}
		c := raw[s.p]
		s.p++
		switch {
		case c == '/': // consumed: the self-closing flag
		case c != '=':
			s.p--
		default:
			if !s.skipSpace() {
				return nil, nil, false, false
			}
			q := raw[s.p]
			s.p++
			switch q {
			case '>':
				s.p--
			case '"', '\'':
				i := bytes.IndexByte(raw[s.p:], q)
				if i < 0 {
					return nil, nil, false, false
				}
				v0, v1 = s.p, s.p+i
				s.p = v1 + 1
			default:
				v0 = s.p - 1
				for {
					if s.p >= len(raw) {
						return nil, nil, false, false
					}
					c := raw[s.p]
					s.p++
					if htmlSpace(c) {
						v1 = s.p - 1
						break
					}
					if c == '>' {
						s.p--
						v1 = s.p
						break
					}
				}
			}
		}
		if !s.skipSpace() {
			return nil, nil, false, false
		}
		if k1 > k0 {
			return raw[k0:k1], raw[v0:v1], true, false
		}
	}
	return nil, nil, false, false
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
