package dedup

import (
	"math/bits"
	"slices"
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
	f.addText(text)
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
// shingles with a number and of those without, each sorted and counted at
// the end (a sort is cheaper than a map for a page's few thousand).
type features struct {
	words, nums []uint64
	ring        [shingleWords]uint64
	num         [shingleWords]bool
	nw          int // words seen
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
	if cap(f.words)+cap(f.nums) <= 1<<16 {
		featurePool.Put(f)
	}
}

// addText adds the words of text.
func (f *features) addText(text string) {
	var tok [MaxTokenBytes]byte
	n := 0         // bytes in tok
	digit := false // tok holds a digit
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case r < utf8.RuneSelf && '0' <= r && r <= '9':
			digit = true
			if n < MaxTokenBytes {
				tok[n] = byte(r)
				n++
			}
		case r < utf8.RuneSelf && 'a' <= r && r <= 'z':
			if n < MaxTokenBytes {
				tok[n] = byte(r)
				n++
			}
		case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
			if n < MaxTokenBytes {
				tok[n] = byte(r + 'a' - 'A')
				n++
			}
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			digit = digit || unicode.IsDigit(r)
			r = unicode.ToLower(r)
			if n+utf8.RuneLen(r) <= MaxTokenBytes {
				n += utf8.EncodeRune(tok[n:], r)
			}
		default:
			if n > 0 {
				f.addWord(tok[:n], digit)
			}
			n, digit = 0, false
		}
	}
	if n > 0 {
		f.addWord(tok[:n], digit)
	}
}

// addWord adds one word and the shingle it ends.
func (f *features) addWord(w []byte, number bool) {
	h := uint64(fnvOffset)
	for _, c := range w {
		h ^= uint64(c)
		h *= fnvPrime
	}
	f.ring[f.nw%shingleWords] = mix64(h)
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
	total := weigh(&sums, f.words, WordWeight) + weigh(&sums, f.nums, NumberWeight)
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
// It sorts hs. The hashes of each weight are counted eight bits at a time
// (counter), then multiplied by the weight: most features occur once, so
// this is one SWAR add per feature instead of 64 multiply-adds.
func weigh(sums *[64]int64, hs []uint64, base int64) int64 {
	slices.Sort(hs)
	var byLevel [33]counter // level = 1 + floor(log2(count)), 1..32
	used := 0               // highest level used
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j] == hs[i] {
			j++
		}
		lv := bits.Len(uint(j - i))
		byLevel[lv].add(hs[i])
		used = max(used, lv)
		i = j
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
