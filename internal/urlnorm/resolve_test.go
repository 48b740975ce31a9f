package urlnorm

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"testing"
)

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestResolve(t *testing.T) {
	// RFC 3986 §5.4.1 normal examples use base "http://a/b/c/d;p?q".
	base := "http://a/b/c/d;p?q"
	tests := []struct {
		name string
		base string
		ref  string
		want string
		err  error
	}{
		{"rfc g", base, "g", "http://a/b/c/g", nil},
		{"rfc ./g", base, "./g", "http://a/b/c/g", nil},
		{"rfc g/", base, "g/", "http://a/b/c/g/", nil},
		{"rfc /g", base, "/g", "http://a/g", nil},
		{"rfc //g", base, "//g", "http://g/", nil},
		{"rfc ?y", base, "?y", "http://a/b/c/d;p?y", nil},
		{"rfc g?y", base, "g?y", "http://a/b/c/g?y", nil},
		{"rfc #s", base, "#s", "http://a/b/c/d;p?q", nil},
		{"rfc g#s", base, "g#s", "http://a/b/c/g", nil},
		{"rfc ;x", base, ";x", "http://a/b/c/;x", nil},
		{"rfc empty", base, "", "http://a/b/c/d;p?q", nil},
		{"rfc .", base, ".", "http://a/b/c/", nil},
		{"rfc ..", base, "..", "http://a/b/", nil},
		{"rfc ../g", base, "../g", "http://a/b/g", nil},
		{"rfc ../..", base, "../..", "http://a/", nil},
		{"rfc ../../../g", base, "../../../g", "http://a/g", nil},
		{"rfc /./g", base, "/./g", "http://a/g", nil},
		{"rfc g.", base, "g.", "http://a/b/c/g.", nil},
		{"rfc ..g", base, "..g", "http://a/b/c/..g", nil},
		{"rfc g;x=1/../y", base, "g;x=1/../y", "http://a/b/c/y", nil},
		{"absolute", base, "HTTPS://Other.org", "https://other.org/", nil},
		{"same scheme relative", base, "http:g", "http://a/b/c/g", nil},
		{"same scheme slash", base, "http:/g", "http://a/g", nil},
		{"same scheme authority", base, "http://g/x", "http://g/x", nil},
		{"spaces and newlines", base, "  \n g\n/h\t ", "http://a/b/c/g/h", nil},
		{"backslash", base, `..\g\h`, "http://a/b/g/h", nil},
		{"backslash authority", base, `\\g\x`, "http://g/x", nil},
		{"space and unicode", base, "my file ü.html", "http://a/b/c/my%20file%20%C3%BC.html", nil},
		{"stray percent", base, "100%.html", "http://a/b/c/100%25.html", nil},
		{"base with port", "http://a:8080/x/y", "z", "http://a:8080/x/z", nil},
		{"base userinfo", "http://u@a/x", "z", "http://u@a/z", nil},
		{"base empty path", "http://a", "z", "http://a/z", nil},
		{"base empty query", "http://a/p?", "", "http://a/p?", nil},
		{"mailto", base, "mailto:x@a", "", ErrScheme},
		{"javascript", base, "javascript:go()", "", ErrScheme},
		{"data", base, "data:text/plain,hi", "", ErrScheme},
		{"bad host", base, "//a b/", "", ErrMalformed},
		{"ftp base", "ftp://a/b", "c", "", ErrScheme},
		{"hostless base", "http:///b", "c", "", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mustParse(t, tc.base)
			got, err := ResolveString(b, tc.ref, Options{})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ResolveString(%q, %q) = %q, %v; want %v", tc.base, tc.ref, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveString(%q, %q): %v", tc.base, tc.ref, err)
			}
			if got != tc.want {
				t.Errorf("ResolveString(%q, %q) = %q, want %q", tc.base, tc.ref, got, tc.want)
			}
			u, err := Resolve(b, tc.ref, Options{})
			if err != nil || u.String() != got {
				t.Errorf("Resolve = %v, %v; want %q", u, err, got)
			}
		})
	}
	if got, err := ResolveString(nil, "HTTP://A/b", Options{}); err != nil || got != "http://a/b" {
		t.Errorf("nil base: %q, %v", got, err)
	}
	if _, err := ResolveString(nil, "b", Options{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("nil base relative: %v, want ErrMalformed", err)
	}
	// Options apply to the result: the Viuva Negra report §5.4 session ids in links.
	got, err := ResolveString(mustParse(t, "http://h.com/d/"), "index.php;jsessionid=9?PHPSESSID=1", CrawlDefaults())
	if err != nil || got != "http://h.com/d/" {
		t.Errorf("crawl defaults: %q, %v", got, err)
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		name string
		url  string
		mode KeyMode
		want string
		err  error
	}{
		{"host", "http://www.example.co.uk:8080/x", ByHost, "www.example.co.uk", nil},
		{"domain", "http://a.b.example.co.uk/", ByDomain, "example.co.uk", nil},
		{"domain blogspot", "http://me.blogspot.com/", ByDomain, "me.blogspot.com", nil},
		{"domain suffix itself", "http://co.uk/", ByDomain, "co.uk", nil},
		{"domain localhost", "http://localhost:8080/", ByDomain, "localhost", nil},
		{"domain ip", "http://10.1.2.3/", ByDomain, "10.1.2.3", nil},
		{"ip literal", "http://10.1.2.3/", ByIP, "10.1.2.3", nil},
		{"ipv6 literal", "http://[2001:db8::1]:81/", ByIP, "2001:db8::1", nil},
		{"ip needs lookup", "http://example.org/", ByIP, "", ErrNeedsLookup},
		{"no host", "http:///x", ByHost, "", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Key(mustParse(t, tc.url), tc.mode)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Key = %q, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Key(%q, %v) = %q, %v; want %q", tc.url, tc.mode, got, err, tc.want)
			}
		})
	}
	if _, err := Key(nil, ByHost); err == nil {
		t.Error("Key(nil): no error")
	}
	if _, err := Key(mustParse(t, "http://a/"), KeyMode(9)); err == nil {
		t.Error("Key with unknown mode: no error")
	}
}

func TestKeyLookup(t *testing.T) {
	ctx := context.Background()
	u := mustParse(t, "http://example.org/")
	calls := 0
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		calls++
		if host != "example.org" {
			t.Errorf("lookup(%q)", host)
		}
		return []netip.Addr{netip.MustParseAddr("::ffff:10.0.0.9"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.5")}, nil
	}
	got, err := KeyLookup(ctx, u, ByIP, lookup)
	if err != nil || got != "10.0.0.2" {
		t.Errorf("KeyLookup = %q, %v; want 10.0.0.2", got, err)
	}
	if got, err := KeyLookup(ctx, u, ByHost, lookup); err != nil || got != "example.org" || calls != 1 {
		t.Errorf("KeyLookup ByHost = %q, %v, %d lookups", got, err, calls)
	}
	failing := func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("nxdomain") }
	if _, err := KeyLookup(ctx, u, ByIP, failing); err == nil {
		t.Error("failing lookup: no error")
	}
	empty := func(context.Context, string) ([]netip.Addr, error) { return nil, nil }
	if _, err := KeyLookup(ctx, u, ByIP, empty); err == nil {
		t.Error("empty lookup: no error")
	}
	if _, err := KeyLookup(ctx, u, ByIP, nil); !errors.Is(err, ErrNeedsLookup) {
		t.Errorf("nil lookup: %v", err)
	}
}

func TestParseKeyMode(t *testing.T) {
	tests := []struct {
		in   string
		want KeyMode
		ok   bool
	}{
		{"", ByHost, true}, {"host", ByHost, true}, {"Domain", ByDomain, true},
		{" ip ", ByIP, true}, {"site", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseKeyMode(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("ParseKeyMode(%q) = %v, %v", tc.in, got, err)
			}
			if tc.ok {
				var m KeyMode
				text, _ := got.MarshalText()
				if err := m.UnmarshalText(text); err != nil || m != got {
					t.Errorf("text round trip of %v: %v, %v", got, m, err)
				}
			}
		})
	}
	if KeyMode(7).String() != "KeyMode(7)" {
		t.Errorf("String of unknown mode = %q", KeyMode(7).String())
	}
}
