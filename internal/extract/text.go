package extract

import (
	"unicode"
	"unicode/utf8"
)

// textBuf accumulates text with runs of white space collapsed to one space,
// no leading or trailing space, invalid UTF-8 dropped, and a size bound.
type textBuf struct {
	b       []byte
	space   bool // a space is pending before the next word
	full    bool // the bound was reached: everything further is ignored
	started bool
}

// add appends t, keeping the buffer at most max bytes. ASCII runs are
// copied whole: this is the hot loop of extraction, so bytes are sorted
// by a table and the buffer is kept in a local until the end.
func (tb *textBuf) add(t []byte, max int) {
	if tb.full {
		return
	}
	w := *tb
	for i := 0; i < len(t) && !w.full; {
		switch textClass[t[i]] {
		case textSpace:
			w.space = w.started
			i++
		case textWord:
			// A run of words separated by single spaces is written as it
			// stands: what writing each word after a pending space
			// gives, in one append.
			j, multi := i+1, false
			for j < len(t) {
				if textClass[t[j]] == textWord {
					j++
				} else if t[j] == ' ' && j+1 < len(t) && textClass[t[j+1]] == textWord {
					j, multi = j+2, true
				} else {
					break
				}
			}
			need := j - i
			if w.space {
				need++
			}
			if !multi || len(w.b)+need <= max {
				w.write(t[i:j], max, true)
				i = j
				break
			}
			// The run meets the bound: word by word, so that the cut
			// falls as it always has (no space without a word after it).
			for k := i; k < j && !w.full; {
				e := k
				for e < j && t[e] != ' ' {
					e++
				}
				w.write(t[k:e], max, true)
				if e < j && !w.full {
					w.space = w.started
					e++
				}
				k = e
			}
			i = j
		default:
			r, n := utf8.DecodeRune(t[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				// invalid byte: dropped
			case unicode.IsSpace(r):
				w.space = w.started
			default:
				w.write(t[i:i+n], max, false)
			}
			i += n
		}
	}
	*tb = w
}

// visible reports whether textBuf.add would write anything of t: a byte
// of a word, or a valid rune that is not white space.
func visible(t []byte) bool {
	for i := 0; i < len(t); {
		switch textClass[t[i]] {
		case textSpace:
			i++
		case textWord:
			return true
		default:
			r, n := utf8.DecodeRune(t[i:])
			if !(r == utf8.RuneError && n <= 1) && !unicode.IsSpace(r) {
				return true
			}
			i += n
		}
	}
	return false
}

// Byte classes of textBuf.add.
const (
	textWord  = iota // ASCII, part of a word
	textSpace        // ASCII white space or NUL: separates words
	textHigh         // starts or continues a multi-byte UTF-8 sequence
)

// textClass sorts bytes for textBuf.add.
var textClass = func() (c [256]uint8) {
	for i := range c {
		switch {
		case i >= utf8.RuneSelf:
			c[i] = textHigh
		case asciiSpace(byte(i)):
			c[i] = textSpace
		}
	}
	return c
}()

// write appends a word part w, preceded by the pending space. A part that
// does not fit is cut when divisible (ASCII) and the buffer marked full.
func (tb *textBuf) write(w []byte, max int, divisible bool) {
	need := len(w)
	if tb.space {
		need++
	}
	if len(tb.b)+need > max {
		tb.full = true
		room := max - len(tb.b) - (need - len(w))
		if !divisible || room <= 0 {
			return
		}
		w = w[:room]
	}
	if tb.space {
		tb.b = append(tb.b, ' ')
		tb.space = false
	}
	tb.b = append(tb.b, w...)
	tb.started = true
}

// asciiSpace reports ASCII white space and NUL, which separate words.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == 0
}

// sep marks a word boundary: the next text starts after a space. Block
// tags call it (<td>a</td><td>b</td> is two words, <b>a</b>b is one).
func (tb *textBuf) sep() { tb.space = tb.started }

// inline reports the elements that do not separate words. A switch, not
// a map: it runs for every tag of a page.
func inline(name string) bool {
	switch name {
	case "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i",
		"kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time",
		"u", "var", "wbr", "strike", "big", "tt", "label", "ins", "del", "nobr":
		return true
	}
	return false
}

func (tb *textBuf) String() string { return string(tb.b) }

func (tb *textBuf) reset() { *tb = textBuf{b: tb.b[:0]} }
