package fetch

import (
	"bytes"
	"errors"
	"testing"
)

var fuzzCodings = []string{"", "gzip", "deflate", "br", "gzip, br", "x-gzip", "identity", "zstd"}

// FuzzDecode feeds arbitrary bytes to every coding: no panic, output within
// the limit, and encoding then decoding gives the input back.
func FuzzDecode(f *testing.F) {
	for i, b := range [][]byte{nil, page, gzipBytes(f, page), zlibBytes(f, page), flateBytes(f, page), brBytes(f, page), {0x1f, 0x8b}, {0x78, 0x9c, 0}} {
		f.Add(b, uint8(i))
	}
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		coding := fuzzCodings[int(which)%len(fuzzCodings)]
		out, err := decode(data, coding, limit)
		if len(out) > limit {
			t.Fatalf("decode(%q) returned %d bytes, limit %d", coding, len(out), limit)
		}
		if err == nil && coding == "" && !bytes.Equal(out, data) && len(data) <= limit {
			t.Fatalf("identity changed the data")
		}
		if len(data) > limit {
			return
		}
		var enc []byte
		switch coding {
		case "gzip", "x-gzip":
			enc = gzipBytes(t, data)
		case "deflate":
			enc = zlibBytes(t, data)
		case "br":
			enc = brBytes(t, data)
		default:
			return
		}
		got, err := decode(enc, coding, limit)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip through %q: %d bytes, %v; want %d bytes", coding, len(got), err, len(data))
		}
		raw, err := decode(flateBytes(t, data), "deflate", limit)
		if err != nil || !bytes.Equal(raw, data) {
			t.Fatalf("raw deflate round trip: %d bytes, %v", len(raw), err)
		}
	})
}

func TestDecodeLimits(t *testing.T) {
	tests := []struct {
		name   string
		raw    []byte
		coding string
		limit  int64
		n      int
		err    error
	}{
		{"identity over", []byte("abcdef"), "", 4, 4, errDecodeLimit},
		{"gzip bomb", gzipBytes(t, make([]byte, 1<<20)), "gzip", 1000, 1000, errDecodeLimit},
		{"exact", gzipBytes(t, []byte("abcd")), "gzip", 4, 4, nil},
		{"too many codings", []byte("x"), "gzip,gzip,gzip,gzip,gzip", 10, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := decode(tc.raw, tc.coding, tc.limit)
			if len(out) != tc.n {
				t.Errorf("%d bytes, want %d", len(out), tc.n)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			if tc.name == "too many codings" && err == nil {
				t.Error("no error for 5 codings")
			}
		})
	}
}
