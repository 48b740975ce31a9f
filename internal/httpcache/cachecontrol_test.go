package httpcache

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseCacheControl(t *testing.T) {
	t.Parallel()
	abs := Directives{MaxAge: -1, SMaxAge: -1, MinFresh: -1, MaxStale: -1}
	with := func(f func(*Directives)) Directives { d := abs; f(&d); return d }
	tests := []struct {
		name   string
		values []string
		want   Directives
	}{
		{"empty", nil, abs},
		{"max-age", []string{"max-age=60"}, with(func(d *Directives) { d.MaxAge = 60 })},
		{"case and spaces", []string{"  Max-Age = 60 , NO-CACHE"}, with(func(d *Directives) { d.MaxAge = 60; d.NoCache = true })},
		{"quoted value", []string{`max-age="30"`}, with(func(d *Directives) { d.MaxAge = 30 })},
		{"first occurrence wins (RFC 9111 §4.2.1)", []string{"max-age=10, max-age=20"}, with(func(d *Directives) { d.MaxAge = 10 })},
		{"two field lines", []string{"public", "s-maxage=5"}, with(func(d *Directives) { d.Public = true; d.SMaxAge = 5 })},
		{"invalid max-age is stale", []string{"max-age=abc"}, with(func(d *Directives) { d.Invalid = true })},
		{"max-age without value", []string{"max-age"}, with(func(d *Directives) { d.Invalid = true })},
		{"negative max-age", []string{"max-age=-5"}, with(func(d *Directives) { d.Invalid = true })},
		{"huge delta capped at 2^31 (§1.2.2)", []string{"max-age=99999999999999999999999"}, with(func(d *Directives) { d.MaxAge = MaxDelta })},
		{"max-stale without value", []string{"max-stale"}, with(func(d *Directives) { d.MaxStaleAny = true })},
		{"max-stale with value", []string{"max-stale=30, min-fresh=5"}, with(func(d *Directives) { d.MaxStale = 30; d.MinFresh = 5 })},
		{"qualified no-cache counts as no-cache", []string{`no-cache="Set-Cookie, X-Foo", private`}, with(func(d *Directives) { d.NoCache = true; d.Private = true })},
		{"unknown directives ignored", []string{"foo=bar, ext=\"a,b\", no-store"}, with(func(d *Directives) { d.NoStore = true })},
		{"garbage between commas", []string{"@@@, only-if-cached,,, =x, must-revalidate"}, with(func(d *Directives) { d.OnlyIfCached = true; d.MustRevalidate = true })},
		{"unterminated quote", []string{`max-age="12`}, with(func(d *Directives) { d.MaxAge = 12 })},
		{"flags", []string{"no-transform, proxy-revalidate, must-understand, immutable"}, with(func(d *Directives) {
			d.NoTransform, d.ProxyRevalidate, d.MustUnderstand, d.Immutable = true, true, true, true
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseCacheControlValues(tt.values)
			if got != tt.want {
				t.Errorf("ParseCacheControlValues(%q) = %+v, want %+v", tt.values, got, tt.want)
			}
		})
	}
}

func TestParseCacheControlBounds(t *testing.T) {
	t.Parallel()
	many := strings.Repeat("public, ", MaxDirectives) + "no-store"
	if d := ParseCacheControlValues([]string{many}); d.NoStore {
		t.Errorf("directive %d was parsed; want at most %d", MaxDirectives+1, MaxDirectives)
	}
	long := strings.Repeat(" ", MaxControlBytes) + "no-store"
	if d := ParseCacheControlValues([]string{long}); d.NoStore {
		t.Error("directive past MaxControlBytes was parsed")
	}
	// What was not read may have said private: such a response is not
	// stored (before, it was stored and shared).
	for _, v := range [][]string{{many}, {long}, {strings.Repeat("public, ", MaxDirectives), "private"}} {
		d := ParseCacheControlValues(v)
		if !d.Truncated {
			t.Errorf("%.40q...: not marked truncated", v)
		}
		if ok, _ := Storable("GET", http.Header{}, Directives{}, 200, http.Header{}, d, Policy{}); ok {
			t.Errorf("%.40q...: storable", v)
		}
	}
	if d := ParseCacheControlValues([]string{strings.Repeat("public, ", MaxDirectives)}); d.Truncated {
		t.Error("exactly MaxDirectives directives marked truncated")
	}
	h := http.Header{}
	h.Add("Cache-Control", "max-age=7")
	if d := ParseCacheControl(h); d.MaxAge != 7 {
		t.Errorf("ParseCacheControl(header) MaxAge = %d, want 7", d.MaxAge)
	}
}

// FuzzCacheControl checks that parsing never panics, respects its bounds,
// and that rendering and re-parsing the result is stable.
func FuzzCacheControl(f *testing.F) {
	for _, s := range []string{
		"max-age=60", "no-cache, no-store", `no-cache="a,b"`, "max-stale", "max-stale=10",
		"s-maxage=1, public", "max-age=\"\\", "=,=,=", "max-age=99999999999999999999", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := ParseCacheControlValues([]string{s})
		for _, v := range []int64{d.MaxAge, d.SMaxAge, d.MinFresh, d.MaxStale} {
			if v < -1 || v > MaxDelta {
				t.Fatalf("delta %d out of range for %q", v, s)
			}
		}
		again := ParseCacheControlValues([]string{d.String()})
		d.Invalid, d.Truncated = false, false
		if again != d {
			t.Fatalf("round trip of %q: %+v then %+v", s, d, again)
		}
	})
}
