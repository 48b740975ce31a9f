package gzmember

import "slices"

// table is one dynamic Huffman code: code lengths and the codes ready to
// write (RFC 1951 §3.2.2).
type table struct {
	lens  [numLit]uint8
	codes [numLit]code
	n     int // symbols sent in the header (HLIT+257, HDIST+1, HCLEN+4)
}

// rleOp is one symbol of the code-length code with its extra bits
// (RFC 1951 §3.2.7: 0-15 a length, 16 repeat the previous 3-6 times,
// 17 three to ten zeros, 18 eleven to 138 zeros).
type rleOp struct {
	sym   uint8
	extra uint8
}

var rleExtraBits = [19]uint8{16: 2, 17: 3, 18: 7}

// cgOrder is the order in which the code-length code's lengths are sent.
var cgOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// codeSet is a dynamic block's codes with the header that sends them.
type codeSet struct {
	lit, dist  table
	cg         table // the code-length code (RFC 1951 §3.2.7)
	rle        []rleOp
	headerBits int
}

// build makes the codes for the frequencies lit and dist and the header
// that sends them.
func (c *codeSet) build(b *treeBuilder, lit, dist []uint32) {
	b.build(lit, 15, &c.lit)
	b.build(dist, 15, &c.dist)
	c.lit.n = max(257, lastUsed(c.lit.lens[:numLit])+1)
	c.dist.n = max(1, lastUsed(c.dist.lens[:numDist])+1)

	// The lengths of both codes are sent as one run-length coded sequence
	// (runs may cross from one code to the other, RFC 1951 §3.2.7).
	var seq [numLit + numDist]uint8
	n := copy(seq[:], c.lit.lens[:c.lit.n])
	n += copy(seq[n:], c.dist.lens[:c.dist.n])
	c.rle = appendRLE(c.rle[:0], seq[:n])
	var cgFreq [19]uint32
	for _, op := range c.rle {
		cgFreq[op.sym]++
	}
	b.build(cgFreq[:], 7, &c.cg)
	c.cg.n = 19
	for c.cg.n > 4 && c.cg.lens[cgOrder[c.cg.n-1]] == 0 {
		c.cg.n--
	}
	c.headerBits = 3 + 5 + 5 + 4 + 3*c.cg.n
	for _, op := range c.rle {
		c.headerBits += int(c.cg.lens[op.sym]) + int(rleExtraBits[op.sym])
	}
}

// cost is the size in bits of a block with these codes for the given
// frequencies, header included but not the extra bits (the same with
// every code); missing counts the used symbols the codes lack.
func (c *codeSet) cost(lit, dist []uint32) (bits, missing int) {
	lb, lm := codeCost(lit, c.lit.lens[:])
	db, dm := codeCost(dist, c.dist.lens[:])
	return c.headerBits + lb + db, lm + dm
}

// codeCost is the size in bits of the symbols counted in freq with the
// code lengths lens, and how many of them have no code.
func codeCost(freq []uint32, lens []uint8) (bits, missing int) {
	for s, f := range freq {
		if f != 0 {
			l := lens[s]
			if l == 0 {
				missing++
			}
			bits += int(f) * int(l)
		}
	}
	return bits, missing
}

// writeHeader writes the block header of a final block with these codes
// (RFC 1951 §3.2.7).
func (c *codeSet) writeHeader(w *bitWriter) {
	w.put(1|2<<1, 3) // BFINAL 1, BTYPE 10
	w.put(uint64(c.lit.n-257), 5)
	w.put(uint64(c.dist.n-1), 5)
	w.put(uint64(c.cg.n-4), 4)
	for _, s := range cgOrder[:c.cg.n] {
		w.put(uint64(c.cg.lens[s]), 3)
	}
	for _, op := range c.rle {
		k := c.cg.codes[op.sym]
		w.put(uint64(k.code)|uint64(op.extra)<<k.len, uint(k.len)+uint(rleExtraBits[op.sym]))
	}
}

// appendRLE appends the run-length coding of the code lengths in seq.
func appendRLE(ops []rleOp, seq []uint8) []rleOp {
	for i := 0; i < len(seq); {
		v := seq[i]
		run := 1
		for i+run < len(seq) && seq[i+run] == v {
			run++
		}
		i += run
		if v == 0 {
			for run >= 11 {
				k := min(run, 138)
				ops = append(ops, rleOp{18, uint8(k - 11)})
				run -= k
			}
			if run >= 3 {
				ops = append(ops, rleOp{17, uint8(run - 3)})
				run = 0
			}
		} else {
			ops = append(ops, rleOp{sym: v})
			run--
			for run >= 3 {
				k := min(run, 6)
				ops = append(ops, rleOp{16, uint8(k - 3)})
				run -= k
			}
		}
		for ; run > 0; run-- {
			ops = append(ops, rleOp{sym: v})
		}
	}
	return ops
}

func lastUsed(lens []uint8) int {
	for i := len(lens) - 1; i >= 0; i-- {
		if lens[i] != 0 {
			return i
		}
	}
	return -1
}

// treeBuilder holds the scratch space of Huffman tree construction.
type treeBuilder struct {
	items  []uint64 // frequency<<16 | symbol, sorted
	weight [2 * numLit]uint32
	parent [2 * numLit]uint16
	depth  [2 * numLit]uint8
}

// build sets t's lengths to a Huffman code for freq with no code longer
// than maxBits, and its codes to the canonical codes of those lengths.
// Unused symbols get no code, except that at least two symbols always get
// one: a code of one symbol is incomplete, which decoders may refuse.
func (b *treeBuilder) build(freq []uint32, maxBits uint8, t *table) {
	clear(t.lens[:])
	// A tree too deep is rebuilt from halved frequencies: that flattens
	// it, and with every frequency 1 it is balanced (depth at most 9 for
	// 286 symbols, 5 for 19). Real inputs of this package's sizes almost
	// never need a second pass.
	for shift := 0; ; shift++ {
		b.items = b.items[:0]
		for s, f := range freq {
			if f != 0 {
				b.items = append(b.items, uint64(max(f>>shift, 1))<<16|uint64(s))
			}
		}
		for s := 0; len(b.items) < 2; s++ {
			if freq[s] == 0 {
				b.items = append(b.items, 1<<16|uint64(s))
			}
		}
		slices.Sort(b.items)
		if b.depths(maxBits) {
			break
		}
	}
	for i, it := range b.items {
		t.lens[it&0xffff] = b.depth[i]
	}
	canonical(t.lens[:len(freq)], t.codes[:len(freq)])
}

// depths builds the tree of the sorted items with the two-queue method
// (leaves in order, then internal nodes in the order they are made, whose
// weights never decrease) and sets the leaves' depths. It reports false
// when a depth exceeds maxBits.
func (b *treeBuilder) depths(maxBits uint8) bool {
	n := len(b.items)
	for i, it := range b.items {
		b.weight[i] = uint32(it >> 16)
	}
	leaf, inner := 0, n
	for k := n; k < 2*n-1; k++ {
		var pick [2]int
		for p := range pick {
			if leaf < n && (inner >= k || b.weight[leaf] <= b.weight[inner]) {
				pick[p] = leaf
				leaf++
			} else {
				pick[p] = inner
				inner++
			}
		}
		b.weight[k] = b.weight[pick[0]] + b.weight[pick[1]]
		b.parent[pick[0]], b.parent[pick[1]] = uint16(k), uint16(k)
	}
	root := 2*n - 2
	b.depth[root] = 0
	ok := true
	for k := root - 1; k >= 0; k-- {
		b.depth[k] = b.depth[b.parent[k]] + 1
		if k < n && b.depth[k] > maxBits {
			ok = false
		}
	}
	return ok
}

// canonical assigns the canonical codes of RFC 1951 §3.2.2 to lens.
func canonical(lens []uint8, codes []code) {
	var count [16]uint16
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]uint32
	c := uint32(0)
	for n := 1; n < 16; n++ {
		c = (c + uint32(count[n-1])) << 1
		next[n] = c
	}
	for s, l := range lens {
		if l != 0 {
			codes[s] = code{reverse(next[l], uint32(l)), l}
			next[l]++
		} else {
			codes[s] = code{}
		}
	}
}
