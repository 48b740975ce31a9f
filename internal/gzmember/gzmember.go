// Package gzmember compresses a whole input into one gzip member (RFC 1952)
// quickly when the input is small.
//
// It exists for WARC records, which are one gzip member each (WARC 1.1
// annex D): a crawler writes three members per page, most of them a few
// kilobytes. A general DEFLATE encoder such as klauspost/compress builds
// each member's Huffman tables with a package-merge pass made for long
// streams (about 10 µs, the larger part of a 1 KB member's cost), and
// nothing carries from one member to the next.
//
// This encoder makes one greedy LZ77 pass (one hash probe per position,
// like klauspost's level 1) and writes one block, the smallest of dynamic
// codes, the fixed codes of RFC 1951 §3.2.6, or stored. Its dynamic codes
// come from a small cache of code sets, each built with a plain Huffman
// tree from the symbols of the members that used it: records of one kind
// (requests, metadata, HTML pages) share their alphabet, so a set is
// rebuilt only when a member needs a symbol it lacks, and every 64
// members. Each member still carries its codes in its block header, so
// members stay independent, as WARC requires.
//
// On a sequence of testweb's WARC records the output is the size of
// klauspost's level 1 (0.997 of it, TestSequence) for half its CPU
// (BenchmarkSequence). Any gzip reader reads the result.
//
//	var e gzmember.Encoder
//	out := e.AppendMember(nil, header, body)
package gzmember

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"slices"
)

const (
	minMatch  = 4 // the hash covers four bytes
	maxMatch  = 258
	window    = 32768 // RFC 1951 §2: distances up to 32 KiB
	tableBits = 13
	// maxStored is the largest stored block (RFC 1951 §3.2.4: LEN is 16
	// bits).
	maxStored = 65535
	// skipLog makes the search step grow with the length of the current
	// literal run, so incompressible input is scanned quickly (the same
	// heuristic as Snappy's).
	skipLog = 5

	numLit     = 286 // literal/length symbols (RFC 1951 §3.2.5)
	numDist    = 30
	endOfBlock = 256
)

// maxInput is the largest input compressed; a larger one is stored. A
// variable so that a test can lower it.
var maxInput = 1 << 30

// A token is a literal byte, or a match: matchFlag | (length-3)<<16 |
// (distance-1).
type token uint32

const matchFlag token = 1 << 31

// Encoder holds the state reused between members. The zero value is ready
// to use; an Encoder is not safe for concurrent use.
type Encoder struct {
	// table maps a hash of four bytes to base+position of their last
	// occurrence; entries below base are from earlier inputs, so the
	// table needs no clearing between members.
	table [1 << tableBits]uint32
	base  uint32
	buf   []byte // the joined input when it comes in several parts

	tokens   []token
	litFreq  [numLit]uint32
	distFreq [numDist]uint32
	extra    int // extra bits of all matches

	tree treeBuilder
	sets [numSets]cachedSet
}

// cachedSet is a code set kept for the members that follow. Records of one
// kind (a crawler's requests, its metadata, its HTML pages) use much the
// same symbols, so codes built from a few of them code the next ones
// nearly as well as their own would, and building codes costs as much as
// the rest of a small member's compression. Each member still carries its
// codes in its block header, as DEFLATE requires.
type cachedSet struct {
	codeSet
	// acc are the frequencies the codes were built from: the sum of
	// those of the members that asked for a rebuild, halved at each
	// refresh (after maxUses members).
	acc   [numLit + numDist]uint32
	uses  int // members written with the codes since they were built
	valid bool
}

const (
	numSets = 4
	// maxUses makes a set be rebuilt from time to time, to follow a
	// drifting input.
	maxUses = 64
	// newSetMissing: when the nearest set lacks more than this many of a
	// member's symbols and a slot is free, the member starts a new set
	// rather than widening that one (it is probably another kind of
	// record).
	newSetMissing = 4
	// maxAcc bounds each of a set's accumulated frequencies, so that
	// their sum (the Huffman tree's root weight, 32 bits) cannot
	// overflow: 316 symbols x 2^22 < 2^32.
	maxAcc = 1 << 22
)

// AppendMember appends to dst one complete gzip member holding the
// concatenation of parts and returns the extended slice.
func (e *Encoder) AppendMember(dst []byte, parts ...[]byte) []byte {
	in := e.join(parts)
	dst = append(dst, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255) // no flags or mtime; XFL 4: fastest; OS unknown
	dst = e.appendDeflate(dst, in)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.ChecksumIEEE(in))
	return binary.LittleEndian.AppendUint32(dst, uint32(len(in)))
}

// join returns the parts as one slice, copying only when there are several.
func (e *Encoder) join(parts [][]byte) []byte {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	e.buf = e.buf[:0]
	for _, p := range parts {
		e.buf = append(e.buf, p...)
	}
	return e.buf
}

// appendDeflate appends in as one DEFLATE stream of a single block (or
// stored blocks).
func (e *Encoder) appendDeflate(dst, in []byte) []byte {
	if len(in) > maxInput {
		// Positions are 32 bits; an input this large has no business
		// here (the WARC writer sends records over 64 KiB elsewhere),
		// but it still gets a valid member.
		return appendStored(dst, in)
	}
	e.match(in)
	fixedBits := 3 + e.extra
	for s, f := range e.litFreq {
		fixedBits += int(f) * int(fixedLit[s].len)
	}
	for _, f := range e.distFreq {
		fixedBits += int(f) * 5
	}
	set, dynBits := e.codes()
	dynBits += e.extra
	stored := storedSize(len(in)) * 8
	w := bitWriter{dst: slices.Grow(dst, storedSize(len(in))+8)}
	switch {
	case stored <= fixedBits && stored <= dynBits:
		return appendStored(dst, in)
	case dynBits < fixedBits:
		set.writeHeader(&w)
		e.writeTokens(&w, set.lit.codes[:], set.dist.codes[:])
	default:
		w.put(3, 3) // BFINAL 1, BTYPE 01 (fixed codes)
		e.writeTokens(&w, fixedLit[:], fixedDist[:])
	}
	return w.flush()
}

// codes returns the dynamic codes for the current member, from the cache
// or built, and the block's size with them (without extra bits).
func (e *Encoder) codes() (*codeSet, int) {
	fit, fitBits := -1, 0
	near, nearPen, nearMissing := -1, 0, 0
	free := -1
	for k := range e.sets {
		c := &e.sets[k]
		if !c.valid {
			if free < 0 {
				free = k
			}
			continue
		}
		bits, missing := c.cost(e.litFreq[:], e.distFreq[:])
		if missing == 0 && (fit < 0 || bits < fitBits) {
			fit, fitBits = k, bits
		}
		if pen := bits + 16*missing; near < 0 || pen < nearPen {
			near, nearPen, nearMissing = k, pen, missing
		}
	}
	if fit >= 0 && e.sets[fit].uses < maxUses {
		c := &e.sets[fit]
		c.uses++
		return &c.codeSet, fitBits
	}
	k := fit // worn out: rebuilt from its own and this member's symbols
	if k < 0 {
		k = near
		if free >= 0 && (near < 0 || nearMissing > newSetMissing) {
			k = free
		}
	}
	if k < 0 { // unreachable: with no valid set every slot is free
		k = 0
	}
	c := &e.sets[k]
	switch {
	case !c.valid:
		c.acc = [numLit + numDist]uint32{}
	case k == fit:
		// A refresh lets symbols not seen for a while fall out.
		for i := range c.acc {
			c.acc[i] >>= 1
		}
	}
	// Widened by this member's symbols, the set soon codes every member
	// of its kind.
	for i, f := range e.litFreq {
		c.acc[i] = min(c.acc[i]+f, maxAcc)
	}
	for i, f := range e.distFreq {
		c.acc[numLit+i] = min(c.acc[numLit+i]+f, maxAcc)
	}
	c.build(&e.tree, c.acc[:numLit], c.acc[numLit:])
	c.valid, c.uses = true, 1
	bits, _ := c.cost(e.litFreq[:], e.distFreq[:])
	return &c.codeSet, bits
}

// match runs the LZ77 pass over in, filling e.tokens and the frequencies.
func (e *Encoder) match(in []byte) {
	e.tokens = e.tokens[:0]
	e.litFreq = [numLit]uint32{}
	e.distFreq = [numDist]uint32{}
	e.extra = 0
	if uint64(e.base)+uint64(len(in))+window >= 1<<32-1 {
		e.table = [1 << tableBits]uint32{}
		e.base = 0
	}
	base := e.base + 1 // a zero entry is never a position of this input
	e.base += uint32(len(in)) + 1

	lit := 0 // start of the literals not yet tokenized
	i := 0
	for end := len(in) - minMatch; i <= end; {
		cur := binary.LittleEndian.Uint32(in[i:])
		h := hash(cur)
		cand := int(e.table[h]) - int(base)
		e.table[h] = base + uint32(i)
		if cand < 0 || i-cand > window || binary.LittleEndian.Uint32(in[cand:]) != cur {
			i += 1 + (i-lit)>>skipLog
			continue
		}
		n := minMatch + matchLen(in[cand+minMatch:], in[i+minMatch:], maxMatch-minMatch)
		e.literals(in[lit:i])
		e.addMatch(n, i-cand)
		i += n
		lit = i
		if i <= end {
			// Remember the position before the next search starts, so a
			// run right after this match can refer to it.
			e.table[hash(binary.LittleEndian.Uint32(in[i-1:]))] = base + uint32(i-1)
		}
	}
	e.literals(in[lit:])
	e.litFreq[endOfBlock] = 1
}

func (e *Encoder) literals(p []byte) {
	for _, b := range p {
		e.tokens = append(e.tokens, token(b))
		e.litFreq[b]++
	}
}

func (e *Encoder) addMatch(length, dist int) {
	l := lengthTab[length-3]
	d := distSym(uint32(dist - 1))
	e.tokens = append(e.tokens, matchFlag|token(length-3)<<16|token(dist-1))
	e.litFreq[257+int(l.sym)]++
	e.distFreq[d.sym]++
	e.extra += int(l.nb) + int(d.nb)
}

// writeTokens writes the tokens and the end of block with the given codes.
// It is put's loop with the writer's state in local variables: that keeps
// them in registers for the hottest loop of the package.
func (e *Encoder) writeTokens(w *bitWriter, lit, dist []code) {
	acc, n, dst := w.acc, w.n, w.dst
	put := func(v uint64, nb uint) {
		acc |= v << n
		n += nb
		if n >= 32 {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(acc))
			acc >>= 32
			n -= 32
		}
	}
	for _, t := range e.tokens {
		if t&matchFlag == 0 {
			c := lit[t&0xff]
			put(uint64(c.code), uint(c.len))
			continue
		}
		l := lengthTab[(t>>16)&0xff]
		c := lit[257+int(l.sym)]
		put(uint64(c.code)|uint64(l.extra)<<c.len, uint(c.len)+uint(l.nb))
		d := distSym(uint32(t & 0xffff))
		c = dist[d.sym]
		put(uint64(c.code)|uint64(d.extra)<<c.len, uint(c.len)+uint(d.nb))
	}
	c := lit[endOfBlock]
	put(uint64(c.code), uint(c.len))
	w.acc, w.n, w.dst = acc, n, dst
}

// hash maps four bytes to a table index (multiplicative hashing).
func hash(u uint32) uint32 {
	return (u * 0x1e35a7bd) >> (32 - tableBits)
}

// matchLen is the length of the common prefix of a and b, at most limit.
func matchLen(a, b []byte, limit int) int {
	n := min(len(a), len(b), limit)
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// storedSize is the size of in as stored blocks (at least one block, with
// its header byte and LEN/NLEN).
func storedSize(n int) int {
	blocks := max(1, (n+maxStored-1)/maxStored)
	return n + 5*blocks
}

// appendStored writes in as stored blocks, the last one final.
func appendStored(dst, in []byte) []byte {
	for {
		n := min(len(in), maxStored)
		final := byte(0)
		if n == len(in) {
			final = 1
		}
		// BFINAL and BTYPE 00, then padding to the byte boundary.
		dst = append(dst, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		dst = append(dst, in[:n]...)
		in = in[n:]
		if final == 1 {
			return dst
		}
	}
}

// bitWriter packs codes LSB first (RFC 1951 §3.1.1).
type bitWriter struct {
	dst []byte
	acc uint64
	n   uint
}

// put writes the low nb bits of v; nb is at most 32.
func (w *bitWriter) put(v uint64, nb uint) {
	w.acc |= v << w.n
	w.n += nb
	if w.n >= 32 {
		w.dst = binary.LittleEndian.AppendUint32(w.dst, uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

// flush writes the last partial byte.
func (w *bitWriter) flush() []byte {
	for ; w.n > 0; w.n -= min(w.n, 8) {
		w.dst = append(w.dst, byte(w.acc))
		w.acc >>= 8
	}
	return w.dst
}

// code is a Huffman code ready to write: bit-reversed, with its length.
type code struct {
	code uint32
	len  uint8
}

// symExtra is a length or distance symbol with its extra bits.
type symExtra struct {
	sym   uint8 // length symbols from 257, distance symbols from 0
	nb    uint8
	extra uint16
}

var (
	fixedLit  [numLit]code
	fixedDist [numDist]code
	lengthTab [maxMatch - 2]symExtra // index: match length - 3
)

// distSym returns the distance symbol of d = distance-1 (RFC 1951
// §3.2.5): codes 0..3 are distances 1..4; after that, codes come in pairs
// sharing nb extra bits below the top two bits of d.
func distSym(d uint32) symExtra {
	if d < 4 {
		return symExtra{sym: uint8(d)}
	}
	nb := uint32(bits.Len32(d)) - 2
	return symExtra{sym: uint8(2*nb + 2 + (d>>nb)&1), nb: uint8(nb), extra: uint16(d & (1<<nb - 1))}
}

func init() {
	// RFC 1951 §3.2.6: the fixed literal/length code (symbols 286 and
	// 287 are never used).
	for s := range fixedLit {
		var c, n uint32
		switch {
		case s < 144:
			c, n = 0x30+uint32(s), 8
		case s < 256:
			c, n = 0x190+uint32(s-144), 9
		case s < 280:
			c, n = uint32(s-256), 7
		default:
			c, n = 0xc0+uint32(s-280), 8
		}
		fixedLit[s] = code{reverse(c, n), uint8(n)}
	}
	for d := range fixedDist {
		fixedDist[d] = code{reverse(uint32(d), 5), 5}
	}
	// RFC 1951 §3.2.5: lengths 3..10 have symbols 257..264; then every
	// four symbols add one extra bit; 258 has its own symbol, 285.
	for l := 3; l <= maxMatch; l++ {
		x := uint32(l - 3)
		e := symExtra{sym: uint8(x)}
		switch {
		case l == maxMatch:
			e = symExtra{sym: 28}
		case x >= 8:
			nb := uint32(bits.Len32(x)) - 3
			e = symExtra{sym: uint8(4*(nb+1) + (x>>nb)&3), nb: uint8(nb), extra: uint16(x & (1<<nb - 1))}
		}
		lengthTab[l-3] = e
	}
}

// reverse returns the n low bits of c in reverse order: Huffman codes are
// packed starting with their most significant bit (RFC 1951 §3.1.1).
func reverse(c, n uint32) uint32 {
	return bits.Reverse32(c) >> (32 - n)
}
