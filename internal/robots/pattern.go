package robots

import "strings"

// pattern is a compiled Allow/Disallow (or Index-page, Change-*) value.
//
// Both the pattern and the path it is matched against are brought to one
// normal form first (normalizeInto), so that the percent-encoding
// equivalences of RFC 9309 §2.2.2 hold: escapes of unreserved characters are
// decoded, other escapes get upper-case hex digits, and octets that may not
// appear raw in a URI (non-ASCII, controls, space, a few delimiters) are
// encoded. A literal `*` or `$` in a path is encoded as %2A / %24, so that a
// pattern can match it only when written encoded (§2.2.3).
type pattern struct {
	raw      string   // the value as written, for explanations
	norm     string   // normal form, with `*` wildcards and the final `$` kept
	lit      string   // norm without the final `$`, when the pattern has no `*`
	segs     []string // norm without the final `$`, split at `*` (wild only)
	anchored bool     // ends in `$`: must match the whole path
	wild     bool     // contains `*`
	fold     bool     // compare ASCII case-insensitively (REGP §3.2.5)
}

// compilePattern compiles a rule value. fold selects case-insensitive
// matching (REGP values are case-insensitive, RFC 9309 ones are not).
func compilePattern(raw string, fold bool) pattern {
	var buf [256]byte
	b := normalizeInto(buf[:0], raw, true)
	// Collapse runs of `*`: they match the same paths and would only cost
	// time.
	out := b[:0]
	for i, c := range b {
		if c == '*' && i > 0 && b[i-1] == '*' {
			continue
		}
		out = append(out, c)
	}
	p := pattern{raw: raw, norm: string(out), fold: fold}
	body := p.norm
	if strings.HasSuffix(body, "$") {
		p.anchored = true
		body = body[:len(body)-1]
	}
	if strings.IndexByte(body, '*') >= 0 {
		p.wild = true
		p.segs = strings.Split(body, "*")
	} else {
		p.lit = body
	}
	if fold {
		p.lit = asciiLower(p.lit)
		for i, s := range p.segs {
			p.segs[i] = asciiLower(s)
		}
	}
	return p
}

// priority is the length used by the longest-match rule of RFC 9309
// §2.2.2: the number of octets of the pattern (in normal form).
func (p *pattern) priority() int { return len(p.norm) }

// match reports whether the pattern matches path, which must already be in
// normal form. Patterns match from the first octet; without a final `$`
// they match any path they are a prefix of.
func (p *pattern) match(path string) bool {
	if !p.wild {
		if p.anchored {
			return len(path) == len(p.lit) && hasPrefix(path, p.lit, p.fold)
		}
		return hasPrefix(path, p.lit, p.fold)
	}
	segs := p.segs
	if !hasPrefix(path, segs[0], p.fold) {
		return false
	}
	pos := len(segs[0])
	last := len(segs) - 1
	// Placing every middle segment at its leftmost occurrence is optimal for
	// patterns whose only wildcard is `*`: it leaves the most room for the
	// rest.
	for i := 1; i < last; i++ {
		j := index(path[pos:], segs[i], p.fold)
		if j < 0 {
			return false
		}
		pos += j + len(segs[i])
	}
	tail := segs[last]
	if p.anchored {
		rest := path[pos:]
		return len(rest) >= len(tail) && hasPrefix(rest[len(rest)-len(tail):], tail, p.fold)
	}
	return index(path[pos:], tail, p.fold) >= 0
}

func hasPrefix(s, prefix string, fold bool) bool {
	if len(s) < len(prefix) {
		return false
	}
	if !fold {
		return s[:len(prefix)] == prefix
	}
	for i := 0; i < len(prefix); i++ {
		if lowerByte(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// index is strings.Index, or an ASCII case-folding version of it when fold
// is set (sub must then be lower-case already).
func index(s, sub string, fold bool) int {
	if !fold {
		return strings.Index(s, sub)
	}
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if hasPrefix(s[i:], sub, true) {
			return i
		}
	}
	return -1
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lowerByte(b[j])
			}
			return string(b)
		}
	}
	return s
}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// isUnreserved reports the unreserved characters of RFC 3986 §2.3, whose
// percent-encoded and raw forms are equivalent.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// mustEncode reports octets that never appear raw in a URI path or query
// (RFC 3986 §2; `#` would start the fragment): they are compared in their
// percent-encoded form.
func mustEncode(c byte) bool {
	if c <= 0x20 || c >= 0x7f {
		return true
	}
	switch c {
	case '"', '#', '<', '>', '\\', '^', '`', '{', '|', '}':
		return true
	}
	return false
}

// normalizeInto appends the normal form of s to dst. In a pattern, `*` stays
// a wildcard and a final `$` an anchor; in a path both are literal octets
// and are encoded.
func normalizeInto(dst []byte, s string, isPattern bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if isUnreserved(v) {
					dst = append(dst, v)
				} else {
					dst = append(dst, '%', upperHex[v>>4], upperHex[v&15])
				}
				i += 2
			} else {
				dst = append(dst, "%25"...)
			}
		case c == '*':
			if isPattern {
				dst = append(dst, '*')
			} else {
				dst = append(dst, "%2A"...)
			}
		case c == '$':
			if isPattern && i == len(s)-1 {
				dst = append(dst, '$')
			} else {
				dst = append(dst, "%24"...)
			}
		case mustEncode(c):
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// pathIsNormal reports whether normalizeInto would return path unchanged,
// so that the common case needs no copy.
func pathIsNormal(path string) bool {
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '%':
			if i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2]) {
				return false
			}
			h, l := path[i+1], path[i+2]
			if 'a' <= h && h <= 'f' || 'a' <= l && l <= 'f' {
				return false
			}
			if isUnreserved(unhex(h)<<4 | unhex(l)) {
				return false
			}
			i += 2
		case c == '*' || c == '$' || mustEncode(c):
			return false
		}
	}
	return true
}

// normalizePath returns the normal form of a request path ("" is "/").
func normalizePath(path string) string {
	if path == "" {
		return "/"
	}
	if pathIsNormal(path) {
		return path
	}
	var buf [512]byte
	return string(normalizeInto(buf[:0], path, false))
}

// RequestPath returns the part of rawURL that robots.txt rules are matched
// against (RFC 9309 §2.2.2): path, params and query, without the fragment;
// "/" when the path is empty. rawURL may be absolute ("https://h/p?q"),
// scheme-relative ("//h/p") or just a path. Nothing is decoded or
// validated here: Allowed normalizes percent-encoding itself.
func RequestPath(rawURL string) string {
	s := rawURL
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	// Strip "scheme:" when it comes before any '/', '?'.
	if i := strings.IndexByte(s, ':'); i > 0 {
		if j := strings.IndexAny(s, "/?"); j < 0 || i < j {
			if isScheme(s[:i]) {
				s = s[i+1:]
			}
		}
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		j := strings.IndexAny(s, "/?")
		if j < 0 {
			return "/"
		}
		s = s[j:]
	}
	if s == "" {
		return "/"
	}
	if s[0] == '?' {
		return "/" + s
	}
	if s[0] != '/' {
		return "/" + s
	}
	return s
}

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			continue
		}
		return false
	}
	return len(s) > 0
}
