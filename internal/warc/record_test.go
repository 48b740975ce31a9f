package warc

import (
	"regexp"
	"strings"
	"testing"
)

// TestNewRecordID checks the hand-built formatting: lower-case hex in the
// 8-4-4-4-12 layout, version 4 and the RFC 9562 variant, and no repeats.
func TestNewRecordID(t *testing.T) {
	re := regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewRecordID()
		if !re.MatchString(id) {
			t.Fatalf("NewRecordID() = %q, not a version 4 UUID URN", id)
		}
		if seen[id] {
			t.Fatalf("NewRecordID() repeated %q", id)
		}
		seen[id] = true
	}
}

// TestValidName compares the token table with RFC 9110's tchar definition
// for every byte, and checks whole names.
func TestValidName(t *testing.T) {
	tchar := func(c byte) bool {
		return c > ' ' && c < 0x7f && !strings.ContainsRune("()<>@,;:\\\"/[]?={}", rune(c))
	}
	for c := range 256 {
		if got, want := validName(string([]byte{byte(c)})), tchar(byte(c)); got != want {
			t.Errorf("validName(%q) = %v, want %v", byte(c), got, want)
		}
	}
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"empty", "", false},
		{"warc field", "WARC-Record-ID", true},
		{"custom token", "x!#$%&'*+-.^_`|~", true},
		{"space", "WARC Type", false},
		{"colon", "WARC-Type:", false},
		{"non-ASCII", "Typ\u00e9", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := validName(tt.in); got != tt.want {
				t.Errorf("validName(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
