package cluster

import "testing"

// TestKnownCacheBound: the cache never holds more than its size, and the
// URLs added or looked up last are kept.
func TestKnownCacheBound(t *testing.T) {
	tests := []struct{ size, adds int }{{1, 5}, {10, 100}, {1000, 999}, {1000, 100000}}
	for _, tc := range tests {
		k := newKnownCache(tc.size)
		for i := range tc.adds {
			s := k.sum("crawl", "key", string(rune(i)))
			k.add(s)
			if n := k.len(); n > max(tc.size, 2) {
				t.Fatalf("size %d: %d entries after %d adds", tc.size, n, i+1)
			}
			if !k.has(s) {
				t.Fatalf("size %d: entry %d not kept right after its add", tc.size, i)
			}
		}
		if tc.adds <= tc.size/2 {
			for i := range tc.adds {
				if !k.has(k.sum("crawl", "key", string(rune(i)))) {
					t.Fatalf("size %d: entry %d of %d lost", tc.size, i, tc.adds)
				}
			}
		}
		k.reset()
		if k.len() != 0 || k.has(k.sum("crawl", "key", string(rune(0)))) {
			t.Fatalf("size %d: entries left after reset", tc.size)
		}
	}
	k := newKnownCache(10)
	if k.sum("a", "b\x00c", "") == k.sum("a\x00b", "c", "") {
		t.Error("sum does not separate its parts")
	}
}
