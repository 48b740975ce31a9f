package httpcache

import (
	"net/http"
	"strconv"
	"strings"
)

// Bounds on what ParseCacheControl reads, so a hostile field cannot cost
// more than a few microseconds.
const (
	// MaxControlBytes is how much of the combined Cache-Control field
	// values is parsed; the rest is ignored.
	MaxControlBytes = 4 << 10
	// MaxDirectives is how many directives are parsed; the rest are ignored.
	MaxDirectives = 64
	// MaxDelta is the largest delta-seconds value kept: RFC 9111 §1.2.2 says
	// a larger value is taken as 2^31.
	MaxDelta = 1 << 31
)

// Directives are the parsed Cache-Control directives of a request or a
// response (RFC 9111 §5.2). Delta-seconds fields hold -1 when the directive
// is absent. When a directive occurs twice the first occurrence counts
// (§4.2.1).
type Directives struct {
	NoCache         bool // §5.2.1.4 / §5.2.2.4 (the qualified form is treated as unqualified)
	NoStore         bool // §5.2.1.5 / §5.2.2.5
	NoTransform     bool // §5.2.1.6 / §5.2.2.6
	OnlyIfCached    bool // §5.2.1.7
	Public          bool // §5.2.2.9
	Private         bool // §5.2.2.7 (a shared cache must not store)
	MustRevalidate  bool // §5.2.2.2
	ProxyRevalidate bool // §5.2.2.8
	MustUnderstand  bool // §5.2.2.3
	Immutable       bool // RFC 8246

	MaxAge   int64 // §5.2.1.1 / §5.2.2.1, seconds; -1 absent
	SMaxAge  int64 // §5.2.2.10, seconds; -1 absent
	MinFresh int64 // §5.2.1.3, seconds; -1 absent
	// MaxStale is the max-stale value in seconds (§5.2.1.2); -1 when absent.
	// A max-stale without a value sets MaxStaleAny instead.
	MaxStale    int64
	MaxStaleAny bool

	// Invalid is set when a freshness directive (max-age, s-maxage) has a
	// value that is not a delta-seconds: §4.2.1 encourages treating such a
	// response as stale.
	Invalid bool
	// Truncated is set when the field went past MaxControlBytes or
	// MaxDirectives: a private or no-store beyond the bound was not read,
	// so a shared cache must not store the response (Storable).
	Truncated bool
}

// ParseCacheControl parses the Cache-Control field lines of h. It never
// fails: malformed directives are skipped (RFC 9111 §5.2: unknown
// directives are ignored), invalid freshness values set Invalid.
func ParseCacheControl(h http.Header) Directives {
	return ParseCacheControlValues(h.Values("Cache-Control"))
}

// ParseCacheControlValues parses a list of Cache-Control field values, as
// if joined by commas.
func ParseCacheControlValues(values []string) Directives {
	d := Directives{MaxAge: -1, SMaxAge: -1, MinFresh: -1, MaxStale: -1}
	budget := MaxControlBytes
	count := 0
	for _, v := range values {
		if budget <= 0 || count >= MaxDirectives {
			d.Truncated = d.Truncated || strings.Trim(v, " \t,") != ""
			continue
		}
		if len(v) > budget {
			d.Truncated = d.Truncated || strings.Trim(v[budget:], " \t,") != ""
			v = v[:budget]
		}
		budget -= len(v)
		for v != "" && count < MaxDirectives {
			var name, val string
			var hasVal bool
			name, val, hasVal, v = nextDirective(v)
			if name == "" {
				continue
			}
			count++
			d.apply(strings.ToLower(name), val, hasVal)
		}
		d.Truncated = d.Truncated || strings.Trim(v, " \t,") != ""
	}
	return d
}

// nextDirective splits the first directive off s: name, value (unquoted),
// whether a value was given, and the rest after the following comma.
func nextDirective(s string) (name, val string, hasVal bool, rest string) {
	s = trimOWS(s)
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	name = s[:i]
	s = trimOWS(s[i:])
	if strings.HasPrefix(s, "=") {
		hasVal = true
		s = trimOWS(s[1:])
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			j := 1
			for ; j < len(s); j++ {
				c := s[j]
				if c == '\\' && j+1 < len(s) {
					j++
					b.WriteByte(s[j])
					continue
				}
				if c == '"' {
					j++
					break
				}
				b.WriteByte(c)
			}
			val = b.String()
			s = s[j:]
		} else {
			j := 0
			for j < len(s) && isTokenChar(s[j]) {
				j++
			}
			val = s[:j]
			s = s[j:]
		}
	}
	// Skip anything up to the next comma: a malformed remainder of this
	// directive must not swallow the next one.
	if k := strings.IndexByte(s, ','); k >= 0 {
		rest = s[k+1:]
	} else {
		rest = ""
	}
	if i == 0 {
		return "", "", false, rest
	}
	return name, val, hasVal, rest
}

func (d *Directives) apply(name, val string, hasVal bool) {
	switch name {
	case "no-cache":
		d.NoCache = true
	case "no-store":
		d.NoStore = true
	case "no-transform":
		d.NoTransform = true
	case "only-if-cached":
		d.OnlyIfCached = true
	case "public":
		d.Public = true
	case "private":
		d.Private = true
	case "must-revalidate":
		d.MustRevalidate = true
	case "proxy-revalidate":
		d.ProxyRevalidate = true
	case "must-understand":
		d.MustUnderstand = true
	case "immutable":
		d.Immutable = true
	case "max-age":
		if d.MaxAge < 0 {
			d.MaxAge = d.delta(val, hasVal, true)
		}
	case "s-maxage":
		if d.SMaxAge < 0 {
			d.SMaxAge = d.delta(val, hasVal, true)
		}
	case "min-fresh":
		if d.MinFresh < 0 {
			d.MinFresh = d.delta(val, hasVal, false)
		}
	case "max-stale":
		if !hasVal {
			d.MaxStaleAny = true
		} else if d.MaxStale < 0 {
			d.MaxStale = d.delta(val, hasVal, false)
		}
	}
}

// delta parses a delta-seconds value (RFC 9111 §1.2.2). An invalid value
// gives -1 and, for freshness directives, marks the directives Invalid.
func (d *Directives) delta(val string, hasVal, freshness bool) int64 {
	n, ok := parseDelta(val)
	if !hasVal || !ok {
		if freshness {
			d.Invalid = true
		}
		return -1
	}
	return n
}

// parseDelta parses 1*DIGIT, capping at MaxDelta.
func parseDelta(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < MaxDelta {
			n = n*10 + int64(c-'0')
		}
	}
	if n > MaxDelta {
		n = MaxDelta
	}
	return n, true
}

// String renders the directives back as a Cache-Control value, in a fixed
// order (for logs and tests).
func (d Directives) String() string {
	var parts []string
	flag := func(on bool, name string) {
		if on {
			parts = append(parts, name)
		}
	}
	num := func(v int64, name string) {
		if v >= 0 {
			parts = append(parts, name+"="+strconv.FormatInt(v, 10))
		}
	}
	flag(d.NoCache, "no-cache")
	flag(d.NoStore, "no-store")
	flag(d.NoTransform, "no-transform")
	flag(d.OnlyIfCached, "only-if-cached")
	flag(d.Public, "public")
	flag(d.Private, "private")
	flag(d.MustRevalidate, "must-revalidate")
	flag(d.ProxyRevalidate, "proxy-revalidate")
	flag(d.MustUnderstand, "must-understand")
	flag(d.Immutable, "immutable")
	num(d.MaxAge, "max-age")
	num(d.SMaxAge, "s-maxage")
	num(d.MinFresh, "min-fresh")
	num(d.MaxStale, "max-stale")
	flag(d.MaxStaleAny, "max-stale")
	return strings.Join(parts, ", ")
}

func trimOWS(s string) string {
	return strings.TrimLeft(strings.TrimRight(s, " \t"), " \t")
}

// isTokenChar reports whether c is a tchar (RFC 9110 §5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
