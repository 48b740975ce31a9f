package kv

import (
	"errors"
	"fmt"
	"testing"
)

func TestBucketRoundTripAndReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := db.Bucket("a/"), db.Bucket("b/")
	for i := range 3 {
		if err := a.Set(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Set([]byte("k0"), []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete([]byte("k1")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b = db.Bucket("a/"), db.Bucket("b/")
	var got []string
	if err := a.Scan(nil, func(k, v []byte) error {
		got = append(got, string(k)+"="+string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "[k0=v0 k2=v2]"; fmt.Sprint(got) != want {
		t.Errorf("scan after reopen = %v, want %s", got, want)
	}
	if v, err := b.Get([]byte("k0")); err != nil || string(v) != "other" {
		t.Errorf("b.Get = %q, %v", v, err)
	}
	if _, err := a.Get([]byte("k1")); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted key: err = %v, want ErrNotFound", err)
	}
}

func TestScanStops(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bk := db.Bucket("x/")
	for _, k := range []string{"p1", "p2", "q1"} {
		if err := bk.SetNoSync([]byte(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop")
	n := 0
	err = bk.Scan([]byte("p"), func(k, v []byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Scan = %v after %d keys; want stop after 1", err, n)
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ in, want []byte }{
		{[]byte("a/"), []byte("a0")},
		{[]byte{0x01, 0xff}, []byte{0x02}},
		{[]byte{0xff, 0xff}, nil},
	}
	for _, tc := range tests {
		if got := PrefixEnd(tc.in); string(got) != string(tc.want) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestOpenOptions opens stores with the Pebble knobs set and checks that
// they work (writes, flushes into files, reads back after a reopen).
func TestOpenOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"defaults", Options{}},
		{"large store", Options{CacheBytes: 16 << 20, MemTableBytes: 8 << 20, TargetFileBytes: 4 << 20, MaxTargetFileBytes: 16 << 20, MaxOpenFiles: 64}},
		{"no filters", Options{BloomBitsPerKey: -1, TargetFileBytes: 1 << 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			b := db.Bucket("t/")
			for i := range 1000 {
				if err := b.SetNoSync(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Pebble().Flush(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = Open(dir, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n := db.Pebble().Metrics().Total().TablesCount; n == 0 {
				t.Errorf("no sstable after a flush")
			}
			v, err := db.Bucket("t/").Get([]byte("k0999"))
			if err != nil || string(v) != "v999" {
				t.Errorf("Get = %q, %v; want v999", v, err)
			}
			if _, err := db.Bucket("t/").Get([]byte("k1000")); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
			}
		})
	}
}
