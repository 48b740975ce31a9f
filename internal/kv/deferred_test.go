package kv

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// openDeferred opens a store in a temporary directory and returns a bucket
// of it with its Deferred.
func openDeferred(t *testing.T) (*Bucket, *Deferred) {
	t.Helper()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := db.Bucket("d/")
	return b, b.Deferred()
}

func TestDeferred(t *testing.T) {
	b, d := openDeferred(t)
	if err := d.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Pending([]byte("k")); !ok || string(v) != "v" {
		t.Fatalf("Pending = %q %v", v, ok)
	}
	if _, err := b.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Flush: %v, want ErrNotFound", err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Pending([]byte("k")); ok {
		t.Error("still pending after Flush")
	}
	if v, err := b.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get after Flush = %q %v", v, err)
	}
	if err := d.Flush(); err != nil { // nothing queued
		t.Fatal(err)
	}
}

// TestDeferredBound: past maxDeferred writes Set commits on its own, and
// concurrent writers lose nothing.
func TestDeferredBound(t *testing.T) {
	b, d := openDeferred(t)
	const n = maxDeferred + 100
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				if err := d.Set(fmt.Appendf(nil, "%06d", i), []byte("x")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	committed := 0
	_ = b.Scan(nil, func(_, _ []byte) error { committed++; return nil })
	if committed < maxDeferred {
		t.Errorf("%d committed before Flush, want at least %d (the bound)", committed, maxDeferred)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	committed = 0
	_ = b.Scan(nil, func(_, _ []byte) error { committed++; return nil })
	if committed != n {
		t.Errorf("%d keys after Flush, want %d", committed, n)
	}
}
