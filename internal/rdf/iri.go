package rdf

import "strings"

// iriParts is an IRI split as RFC 3986 §3 does: scheme ":" "//" authority
// path "?" query "#" fragment. The has* fields tell an empty component
// from an absent one.
type iriParts struct {
	scheme, authority, path, query, fragment string
	hasAuthority, hasQuery, hasFragment      bool
}

func splitIRI(s string) iriParts {
	var p iriParts
	if i := strings.IndexByte(s, '#'); i >= 0 {
		p.fragment, p.hasFragment = s[i+1:], true
		s = s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		p.query, p.hasQuery = s[i+1:], true
		s = s[:i]
	}
	if i := schemeEnd(s); i > 0 {
		p.scheme = s[:i]
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		p.authority, p.hasAuthority = s[:i], true
		s = s[i:]
	}
	p.path = s
	return p
}

// schemeEnd returns the index of the colon ending s's scheme, or -1 when
// s has none (RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return i
		default:
			return -1
		}
	}
	return -1
}

// hasScheme reports whether s is an absolute IRI (it starts with a scheme).
func hasScheme(s string) bool { return schemeEnd(s) > 0 }

func (p iriParts) String() string {
	var b strings.Builder
	b.Grow(len(p.scheme) + len(p.authority) + len(p.path) + len(p.query) + len(p.fragment) + 6)
	if p.scheme != "" {
		b.WriteString(p.scheme)
		b.WriteByte(':')
	}
	if p.hasAuthority {
		b.WriteString("//")
		b.WriteString(p.authority)
	}
	b.WriteString(p.path)
	if p.hasQuery {
		b.WriteByte('?')
		b.WriteString(p.query)
	}
	if p.hasFragment {
		b.WriteByte('#')
		b.WriteString(p.fragment)
	}
	return b.String()
}

// resolveIRI resolves ref against the absolute IRI base as RFC 3986 §5.2
// does, on strings, so that IRIs keep their characters (net/url would
// percent-encode non-ASCII ones). An absolute ref is returned with its dot
// segments removed.
func resolveIRI(base, ref string) string {
	if hasScheme(ref) && !strings.Contains(ref, "/.") {
		return ref // the common case: already absolute, nothing to normalise
	}
	r := splitIRI(ref)
	var t iriParts
	if r.scheme != "" {
		t = r
		t.path = removeDotSegments(r.path)
		return t.String()
	}
	b := splitIRI(base)
	t.scheme = b.scheme
	switch {
	case r.hasAuthority:
		t.authority, t.hasAuthority = r.authority, true
		t.path = removeDotSegments(r.path)
		t.query, t.hasQuery = r.query, r.hasQuery
	case r.path == "":
		t.authority, t.hasAuthority = b.authority, b.hasAuthority
		t.path = b.path
		if r.hasQuery {
			t.query, t.hasQuery = r.query, true
		} else {
			t.query, t.hasQuery = b.query, b.hasQuery
		}
	default:
		t.authority, t.hasAuthority = b.authority, b.hasAuthority
		if strings.HasPrefix(r.path, "/") {
			t.path = removeDotSegments(r.path)
		} else {
			t.path = removeDotSegments(mergePaths(b, r.path))
		}
		t.query, t.hasQuery = r.query, r.hasQuery
	}
	t.fragment, t.hasFragment = r.fragment, r.hasFragment
	return t.String()
}

// mergePaths is RFC 3986 §5.2.3.
func mergePaths(b iriParts, ref string) string {
	if b.hasAuthority && b.path == "" {
		return "/" + ref
	}
	if i := strings.LastIndexByte(b.path, '/'); i >= 0 {
		return b.path[:i+1] + ref
	}
	return ref
}

// removeDotSegments is RFC 3986 §5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string
	abs := strings.HasPrefix(in, "/")
	segs := strings.Split(in, "/")
	if abs {
		segs = segs[1:]
	}
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	res := strings.Join(out, "/")
	if abs {
		res = "/" + res
	}
	return res
}

// validIRI reports whether s can be an IRI in an RDF graph: absolute, and
// free of the characters RFC 3987 forbids anywhere in an IRI (spaces,
// controls, <>"{}|\^`). Quads with other IRIs are dropped and counted.
func validIRI(s string) bool {
	if !hasScheme(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c == 0x7f {
			return false
		}
		switch c {
		case '<', '>', '"', '{', '}', '|', '\\', '^', '`':
			return false
		}
	}
	return true
}
