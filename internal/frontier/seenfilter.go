package frontier

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// seenFilter is a Bloom filter of every URL record in the store, so that
// the seen-test of a new URL (the common case of a bulk put, and of a
// crawl's first pages on a site) costs a few cache lines instead of a
// Pebble seek through every memtable and level (a fifth of a put's CPU).
// It answers only "absent": a URL it may hold is looked up as before, so a
// false positive costs that lookup and nothing else, and a deleted URL
// left in the filter is one.
//
// The committer adds every URL it writes before the group is applied and
// before the group's generation is published, so a Put that read that
// generation finds the group's URLs in the filter. URLs stored before Open
// are added by a scan of the URL records in the background; until it ends
// the filter is not ready and answers nothing.
//
// It is blocked (each key sets 7 bits in one 512-bit block: one cache miss
// per probe) and made of layers: when the last layer holds its capacity
// at 10 bits per key, a layer twice its size is added, while the total
// stays under the byte budget; past it the last layer takes the rest and
// its false-positive rate rises (only costing lookups).
type seenFilter struct {
	layers atomic.Pointer[[]*filterLayer]
	ready  atomic.Bool
	// capped is set once the budget has no room for another layer: the
	// last one takes every later key without asking grown again.
	capped atomic.Bool
	// grow serializes adding a layer (the committer and the open scan add).
	grow     sync.Mutex
	maxBytes int64
	bytes    int64 // the layers' size (under grow)
}

// filterLayer is one Bloom filter of the stack.
type filterLayer struct {
	words    []atomic.Uint64 // blockWords per block
	blocks   uint64
	capacity int64
	n        atomic.Int64
}

const (
	blockWords    = 8 // 512 bits: a cache line
	filterProbes  = 7 // 9 bits of position each, from 63 bits of hash
	filterBitsKey = 10
	minFilterKeys = 1 << 20
)

// newSeenFilter returns an empty filter sized for expect keys, whose layers
// together stay under maxBytes (at least one layer is made).
func newSeenFilter(expect int64, maxBytes int64) *seenFilter {
	f := &seenFilter{maxBytes: maxBytes}
	capacity := min(max(int64(minFilterKeys), 2*expect), maxBytes*8/filterBitsKey)
	layers := []*filterLayer{f.newLayer(capacity)}
	f.layers.Store(&layers)
	return f
}

// newLayer makes a layer for capacity keys and counts its bytes (under
// grow, or before f is shared).
func (f *seenFilter) newLayer(capacity int64) *filterLayer {
	blocks := uint64(max(1, capacity*filterBitsKey/(blockWords*64)))
	f.bytes += int64(blocks) * blockWords * 8
	return &filterLayer{words: make([]atomic.Uint64, blocks*blockWords), blocks: blocks, capacity: capacity}
}

// filterHash is the filter's view of a URL record's key: the hash's two
// halves, the first mixed with the crawl id (a URL in two crawls is two
// records).
func filterHash(cid uint32, h urlHash) (uint64, uint64) {
	a := binary.LittleEndian.Uint64(h[:8]) ^ (uint64(cid)+1)*0x9e3779b97f4a7c15
	return a, binary.LittleEndian.Uint64(h[8:])
}

// block returns the words of the block a key falls in.
func (l *filterLayer) block(a uint64) []atomic.Uint64 {
	i, _ := bits.Mul64(a, l.blocks) // a uniform index in [0, blocks)
	return l.words[i*blockWords : (i+1)*blockWords]
}

func (l *filterLayer) has(a, b uint64) bool {
	w := l.block(a)
	for range filterProbes {
		bit := b & 511
		if w[bit>>6].Load()&(1<<(bit&63)) == 0 {
			return false
		}
		b >>= 9
	}
	return true
}

func (l *filterLayer) set(a, b uint64) {
	w := l.block(a)
	for range filterProbes {
		bit := b & 511
		if m := uint64(1) << (bit & 63); w[bit>>6].Load()&m == 0 {
			w[bit>>6].Or(m)
		}
		b >>= 9
	}
}

// absent reports whether the store certainly holds no record of the URL.
// It is false until the open scan is done.
func (f *seenFilter) absent(cid uint32, h urlHash) bool {
	if !f.ready.Load() {
		return false
	}
	a, b := filterHash(cid, h)
	for _, l := range *f.layers.Load() {
		if l.has(a, b) {
			return false
		}
	}
	return true
}

// add records a URL written to the store.
func (f *seenFilter) add(cid uint32, h urlHash) {
	a, b := filterHash(cid, h)
	layers := *f.layers.Load()
	l := layers[len(layers)-1]
	if l.n.Add(1) > l.capacity && !f.capped.Load() {
		l = f.grown(l)
	}
	l.set(a, b)
}

// grown returns the layer to add to once full is full: a new one twice its
// size, or full itself when the budget has no room for it.
func (f *seenFilter) grown(full *filterLayer) *filterLayer {
	f.grow.Lock()
	defer f.grow.Unlock()
	layers := *f.layers.Load()
	last := layers[len(layers)-1]
	if last != full {
		return last // another adder grew it
	}
	capacity := 2 * full.capacity
	if f.bytes+capacity*filterBitsKey/8 > f.maxBytes {
		f.capped.Store(true)
		return full
	}
	grown := append(append([]*filterLayer(nil), layers...), f.newLayer(capacity))
	f.layers.Store(&grown)
	return grown[len(grown)-1]
}

// fill adds every URL record of the store and marks the filter ready, unless
// stop is closed first (the filter then stays unready). The committer adds
// what it writes meanwhile, so the records the scan misses are in already.
func (f *seenFilter) fill(db *pebble.DB, stop <-chan struct{}) error {
	prefix := []byte(prefixURL)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: kv.PrefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("frontier: seen filter: %w", err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%4096 == 0 {
			select {
			case <-stop:
				return it.Close()
			default:
			}
		}
		k := it.Key()[len(prefix):]
		if len(k) != 4+hashLen {
			continue // not a URL record; the lookups will say
		}
		f.add(binary.BigEndian.Uint32(k), urlHash(k[4:]))
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("frontier: seen filter: %w", err)
	}
	f.ready.Store(true)
	return nil
}

// startFilter makes the seen filter (Open, before the committer starts)
// and starts its scan of the stored URLs. A store with more URLs than the
// budget holds at full precision gets no filter: its answers would rarely
// spare a lookup.
func (f *Frontier) startFilter() {
	if f.opts.SeenFilterBytes < 0 {
		return
	}
	var stored int64
	for _, c := range f.mu.crawls {
		for _, q := range c.queues {
			stored += int64(q.rec.queued + q.rec.completed)
		}
	}
	if stored*filterBitsKey/8 > f.opts.SeenFilterBytes {
		return
	}
	f.filter = newSeenFilter(stored, f.opts.SeenFilterBytes)
	f.filterDone = make(chan struct{})
	go func() {
		defer close(f.filterDone)
		// A failed scan leaves the filter unready: every seen-test then
		// reads the store, which reports the error itself.
		_ = f.filter.fill(f.db, f.stop)
	}()
}

// absent reports whether the store certainly holds no record of the URL
// (false without a filter or before its scan ended).
func (f *Frontier) absent(cid uint32, h urlHash) bool {
	return f.filter != nil && f.filter.absent(cid, h)
}
