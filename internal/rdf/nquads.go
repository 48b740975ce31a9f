package rdf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// DefaultMaxQuadLine bounds one N-Quads line (a statement) when
// QuadReaderOptions.MaxLineBytes is zero: 1 MiB, far above any quad an
// extractor writes (literals are bounded per page) and small enough that a
// hostile file cannot make the reader hold gigabytes.
const DefaultMaxQuadLine = 1 << 20

// ErrLineTooLong is wrapped by the error for a line over the bound.
var ErrLineTooLong = errors.New("rdf: n-quads line too long")

// NQuadsError is an N-Quads syntax error at a line and byte column (both
// from 1).
type NQuadsError struct {
	Line, Col int
	Msg       string
}

func (e *NQuadsError) Error() string {
	return fmt.Sprintf("rdf: n-quads line %d col %d: %s", e.Line, e.Col, e.Msg)
}

// QuadReaderOptions bound a QuadReader. The zero value uses the defaults.
type QuadReaderOptions struct {
	// MaxLineBytes is the longest line accepted, newline excluded;
	// 0 means DefaultMaxQuadLine.
	MaxLineBytes int
}

// QuadReader reads N-Quads (RDF 1.1 N-Quads, W3C Recommendation 2014) one
// statement at a time. It is strict: every production of the grammar is
// checked, IRIs must be absolute, the text must be UTF-8. Not safe for
// concurrent use.
type QuadReader struct {
	r    *bufio.Reader
	max  int
	line int
	buf  []byte
	// rest holds the lines after a lone CR (EOL ::= [#xD#xA]+) not yet
	// returned.
	rest []string
}

// NewQuadReader returns a QuadReader reading r.
func NewQuadReader(r io.Reader, opts QuadReaderOptions) *QuadReader {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxQuadLine
	}
	return &QuadReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Line returns the number of lines read so far (the line of the last quad
// returned by Next).
func (d *QuadReader) Line() int { return d.line }

// Next returns the next quad, skipping blank and comment lines, or io.EOF
// after the last one. A syntax error is a *NQuadsError; the QuadReader can go
// on with the next line after one.
func (d *QuadReader) Next() (Quad, error) {
	for {
		line, err := d.readLine()
		if err != nil {
			return Quad{}, err
		}
		p := nqParser{s: line, line: d.line}
		p.skipSpace()
		if p.eof() || p.peek() == '#' {
			continue
		}
		return p.statement()
	}
}

// readLine returns the next line without its end (LF, CR or CRLF), holding
// at most max bytes; a longer line is skipped and reported.
func (d *QuadReader) readLine() (string, error) {
	if len(d.rest) > 0 {
		l := d.rest[0]
		d.rest = d.rest[1:]
		return l, nil
	}
	d.buf = d.buf[:0]
	tooLong := false
	for {
		chunk, err := d.r.ReadSlice('\n')
		if !tooLong {
			if len(d.buf)+len(chunk) > d.max+2 { // +2: CRLF
				tooLong = true
				d.buf = d.buf[:0]
			} else {
				d.buf = append(d.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("rdf: n-quads read: %w", err)
		}
		if errors.Is(err, io.EOF) && len(chunk) == 0 && len(d.buf) == 0 && !tooLong {
			return "", io.EOF
		}
		d.line++
		if tooLong {
			return "", fmt.Errorf("rdf: n-quads line %d: over %d bytes: %w", d.line, d.max, ErrLineTooLong)
		}
		b := bytes.TrimRight(d.buf, "\r\n")
		if len(b) > d.max {
			return "", fmt.Errorf("rdf: n-quads line %d: over %d bytes: %w", d.line, d.max, ErrLineTooLong)
		}
		// A lone CR also ends a line (EOL ::= [#xD#xA]+): split on it.
		// Such lines share one line number in errors.
		if bytes.IndexByte(b, '\r') >= 0 {
			parts := strings.Split(string(b), "\r")
			d.rest = parts[1:]
			return parts[0], nil
		}
		return string(b), nil
	}
}

// ParseQuad parses one N-Quads statement (a line without its newline; a
// trailing comment is allowed).
func ParseQuad(line string) (Quad, error) {
	p := nqParser{s: line, line: 1}
	p.skipSpace()
	return p.statement()
}

// ParseTerm parses one term in N-Quads syntax: <iri>, _:label or a literal.
func ParseTerm(s string) (Term, error) {
	p := nqParser{s: s, line: 1}
	t, err := p.term(true, true, true)
	if err != nil {
		return Term{}, err
	}
	if !p.eof() {
		return Term{}, p.errorf("text after the term")
	}
	return t, nil
}

// nqParser reads one line.
type nqParser struct {
	s    string
	i    int
	line int
}

func (p *nqParser) eof() bool  { return p.i >= len(p.s) }
func (p *nqParser) peek() byte { return p.s[p.i] }

func (p *nqParser) errorf(format string, args ...any) error {
	return &NQuadsError{Line: p.line, Col: p.i + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *nqParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// statement ::= subject predicate object graphLabel? '.'
func (p *nqParser) statement() (Quad, error) {
	if !utf8.ValidString(p.s) {
		return Quad{}, p.errorf("invalid UTF-8")
	}
	var q Quad
	var err error
	if q.S, err = p.term(true, true, false); err != nil {
		return Quad{}, err
	}
	p.skipSpace()
	if q.P, err = p.term(true, false, false); err != nil {
		return Quad{}, err
	}
	p.skipSpace()
	if q.O, err = p.term(true, true, true); err != nil {
		return Quad{}, err
	}
	p.skipSpace()
	if !p.eof() && p.peek() != '.' {
		if q.G, err = p.term(true, true, false); err != nil {
			return Quad{}, err
		}
		p.skipSpace()
	}
	if p.eof() || p.peek() != '.' {
		return Quad{}, p.errorf("expected '.' at the end of the statement")
	}
	p.i++
	p.skipSpace()
	if !p.eof() && p.peek() != '#' {
		return Quad{}, p.errorf("text after the statement's '.'")
	}
	return q, nil
}

// term reads an IRI, and a blank node or literal when allowed.
func (p *nqParser) term(iri, blank, literal bool) (Term, error) {
	if p.eof() {
		return Term{}, p.errorf("expected a term, found the end of the line")
	}
	switch c := p.peek(); {
	case c == '<' && iri:
		v, err := p.iriRef()
		return NewIRI(v), err
	case c == '_' && blank:
		v, err := p.blankLabel()
		return NewBlank(v), err
	case c == '"' && literal:
		return p.literal()
	default:
		return Term{}, p.errorf("unexpected %q where a term belongs", c)
	}
}

// iriRef ::= '<' ([^#x00-#x20<>"{}|^`\] | UCHAR)* '>', and the IRI must be
// absolute (RDF 1.1 N-Quads §2.4: relative IRIs are not allowed).
func (p *nqParser) iriRef() (string, error) {
	start := p.i
	p.i++ // '<'
	var b strings.Builder
	for {
		if p.eof() {
			p.i = start
			return "", p.errorf("unterminated IRI")
		}
		c := p.s[p.i]
		switch {
		case c == '>':
			p.i++
			v := b.String()
			if !nqAbsolute(v) {
				p.i = start
				return "", p.errorf("IRI %q is not absolute", nqClip(v))
			}
			return v, nil
		case c == '\\':
			r, err := p.uchar()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c <= 0x20 || strings.IndexByte("<\"{}|^`", c) >= 0:
			return "", p.errorf("character %q not allowed in an IRI", c)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
}

// absoluteIRI reports whether v starts with a scheme (RFC 3987: ALPHA
// *( ALPHA / DIGIT / "+" / "-" / "." ) ":").
func nqAbsolute(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// uchar reads \uXXXX or \UXXXXXXXX at p.i.
func (p *nqParser) uchar() (rune, error) {
	if p.i+1 >= len(p.s) {
		return 0, p.errorf("unfinished escape")
	}
	n := 0
	switch p.s[p.i+1] {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return 0, p.errorf("escape \\%c not allowed here", p.s[p.i+1])
	}
	if p.i+2+n > len(p.s) {
		return 0, p.errorf("unfinished escape")
	}
	var r rune
	for _, c := range []byte(p.s[p.i+2 : p.i+2+n]) {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, p.errorf("bad hex digit %q in escape", c)
		}
		r = r<<4 | rune(v)
	}
	if r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
		return 0, p.errorf("escape U+%X is not a Unicode scalar value", r)
	}
	p.i += 2 + n
	return r, nil
}

// blankLabel ::= '_:' (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?
func (p *nqParser) blankLabel() (string, error) {
	if !strings.HasPrefix(p.s[p.i:], "_:") {
		return "", p.errorf("expected '_:'")
	}
	p.i += 2
	start := p.i
	first := true
	for p.i < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		ok := nqCharsU(r) || r >= '0' && r <= '9'
		if !first {
			ok = ok || nqChars(r) || r == '.'
		}
		if !ok {
			break
		}
		first = false
		p.i += size
	}
	// A label cannot end with '.': give the dots back (the last one is the
	// statement's end).
	for p.i > start && p.s[p.i-1] == '.' {
		p.i--
	}
	if p.i == start {
		return "", p.errorf("empty or invalid blank node label")
	}
	return p.s[start:p.i], nil
}

// nqCharsBase and friends are the character classes of the grammar.
func nqCharsBase(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' ||
		r >= 0xC0 && r <= 0xD6 || r >= 0xD8 && r <= 0xF6 || r >= 0xF8 && r <= 0x2FF ||
		r >= 0x370 && r <= 0x37D || r >= 0x37F && r <= 0x1FFF || r >= 0x200C && r <= 0x200D ||
		r >= 0x2070 && r <= 0x218F || r >= 0x2C00 && r <= 0x2FEF || r >= 0x3001 && r <= 0xD7FF ||
		r >= 0xF900 && r <= 0xFDCF || r >= 0xFDF0 && r <= 0xFFFD || r >= 0x10000 && r <= 0xEFFFF
}

func nqCharsU(r rune) bool { return nqCharsBase(r) || r == '_' || r == ':' }

func nqChars(r rune) bool {
	return nqCharsU(r) || r == '-' || r >= '0' && r <= '9' || r == 0xB7 ||
		r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

// literal ::= STRING_LITERAL_QUOTE ('^^' IRIREF | LANGTAG)?
func (p *nqParser) literal() (Term, error) {
	start := p.i
	p.i++ // '"'
	var b strings.Builder
	for {
		if p.eof() {
			p.i = start
			return Term{}, p.errorf("unterminated string")
		}
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return p.literalTail(b.String())
		case '\n', '\r':
			return Term{}, p.errorf("line break inside a string")
		case '\\':
			if p.i+1 >= len(p.s) {
				return Term{}, p.errorf("unfinished escape")
			}
			e := p.s[p.i+1]
			if e == 'u' || e == 'U' {
				r, err := p.uchar()
				if err != nil {
					return Term{}, err
				}
				b.WriteRune(r)
				continue
			}
			i := strings.IndexByte(`tbnrf"'\`, e)
			if i < 0 {
				return Term{}, p.errorf("unknown escape \\%c", e)
			}
			b.WriteByte("\t\b\n\r\f\"'\\"[i])
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
}

func (p *nqParser) literalTail(v string) (Term, error) {
	switch {
	case strings.HasPrefix(p.s[p.i:], "^^"):
		p.i += 2
		if p.eof() || p.peek() != '<' {
			return Term{}, p.errorf("expected a datatype IRI after '^^'")
		}
		dt, err := p.iriRef()
		if err != nil {
			return Term{}, err
		}
		if dt == RDFLangString {
			return Term{}, p.errorf("rdf:langString needs a language tag")
		}
		return NewLiteral(v, dt, ""), nil
	case !p.eof() && p.peek() == '@':
		p.i++
		start := p.i
		// LANGTAG ::= '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*
		n := 0
		for p.i < len(p.s) && nqAlpha(p.s[p.i]) {
			p.i++
			n++
		}
		if n == 0 {
			return Term{}, p.errorf("empty language tag")
		}
		for p.i < len(p.s) && p.s[p.i] == '-' {
			p.i++
			n = 0
			for p.i < len(p.s) && (nqAlpha(p.s[p.i]) || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
				p.i++
				n++
			}
			if n == 0 {
				return Term{}, p.errorf("empty language subtag")
			}
		}
		return NewLiteral(v, "", p.s[start:p.i]), nil
	}
	return NewLiteral(v, "", ""), nil
}

func nqAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// clip shortens s for an error message.
func nqClip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
