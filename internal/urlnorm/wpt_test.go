package urlnorm

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// wptCase is one parsing test of web-platform-tests
// url/resources/urltestdata.json (see testdata/README.md): input parsed
// against base (null: no base) gives href, or fails.
type wptCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

// loadWPT returns the test objects of testdata/urltestdata.json in file
// order (the strings between them are comments).
func loadWPT(t testing.TB) []wptCase {
	t.Helper()
	b, err := os.ReadFile("testdata/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var out []wptCase
	for _, m := range raw {
		if len(m) > 0 && m[0] == '"' {
			continue
		}
		var c wptCase
		if err := json.Unmarshal(m, &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// wptHTTP reports whether s, as a browser cleans it, starts with an http
// or https scheme.
func wptHTTP(s string) bool {
	scheme, _, ok := splitScheme(clean(s))
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// wptOptions keep what the WHATWG href keeps: only the rules Normalize
// always applies remain.
var wptOptions = Options{KeepFragment: true}

// wptDiffs are the http(s) cases where the crawler deliberately parts
// from the standard, by input (none of them has a base), with the reason.
// Each is a host that the WHATWG parser accepts and the crawler refuses:
// no DNS lookup could succeed for it (RFC 1123 §2.1 host names; RFC 5891
// §5.4 and §4.2.3 for punycode), so refusing costs no page and saves a
// lookup and a failed fetch per link.
var wptDiffs = map[string]string{
	"http://a.b.c.xn--pokxncvks":   "invalid punycode label: no registry delegates such a name",
	"http://10.0.0.xn--pokxncvks":  "invalid punycode label",
	"http://a.b.c.XN--pokxncvks":   "invalid punycode label",
	"http://a.b.c.Xn--pokxncvks":   "invalid punycode label",
	"http://10.0.0.XN--pokxncvks":  "invalid punycode label",
	"http://10.0.0.xN--pokxncvks":  "invalid punycode label",
	"https://xn--/":                "invalid punycode label",
	"http://./":                    "host of empty labels",
	"http://../":                   "host of empty labels",
	"http://foo.09..":              "host with an empty label",
	"http://!\"$&'()*+,-.;=_`{}~/": "host bytes no DNS name holds",
}

// wptResolve resolves c as the crawler meets it: as a link found on a
// page at c.Base, through a Resolver (the path internal/extract takes),
// or, when c has no http(s) base but an http(s) input, as a seed (no
// base). ok is false for cases a crawler never meets: a base or an input
// of another scheme.
func wptResolve(c wptCase) (got string, err error, ok bool) {
	var base *url.URL
	switch {
	case c.Base != nil && wptHTTP(*c.Base):
		if base, err = Normalize(*c.Base, wptOptions); err != nil {
			return "", nil, false // a page the crawler could not have fetched
		}
	case !wptHTTP(c.Input):
		return "", nil, false
	}
	_, got, err = NewResolver(base, wptOptions).Resolve(c.Input)
	return got, err, true
}

// TestWPTURL runs every http(s) case of the WHATWG URL standard's tests
// (web-platform-tests urltestdata.json) through the crawler's resolve
// path. A case passes when the result is the expected href, or the
// expected href as Normalize writes it (the rules docs/urlnorm.md says
// are always applied: unreserved octets decoded, triplets in upper case,
// bytes RFC 3986 does not allow raw encoded, a stray '%' as "%25", an
// empty fragment dropped), or, for an expected failure or a result of
// another scheme, any error (the link is not followed). The rest must be
// in wptDiffs.
func TestWPTURL(t *testing.T) {
	var n, exact, equivalent, differ int
	seen := map[string]bool{}
	for _, c := range loadWPT(t) {
		got, err, ok := wptResolve(c)
		if !ok {
			continue
		}
		n++
		var why string
		switch {
		case c.Failure || !wptHTTP(c.Href):
			if err == nil {
				why = "want failure or another scheme, got " + got
			}
		case err != nil:
			why = "error " + err.Error()
		case got == c.Href:
		default:
			if norm, nerr := NormalizeString(c.Href, wptOptions); nerr != nil || norm != got {
				why = "got " + got
			} else {
				equivalent++
				t.Logf("as Normalize writes the standard's href: %q against %v: %q for %q", c.Input, wptBase(c), got, c.Href)
				continue
			}
		}
		if why == "" {
			exact++
			continue
		}
		differ++
		if reason, listed := wptDiffs[c.Input]; listed && c.Base == nil {
			seen[c.Input] = true
			t.Logf("expected difference: %q: %s: %s", c.Input, why, reason)
			continue
		}
		t.Errorf("%q against %s: %s; want %q (failure %v)", c.Input, wptBase(c), why, c.Href, c.Failure)
	}
	for in := range wptDiffs {
		if !seen[in] {
			t.Errorf("wptDiffs: %q now follows the standard: remove it", in)
		}
	}
	if n < 450 {
		t.Errorf("only %d http(s) cases in testdata/urltestdata.json", n)
	}
	t.Logf("%d http(s) cases: %d as the standard, %d as the standard then Normalize, %d expected differences",
		n, exact, equivalent, differ)
}

// wptBase returns c's base for messages.
func wptBase(c wptCase) string {
	if c.Base == nil {
		return "null"
	}
	return *c.Base
}
