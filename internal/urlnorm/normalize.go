package urlnorm

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrMalformed is wrapped by every error about a URL that cannot be
// normalized: too long, no host, a bad port, a host name that is not a
// valid (internationalized) domain name or IP address, no scheme. The Viuva Negra report
// §3.4 "Discarding malformed URLs".
var ErrMalformed = errors.New("urlnorm: malformed URL")

// ErrScheme is wrapped by the error for a URL whose scheme is not http or
// https (mailto:, javascript:, ftp:, data:, ...): not crawlable.
var ErrScheme = errors.New("urlnorm: scheme not crawlable")

func malformed(raw, why string) error {
	return fmt.Errorf("%w %q: %s", ErrMalformed, clip(raw), why)
}

// clip shortens raw for error messages, which may end up in logs.
func clip(raw string) string {
	const n = 120
	if len(raw) <= n {
		return raw
	}
	return raw[:n] + "..."
}

// Normalize parses raw, an absolute http or https URL, and returns its
// normalized form (see the package comment and Options). u.String() is the
// normalized text, equal to what NormalizeString returns.
func Normalize(raw string, o Options) (*url.URL, error) {
	p, err := normalize(raw, &o)
	if err != nil {
		return nil, err
	}
	return p.url(), nil
}

// NormalizeString is Normalize returning the URL's text.
func NormalizeString(raw string, o Options) (string, error) {
	p, err := normalize(raw, &o)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// parts are the normalized components of a URL, each in its final encoded
// form.
type parts struct {
	scheme   string // "http" or "https"
	userinfo string // encoded, without '@'; "" when absent
	user     *url.Userinfo
	host     string // ASCII, lower case; IPv6 in brackets
	port     string // "" when absent or default
	path     string // encoded, starts with '/'
	query    string // encoded, without '?'
	hasQuery bool
	fragment string // encoded, without '#'
	hasFrag  bool
}

// length is len(p.String()).
func (p *parts) length() int {
	n := len(p.scheme) + 3 + len(p.host) + len(p.path)
	if p.user != nil {
		n += len(p.userinfo) + 1
	}
	if p.port != "" {
		n += len(p.port) + 1
	}
	if p.hasQuery {
		n += len(p.query) + 1
	}
	if p.hasFrag {
		n += len(p.fragment) + 1
	}
	return n
}

func (p *parts) String() string {
	var b strings.Builder
	b.Grow(p.length())
	b.WriteString(p.scheme)
	b.WriteString("://")
	if p.user != nil {
		b.WriteString(p.userinfo)
		b.WriteByte('@')
	}
	b.WriteString(p.host)
	if p.port != "" {
		b.WriteByte(':')
		b.WriteString(p.port)
	}
	b.WriteString(p.path)
	if p.hasQuery {
		b.WriteByte('?')
		b.WriteString(p.query)
	}
	if p.hasFrag {
		b.WriteByte('#')
		b.WriteString(p.fragment)
	}
	return b.String()
}

// url builds the net/url form. The fields are set so that String()
// reproduces p.String() byte for byte (checked by FuzzNormalize).
func (p *parts) url() *url.URL {
	u := &url.URL{Scheme: p.scheme, User: p.user, Host: p.host, RawQuery: p.query}
	if p.port != "" {
		u.Host += ":" + p.port
	}
	u.Path = p.path
	if strings.ContainsAny(p.path, "%!'()*") {
		// Go's own path escaping differs from ours for these bytes, so
		// keep our encoding in RawPath; unescaping cannot fail because
		// every '%' we emit starts a valid triplet.
		u.Path, _ = url.PathUnescape(p.path)
		u.RawPath = p.path
	}
	u.ForceQuery = p.hasQuery && p.query == ""
	if p.hasFrag {
		u.Fragment, _ = url.PathUnescape(p.fragment)
		u.RawFragment = p.fragment
	}
	return u
}

// normalize is the whole pipeline. Each step works on already encoded
// text, so that decoding never turns a "%2F" into a path separator.
func normalize(raw string, o *Options) (*parts, error) {
	if o.MaxLength < 0 {
		return nil, fmt.Errorf("urlnorm: MaxLength %d: must not be negative", o.MaxLength)
	}
	if len(raw) > o.maxLength() {
		return nil, fmt.Errorf("%w: %d bytes, longer than the limit of %d", ErrMalformed, len(raw), o.maxLength())
	}
	s := clean(raw)
	scheme, rest, ok := splitScheme(s)
	if !ok {
		return nil, malformed(raw, "no scheme")
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("%w: %q in %q", ErrScheme, scheme, clip(raw))
	}
	// WHATWG "special authority ignore slashes state": for http(s) any
	// run of '/' (backslashes were turned into '/' by clean) starts the
	// authority, so "http:example.com" and "http:///example.com" name
	// host example.com as in every browser.
	rest = strings.TrimLeft(rest, "/")
	p := &parts{scheme: scheme}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if err := p.setAuthority(raw, rest[:end], o); err != nil {
		return nil, err
	}
	rest = rest[end:]

	path, frag, hasFrag := strings.Cut(rest, "#")
	path, query, hasQuery := strings.Cut(path, "?")
	if err := p.finish(path, query, frag, hasQuery, hasFrag, o); err != nil {
		return nil, err
	}
	return p, nil
}

// finish sets the path, query and fragment of p from their raw (not yet
// normalized) text and applies the rest of the pipeline: encoding, dot
// segments, heuristics, the length limit. normalize and Resolver's fast
// path share it, so that both give the same result by construction.
func (p *parts) finish(path, query, frag string, hasQuery, hasFrag bool, o *Options) error {
	p.hasQuery, p.hasFrag = hasQuery, hasFrag
	p.path = encodePath(path, o.LowercasePath)
	if p.hasQuery {
		p.query = encodeQuery(query, o.LowercasePath)
	}
	// An empty fragment is dropped even when kept: it names the whole
	// document, and net/url cannot represent a bare '#'.
	if p.hasFrag && o.KeepFragment && frag != "" {
		p.fragment = encodeFragment(frag)
	} else {
		p.hasFrag = false
	}
	p.path = removeDotSegments(p.path)
	if p.path == "" {
		p.path = "/" // the Viuva Negra report §3.4 rule 6; RFC 3986 §6.2.3
	}
	applyHeuristics(p, o)
	// Percent-encoding can triple the length; the limit holds for the
	// result too, so that a normalized URL always normalizes again.
	if n := p.length(); n > o.maxLength() {
		return fmt.Errorf("%w: %d bytes once encoded, longer than the limit of %d", ErrMalformed, n, o.maxLength())
	}
	return nil
}

// clean removes what browsers remove before parsing (WHATWG URL standard,
// basic URL parser): leading and trailing C0 controls and spaces, and every
// tab, LF and CR; and turns '\' into '/' before the query, as browsers do
// for http(s). It allocates only when something changes.
func clean(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	end := strings.IndexAny(s, "?#")
	if end < 0 {
		end = len(s)
	}
	if strings.IndexByte(s[:end], '\\') >= 0 {
		s = strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
	}
	return s
}

// splitScheme splits "scheme:rest" (RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT
// / "+" / "-" / "." )).
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return "", "", false
			}
		case c == ':':
			if i == 0 {
				return "", "", false
			}
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// setAuthority parses "userinfo@host:port".
func (p *parts) setAuthority(raw, auth string, o *Options) error {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		// The last '@' ends the userinfo, as in browsers: an '@' in a
		// password is often written unencoded.
		// An empty userinfo ("http://@h/") says nothing; drop it.
		if ui := auth[:i]; !o.RemoveUserinfo && ui != "" {
			name, pass, hasPass := strings.Cut(ui, ":")
			name, pass = lenientUnescape(name), lenientUnescape(pass)
			// WHATWG URL serializing: an empty password is not
			// written ("u:@h" is "u@h") and an empty user with it
			// leaves no userinfo (":@h" is "h"), so no empty
			// credentials are sent.
			switch {
			case hasPass && pass != "":
				p.user = url.UserPassword(name, pass)
			case name != "":
				p.user = url.User(name)
			}
			if p.user != nil {
				p.userinfo = p.user.String()
			}
		}
		auth = auth[i+1:]
	}
	hostport := auth
	var port string
	if strings.HasPrefix(hostport, "[") {
		i := strings.IndexByte(hostport, ']')
		if i < 0 {
			return malformed(raw, "unclosed '[' in host")
		}
		after := hostport[i+1:]
		if after != "" {
			if after[0] != ':' {
				return malformed(raw, "junk after IPv6 address")
			}
			port = after[1:]
		}
		hostport = hostport[:i+1]
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		hostport, port = hostport[:i], hostport[i+1:]
	}
	host, err := normalizeHost(hostport)
	if err != nil {
		return malformed(raw, err.Error())
	}
	switch o.WWW {
	case WWWRemove:
		host = removeWWW(host)
	case WWWAdd:
		host = addWWW(host)
	}
	p.host = host
	if port != "" {
		n, err := parsePort(port)
		if err != nil {
			return malformed(raw, err.Error())
		}
		if !(p.scheme == "http" && n == 80 || p.scheme == "https" && n == 443) {
			p.port = strconv.Itoa(n)
		}
	}
	return nil
}

func parsePort(s string) (int, error) {
	// Leading zeros do not count (WHATWG URL, port state: ":0080" is
	// port 80, so the default port, dropped).
	if t := strings.TrimLeft(s, "0"); t != "" || s == "" {
		s = t
	} else {
		s = "0"
	}
	if len(s) > 16 {
		return 0, fmt.Errorf("port %q too long", clip(s))
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, fmt.Errorf("port %q out of range", s)
		}
	}
	return n, nil
}

// Byte classes of RFC 3986 §2.
const (
	clsUnreserved = 1 << iota // ALPHA DIGIT - . _ ~
	clsPath                   // may stay raw in a path: pchar and '/'
	clsQuery                  // may stay raw in a query: pchar '/' '?' but '\''
	clsFragment               // may stay raw in a fragment: pchar '/' '?'
)

var class [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9',
			b == '-', b == '.', b == '_', b == '~':
			class[c] = clsUnreserved | clsPath | clsQuery | clsFragment
		case b == '\'':
			// WHATWG URL, special-query percent-encode set: browsers
			// send "?q=it's" as "?q=it%27s" for http(s), so the
			// server sees (and a link written either way names)
			// "%27".
			class[c] = clsPath | clsFragment
		case strings.IndexByte("!$&()*+,;=:@/", b) >= 0: // sub-delims, ':', '@', '/'
			class[c] = clsPath | clsQuery | clsFragment
		case b == '?':
			class[c] = clsQuery | clsFragment
		}
	}
}

const upperHex = "0123456789ABCDEF"

// IRILength returns the length of a URL in characters of the IRI it
// encodes: a percent-encoded UTF-8 sequence is one character
// (/wiki/%D0%9C is /wiki/М, seven characters, not twelve), as is any
// other triplet, and a byte that is not UTF-8 counts one. A limit on URL
// length then weighs a Cyrillic or Chinese path as its readers see it.
func IRILength(raw string) int {
	n := 0
	var seq [utf8.UTFMax]byte // the current run of decoded bytes
	k := 0
	flush := func() {
		n += utf8.RuneCount(seq[:k])
		k = 0
	}
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if b == '%' && i+2 < len(raw) {
			hi, ok1 := unhex(raw[i+1])
			lo, ok2 := unhex(raw[i+2])
			if ok1 && ok2 {
				b = hi<<4 | lo
				i += 2
			}
		}
		if k > 0 && (b&0xC0 != 0x80 || k == len(seq)) {
			flush() // not a continuation byte, or a full sequence
		}
		seq[k] = b
		k++
	}
	flush()
	return n
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// encodePath and encodeQuery apply RFC 3986 §6.2.2.1-2: triplets upper
// case, unreserved octets decoded; and encode every byte that may not
// appear raw, including a '%' that does not start a valid triplet (so
// "100%" becomes "100%25", as browsers send it).
func encodePath(s string, lower bool) string  { return encode(s, clsPath, lower) }
func encodeQuery(s string, lower bool) string { return encode(s, clsQuery, lower) }
func encodeFragment(s string) string          { return encode(s, clsFragment, false) }

func encode(s string, allowed uint8, lower bool) string {
	// Fast path: nothing to change.
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || class[c]&allowed == 0 || lower && 'A' <= c && c <= 'Z' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					v := hi<<4 | lo
					i += 2
					if class[v]&clsUnreserved != 0 {
						if lower && 'A' <= v && v <= 'Z' {
							v += 'a' - 'A'
						}
						b.WriteByte(v)
					} else {
						b.WriteByte('%')
						b.WriteByte(upperHex[v>>4])
						b.WriteByte(upperHex[v&15])
					}
					continue
				}
			}
			b.WriteString("%25")
			continue
		}
		if class[c]&allowed != 0 {
			if lower && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}

// lenientUnescape decodes valid triplets and keeps anything else as is.
func lenientUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeDotSegments is RFC 3986 §5.2.4 on an absolute path. Encoded dots
// were decoded before (they are unreserved), so "%2E%2E" counts too. It
// writes the output in one buffer, truncated on "..", with one allocation
// for paths up to 256 bytes (the crawler resolves every "../" link here);
// TestRemoveDotSegmentsMatchesSplit holds it to the split-and-join form.
func removeDotSegments(path string) string {
	if !hasDotSegment(path) {
		return path
	}
	var (
		bufArr   [256]byte
		startArr [32]int
	)
	buf := append(bufArr[:0], '/')
	starts := startArr[:0] // where each output segment's text begins (after its '/')
	rest := path[1:]       // path starts with '/'
	for {
		seg, more := rest, false
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest, more = rest[:i], rest[i+1:], true
		}
		// The segments kept are joined by '/', and a "." or ".." last
		// segment leaves an empty one (the path ends in '/').
		switch seg {
		case ".", "..":
			if seg == ".." && len(starts) > 0 {
				buf = buf[:max(starts[len(starts)-1]-1, 1)]
				starts = starts[:len(starts)-1]
			}
			if !more {
				if len(starts) > 0 {
					buf = append(buf, '/')
				}
				starts = append(starts, len(buf))
			}
		default:
			if len(starts) > 0 {
				buf = append(buf, '/')
			}
			starts = append(starts, len(buf))
			buf = append(buf, seg...)
		}
		if !more {
			return string(buf)
		}
	}
}

// hasDotSegment reports whether path has a "." or ".." segment.
func hasDotSegment(path string) bool {
	for i := 0; i < len(path); i++ {
		if path[i] != '/' || i+1 >= len(path) || path[i+1] != '.' {
			continue
		}
		j := i + 2
		if j < len(path) && path[j] == '.' {
			j++
		}
		if j == len(path) || path[j] == '/' {
			return true
		}
	}
	return false
}
