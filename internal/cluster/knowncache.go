// The known-URL cache of Options.KnownCache.

package cluster

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// MaxKnownCache bounds Options.KnownCache.
const MaxKnownCache = 64 << 20

// knownCache remembers, as 64-bit hashes of (crawl, queue, URL hash), the
// URLs this process has seen stored in the frontier, so that Put need not
// ask Redis about a discovered URL again: a page's links repeat its
// site's navigation, and most links a crawler finds are URLs the crawl
// already holds. It keeps two generations of at most max/2 entries each:
// when the newer fills up, the older is dropped, so a URL put recently
// stays known and memory stays bounded (about 40 bytes an entry).
//
// A 64-bit hash can collide: with a million entries the chance that a new
// URL is taken for a known one is about one in 10^7 per URL.
type knownCache struct {
	seed maphash.Seed
	half int

	mu struct {
		sync.Mutex
		cur, old map[uint64]struct{}
	}
}

func newKnownCache(n int) *knownCache {
	k := &knownCache{seed: maphash.MakeSeed(), half: max(n/2, 1)}
	k.mu.cur = make(map[uint64]struct{})
	return k
}

func (k *knownCache) sum(crawl, key, urlHash string) uint64 {
	var h maphash.Hash
	h.SetSeed(k.seed)
	// Each part after its length, so that no two triples hash the same
	// bytes whatever they hold.
	for _, p := range [...]string{crawl, key, urlHash} {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.WriteString(p)
	}
	return h.Sum64()
}

// has reports whether the URL is known; it keeps a URL found in the older
// generation by moving it to the newer.
func (k *knownCache) has(s uint64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.mu.cur[s]; ok {
		return true
	}
	if _, ok := k.mu.old[s]; ok {
		k.addLocked(s)
		return true
	}
	return false
}

func (k *knownCache) add(s uint64) {
	k.mu.Lock()
	k.addLocked(s)
	k.mu.Unlock()
}

func (k *knownCache) addLocked(s uint64) {
	if len(k.mu.cur) >= k.half {
		k.mu.old, k.mu.cur = k.mu.cur, make(map[uint64]struct{}, k.half)
	}
	k.mu.cur[s] = struct{}{}
}

// reset forgets every URL (after this process deleted or purged URLs).
func (k *knownCache) reset() {
	k.mu.Lock()
	k.mu.cur, k.mu.old = make(map[uint64]struct{}), nil
	k.mu.Unlock()
}

// len is the number of URLs known (for tests).
func (k *knownCache) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.mu.cur) + len(k.mu.old)
}

// forgetKnown empties the known-URL cache, if any.
func (f *Frontier) forgetKnown() {
	if f.known != nil {
		f.known.reset()
	}
}
