package extract

import "bytes"

// patternURLs adds the absolute http(s) URLs written out in t, for links
// hidden in scripts (the Viuva Negra report §4.2: "JavaScript-intensive pages") or typed
// as plain text. The pattern is deliberately simple: a scheme followed by
// characters that may appear in a URL, stopping at quotes, white space and
// angle brackets; JSON-escaped slashes ("http:\/\/x") are unescaped.
func (s *scanner) patternURLs(t []byte, tag string, hop Hop) {
	// Bound the work per token: scanning is linear, but each candidate
	// allocates, and the links limit caps the rest.
	for n := 0; n < 4*s.o.MaxLinks && len(t) > 0; n++ {
		i := bytes.Index(t, []byte("http"))
		if i < 0 {
			return
		}
		t = t[i:]
		j := 4
		if j < len(t) && (t[j] == 's' || t[j] == 'S') {
			j++
		}
		rest := t[j:]
		var sep int
		switch {
		case bytes.HasPrefix(rest, []byte("://")):
			sep = 3
		case bytes.HasPrefix(rest, []byte(`:\/\/`)):
			sep = 5
		default:
			t = t[4:]
			continue
		}
		end := j + sep
		for end < len(t) && isURLChar(t[end]) {
			end++
		}
		cand := trimTrailingPunct(t[:end])
		t = t[end:]
		if len(cand) <= j+sep {
			continue
		}
		if bytes.Contains(cand, []byte(`\/`)) {
			cand = bytes.ReplaceAll(cand, []byte(`\/`), []byte("/"))
		}
		s.add(cand, tag, "", nil, nil, hop)
	}
}

// isURLChar reports whether c may continue a URL written in text or code.
func isURLChar(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '"', '\'', '`', '<', '>', '{', '}', '|', '^', 0:
		return false
	}
	return c > 0x20 && c != 0x7f
}

// trimTrailingPunct drops sentence punctuation and an unbalanced closing
// bracket after a URL ("see http://x/a)." → "http://x/a").
func trimTrailingPunct(b []byte) []byte {
	for len(b) > 0 {
		c := b[len(b)-1]
		switch c {
		case '.', ',', ';', ':', '!', '?', '\\':
			b = b[:len(b)-1]
			continue
		case ')':
			if bytes.Count(b, []byte("(")) < bytes.Count(b, []byte(")")) {
				b = b[:len(b)-1]
				continue
			}
		case ']':
			if bytes.Count(b, []byte("[")) < bytes.Count(b, []byte("]")) {
				b = b[:len(b)-1]
				continue
			}
		}
		return b
	}
	return b
}
