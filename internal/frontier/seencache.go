package frontier

import (
	"encoding/binary"
	"sync/atomic"
)

// seenCache is a bounded, lock-free cache of URL fingerprints known to be in
// the frontier, so that the common case of the seen-test (a link to a page
// already known) costs a few loads instead of a disk lookup. It is 4-way set
// associative; a full set overwrites a slot chosen by the fingerprint. A
// fingerprint is 64 bits of the URL hash mixed with the crawl id; two URLs
// sharing one (odds about n/2⁶⁴ per lookup) would make the second look
// known, which is negligible next to the 128-bit key on disk.
type seenCache struct {
	// slots is swapped for an empty array by reset: clearing 32 MiB slot
	// by slot took seconds under the race detector, and an add that lands
	// in the old array after the swap only costs a later miss.
	slots atomic.Pointer[[]atomic.Uint64]
	mask  uint64 // number of sets - 1
}

const seenWays = 4

func newSeenCache(entries int) *seenCache {
	sets := uint64(1)
	for sets*seenWays < uint64(entries) {
		sets <<= 1
	}
	c := &seenCache{mask: sets - 1}
	c.reset()
	return c
}

func fingerprint(cid uint32, h urlHash) uint64 {
	fp := binary.LittleEndian.Uint64(h[:8]) ^ (uint64(cid)+1)*0x9e3779b97f4a7c15
	if fp == 0 {
		fp = 1 // 0 marks an empty slot
	}
	return fp
}

func (c *seenCache) set(fp uint64) []atomic.Uint64 {
	i := ((fp >> 7) & c.mask) * seenWays
	return (*c.slots.Load())[i : i+seenWays]
}

func (c *seenCache) contains(fp uint64) bool {
	s := c.set(fp)
	for i := range seenWays {
		if s[i].Load() == fp {
			return true
		}
	}
	return false
}

func (c *seenCache) add(fp uint64) {
	s := c.set(fp)
	for i := range seenWays {
		switch s[i].Load() {
		case fp:
			return
		case 0:
			if s[i].CompareAndSwap(0, fp) {
				return
			}
		}
	}
	s[fp%seenWays].Store(fp)
}

// reset forgets everything (after URLs were deleted).
func (c *seenCache) reset() {
	slots := make([]atomic.Uint64, (c.mask+1)*seenWays)
	c.slots.Store(&slots)
}
