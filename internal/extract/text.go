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
// copied whole: this is the hot loop of extraction.
func (tb *textBuf) add(t []byte, max int) {
	for i := 0; i < len(t) && !tb.full; {
		c := t[i]
		if c < utf8.RuneSelf {
			if asciiSpace(c) {
				tb.space = tb.started
				i++
				continue
			}
			j := i + 1
			for j < len(t) && t[j] < utf8.RuneSelf && !asciiSpace(t[j]) {
				j++
			}
			tb.write(t[i:j], max, true)
			i = j
			continue
		}
		r, n := utf8.DecodeRune(t[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			// invalid byte: dropped
		case unicode.IsSpace(r):
			tb.space = tb.started
		default:
			tb.write(t[i:i+n], max, false)
		}
		i += n
	}
}

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

// inline lists the elements that do not separate words.
var inline = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "cite": true,
	"code": true, "data": true, "dfn": true, "em": true, "font": true, "i": true,
	"kbd": true, "mark": true, "q": true, "s": true, "samp": true, "small": true,
	"span": true, "strong": true, "sub": true, "sup": true, "time": true,
	"u": true, "var": true, "wbr": true, "strike": true, "big": true, "tt": true,
	"label": true, "ins": true, "del": true, "nobr": true,
}

func (tb *textBuf) String() string { return string(tb.b) }

func (tb *textBuf) reset() { *tb = textBuf{b: tb.b[:0]} }
