package extract

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// TestWPTLinks runs the links of the WHATWG URL tests (web-platform-tests
// urltestdata.json, kept in ../urlnorm/testdata with its README): every
// case with an http(s) base, as an href on a page at that base, through
// resolveRef, the function the extractor calls for each link. urlnorm's
// TestWPTURL checks the Resolver underneath against the standard; this
// checks what extract adds around it (trimming, the early exits). A case
// passes when resolveRef gives the expected href as urlnorm writes it, or
// no link when the standard fails or gives another scheme; references
// that are empty or only a fragment once trimmed name the page itself,
// and are not links by design.
func TestWPTLinks(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../urlnorm/testdata/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []json.RawMessage
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	opts := urlnorm.Options{KeepFragment: true}
	var n, same, selfRefs int
	var res urlnorm.Resolver
	for _, m := range cases {
		var c struct {
			Input, Base, Href string
			Failure           bool
		}
		if m[0] == '"' {
			continue // a comment
		}
		if err := json.Unmarshal(m, &c); err != nil {
			t.Fatal(err)
		}
		if !httpRef(c.Base) {
			continue // no base (a seed, not a link) or a page no crawler fetches
		}
		base, err := urlnorm.Normalize(c.Base, opts)
		if err != nil {
			continue
		}
		n++
		newResolver(&res, base, DefaultMaxURLLength, opts)
		u, abs, kind, _ := resolveRef(&res, []byte(c.Input), DefaultMaxURLLength)
		if trimmed := trimC0([]byte(c.Input)); len(trimmed) == 0 || trimmed[0] == '#' {
			if u != nil || kind != "" {
				t.Errorf("%q against %s: link %q (%s), want none: it names the page", c.Input, c.Base, abs, kind)
			}
			selfRefs++
			continue
		}
		var want string
		if !c.Failure && httpRef(c.Href) {
			if want, err = urlnorm.NormalizeString(c.Href, opts); err != nil {
				t.Fatalf("%q against %s: want %q: %v", c.Input, c.Base, c.Href, err)
			}
		}
		if abs != want {
			t.Errorf("%q against %s: link %q (%s), want %q", c.Input, c.Base, abs, kind, want)
			continue
		}
		same++
	}
	if n < 180 {
		t.Errorf("only %d cases with an http(s) base", n)
	}
	t.Logf("%d links: %d as the standard then urlnorm, %d naming the page itself", n, same, selfRefs)
}

// httpRef reports whether s starts with an http or https scheme once the
// browser's white space is gone.
func httpRef(s string) bool {
	s = strings.TrimLeft(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	sch, ok := scheme(s)
	return ok && (sch == "http" || sch == "https")
}
