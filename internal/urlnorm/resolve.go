package urlnorm

import (
	"fmt"
	"net/url"
	"strings"
)

// Resolve resolves ref, an href found in a page whose URL (or <base href>)
// is base, and normalizes the result with o. It follows RFC 3986 §5.2 with
// the leniencies of the WHATWG URL standard that browsers apply, because
// page authors test their links in browsers:
//
//   - leading and trailing spaces and control characters are ignored, and
//     tabs and newlines inside are removed;
//   - '\' counts as '/' before the query;
//   - "http:foo" with an http base is the relative reference "foo";
//   - bytes not allowed raw (spaces, non-ASCII, a stray '%') are
//     percent-encoded instead of making the URL invalid.
//
// An empty ref or a bare "#fragment" gives base itself. Absolute refs with
// another scheme (mailto:, javascript:, ...) give an error wrapping
// ErrScheme. With a nil base, ref must be absolute.
func Resolve(base *url.URL, ref string, o Options) (*url.URL, error) {
	s, err := resolveString(base, ref, &o)
	if err != nil {
		return nil, err
	}
	p, err := normalize(s, &o)
	if err != nil {
		return nil, err
	}
	return p.url(), nil
}

// ResolveBoth is Resolve returning the URL and its text together, for
// callers that need both (a link extractor keys on the text): one
// normalization, no second String().
func ResolveBoth(base *url.URL, ref string, o Options) (*url.URL, string, error) {
	s, err := resolveString(base, ref, &o)
	if err != nil {
		return nil, "", err
	}
	p, err := normalize(s, &o)
	if err != nil {
		return nil, "", err
	}
	return p.url(), p.String(), nil
}

// ResolveString is Resolve returning the URL's text.
func ResolveString(base *url.URL, ref string, o Options) (string, error) {
	s, err := resolveString(base, ref, &o)
	if err != nil {
		return "", err
	}
	return NormalizeString(s, o)
}

// resolveString returns the absolute, not yet normalized, target of ref.
func resolveString(base *url.URL, ref string, o *Options) (string, error) {
	if o.MaxLength >= 0 && len(ref) > o.maxLength() {
		return "", fmt.Errorf("%w: reference of %d bytes, longer than the limit of %d", ErrMalformed, len(ref), o.maxLength())
	}
	ref = clean(ref)
	if base == nil {
		return ref, nil
	}
	baseScheme := strings.ToLower(base.Scheme)
	if baseScheme != "http" && baseScheme != "https" {
		return "", fmt.Errorf("%w: base URL scheme %q", ErrScheme, base.Scheme)
	}
	if base.Host == "" {
		return "", fmt.Errorf("%w: base URL %q has no host", ErrMalformed, clip(base.String()))
	}
	if scheme, rest, ok := splitScheme(ref); ok {
		if !strings.EqualFold(scheme, baseScheme) {
			return ref, nil // absolute; normalize checks the scheme
		}
		// WHATWG "special relative or authority state": same special
		// scheme without "//" is relative to the base.
		ref = rest
	}
	if strings.HasPrefix(ref, "//") {
		return baseScheme + ":" + ref, nil // network-path reference
	}
	path, frag, hasFrag := strings.Cut(ref, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	basePath := base.EscapedPath()
	if !strings.HasPrefix(basePath, "/") {
		basePath = "/" + basePath
	}
	switch {
	case path == "":
		path = basePath
		if !hasQuery {
			query, hasQuery = base.RawQuery, base.RawQuery != "" || base.ForceQuery
		}
	case path[0] == '/':
	default:
		// RFC 3986 §5.2.3 merge; normalize removes the dot segments.
		path = basePath[:strings.LastIndexByte(basePath, '/')+1] + path
	}
	var b strings.Builder
	b.Grow(len(baseScheme) + 3 + len(base.Host) + len(path) + len(query) + len(frag) + 2)
	b.WriteString(baseScheme)
	b.WriteString("://")
	if base.User != nil {
		b.WriteString(base.User.String())
		b.WriteByte('@')
	}
	b.WriteString(base.Host)
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query)
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return b.String(), nil
}
