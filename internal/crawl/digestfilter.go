package crawl

import (
	"hash/maphash"
	"sync/atomic"
)

// digestFilterBits sizes the payload-digest filter: 2^25 bits (4 MiB) hold
// about 3.5 million digests at a 1 % false-positive rate; past that the
// rate rises and more lookups reach the store, which stays exact.
const digestFilterBits = 1 << 25

// digestFilter is a Bloom filter in front of the payload-digest bucket.
// Almost every page has a payload never seen before, and asking the store
// for an absent key costs a memtable search and a filter probe per level
// (a few microseconds, 3 % of a crawl's CPU in profiles); the filter
// answers "certainly new" from memory. Lock-free: bits are only ever set.
type digestFilter struct {
	seed  maphash.Seed
	words []atomic.Uint64
}

func newDigestFilter() *digestFilter {
	return &digestFilter{seed: maphash.MakeSeed(), words: make([]atomic.Uint64, digestFilterBits/64)}
}

// positions gives the filter's 7 bit positions for d (double hashing).
func (f *digestFilter) positions(d string, fn func(bit uint64) bool) bool {
	h := maphash.String(f.seed, d)
	h1, h2 := h&0xffffffff, h>>32|1
	for i := range uint64(7) {
		if !fn((h1 + i*h2) % digestFilterBits) {
			return false
		}
	}
	return true
}

// Add records d.
func (f *digestFilter) Add(d string) {
	f.positions(d, func(bit uint64) bool {
		f.words[bit/64].Or(1 << (bit % 64))
		return true
	})
}

// MayContain is false when d was certainly never added.
func (f *digestFilter) MayContain(d string) bool {
	return f.positions(d, func(bit uint64) bool {
		return f.words[bit/64].Load()&(1<<(bit%64)) != 0
	})
}
