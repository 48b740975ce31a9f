package cluster

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestDataRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		url  string
		md   map[string][]string
	}{
		{"plain", "http://a.example/", nil},
		{"metadata", "http://a.example/x?y=1", map[string][]string{"a": {"1", "2"}, "b": {""}, "": {"empty key"}}},
		{"long", "http://a.example/" + strings.Repeat("x", 5000), map[string][]string{"k": {strings.Repeat("v", 300)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, md, err := decodeData(encodeData(tc.url, tc.md))
			if err != nil || u != tc.url || !maps.EqualFunc(md, tc.md, slices.Equal) {
				t.Fatalf("round trip: %q %v %v", u, md, err)
			}
		})
	}
}

func TestDecodeDataBad(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":     {},
		"short":     {5, 'a'},
		"huge len":  {0xff, 0xff, 0xff, 0xff, 0x0f},
		"trailing":  append(encodeData("u", nil), 1),
		"md count":  {1, 'u', 0xff, 0xff, 0x03},
		"bad value": {1, 'u', 1, 1, 'k', 1, 9},
	} {
		if _, _, err := decodeData(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTagEscape(t *testing.T) {
	for in, want := range map[string]string{"a.example": "a.example", "a}b": "a%7Db", "%": "%25", "x\x1fy": "x%1Fy"} {
		if got := tagEscape(in); got != want {
			t.Errorf("tagEscape(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(tagEscape(in), "}") {
			t.Errorf("tagEscape(%q) holds a brace", in)
		}
	}
}

func FuzzDecodeData(f *testing.F) {
	f.Add(encodeData("http://a.example/", nil))
	f.Add(encodeData("http://a.example/", map[string][]string{"k": {"v", "w"}}))
	f.Add([]byte{1, 'u', 0xff, 0xff, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		u, md, err := decodeData(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes when the keys were
		// in order (the encoder sorts them).
		u2, md2, err := decodeData(encodeData(u, md))
		if err != nil || u2 != u || !maps.EqualFunc(md, md2, slices.Equal) {
			t.Fatalf("re-encoding %q %v: %q %v %v", u, md, u2, md2, err)
		}
	})
}
