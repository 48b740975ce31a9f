package dedup

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// openDB opens a kv store in dir; the test closes it.
func openDB(t *testing.T, dir string) *kv.DB {
	t.Helper()
	db, err := kv.Open(filepath.Join(dir, "state"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newStoredIndex(t *testing.T, db *kv.DB, opts IndexOptions) *Index {
	t.Helper()
	opts.DB = db
	opts.OnError = func(err error) { t.Errorf("store error: %v", err) }
	x, err := NewIndex(opts)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// storedKeys counts the keys of site on disk.
func storedKeys(t *testing.T, db *kv.DB, site string) int {
	t.Helper()
	lower := siteKey(site)
	upper := append(lower[:len(lower)-1:len(lower)-1], 1)
	it, err := db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIndexResume adds hashes, closes the store, reopens it with a fresh
// index (a resumed crawl) and finds every site's hashes again: a near
// duplicate trap does not get a fresh allowance after a restart.
func TestIndexResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	sites := map[string][]uint64{}
	db := openDB(t, dir)
	x := newStoredIndex(t, db, IndexOptions{})
	for _, s := range []string{"a.test", "b.test", "a.test.evil", "xn--caf-dma.test"} {
		for range 50 {
			h := rng.Uint64()
			if _, _, near := x.Check(s, h); near {
				continue
			}
			sites[s] = append(sites[s], h)
		}
	}
	if err := x.Flush(); err != nil { // as the crawler does before closing
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, dir)
	defer db.Close()
	y := newStoredIndex(t, db, IndexOptions{})
	if n, _ := y.Len(); n != 0 {
		t.Fatalf("fresh index holds %d sites before any use: loading is not lazy", n)
	}
	tests := []struct {
		name string
		site string
		h    func(h uint64) uint64
		want bool
	}{
		{"identical", "a.test", func(h uint64) uint64 { return h }, true},
		{"two bits off", "b.test", func(h uint64) uint64 { return h ^ 0b101 }, true},
		{"three bits off", "a.test.evil", func(h uint64) uint64 { return h ^ (1 | 1<<20 | 1<<63) }, true},
		{"idn site", "xn--caf-dma.test", func(h uint64) uint64 { return h ^ 1<<40 }, true},
		{"other site", "c.test", func(h uint64) uint64 { return h }, false},
		{"prefix of a site name", "a", func(h uint64) uint64 { return h }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.site
			if !tc.want {
				src = "a.test"
			}
			for i, h := range sites[src] {
				_, _, ok := y.Near(tc.site, tc.h(h))
				if ok != tc.want {
					t.Fatalf("hash %d of %s: near in %s = %v after resume, want %v", i, src, tc.site, ok, tc.want)
				}
			}
		})
	}
	// A hash added after the resume continues the sequence: nothing
	// stored before is overwritten.
	h := rng.Uint64()
	y.Check("a.test", h)
	if err := y.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := storedKeys(t, db, "a.test"), len(sites["a.test"])+1; got != want {
		t.Errorf("a.test has %d stored hashes, want %d", got, want)
	}
}

// TestIndexStoreBounds: the store keeps a site's newest MaxPerSite hashes,
// like memory, and a site evicted from memory is loaded again.
func TestIndexStoreBounds(t *testing.T) {
	tests := []struct {
		name     string
		perSite  int
		reopen   int // MaxPerSite of the resumed index
		add      int
		wantKeys int // keys on disk after the resume loaded the site
	}{
		{"under the bound", 10, 10, 4, 4},
		{"over the bound", 10, 10, 25, 10},
		// Slots written under the larger bound stay on disk (bounded by
		// it) but only the newest hashes are loaded.
		{"bound shrinks on resume", 10, 3, 8, 8},
		{"bound grows on resume", 3, 10, 8, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := openDB(t, dir)
			x := newStoredIndex(t, db, IndexOptions{MaxPerSite: tc.perSite})
			var added []uint64
			for i := range tc.add {
				// Far apart: every block differs.
				h := uint64(i+1) * 0x0001_0001_0001_0001
				x.Add("s.test", h)
				added = append(added, h)
			}
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openDB(t, dir)
			defer db.Close()
			y := newStoredIndex(t, db, IndexOptions{MaxPerSite: tc.reopen})
			keep := min(tc.add, tc.perSite, tc.reopen)
			for i, h := range added {
				_, _, ok := y.Near("s.test", h)
				if want := i >= len(added)-keep; ok != want {
					t.Errorf("hash %d of %d: known = %v, want %v", i, len(added), ok, want)
				}
			}
			if got := storedKeys(t, db, "s.test"); got != tc.wantKeys {
				t.Errorf("%d keys stored, want %d", got, tc.wantKeys)
			}
		})
	}
}

func TestIndexStoreEvictionReloads(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	x := newStoredIndex(t, db, IndexOptions{MaxSites: 1})
	x.Check("a.test", 0xaaaa_0000_ffff_1234)
	x.Check("b.test", 0xbbbb_1111_eeee_5678) // evicts a.test from memory
	if n, _ := x.Len(); n != 1 {
		t.Fatalf("%d sites in memory, want 1", n)
	}
	if _, d, ok := x.Check("a.test", 0xaaaa_0000_ffff_1235); !ok || d != 1 {
		t.Errorf("evicted site not reloaded from the store: ok=%v dist=%d", ok, d)
	}
}

// TestIndexFlush: added hashes reach the store at Flush, one commit for
// all of them, not one per hash.
func TestIndexFlush(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	x := newStoredIndex(t, db, IndexOptions{})
	for i := range 5 {
		x.Add("s.test", uint64(i+1)*0x0001_0001_0001_0001)
	}
	if n := storedKeys(t, db, "s.test"); n != 0 {
		t.Errorf("%d keys stored before Flush, want 0", n)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := storedKeys(t, db, "s.test"); n != 5 {
		t.Errorf("%d keys stored after Flush, want 5", n)
	}
}

func TestIndexStoreBadSite(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	var errs []error
	x, err := NewIndex(IndexOptions{DB: db, OnError: func(err error) { errs = append(errs, err) }})
	if err != nil {
		t.Fatal(err)
	}
	// Kept in memory, reported, never a panic.
	x.Check("a\x00b", 42)
	if _, _, ok := x.Near("a\x00b", 42); !ok {
		t.Error("site with a NUL byte not kept in memory")
	}
	if len(errs) == 0 || !errors.Is(errs[0], errBadSite) {
		t.Errorf("errors %v, want errBadSite", errs)
	}
}

// BenchmarkIndexCheckStored is BenchmarkIndexCheck with the store: every
// new hash is also one Pebble batch (no fsync).
func BenchmarkIndexCheckStored(b *testing.B) {
	db, err := kv.Open(filepath.Join(b.TempDir(), "state"), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	x, err := NewIndex(IndexOptions{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range DefaultMaxPerSite {
		x.Add("site", rng.Uint64())
	}
	b.ReportAllocs()
	for b.Loop() {
		x.Check("site", rng.Uint64())
	}
}
