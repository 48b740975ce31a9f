package dedup

import (
	"math/bits"
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
// lower-cased; every word containing a digit counts as the same word, so
// dates, times and counters do not change the hash. Features are word
// pairs (2-shingles), each hashed with FNV-1a and a 64-bit finalizer and
// weighted 1 per occurrence. On generated Zipfian text of 1,000 words, a
// page whose weekday and month names changed stays within distance 3 in
// 97% of cases, while distinct pages lie 10 or more bits apart (see the
// tests); word unigrams instead collapse distinct pages of one language
// onto the same hash. A text of one word uses that word; no words hash to 0.
func Simhash(text string) uint64 { return simhashK(text, shingleWords) }

// shingleWords is the number of consecutive words in one feature.
const shingleWords = 2

func simhashK(text string, k int) uint64 {
	var sums counter
	var ring [8]uint64 // hashes of the last k words
	nw := 0
	var tok [MaxTokenBytes]byte
	n := 0         // bytes in tok
	digit := false // tok holds a digit
	words := 0     // features added
	flush := func() {
		if n == 0 {
			return
		}
		h := uint64(fnvOffset)
		if digit {
			// Every token with a digit is the same feature: dates, times,
			// counters and prices are what changes between near-duplicate
			// pages (seed 001 §4: session ids and growing URLs; dynamic
			// "generated at" lines), not what makes pages different.
			h = (h ^ '0') * fnvPrime
		} else {
			for _, c := range tok[:n] {
				h ^= uint64(c)
				h *= fnvPrime
			}
		}
		digit = false
		ring[nw%8] = mix64(h)
		nw++
		if nw >= k {
			f := uint64(0)
			for j := range k {
				f = bits.RotateLeft64(f, 23) ^ ring[(nw-k+j)%8]
			}
			sums.add(mix64(f))
			words++
		}
		n = 0
	}
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
			flush()
		}
	}
	flush()
	if words == 0 && nw > 0 {
		// Fewer words than a shingle: the words are the features.
		for j := range nw {
			sums.add(ring[j])
		}
		words = nw
	}
	if words == 0 {
		return 0
	}
	return sums.sum()
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

// counter counts, for each of the 64 bit positions, the features that
// have the bit set. A feature with the bit set adds +1 to the simhash sum,
// one without it -1, so the bit of the result is set when more than half
// of the features have it.
type counter struct {
	lanes   [8]uint64 // lane j byte i: count of bit 8j+i, up to 255
	pending int       // features in lanes
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

func (c *counter) drain() {
	for j := range 8 {
		for i := range 8 {
			c.counts[8*j+i] += int32(byte(c.lanes[j] >> (8 * i)))
		}
		c.lanes[j] = 0
	}
	c.pending = 0
}

func (c *counter) sum() uint64 {
	c.drain()
	var out uint64
	for b := range 64 {
		if 2*c.counts[b] > c.total {
			out |= 1 << b
		}
	}
	return out
}

// Hamming returns the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
