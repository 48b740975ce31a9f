package proxy

import (
	"net/http"
	"reflect"
	"testing"
)

// outHeader gives the header that removeHopByHop and removeControl on a
// clone plus Add("Via") give, and leaves the client's header alone.
func TestOutHeader(t *testing.T) {
	const via = "1.1 courtesy-test"
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"empty", http.Header{}},
		{"plain", http.Header{"Accept": {"*/*"}, "User-Agent": {"curl/8"}}},
		{"hop-by-hop", http.Header{"Connection": {"keep-alive, X-Hop", "Foo"}, "X-Hop": {"1"}, "Foo": {"a", "b"},
			"Keep-Alive": {"timeout=5"}, "Proxy-Connection": {"keep-alive"}, "Te": {"trailers"}, "Upgrade": {"h2c"},
			"Proxy-Authorization": {"Basic eA=="}, "X-End": {"kept"}}},
		{"control", http.Header{HeaderMode: {"wait"}, HeaderClient: {"me"}, HeaderTimeout: {"5s"}, "Accept": {"text/html"}}},
		{"via", http.Header{"Via": {"1.0 a", "1.1 b"}, "Accept": {"*/*"}}},
		{"via-named", http.Header{"Connection": {"via"}, "Via": {"1.0 a"}}},
		{"lower-case-named", http.Header{"Connection": {" x-lower "}, "X-Lower": {"1"}, "X-Other": {"2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.h.Clone()
			want := tc.h.Clone()
			removeHopByHop(want)
			removeControl(want)
			want.Add("Via", via)
			got := outHeader(tc.h, via)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("outHeader = %v\nwant %v", got, want)
			}
			if !reflect.DeepEqual(tc.h, before) {
				t.Errorf("the client's header changed: %v, was %v", tc.h, before)
			}
			// Appending to one field must not touch another.
			for k := range got {
				got[k] = append(got[k], "x")
			}
			for k, vv := range got {
				if !reflect.DeepEqual(vv[:len(vv)-1], want[k]) {
					t.Errorf("field %s shares its backing array: %v", k, vv)
				}
			}
		})
	}
}

// FuzzOutHeader checks outHeader against the two-step reference on
// arbitrary Connection lists and field names.
func FuzzOutHeader(f *testing.F) {
	f.Add("keep-alive, X-Hop", "X-Hop", "1", "1.0 a")
	f.Add(" via ,,te", "Te", "trailers", "")
	f.Add("x-courtesy-mode", HeaderMode, "wait", "1.1 b")
	f.Fuzz(func(t *testing.T, conn, key, value, via string) {
		h := http.Header{"Connection": {conn}, "Accept": {"*/*"}}
		h.Add(key, value)
		if via != "" {
			h.Add("Via", via)
		}
		want := h.Clone()
		removeHopByHop(want)
		removeControl(want)
		want.Add("Via", "1.1 courtesy-test")
		if got := outHeader(h, "1.1 courtesy-test"); !reflect.DeepEqual(got, want) {
			t.Fatalf("outHeader(%v) = %v, want %v", h, got, want)
		}
	})
}
