package httpcache

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

func TestLifetime(t *testing.T) {
	t.Parallel()
	strict := Policy{DisableOverride: true}
	tests := []struct {
		name   string
		status int
		h      http.Header
		p      Policy
		want   time.Duration
	}{
		{"s-maxage wins for a shared cache (§4.2.1)", 200, hdr("Cache-Control", "max-age=10, s-maxage=20"), strict, 20 * time.Second},
		{"max-age beats Expires", 200, hdr("Cache-Control", "max-age=10", "Date", httpDate(t0), "Expires", httpDate(t0.Add(time.Hour))), strict, 10 * time.Second},
		{"Expires minus Date", 200, hdr("Date", httpDate(t0), "Expires", httpDate(t0.Add(time.Hour))), strict, time.Hour},
		{"Expires in the past", 200, hdr("Date", httpDate(t0), "Expires", httpDate(t0.Add(-time.Hour))), strict, 0},
		{"invalid Expires is the past (§5.3)", 200, hdr("Date", httpDate(t0), "Expires", "0"), strict, 0},
		{"two Expires lines are stale (§4.2.1)", 200, hdr("Expires", httpDate(t0.Add(time.Hour)), "Expires", httpDate(t0.Add(time.Hour))), strict, 0},
		{"invalid max-age is stale", 200, hdr("Cache-Control", "max-age=x", "Expires", httpDate(t0.Add(time.Hour))), strict, 0},
		{"heuristic 10% of Last-Modified age (§4.2.2)", 200, hdr("Date", httpDate(t0), "Last-Modified", httpDate(t0.Add(-10*time.Hour))), strict, time.Hour},
		{"heuristic capped", 200, hdr("Date", httpDate(t0), "Last-Modified", httpDate(t0.Add(-1000*time.Hour))), strict, 24 * time.Hour},
		{"heuristic fraction configurable", 200, hdr("Date", httpDate(t0), "Last-Modified", httpDate(t0.Add(-10*time.Hour))), Policy{DisableOverride: true, HeuristicFraction: 0.5}, 5 * time.Hour},
		{"heuristic disabled", 200, hdr("Date", httpDate(t0), "Last-Modified", httpDate(t0.Add(-10*time.Hour))), Policy{DisableOverride: true, HeuristicFraction: -1}, 0},
		{"no heuristic for 302", 302, hdr("Date", httpDate(t0), "Last-Modified", httpDate(t0.Add(-10*time.Hour))), strict, 0},
		{"nothing: default heuristic 0", 200, hdr(), strict, 0},
		{"nothing: configured default", 404, hdr(), Policy{HeuristicDefault: time.Minute}, time.Minute},
		{"override: no-cache fresh for a day (the polite-proxy thesis §4.6)", 200, hdr("Cache-Control", "no-cache, max-age=0"), Policy{}, 24 * time.Hour},
		{"override: no-store with custom lifetime", 200, hdr("Cache-Control", "no-store"), Policy{OverrideLifetime: time.Hour}, time.Hour},
		{"override off: no-cache max-age=0", 200, hdr("Cache-Control", "no-cache, max-age=0"), strict, 0},
		{"override: no-store must-understand is not overridden", 200, hdr("Cache-Control", "max-age=60, no-store, must-understand"), Policy{}, time.Minute},
		// http.ParseTime took these (runs of spaces, a 1-digit hour): a
		// far-future Expires instead of an invalid one, i.e. expired.
		{"Expires with double spaces is invalid", 200, hdr("Date", httpDate(t0), "Expires", "Thu, 18  Aug  2050 02:01:18 GMT"), strict, 0},
		{"Expires with 1-digit hour is invalid", 200, hdr("Date", httpDate(t0), "Expires", "Thu, 18 Aug 2050 2:01:18 GMT"), strict, 0},
		{"Expires in RFC 850 form", 200, hdr("Date", "Sunday, 22-Nov-26 10:00:00 GMT", "Expires", "Sunday, 22-Nov-26 11:00:00 GMT"), strict, time.Hour},
		{"Expires in asctime form", 200, hdr("Date", httpDate(t0), "Expires", "Sun Nov 22 11:00:00 2026"), strict, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Lifetime(tt.status, tt.h, ParseCacheControl(tt.h), t0, tt.p)
			if got != tt.want {
				t.Errorf("Lifetime = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInitialAge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		h        http.Header
		req, rsp time.Time
		want     time.Duration
	}{
		{"fresh from origin", hdr("Date", httpDate(t0)), t0, t0, 0},
		{"response delay counts (§4.2.3)", hdr("Date", httpDate(t0)), t0, t0.Add(2 * time.Second), 2 * time.Second},
		{"Age plus delay", hdr("Date", httpDate(t0), "Age", "100"), t0, t0.Add(time.Second), 101 * time.Second},
		{"apparent age from an old Date", hdr("Date", httpDate(t0.Add(-time.Minute))), t0, t0, time.Minute},
		{"Date in the future is not negative", hdr("Date", httpDate(t0.Add(time.Hour))), t0, t0, 0},
		{"bad Age ignored", hdr("Age", "-3"), t0, t0, 0},
		{"fractional Age ignored", hdr("Age", "7200.0"), t0, t0, 0},
		// An Age list is read by its first value: "7200, 0" was ignored
		// as a whole, and a two-hour-old response served as fresh.
		{"Age list: first value", hdr("Age", "7200, 0"), t0, t0, 7200 * time.Second},
		{"Age list: first value 0", hdr("Age", "0, 7200"), t0, t0, 0},
		{"two Age lines: the first", hdr("Age", "7200", "Age", "0"), t0, t0, 7200 * time.Second},
		{"Age past 2^31 capped", hdr("Age", "99999999999"), t0, t0, MaxDelta * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := InitialAge(tt.h, tt.req, tt.rsp); got != tt.want {
				t.Errorf("InitialAge = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	cc := func(s string) Directives { return ParseCacheControlValues([]string{s}) }
	tests := []struct {
		name          string
		req, resp     string
		pragma        bool
		overridden    bool
		lifetime, age time.Duration
		want          Action
	}{
		{"fresh", "", "max-age=60", false, false, time.Minute, time.Second, Fresh},
		{"stale", "", "max-age=60", false, false, time.Minute, 2 * time.Minute, Stale},
		{"age equal to lifetime is stale", "", "", false, false, time.Minute, time.Minute, Stale},
		{"request no-cache validates (§5.2.1.4)", "no-cache", "", false, false, time.Hour, 0, Stale},
		{"pragma no-cache validates (§5.4)", "", "", true, false, time.Hour, 0, Stale},
		{"response no-cache validates (§5.2.2.4)", "", "no-cache", false, false, time.Hour, 0, Stale},
		{"response no-cache overridden (the polite-proxy thesis §4.6)", "", "no-cache", false, true, 24 * time.Hour, time.Hour, Fresh},
		{"request no-cache beats the override", "no-cache", "no-cache", false, true, 24 * time.Hour, time.Hour, Stale},
		{"request max-age too young (§5.2.1.1)", "max-age=10", "", false, false, time.Hour, 20 * time.Second, Stale},
		{"request max-age satisfied", "max-age=30", "", false, false, time.Hour, 20 * time.Second, Fresh},
		{"request max-age=0", "max-age=0", "", false, false, time.Hour, time.Second, Stale},
		{"request max-age=0 at age 0 validates too", "max-age=0", "", false, false, time.Hour, 0, Stale},
		{"request max-age=1 at age 1 is satisfied", "max-age=1", "", false, false, time.Hour, time.Second, Fresh},
		{"min-fresh not met (§5.2.1.3)", "min-fresh=600", "", false, false, time.Hour, 55 * time.Minute, Stale},
		{"min-fresh met", "min-fresh=60", "", false, false, time.Hour, 55 * time.Minute, Fresh},
		{"max-stale any (§5.2.1.2)", "max-stale", "", false, false, time.Minute, time.Hour, Fresh},
		{"max-stale within", "max-stale=120", "", false, false, time.Minute, 2 * time.Minute, Fresh},
		{"max-stale exceeded", "max-stale=30", "", false, false, time.Minute, 2 * time.Minute, Stale},
		{"must-revalidate forbids stale (§4.2.4)", "max-stale", "must-revalidate", false, false, time.Minute, time.Hour, Stale},
		{"s-maxage forbids stale", "max-stale", "s-maxage=60", false, false, time.Minute, time.Hour, Stale},
		{"only-if-cached with fresh", "only-if-cached", "", false, false, time.Hour, 0, Fresh},
		{"only-if-cached with stale → 504 (§5.2.1.7)", "only-if-cached", "", false, false, time.Minute, time.Hour, GatewayTimeout},
		{"only-if-cached and no-cache → 504", "only-if-cached, no-cache", "", false, false, time.Hour, 0, GatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Decide(cc(tt.req), tt.pragma, cc(tt.resp), tt.overridden, tt.lifetime, tt.age)
			if got != tt.want {
				t.Errorf("Decide = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStorable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		reqH   http.Header
		status int
		respH  http.Header
		p      Policy
		want   bool
	}{
		{"200 plain", "GET", hdr(), 200, hdr(), Policy{}, true},
		{"POST not cached", "POST", hdr(), 200, hdr("Cache-Control", "max-age=60"), Policy{}, false},
		{"range request", "GET", hdr("Range", "bytes=0-1"), 206, hdr(), Policy{}, false},
		{"206 not cached", "GET", hdr(), 206, hdr("Cache-Control", "max-age=60"), Policy{}, false},
		{"304 not cached", "GET", hdr(), 304, hdr(), Policy{}, false},
		{"404 heuristically cacheable", "GET", hdr(), 404, hdr(), Policy{}, true},
		{"302 without expiry", "GET", hdr(), 302, hdr(), Policy{}, false},
		{"302 with max-age", "GET", hdr(), 302, hdr("Cache-Control", "max-age=60"), Policy{}, true},
		{"request no-store binds (§5.2.1.5)", "GET", hdr("Cache-Control", "no-store"), 200, hdr(), Policy{}, false},
		{"response private (§5.2.2.7)", "GET", hdr(), 200, hdr("Cache-Control", "private, max-age=60"), Policy{}, false},
		{"response no-store overridden (the polite-proxy thesis §4.6)", "GET", hdr(), 200, hdr("Cache-Control", "no-store"), Policy{}, true},
		{"response no-store strict", "GET", hdr(), 200, hdr("Cache-Control", "no-store"), Policy{DisableOverride: true}, false},
		{"Vary: * (§4.1)", "GET", hdr(), 200, hdr("Vary", "Accept, *"), Policy{}, false},
		{"Authorization without public (§3.5)", "GET", hdr("Authorization", "Basic x"), 200, hdr("Cache-Control", "max-age=60"), Policy{}, false},
		{"Authorization with public", "GET", hdr("Authorization", "Basic x"), 200, hdr("Cache-Control", "public, max-age=60"), Policy{}, true},
		{"Set-Cookie refused by default", "GET", hdr(), 200, hdr("Set-Cookie", "a=b"), Policy{}, false},
		{"Set-Cookie allowed by policy", "GET", hdr(), 200, hdr("Set-Cookie", "a=b"), Policy{StoreSetCookie: true}, true},
		{"500 without expiry", "GET", hdr(), 500, hdr(), Policy{}, false},
		{"500 public", "GET", hdr(), 500, hdr("Cache-Control", "public"), Policy{}, true},
		{"999 unknown status", "GET", hdr(), 999, hdr("Cache-Control", "max-age=60"), Policy{}, false},
		// must-understand (§5.2.2.3): no-store is for caches that do not
		// know the status.
		{"must-understand known status", "GET", hdr(), 200, hdr("Cache-Control", "max-age=60, no-store, must-understand"), Policy{DisableOverride: true}, true},
		{"must-understand unknown status", "GET", hdr(), 599, hdr("Cache-Control", "max-age=60, no-store, must-understand"), Policy{DisableOverride: true}, false},
		{"must-understand without no-store, unknown status", "GET", hdr(), 599, hdr("Cache-Control", "max-age=60, must-understand"), Policy{}, false},
		// The override never carries one user's page to another.
		{"override: no-store with Cookie", "GET", hdr("Cookie", "session=alice"), 200, hdr("Cache-Control", "no-store"), Policy{}, false},
		{"override: no-cache with Cookie", "GET", hdr("Cookie", "session=alice"), 200, hdr("Cache-Control", "no-cache"), Policy{}, false},
		{"override: empty Cookie line", "GET", hdr("Cookie", ""), 200, hdr("Cache-Control", "no-store"), Policy{}, false},
		{"override: no-store with Authorization", "GET", hdr("Authorization", "Basic x"), 200, hdr("Cache-Control", "no-store"), Policy{}, false},
		{"override: no-store public with Authorization (§3.5)", "GET", hdr("Authorization", "Basic x"), 200, hdr("Cache-Control", "no-store, public, s-maxage=60"), Policy{}, false},
		{"override: no-store with Set-Cookie allowed by policy", "GET", hdr(), 200, hdr("Cache-Control", "no-store", "Set-Cookie", "a=b"), Policy{StoreSetCookie: true}, false},
		{"override: no-store private", "GET", hdr(), 200, hdr("Cache-Control", "no-store, private"), Policy{}, false},
		{"override: no-store Vary: *", "GET", hdr(), 200, hdr("Cache-Control", "no-store", "Vary", "*"), Policy{}, false},
		{"override: no-store Vary: Cookie", "GET", hdr(), 200, hdr("Cache-Control", "no-store", "Vary", "Accept-Encoding, cookie"), Policy{}, false},
		{"override: no-cache Vary: Authorization", "GET", hdr(), 200, hdr("Cache-Control", "no-cache", "Vary", "Authorization"), Policy{}, false},
		{"override: request no-store", "GET", hdr("Cache-Control", "no-store"), 200, hdr("Cache-Control", "no-store"), Policy{}, false},
		{"override: no-store Vary: Accept-Encoding", "GET", hdr(), 200, hdr("Cache-Control", "no-store", "Vary", "Accept-Encoding"), Policy{}, true},
		{"Cookie without override: max-age stored", "GET", hdr("Cookie", "a=b"), 200, hdr("Cache-Control", "max-age=60"), Policy{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, why := Storable(tt.method, tt.reqH, ParseCacheControl(tt.reqH), tt.status, tt.respH, ParseCacheControl(tt.respH), tt.p)
			if got != tt.want {
				t.Errorf("Storable = %v (%s), want %v", got, why, tt.want)
			}
			if !got && why == "" {
				t.Error("refusal without a reason")
			}
		})
	}
}

func TestPragmaNoCache(t *testing.T) {
	t.Parallel()
	if !PragmaNoCache(hdr("Pragma", "no-cache")) {
		t.Error("Pragma: no-cache alone should count")
	}
	if PragmaNoCache(hdr("Pragma", "no-cache", "Cache-Control", "max-age=5")) {
		t.Error("Cache-Control present: Pragma must be ignored (RFC 9111 §5.4)")
	}
	if PragmaNoCache(hdr()) {
		t.Error("no Pragma")
	}
}

func TestParseIMFFixdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"rfc example", "Sun, 06 Nov 1994 08:49:37 GMT", true},
		{"leap day", "Thu, 29 Feb 2024 23:59:59 GMT", true},
		{"no leap day", "Wed, 29 Feb 2023 00:00:00 GMT", false},
		{"31 April", "Mon, 31 Apr 2023 00:00:00 GMT", false},
		{"hour 24", "Sun, 06 Nov 1994 24:00:00 GMT", false},
		{"lower-case month", "Sun, 06 nov 1994 08:49:37 GMT", false}, // left to http.ParseTime
		{"rfc 850", "Sunday, 06-Nov-94 08:49:37 GMT", false},
		{"asctime", "Sun Nov  6 08:49:37 1994", false},
		{"other zone", "Sun, 06 Nov 1994 08:49:37 UTC", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := parseIMFFixdate(tt.in)
			if ok != tt.ok {
				t.Fatalf("parseIMFFixdate(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
			if want, err := http.ParseTime(tt.in); ok && (err != nil || !got.Equal(want)) {
				t.Errorf("parseIMFFixdate(%q) = %v, http.ParseTime = %v, %v", tt.in, got, want, err)
			}
		})
	}
}

// FuzzParseIMFFixdate: whatever the fast path accepts, http.ParseTime
// accepts too, as the same instant.
func FuzzParseIMFFixdate(f *testing.F) {
	f.Add("Sun, 06 Nov 1994 08:49:37 GMT")
	f.Add("Thu, 29 Feb 2024 23:59:59 GMT")
	f.Add("Mon, 31 Apr 2023 00:00:00 GMT")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseIMFFixdate(s)
		if !ok {
			return
		}
		want, err := http.ParseTime(s)
		if err != nil || !got.Equal(want) {
			t.Fatalf("parseIMFFixdate(%q) = %v; http.ParseTime = %v, %v", s, got, want, err)
		}
	})
}

func TestParseHTTPDate(t *testing.T) {
	t.Parallel()
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	tests := []struct {
		in string
		ok bool
	}{
		{"Sun, 06 Nov 1994 08:49:37 GMT", true},
		{"Sunday, 06-Nov-94 08:49:37 GMT", true},
		{"Sun Nov  6 08:49:37 1994", true},
		{"Sun Nov 06 08:49:37 1994", true},
		{"SUN, 06 NOV 1994 08:49:37 gmt", true},
		{"sunday, 06-nov-94 08:49:37 GMT", true},
		{"Sun, 06 Nov 1994 08:49:37 UTC", false},
		{"Sun, 06 Nov 94 08:49:37 GMT", false},
		{"Sun 06 Nov 1994 08:49:37 GMT", false},
		{"Sun, 06  Nov  1994 08:49:37 GMT", false},
		{"Sun, 06-Nov-1994 08:49:37 GMT", false},
		{"Sun, 06 Nov 1994 08.49.37 GMT", false},
		{"Sun, 06 Nov 1994 8:49:37 GMT", false},
		{"Sunday, 06-Nov-94 8:49:37 GMT", false},
		{"Sun Nov  6 8:49:37 1994", false},
		{"Sun Nov 6 08:49:37 1994", false},
		{"Sun, 06 Nov 1994 08:49:37 GMT ", false},
		{"Sun, 31 Nov 1994 08:49:37 GMT", false},
		{"Sunday, 06-Nov-94 08:49:37 UTC", false},
		{"Sonntag, 06-Nov-94 08:49:37 GMT", false},
		{"0", false},
		{"", false},
	}
	for _, tt := range tests {
		got, ok := ParseHTTPDate(tt.in)
		if ok != tt.ok || (ok && !got.Equal(want)) {
			t.Errorf("ParseHTTPDate(%q) = %v, %v; want ok %v", tt.in, got, ok, tt.ok)
		}
	}
}

// FuzzParseHTTPDate: what the strict parser accepts, http.ParseTime
// (which matches names without regard to case, but not GMT) accepts as
// the same instant.
func FuzzParseHTTPDate(f *testing.F) {
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Thu, 18  Aug  2050 02:01:18 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseHTTPDate(s)
		if !ok {
			return
		}
		want, err := http.ParseTime(strings.ToUpper(s))
		if err != nil || !got.Equal(want) {
			t.Fatalf("ParseHTTPDate(%q) = %v; http.ParseTime = %v, %v", s, got, want, err)
		}
	})
}
