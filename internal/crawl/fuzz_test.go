package crawl

import (
	"testing"
	"time"
)

// FuzzDecodeRevisit: stored revisit references are read back defensively.
func FuzzDecodeRevisit(f *testing.F) {
	f.Add(encodeRevisit("http://a.test/", time.Unix(1, 2), "<urn:uuid:x>"))
	f.Add([]byte("1 2 3"))
	f.Add([]byte("-9223372036854775808  x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := decodeRevisit(b)
		if !ok {
			return
		}
		r2, ok := decodeRevisit(encodeRevisit(r.TargetURI, r.Date, r.RecordID))
		if !ok || r2.TargetURI != r.TargetURI || !r2.Date.Equal(r.Date) {
			t.Errorf("re-encode mismatch: %+v vs %+v", r, r2)
		}
	})
}

// FuzzParseScope: the --scope flag never panics and a parsed scope
// validates.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"seeds", "all", ".pt,example.org", "domains:", ",,", "domains:a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseScope(s)
		if err != nil {
			return
		}
		if err := (Config{Scope: sc}).Validate(); err != nil {
			t.Errorf("ParseScope(%q) = %+v does not validate: %v", s, sc, err)
		}
	})
}
