package dedup

import (
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxTokenBytes bounds one token; longer runs of letters are cut (they are
// noise such as base64 blobs, and the cut keeps hashing linear).
const MaxTokenBytes = 64

// FNV-1a 64-bit parameters (RFC draft-eastlake-fnv, "FNV-1a").
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mix64 is the MurmurHash3 fmix64 finalizer: FNV-1a's high bits depend
// weakly on the last bytes of short strings, and simhash needs every bit
// of a feature hash to be a fair coin.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Simhash returns the 64-bit simhash (Charikar 2002; Manku, Jain and Das
// Sarma 2007) of text. Words are maximal runs of letters and digits,
// lower-cased; numbers are kept as their text ("5.1" is the words "5" and
// "1"), so section numbers, versions and counters tell pages apart. Features
// are word pairs (2-shingles), hashed with FNV-1a and a 64-bit finalizer,
// and weighted: a pair weighs NumberWeight when it holds a number (dates,
// times and counters change between near-duplicate copies of a page; a
// page whose stamp changed stays near its copy) and WordWeight otherwise,
// times 1+log2 of its count in the text (a phrase repeated a hundred times
// counts about eight times, not a hundred: pages of one template that repeat
// "Return type" or "See also" do not look alike for it). A text of one word
// uses that word; no words hash to 0. Fingerprint applies it to the main
// content of an HTML page.
func Simhash(text string) uint64 {
	f := getFeatures()
	defer putFeatures(f)
	f.addText([]byte(text))
	return f.sum()
}

// Feature weights of Simhash.
const (
	WordWeight   = 4
	NumberWeight = 1
	// shingleWords is the number of consecutive words in one feature.
	shingleWords = 2
	// maxFeatures bounds the distinct features of one text: past it new
	// features are dropped (256 KiB of text has fewer).
	maxFeatures = 1 << 17
)

// features accumulates the weighted shingles of a text: the hashes of the
// shingles with a number and of those without, each counted at the end in
// table (reused from page to page, as the slices are).
type features struct {
	words, nums []uint64
	ring        [shingleWords]uint64
	num         [shingleWords]bool
	nw          int // words seen
	table       countTable
}

var featurePool = sync.Pool{New: func() any { return new(features) }}

// getFeatures returns an empty features from the pool; putFeatures gives
// it back.
func getFeatures() *features {
	f := featurePool.Get().(*features)
	f.words, f.nums, f.nw = f.words[:0], f.nums[:0], 0
	return f
}

func putFeatures(f *features) {
	if cap(f.words)+cap(f.nums) <= 1<<16 && len(f.table.keys) <= 1<<17 {
		featurePool.Put(f)
	}
}

// addText adds the words of text. ASCII, the hot path, is folded by a
// table and each word hashed as it is read; other runes are decoded and
// judged by package unicode.
func (f *features) addText(text []byte) {
	h := uint64(fnvOffset) // FNV-1a of the word's first MaxTokenBytes bytes, lower-cased
	n := 0                 // bytes hashed
	digit := false         // the word holds a digit
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			l := asciiWord[c]
			if l == 0 {
				if n > 0 {
					f.addWord(h, digit)
					h, n, digit = fnvOffset, 0, false
				}
				continue
			}
			digit = digit || l <= '9'
			if n < MaxTokenBytes {
				h ^= uint64(l)
				h *= fnvPrime
				n++
			}
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if n > 0 {
				f.addWord(h, digit)
				h, n, digit = fnvOffset, 0, false
			}
			continue
		}
		digit = digit || unicode.IsDigit(r)
		r = unicode.ToLower(r)
		if m := utf8.EncodeRune(enc[:], r); n+m <= MaxTokenBytes {
			for _, b := range enc[:m] {
				h ^= uint64(b)
				h *= fnvPrime
			}
			n += m
		}
	}
	if n > 0 {
		f.addWord(h, digit)
	}
}

// asciiWord maps an ASCII byte to itself lower-cased when it is part of a
// word (a letter or a digit), to 0 when it separates words.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z':
			t[c] = c
		case 'A' <= c && c <= 'Z':
			t[c] = c + 'a' - 'A'
		}
	}
	return t
}()

// addWord adds one word, by its FNV-1a hash, and the shingle it ends.
func (f *features) addWord(fnv uint64, number bool) {
	f.ring[f.nw%shingleWords] = mix64(fnv)
	f.num[f.nw%shingleWords] = number
	f.nw++
	if f.nw < shingleWords {
		return
	}
	x := uint64(0)
	hasNum := false
	for j := range shingleWords {
		k := (f.nw - shingleWords + j) % shingleWords
		x = bits.RotateLeft64(x, 23) ^ f.ring[k]
		hasNum = hasNum || f.num[k]
	}
	f.add(mix64(x), hasNum)
}

func (f *features) add(h uint64, number bool) {
	if len(f.words)+len(f.nums) >= maxFeatures {
		return
	}
	if number {
		f.nums = append(f.nums, h)
	} else {
		f.words = append(f.words, h)
	}
}

// sum returns the simhash of the features added.
func (f *features) sum() uint64 {
	if f.nw > 0 && f.nw < shingleWords {
		// Fewer words than a shingle: the words are the features.
		for j := range f.nw {
			f.add(f.ring[j], f.num[j])
		}
	}
	if len(f.words)+len(f.nums) == 0 {
		return 0
	}
	var sums [64]int64
	total := weigh(&sums, f.words, WordWeight, &f.table) + weigh(&sums, f.nums, NumberWeight, &f.table)
	var out uint64
	for b, v := range sums {
		if 2*v > total {
			out |= 1 << b
		}
	}
	return out
}

// weigh adds each distinct hash of hs to sums, bit by bit, weighted by
// base times 1 + floor(log2(its count)), and returns the weights' total.
// The hashes are counted in t, an open-addressing table (a sort cost
// twice as much for a page's few thousand), then the hashes of each
// weight are counted eight bits at a time (counter) and multiplied by the
// weight: most features occur once, so this is one SWAR add per feature
// instead of 64 multiply-adds.
func weigh(sums *[64]int64, hs []uint64, base int64, t *countTable) int64 {
	t.count(hs)
	var byLevel [33]counter // level = 1 + floor(log2(count)), 1..32
	used := 0               // highest level used
	for i, n := range t.counts {
		if n == 0 {
			continue
		}
		lv := bits.Len32(n)
		byLevel[lv].add(t.keys[i])
		used = max(used, lv)
	}
	var total int64
	for lv := 1; lv <= used; lv++ {
		c := &byLevel[lv]
		if c.total == 0 {
			continue
		}
		c.drain()
		w := base * int64(lv)
		for b := range 64 {
			sums[b] += w * int64(c.counts[b])
		}
		total += w * int64(c.total)
	}
	return total
}

// countTable counts equal hashes: linear probing in a table of at least
// twice as many slots as hashes, indexed by a hash's top bits (the hashes
// are mixed, so their top bits are uniform). A slot whose count is 0 is
// empty.
type countTable struct {
	keys   []uint64
	counts []uint32
}

// count empties t and counts hs in it.
func (t *countTable) count(hs []uint64) {
	shift := 64 - bits.Len(uint(2*len(hs)))
	size := 1 << (64 - shift)
	if cap(t.keys) < size {
		t.keys, t.counts = make([]uint64, size), make([]uint32, size)
	}
	t.keys, t.counts = t.keys[:size], t.counts[:size]
	clear(t.counts)
	mask := size - 1
	for _, h := range hs {
		i := int(h >> shift & uint64(mask))
		for t.counts[i] != 0 && t.keys[i] != h {
			i = (i + 1) & mask
		}
		t.keys[i] = h
		t.counts[i]++
	}
}

// spread[v] has bit i of v in byte i, so that adding spread values counts
// eight bits at once in eight 8-bit lanes (SWAR).
var spread = func() (t [256]uint64) {
	for v := range 256 {
		for i := range 8 {
			t[v] |= uint64(v>>i&1) << (8 * i)
		}
	}
	return t
}()

// counter counts, for each of the 64 bit positions, the hashes added
// that have the bit set.
type counter struct {
	lanes   [8]uint64 // lane j byte i: count of bit 8j+i, up to 255
	pending int       // hashes in lanes
	counts  [64]int32
	total   int32
}

func (c *counter) add(h uint64) {
	for j := range 8 {
		c.lanes[j] += spread[byte(h>>(8*j))]
	}
	c.total++
	if c.pending++; c.pending == 255 {
		c.drain()
	}
}

// drain moves the lanes into counts.
func (c *counter) drain() {
	for j := range 8 {
		for i := range 8 {
			c.counts[8*j+i] += int32(byte(c.lanes[j] >> (8 * i)))
		}
		c.lanes[j] = 0
	}
	c.pending = 0
}

// Hamming returns the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
