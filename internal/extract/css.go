package extract

import (
	"bytes"
	"net/url"
	"unicode/utf8"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// CSS extracts the references of a stylesheet: the URLs of @import rules
// and of url() values (background images, fonts, cursors, imported
// sheets), all hop E, resolved against base (the stylesheet's URL). Like
// HTML it fails only for a bad base or invalid Options; bad references
// and limits are counted in Page.Problems. Of Options only the limits and
// Normalize apply.
func CSS(base *url.URL, body []byte, o Options) (*Page, error) {
	s, body, err := start(base, body, o)
	if err != nil {
		return nil, err
	}
	defer putScanner(s)
	p := s.page
	p.Charset = "utf-8"
	s.linkCap = min(max(len(body)/256, 4), 64, s.o.MaxLinks)
	s.cssLinks(body, "css", "")
	return p, nil
}

// cssLinks adds the references in css (a stylesheet, a <style> element or
// a style attribute) as embeds found in tag and attr.
func (s *scanner) cssLinks(css []byte, tag, attr string) {
	// Bound the work: every reference costs a resolution, the links
	// limit caps what is kept, this caps what is tried.
	n := 0
	cssRefs(css, func(ref []byte) bool {
		s.add(ref, tag, attr, nil, nil, HopEmbed)
		n++
		return n < 4*s.o.MaxLinks
	})
}

// cssRefs calls fn with each reference in css, unescaped, in order, until
// fn returns false. It reads CSS as the CSS Syntax Module's tokenizer
// would where it matters: comments are skipped, strings end at their
// quote (or an unescaped newline), url( starts a URL only as a whole
// function name (not "myurl("), and a string counts only after @import
// or as an argument of image-set() (image-set("a.png" 1x, "b.png" 2x)).
// Malformed input never fails: an unterminated comment, string or url(
// ends the scan or is taken up to the end.
func cssRefs(css []byte, fn func(ref []byte) bool) {
	atImport := false // the last token was the at-keyword @import
	depth := 0        // of parentheses (url( excepted: it is read whole)
	imageSet := 0     // the depth of the image-set( the scan is in, 0: none
	for i := 0; i < len(css); {
		c := css[i]
		switch {
		case c == '/' && i+1 < len(css) && css[i+1] == '*':
			end := bytes.Index(css[i+2:], []byte("*/"))
			if end < 0 {
				return
			}
			i += 2 + end + 2
		case c == '"' || c == '\'':
			str, next, ok := cssString(css, i+1, c)
			i = next
			if atImport || imageSet > 0 && depth == imageSet {
				atImport = false
				if ok && !fn(str) {
					return
				}
			}
		case c == '\\':
			i += 2 // an escaped character is part of an identifier
			atImport = false
		case c == '@':
			j := i + 1
			for j < len(css) && identChar(css[j]) {
				j++
			}
			atImport = urlnorm.EqualFoldASCII(css[i+1:j], "import")
			i = j
		case (c == 'u' || c == 'U') && i+4 <= len(css) && urlnorm.EqualFoldASCII(css[i:i+4], "url(") && (i == 0 || !identChar(css[i-1]) && css[i-1] != '\\'):
			atImport = false
			j := i + 4
			for j < len(css) && htmlSpace(css[j]) {
				j++
			}
			if j < len(css) && (css[j] == '"' || css[j] == '\'') {
				// url("x"): a function whose argument is a string.
				str, next, ok := cssString(css, j+1, css[j])
				i = next
				if ok && !fn(str) {
					return
				}
				continue
			}
			ref, next, ok := cssUnquotedURL(css, j)
			i = next
			if ok && !fn(ref) {
				return
			}
		case c == '(':
			depth++
			if imageSet == 0 && imageSetName(css[:i]) {
				imageSet = depth
			}
			atImport = false
			i++
		case c == ')':
			if depth == imageSet {
				imageSet = 0
			}
			depth = max(depth-1, 0)
			atImport = false
			i++
		default:
			if !htmlSpace(c) {
				atImport = false
			}
			i++
		}
	}
}

// cssString reads a string whose opening quote q came before css[i]; it
// returns the unescaped content and the index after the closing quote. The
// end of input ends the string; an unescaped newline ends it too, as a bad
// string (ok false).
func cssString(css []byte, i int, q byte) (str []byte, next int, ok bool) {
	start := i
	escaped := false
	for i < len(css) {
		switch css[i] {
		case q:
			return cssUnescape(css[start:i], escaped), i + 1, true
		case '\n', '\r', '\f':
			return nil, i, false
		case '\\':
			escaped = true
			i++
		}
		i++
	}
	return cssUnescape(css[start:min(i, len(css))], escaped), len(css), true
}

// cssUnquotedURL reads the URL of url( whose content starts at css[i]
// (white space skipped): up to ')', with trailing white space allowed. A
// quote, '(' or white space inside makes a bad URL (CSS Syntax §4.3.6),
// skipped up to its ')'; ok is false then, and for an empty url().
func cssUnquotedURL(css []byte, i int) (ref []byte, next int, ok bool) {
	start := i
	escaped := false
	end := -1 // where the URL ends when white space came before ')'
	for i < len(css) {
		c := css[i]
		switch {
		case c == ')':
			if end < 0 {
				end = i
			}
			return cssUnescape(css[start:end], escaped), i + 1, end > start
		case htmlSpace(c):
			if end < 0 {
				end = i
			}
		case end >= 0 || c == '"' || c == '\'' || c == '(':
			// Bad URL: consume up to ')' (escapes skipped).
			for i < len(css) && css[i] != ')' {
				if css[i] == '\\' {
					i++
				}
				i++
			}
			return nil, min(i+1, len(css)), false
		case c == '\\':
			escaped = true
			i = escapeEnd(css, i+1) - 1
		}
		i++
	}
	return nil, len(css), false // unterminated: EOF in url( is a parse error
}

// escapeEnd returns the index after the escape whose backslash came
// before css[i]: 1-6 hex digits and one white space (CSS white space is
// HTML's, htmlSpace), or one character.
func escapeEnd(css []byte, i int) int {
	j := i
	for j < len(css) && j < i+6 && hexDigit(css[j]) {
		j++
	}
	if j == i {
		return min(i+1, len(css))
	}
	if j < len(css) && htmlSpace(css[j]) {
		j++
	}
	return j
}

// imageSetName reports whether css ends with the function name
// image-set or -webkit-image-set (ASCII case-insensitively), as a whole
// identifier.
func imageSetName(css []byte) bool {
	for _, name := range [...]string{"image-set", "-webkit-image-set"} {
		n := len(name)
		if len(css) >= n && urlnorm.EqualFoldASCII(css[len(css)-n:], name) && (len(css) == n || !identChar(css[len(css)-n-1])) {
			return true
		}
	}
	return false
}

// cssUnescape resolves CSS escapes: a backslash and 1-6 hex digits (one
// white space after them is eaten) is that code point, a backslash and a
// newline is nothing (a line continuation in strings), a backslash and any
// other character is that character.
func cssUnescape(b []byte, escaped bool) []byte {
	if !escaped {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		i++
		if i >= len(b) {
			break
		}
		if b[i] == '\n' || b[i] == '\f' {
			continue
		}
		if b[i] == '\r' {
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			continue
		}
		if hexDigit(b[i]) {
			end := escapeEnd(b, i)
			r := rune(0)
			for _, c := range b[i:end] {
				if hexDigit(c) { // not the white space that may end it
					r = r<<4 | rune(hexValue(c))
				}
			}
			if r == 0 || r > utf8.MaxRune || 0xd800 <= r && r <= 0xdfff {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			i = end - 1
			continue
		}
		out = append(out, b[i])
	}
	return out
}

// identChar reports the bytes of a CSS identifier (non-ASCII included).
func identChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c >= 0x80
}

func hexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
