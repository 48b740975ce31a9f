package urlnorm

import (
	"net/url"
	"strings"
)

// Resolver resolves the references of one page against one base with one
// set of Options: Resolve(ref) returns exactly what ResolveBoth(base, ref,
// o) returns, value for value and error for error. It is faster for the
// references pages are mostly made of (absolute paths, relative paths,
// "?query", absolute http(s) URLs, "//host/path"): those skip building
// and re-parsing the absolute text, and the base's authority (and up to
// four others) is normalized once rather than once per link. Anything
// unusual (white space, '\', a scheme other than http(s) or one without
// "//", an empty host, a length near the limit, userinfo) takes the
// general path, ResolveBoth itself.
//
// A Resolver is not safe for concurrent use (it caches authorities); it is
// cheap to make, one per page and base.
type Resolver struct {
	base *url.URL
	o    Options

	fast     bool   // the base allows the fast path
	scheme   string // base scheme, lower case
	rawAuth  string // base authority as ResolveBoth writes it
	basePath string // base path as ResolveBoth uses it, starting with '/'
	dir      string // basePath up to and including its last '/'
	auth     authority

	// cache holds the last authorities of absolute references met, with
	// next the slot to overwrite.
	cache [4]authority
	next  int
}

// authority is a normalized authority (no userinfo: the fast path leaves
// URLs with userinfo to ResolveBoth), with the raw text it came from.
type authority struct {
	scheme, raw string // lower-case scheme and authority as written
	host, port  string // as in parts
	// fold is true when raw is ASCII without '@' or '%': then every
	// authority equal to raw but for the case of letters normalizes the
	// same (normalizeHost lower-cases such a host before anything else
	// looks at it; ports are digits; netip reads hex in either case), so
	// "Site.test", "SITE.test" and "site.TEST" share one entry.
	fold bool
}

// foldable reports whether raw qualifies for authority.fold.
func foldable(raw string) bool {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c >= 0x80 || c == '@' || c == '%' {
			return false
		}
	}
	return true
}

// matches reports whether a is the normalized form of raw under scheme.
func (a *authority) matches(scheme, raw string, fold bool) bool {
	if a.host == "" || a.scheme != scheme || len(a.raw) != len(raw) {
		return false
	}
	if a.raw == raw {
		return true
	}
	return fold && a.fold && EqualFoldASCII(raw, a.raw)
}

// EqualFoldASCII is strings.EqualFold for ASCII letters only: host names,
// schemes and media types fold just A-Z (strings.EqualFold also folds
// "ſ" to "s" and "K" to "k"). Either side may be bytes, so that a parser
// compares its input in place.
func EqualFoldASCII[A, B ~string | ~[]byte](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// NewResolver returns a Resolver for references found in a page whose URL
// (or <base href>) is base, normalized with o.
func NewResolver(base *url.URL, o Options) *Resolver {
	r := &Resolver{}
	r.Reset(base, o)
	return r
}

// Reset makes r resolve against base with o, as NewResolver(base, o)
// would, reusing r's memory.
func (r *Resolver) Reset(base *url.URL, o Options) {
	*r = Resolver{base: base, o: o}
	if base == nil || o.MaxLength < 0 {
		return
	}
	r.scheme = strings.ToLower(base.Scheme)
	if r.scheme != "http" && r.scheme != "https" || base.Host == "" || base.User != nil || base.Opaque != "" {
		return
	}
	// The text ResolveBoth would build is scheme "://" host path: the
	// fast path takes its pieces apart without writing it, which is only
	// the same when neither clean nor the splitting of normalize would
	// treat the base's parts differently: no white space, no '\', no
	// '/', '?' or '#' in the authority, none of '?' or '#' in the path.
	r.rawAuth = base.Host
	if !plain(r.rawAuth) || strings.ContainsAny(r.rawAuth, "/?#") {
		return
	}
	r.basePath = base.EscapedPath()
	if !strings.HasPrefix(r.basePath, "/") {
		r.basePath = "/" + r.basePath
	}
	if !plain(r.basePath) || strings.ContainsAny(r.basePath, "?#") {
		return
	}
	r.dir = r.basePath[:strings.LastIndexByte(r.basePath, '/')+1]
	a, ok := r.normalizeAuthority(r.scheme, r.rawAuth, r.rawAuth)
	if !ok {
		return
	}
	r.auth = a
	r.fast = true
}

// Base returns the base URL references are resolved against.
func (r *Resolver) Base() *url.URL { return r.base }

// Resolve is ResolveBoth(r.Base(), ref, o).
func (r *Resolver) Resolve(ref string) (*url.URL, string, error) {
	if p, ok := r.resolveFast(ref); ok {
		return p.url(), p.String(), nil
	}
	return ResolveBoth(r.base, ref, r.o)
}

// plain reports whether s holds no byte clean would remove or change: no
// control character or space, no '\'.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '\\' {
			return false
		}
	}
	return true
}

// resolveFast is the fast path: the parts ResolveBoth would produce, and
// true, or false when the general path must decide. Each step mirrors
// resolveString then normalize on the text resolveString builds; the
// comments say which.
func (r *Resolver) resolveFast(ref string) (parts, bool) {
	o := &r.o
	max := o.maxLength()
	// resolveString: the reference's own limit; clean: a reference that
	// clean would change goes the general way.
	if !r.fast || ref == "" || len(ref) > max || !plain(ref) {
		return parts{}, false
	}
	var (
		a       authority
		rest    string // path, query and fragment, not yet split
		rawLen  int    // length of the text normalize would parse
		relPath bool   // rest's path is relative to r.dir
	)
	scheme, after, hasScheme := splitScheme(ref)
	switch {
	case hasScheme || strings.HasPrefix(ref, "//"):
		// Absolute URL or network-path reference: "scheme://auth..." or
		// "//auth...". Other spellings ("http:x", "http:///x", an
		// authority-less scheme) follow WHATWG rules: general path.
		if !hasScheme {
			scheme, after = r.scheme, ref
			rawLen = len(r.scheme) + 1 + len(ref)
		} else {
			scheme = strings.ToLower(scheme)
			if scheme != "http" && scheme != "https" {
				return parts{}, false
			}
			rawLen = len(ref) // same scheme or not, its length is kept
		}
		if len(after) < 3 || after[0] != '/' || after[1] != '/' || after[2] == '/' {
			return parts{}, false
		}
		after = after[2:]
		end := strings.IndexAny(after, "/?#")
		if end < 0 {
			end = len(after)
		}
		var ok bool
		if a, ok = r.lookupAuthority(scheme, after[:end], ref); !ok {
			return parts{}, false
		}
		rest = after[end:]
	default:
		a, rest, relPath = r.auth, ref, true
	}
	path, frag, hasFrag := strings.Cut(rest, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	if relPath {
		// resolveString's RFC 3986 §5.2.2 cases.
		switch {
		case path == "":
			if !hasQuery {
				return parts{}, false // the base itself, with its query
			}
			path = r.basePath
		case path[0] == '/':
		default:
			path = r.dir + path
		}
		// The length of scheme "://" host path ["?" query] ["#" frag].
		rawLen = len(r.scheme) + 3 + len(r.rawAuth) + len(path)
		if hasQuery {
			rawLen += 1 + len(query)
		}
		if hasFrag {
			rawLen += 1 + len(frag)
		}
	}
	if rawLen > max {
		return parts{}, false
	}
	p := parts{scheme: a.scheme, host: a.host, port: a.port}
	if p.finish(path, query, frag, hasQuery, hasFrag, o) != nil {
		return parts{}, false
	}
	return p, true
}

// lookupAuthority returns the normalized form of authority raw under
// scheme, from the base, the cache, or by normalizing it.
func (r *Resolver) lookupAuthority(scheme, raw, ref string) (authority, bool) {
	fold := foldable(raw)
	if r.auth.matches(scheme, raw, fold) {
		return r.auth, true
	}
	for i := range r.cache {
		if r.cache[i].matches(scheme, raw, fold) {
			return r.cache[i], true
		}
	}
	a, ok := r.normalizeAuthority(scheme, raw, ref)
	if ok {
		r.cache[r.next] = a
		r.next = (r.next + 1) % len(r.cache)
	}
	return a, ok
}

// normalizeAuthority runs normalize's authority step on raw; errors and
// userinfo are left to the general path. ref is the text errors would
// quote (they are dropped: the general path makes its own).
func (r *Resolver) normalizeAuthority(scheme, raw, ref string) (authority, bool) {
	if raw == "" {
		return authority{}, false
	}
	p := parts{scheme: scheme}
	if err := p.setAuthority(ref, raw, &r.o); err != nil || p.user != nil {
		return authority{}, false
	}
	return authority{scheme: scheme, raw: raw, host: p.host, port: p.port, fold: foldable(raw)}, true
}
