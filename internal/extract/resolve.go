package extract

import (
	"bytes"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// newResolver makes res the resolver resolveRef uses for references found
// under base: urlnorm.Resolve's rules (RFC 3986 §5.2 resolution with the WHATWG
// leniencies browsers apply: spaces and control characters trimmed, tab
// and newline removed, '\' as '/', stray bytes percent-encoded; then RFC
// 3986 §6 normalization: case, dot segments, default port; fragment
// removal) plus the heuristics norm turns on (a crawler passes its own,
// so links are normalized once: the Viuva Negra report §3.4 rules 8-9, session ids).
// norm.MaxLength is set here, from maxLen.
func newResolver(res *urlnorm.Resolver, base *url.URL, maxLen int, norm urlnorm.Options) {
	norm.MaxLength = 4 * maxLen
	res.Reset(base, norm)
}

// resolveRef makes ref absolute with res (see newResolver); abs is u's
// text. It returns nil and a problem kind when the reference is broken,
// and nil and "" when it is simply not a crawlable link (empty,
// fragment-only, or a scheme other than http/https: mailto:,
// javascript:, data:, tel:, …).
func resolveRef(res *urlnorm.Resolver, ref []byte, maxLen int) (u *url.URL, abs, kind, example string) {
	ref = trimC0(ref)
	if len(ref) == 0 || ref[0] == '#' {
		return nil, "", "", ""
	}
	if len(ref) > 4*maxLen {
		// A long data: URL (an inlined image or font) is no link, not a
		// problem: its scheme, which its first bytes hold, says so.
		if sch, ok := scheme(string(ref[:32])); ok && sch != "http" && sch != "https" {
			return nil, "", "", ""
		}
		// Not worth resolving: even dot segments cannot bring it under.
		return nil, "", ProblemURLTooLong, string(ref[:min(len(ref), 200)])
	}
	r := string(ref)
	// Cheap early exit for the common non-crawlable schemes, before
	// urlnorm builds an error for each.
	if sch, ok := scheme(r); ok && sch != "http" && sch != "https" {
		return nil, "", "", ""
	}
	u, abs, err := res.Resolve(r)
	switch {
	case errors.Is(err, urlnorm.ErrScheme):
		return nil, "", "", ""
	case err != nil || !httpURL(u):
		return nil, "", ProblemBadURL, r
	}
	if len(abs) > maxLen {
		return nil, "", ProblemURLTooLong, r
	}
	return u, abs, "", ""
}

// trimC0 removes leading and trailing C0 controls and spaces, as the
// WHATWG URL parser does first: "\x01#top" is a fragment of the page
// itself, not a link to it.
func trimC0(ref []byte) []byte {
	for len(ref) > 0 && ref[0] <= ' ' {
		ref = ref[1:]
	}
	for len(ref) > 0 && ref[len(ref)-1] <= ' ' {
		ref = ref[:len(ref)-1]
	}
	return ref
}

// queryEncoding returns the encoding a page's URL queries are written in
// (WHATWG URL: the document's encoding, UTF-8 for UTF-8 and UTF-16
// documents), nil for UTF-8.
func queryEncoding(name string) encoding.Encoding {
	if name == "" || name == "utf-8" || strings.HasPrefix(name, "utf-16") {
		return nil
	}
	enc, canonical := charset.Lookup(name)
	if enc == nil || canonical == "utf-8" || canonical == "replacement" || strings.HasPrefix(canonical, "utf-16") {
		return nil
	}
	return enc
}

// encodeQuery percent-encodes the non-ASCII characters of ref's query in
// enc, the page's encoding, as a browser does for a link on a page in a
// legacy encoding (WHATWG URL, query state): "?q=日本" on a Shift_JIS page
// asks for "?q=%93%FA%96%7B", which is what the site's own scripts expect.
// A character enc cannot represent becomes "&#N;" first, as in browsers.
// ref is returned as is when its query is ASCII (the common case) or it
// has none.
func encodeQuery(ref []byte, enc encoding.Encoding) []byte {
	q := bytes.IndexByte(ref, '?')
	if q < 0 {
		return ref
	}
	end := len(ref)
	if f := bytes.IndexByte(ref[q:], '#'); f >= 0 {
		end = q + f
	}
	ascii := true
	for _, c := range ref[q:end] {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return ref
	}
	e := enc.NewEncoder()
	out := make([]byte, 0, len(ref)+3*(end-q))
	out = append(out, ref[:q]...)
	for _, r := range string(ref[q:end]) {
		if r < 0x80 {
			out = append(out, byte(r))
			continue
		}
		b, err := e.Bytes([]byte(string(r)))
		if err != nil || r == utf8.RuneError {
			b = []byte("&#" + strconv.Itoa(int(r)) + ";")
		}
		for _, c := range b {
			out = append(out, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
	}
	return append(out, ref[end:]...)
}

// scheme returns the lower-cased scheme of an absolute reference (RFC 3986
// §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"), and false for a
// relative one.
func scheme(r string) (string, bool) {
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(r[:i]), true
		default:
			return "", false
		}
	}
	return "", false
}

// httpURL reports whether u is an absolute http or https URL with a host.
func httpURL(u *url.URL) bool {
	if u == nil || u.Host == "" || u.Opaque != "" {
		return false
	}
	s := strings.ToLower(u.Scheme)
	return s == "http" || s == "https"
}

// Redirect turns the Location of a 3xx response into a link with hop R: a
// crawler that does not follow redirects queues the target like any other
// outlink (the Viuva Negra report §3.4: following them automatically raised duplicates by
// 26%). base is the URL that answered with the redirect.
func Redirect(base *url.URL, location string) (Link, error) {
	if !httpURL(base) {
		return Link{}, ErrBase
	}
	var res urlnorm.Resolver
	newResolver(&res, base, DefaultMaxURLLength, urlnorm.Options{})
	u, _, kind, _ := resolveRef(&res, []byte(location), DefaultMaxURLLength)
	if u == nil {
		if kind == "" {
			kind = "not an http(s) URL"
		}
		return Link{}, &RedirectError{Location: clip(location), Reason: kind}
	}
	return Link{URL: u, Abs: u.String(), Tag: "http", Attr: "location", Hop: HopRedirect}, nil
}

// RedirectError says why a Location could not become a link.
type RedirectError struct {
	Location string // as received, at most 200 bytes
	Reason   string // a Problem kind or "not an http(s) URL"
}

func (e *RedirectError) Error() string {
	return "extract: redirect location " + quote(e.Location) + ": " + e.Reason
}

func quote(s string) string { return "\"" + strings.ToValidUTF8(s, "\uFFFD") + "\"" }
