package httpcache

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy is the part of Options the pure functions need. The zero value is
// RFC 9111 plus the thesis override (the polite-proxy thesis §4.6), with heuristic
// freshness only from Last-Modified.
type Policy struct {
	// DisableOverride turns off the thesis override, which is on by
	// default: a response marked no-cache or no-store is stored anyway and
	// treated as fresh for OverrideLifetime (the polite-proxy thesis §4.6). Request
	// directives are honoured either way.
	DisableOverride bool
	// OverrideLifetime is the freshness given to overridden responses;
	// 0 means 24h.
	OverrideLifetime time.Duration
	// HeuristicFraction of (Date - Last-Modified) is the heuristic freshness
	// of a response without explicit expiration (RFC 9111 §4.2.2 suggests
	// 10 %); 0 means 0.1, negative disables the Last-Modified heuristic.
	HeuristicFraction float64
	// HeuristicMax caps heuristic freshness; 0 means 24h.
	HeuristicMax time.Duration
	// HeuristicDefault is the freshness of a heuristically cacheable
	// response that has neither explicit expiration nor Last-Modified; 0
	// (the default) means such a response is stored but must be revalidated
	// (or refetched) before reuse.
	HeuristicDefault time.Duration
	// StoreSetCookie allows storing responses that carry Set-Cookie. Off by
	// default: the proxy is shared between users, and a cookie set for one
	// must not be replayed to another (RFC 9111 §7.3 warns of this).
	StoreSetCookie bool
}

func (p Policy) overrideLifetime() time.Duration {
	if p.OverrideLifetime > 0 {
		return p.OverrideLifetime
	}
	return 24 * time.Hour
}

func (p Policy) heuristicMax() time.Duration {
	if p.HeuristicMax > 0 {
		return p.HeuristicMax
	}
	return 24 * time.Hour
}

// heuristicStatus reports whether status is heuristically cacheable
// (RFC 9110 §15.1). 206 is left out: this cache does not combine ranges.
func heuristicStatus(status int) bool {
	switch status {
	case 200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501:
		return true
	}
	return false
}

// understoodStatus is the set of final statuses the cache knows how to
// store (RFC 9111 §3: "the response status code is final" and understood).
func understoodStatus(status int) bool {
	return heuristicStatus(status) || status == 302 || status == 303 || status == 307 ||
		status == 400 || status == 403 || status == 500 || status == 502 || status == 503 || status == 504
}

// Storable reports whether a shared cache may store resp, the response to a
// request with method and header reqHeader (RFC 9111 §3), and if not, why.
// reqCC and respCC are the parsed Cache-Control fields.
func Storable(method string, reqHeader http.Header, reqCC Directives, status int, respHeader http.Header, respCC Directives, p Policy) (bool, string) {
	respCC = respCC.forStatus(status)
	switch {
	case method != http.MethodGet:
		return false, "method " + method + " is not cached"
	case reqHeader.Get("Range") != "":
		return false, "range request"
	case !understoodStatus(status):
		return false, "status " + strconv.Itoa(status) + " is not cached"
	case reqCC.NoStore:
		return false, "request no-store" // §5.2.1.5 binds even with the override
	case respCC.Private:
		return false, "response private" // §5.2.2.7: shared caches must not store
	case respCC.Truncated:
		return false, "response Cache-Control too long to read whole" // a private past the bound
	case respCC.NoStore && p.DisableOverride:
		return false, "response no-store"
	case hasVaryStar(respHeader):
		return false, "Vary: *" // §4.1: never matches
	case reqHeader.Get("Authorization") != "" && !respCC.Public && !respCC.MustRevalidate && respCC.SMaxAge < 0:
		return false, "request carries Authorization" // §3.5
	case !p.StoreSetCookie && len(respHeader.Values("Set-Cookie")) > 0:
		return false, "response sets a cookie"
	}
	overridden := Overridden(respCC, p)
	if overridden {
		// The override must not carry one user's page to another
		// (override.go): a response that needs it but may not have it is
		// not stored.
		if why := OverrideRefusal(reqHeader, respHeader, respCC); why != "" {
			return false, "no-cache/no-store not overridden: " + why
		}
	}
	// §3: explicit expiration, a heuristically cacheable status, public,
	// or (with the override) a no-cache / no-store response.
	explicit := respCC.MaxAge >= 0 || respCC.SMaxAge >= 0 || respHeader.Get("Expires") != ""
	if explicit || heuristicStatus(status) || respCC.Public || overridden {
		return true, ""
	}
	return false, "no explicit expiration and status " + strconv.Itoa(status) + " is not heuristically cacheable"
}

// forStatus is d as it applies to a response with status: a cache that
// understands the status ignores no-store when must-understand is present
// (RFC 9111 §5.2.2.3: the origin sends "no-store, must-understand" so that
// caches that do not know the status code never store the response).
// Storable refuses statuses it does not understand.
func (d Directives) forStatus(status int) Directives {
	if d.MustUnderstand && d.NoStore && understoodStatus(status) {
		d.NoStore = false
	}
	return d
}

func hasVaryStar(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(f) == "*" {
				return true
			}
		}
	}
	return false
}

// Overridden reports whether the thesis override applies to a response with
// directives cc under p.
func Overridden(cc Directives, p Policy) bool {
	return !p.DisableOverride && (cc.NoCache || cc.NoStore)
}

// Lifetime returns the freshness lifetime of a stored response (RFC 9111
// §4.2.1, as a shared cache): s-maxage, else max-age, else Expires - Date,
// else a heuristic (§4.2.2). responseTime stands in for a missing Date.
// Invalid freshness information gives 0 (stale).
func Lifetime(status int, h http.Header, cc Directives, responseTime time.Time, p Policy) time.Duration {
	cc = cc.forStatus(status)
	if Overridden(cc, p) {
		return p.overrideLifetime()
	}
	if cc.Invalid {
		return 0
	}
	if cc.SMaxAge >= 0 {
		return time.Duration(cc.SMaxAge) * time.Second
	}
	if cc.MaxAge >= 0 {
		return time.Duration(cc.MaxAge) * time.Second
	}
	date := headerTime(h, "Date", responseTime)
	if exp := h.Values("Expires"); len(exp) > 0 {
		// §5.3: an invalid date, especially "0", is in the past; two
		// Expires lines are treated as stale too (§4.2.1).
		t, ok := ParseHTTPDate(exp[0])
		if !ok || len(exp) > 1 {
			return 0
		}
		if d := t.Sub(date); d > 0 {
			return d
		}
		return 0
	}
	if !heuristicStatus(status) && !cc.Public {
		return 0
	}
	if lm := h.Get("Last-Modified"); lm != "" && p.HeuristicFraction >= 0 {
		if t, ok := ParseHTTPDate(lm); ok && t.Before(date) {
			frac := p.HeuristicFraction
			if frac == 0 {
				frac = 0.1
			}
			d := time.Duration(float64(date.Sub(t)) * frac)
			return min(d, p.heuristicMax())
		}
	}
	return p.HeuristicDefault
}

// InitialAge is the corrected initial age of a response (RFC 9111 §4.2.3),
// given when the request was sent and the response received.
func InitialAge(h http.Header, requestTime, responseTime time.Time) time.Duration {
	date := headerTime(h, "Date", responseTime)
	apparent := max(0, responseTime.Sub(date))
	var ageValue time.Duration
	if n, ok := ageField(h); ok {
		ageValue = time.Duration(n) * time.Second
	}
	delay := max(0, responseTime.Sub(requestTime))
	return max(apparent, ageValue+delay)
}

// ageField is the Age of a response in seconds (RFC 9111 §5.1): the first
// value of the first field line. Age is a single delta-seconds, but an
// "Age: 7200, 0" (two values joined by a proxy on the way) is read as
// 7200, not ignored: ignoring it made a response two hours old fresh.
// Invalid values (negative, fractional, not a number) are ignored.
func ageField(h http.Header) (int64, bool) {
	v, _, _ := strings.Cut(h.Get("Age"), ",")
	return parseDelta(strings.TrimSpace(v))
}

func headerTime(h http.Header, name string, def time.Time) time.Time {
	if t, ok := ParseHTTPDate(h.Get(name)); ok {
		return t
	}
	return def
}

// parseIMFFixdate parses the preferred HTTP date form, IMF-fixdate (RFC 9110
// §5.6.7: "Sun, 06 Nov 1994 08:49:37 GMT"), which nearly every server sends,
// without time.Parse's layout interpretation (that was a visible share of a
// cache store). Anything else, or anything odd, gives false and is left to
// the rest of ParseHTTPDate; what it accepts, http.ParseTime accepts too.
func parseIMFFixdate(v string) (time.Time, bool) {
	if len(v) != 29 || v[3] != ',' || v[4] != ' ' || v[7] != ' ' || v[11] != ' ' || v[16] != ' ' ||
		v[19] != ':' || v[22] != ':' || v[25:] != " GMT" {
		return time.Time{}, false
	}
	switch v[:3] {
	case "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
	default:
		return time.Time{}, false
	}
	month := time.Month(0)
	for i, m := range [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"} {
		if v[8:11] == m {
			month = time.Month(i + 1)
			break
		}
	}
	day, ok1 := digits(v[5:7])
	year, ok2 := digits(v[12:16])
	hour, ok3 := digits(v[17:19])
	minute, ok4 := digits(v[20:22])
	sec, ok5 := digits(v[23:25])
	if month == 0 || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // 31 Apr and the like: time.Parse refuses them
		return time.Time{}, false
	}
	return t, true
}

// digits parses a fixed-width run of ASCII digits.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Action is what to do with a request given what is stored.
type Action int

const (
	// Miss: nothing usable is stored; forward the request.
	Miss Action = iota
	// Fresh: serve the stored response without contacting the origin.
	Fresh
	// Stale: the stored response may be used only after a successful
	// validation (a conditional request, which goes through the gate).
	Stale
	// GatewayTimeout: the client sent only-if-cached and nothing usable
	// without the origin is stored; answer 504 (RFC 9111 §5.2.1.7).
	GatewayTimeout
)

func (a Action) String() string {
	switch a {
	case Miss:
		return "miss"
	case Fresh:
		return "fresh"
	case Stale:
		return "stale"
	case GatewayTimeout:
		return "gateway-timeout"
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Decide applies RFC 9111 §4.2 and the request directives of §5.2.1 to a
// stored response with freshness lifetime and current age, whose response
// directives are respCC; overridden says whether the thesis override made
// it storable. pragmaNoCache is a request Pragma: no-cache without a
// Cache-Control field (§5.4).
func Decide(reqCC Directives, pragmaNoCache bool, respCC Directives, overridden bool, lifetime, age time.Duration) Action {
	validate := func() Action {
		if reqCC.OnlyIfCached {
			return GatewayTimeout
		}
		return Stale
	}
	if reqCC.NoCache || pragmaNoCache {
		return validate() // §5.2.1.4
	}
	if respCC.NoCache && !overridden {
		return validate() // §5.2.2.4
	}
	if reqCC.MaxAge == 0 || (reqCC.MaxAge > 0 && age > time.Duration(reqCC.MaxAge)*time.Second) {
		// §5.2.1.1. max-age=0 is what a reload sends (browsers, curl -H):
		// it always validates, even an entry stored this very second,
		// whose age rounds to 0.
		return validate()
	}
	if reqCC.MinFresh >= 0 && lifetime-age < time.Duration(reqCC.MinFresh)*time.Second {
		return validate() // §5.2.1.3
	}
	if lifetime > age {
		return Fresh
	}
	// Stale. §4.2.4: never served stale when the origin forbade it.
	if respCC.MustRevalidate || respCC.ProxyRevalidate || respCC.SMaxAge >= 0 {
		return validate()
	}
	if reqCC.MaxStaleAny || (reqCC.MaxStale >= 0 && age-lifetime <= time.Duration(reqCC.MaxStale)*time.Second) {
		return Fresh // §5.2.1.2: the client accepts this much staleness
	}
	return validate()
}

// PragmaNoCache reports whether h asks for no caching through Pragma
// without any Cache-Control field (RFC 9111 §5.4: Cache-Control wins).
func PragmaNoCache(h http.Header) bool {
	if len(h.Values("Cache-Control")) > 0 {
		return false
	}
	for _, v := range h.Values("Pragma") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "no-cache") {
				return true
			}
		}
	}
	return false
}
