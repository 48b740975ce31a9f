package frontier

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestSeenFilterLayers(t *testing.T) {
	tests := []struct {
		name     string
		keys     int
		maxBytes int64
		layers   int
		maxFP    float64 // false-positive rate
		capped   bool
	}{
		{"one layer", 500_000, 64 << 20, 1, 0.02, false},
		{"grown twice", 3_500_000, 64 << 20, 3, 0.02, false},
		{"budget reached: the last layer takes the rest", 3_000_000, 2 << 20, 1, 0.5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSeenFilter(0, tc.maxBytes)
			f.ready.Store(true)
			for i := range tc.keys {
				f.add(uint32(i%3), testHash(uint64(i)))
			}
			for i := range tc.keys {
				if f.absent(uint32(i%3), testHash(uint64(i))) {
					t.Fatalf("key %d added but absent", i)
				}
			}
			if got := len(*f.layers.Load()); got != tc.layers {
				t.Errorf("layers = %d, want %d", got, tc.layers)
			}
			if f.bytes > tc.maxBytes { // the adds are done: no lock needed
				t.Errorf("size %d over the budget %d", f.bytes, tc.maxBytes)
			}
			if f.capped.Load() != tc.capped {
				t.Errorf("capped = %v, want %v", f.capped.Load(), tc.capped)
			}
			const probes = 100_000
			fp := 0
			for i := range probes {
				if !f.absent(0, testHash(uint64(tc.keys+i))) {
					fp++
				}
			}
			if rate := float64(fp) / probes; rate > tc.maxFP {
				t.Errorf("false-positive rate %.4f, want at most %.2f", rate, tc.maxFP)
			}
		})
	}
}

// testHash is a URL hash for key i, as uniform as hashURL's and cheaper.
func testHash(i uint64) urlHash {
	var h urlHash
	binary.LittleEndian.PutUint64(h[:8], splitmix(i))
	binary.LittleEndian.PutUint64(h[8:], splitmix(^i))
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// TestSeenFilterCrawls: the same URL in two crawls is two records.
func TestSeenFilterCrawls(t *testing.T) {
	f := newSeenFilter(0, 1<<20)
	f.ready.Store(true)
	h := hashURL("http://a.test/")
	f.add(1, h)
	if f.absent(1, h) || !f.absent(2, h) {
		t.Errorf("absent(1) = %v, absent(2) = %v; want false, true", f.absent(1, h), f.absent(2, h))
	}
}

// waitFilter waits until the frontier's seen filter has scanned the store.
func (fx *fixture) waitFilter() {
	fx.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !fx.f.filter.ready.Load(); {
		if time.Now().After(deadline) {
			fx.t.Fatal("seen filter not ready after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSeenFilterAfterReopen: URLs stored by a previous run are found by the
// open scan, so that the filter never calls a stored URL absent; new URLs
// are answered without a store lookup.
func TestSeenFilterAfterReopen(t *testing.T) {
	fx := newFixture(t)
	const n = 3000
	var stored, fresh []Item
	for i := range n {
		stored = append(stored, disc(fmt.Sprintf("http://h%d.test/p/%d", i%40, i)))
		fresh = append(fresh, disc(fmt.Sprintf("http://h%d.test/q/%d", i%40, i)))
	}
	fx.put(stored...)
	fx.put(Item{Info: URLInfo{URL: "http://other.test/x", CrawlID: "c2"}})
	fx.reopen() // empty seen cache, filter from the scan
	fx.waitFilter()
	// The committer forgets each group's inserts at once (set before the
	// first Put: it reads it after), so that only the filter and the store
	// answer for URLs stored since the reopen.
	fx.f.recentMax = 1
	for i, it := range stored {
		if fx.f.absent(0, hashURL(it.Info.URL)) {
			t.Fatalf("stored URL %d called absent after reopen", i)
		}
	}
	cid, ok := fx.f.cid("c2")
	if !ok || fx.f.absent(cid, hashURL("http://other.test/x")) {
		t.Fatalf("URL of crawl c2 called absent (crawl known: %v)", ok)
	}
	hits := fx.db.Pebble().Metrics().Filter.Hits
	for i, s := range fx.put(fresh...) {
		if s != OK {
			t.Fatalf("new item %d = %v", i, s)
		}
	}
	// Pebble's filters saw hardly any of the new URLs: ours answered.
	if d := fx.db.Pebble().Metrics().Filter.Hits - hits; d > n/20 {
		t.Errorf("store filter hits for new URLs = %d, want at most %d", d, n/20)
	}
	// Known to the filter, not only to the seen cache, which forgets.
	fx.f.seen.reset()
	for i, s := range fx.put(append(stored, fresh...)...) {
		if s != Skipped {
			t.Fatalf("known item %d = %v", i, s)
		}
	}
	if s := fx.f.Stats("", ""); s.Size != 2*n {
		t.Errorf("size = %d, want %d", s.Size, 2*n)
	}
}

// TestSeenFilterPutsDuringScan: puts racing the open scan (known and new
// URLs, from several callers) are all answered right.
func TestSeenFilterPutsDuringScan(t *testing.T) {
	fx := newFixture(t)
	const n = 20_000
	var stored []Item
	for i := range n {
		stored = append(stored, disc(fmt.Sprintf("http://h%d.test/%d", i%100, i)))
	}
	for lo := 0; lo < n; lo += 2000 {
		fx.put(stored[lo : lo+2000]...)
	}
	fx.reopen()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 * 50 {
				batch := []Item{stored[i], disc(fmt.Sprintf("http://new%d.test/%d", w, i))}
				st, err := fx.f.Put(context.Background(), batch)
				if err != nil {
					errs <- err
					return
				}
				if st[0] != Skipped || st[1] != OK {
					errs <- fmt.Errorf("put %s, new = %v", batch[0].Info.URL, st)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	fx.waitFilter()
	if got := fx.put(stored...); got[0] != Skipped || got[n-1] != Skipped {
		t.Errorf("stored URLs after the scan: first %v, last %v", got[0], got[n-1])
	}
}
