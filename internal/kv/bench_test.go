package kv

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkGetMissing asks for absent keys in a store of 200,000 flushed
// keys, with and without Bloom filters: the frontier's seen-test is mostly
// such misses.
func BenchmarkGetMissing(b *testing.B) {
	for _, bits := range []int{-1, 10} {
		b.Run(fmt.Sprintf("bloom=%d", bits), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{BloomBitsPerKey: bits})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			bk := db.Bucket("s/")
			const n = 200_000
			batch := db.Pebble().NewBatch()
			var k [9]byte
			k[0] = 's'
			for i := range n {
				binary.BigEndian.PutUint64(k[1:], uint64(i)*2) // even keys only
				batch.Set(append([]byte("s/"), k[1:]...), nil, nil)
				if batch.Len() > 1<<20 {
					if err := batch.Commit(nil); err != nil {
						b.Fatal(err)
					}
					if err := db.Pebble().Flush(); err != nil {
						b.Fatal(err)
					}
					batch = db.Pebble().NewBatch()
				}
			}
			if err := batch.Commit(nil); err != nil {
				b.Fatal(err)
			}
			if err := db.Pebble().Flush(); err != nil {
				b.Fatal(err)
			}
			i := uint64(0)
			for b.Loop() {
				binary.BigEndian.PutUint64(k[1:], (i%n)*2+1) // odd: absent
				if _, err := bk.Get(k[1:]); err != ErrNotFound {
					b.Fatalf("Get: %v", err)
				}
				i += 7919
			}
		})
	}
}
