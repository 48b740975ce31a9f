package dedup

import (
	"math/bits"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refSimhash is Simhash written plainly from its documentation, without
// the fast paths (table-folded ASCII, incremental word hashes, counting
// table, SWAR counters): the tests hold Simhash to it, so that an
// optimisation never changes a fingerprint (fingerprints are stored, and
// compared across runs of a crawl).
func refSimhash(text string) uint64 {
	type word struct {
		h   uint64
		num bool
	}
	var words []word
	var tok []byte
	digit := false
	flush := func() {
		if len(tok) > 0 {
			h := uint64(fnvOffset)
			for _, c := range tok {
				h ^= uint64(c)
				h *= fnvPrime
			}
			words = append(words, word{mix64(h), digit})
		}
		tok, digit = tok[:0], false
	}
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf && ('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'):
			digit = digit || r <= '9'
			if len(tok) < MaxTokenBytes {
				tok = append(tok, byte(unicode.ToLower(r)))
			}
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			digit = digit || unicode.IsDigit(r)
			if l := unicode.ToLower(r); len(tok)+utf8.RuneLen(l) <= MaxTokenBytes {
				tok = utf8.AppendRune(tok, l)
			}
		default:
			flush()
		}
	}
	flush()
	var feats []word
	switch {
	case len(words) == 0:
		return 0
	case len(words) == 1:
		feats = words
	default:
		for i := 1; i < len(words) && len(feats) < maxFeatures; i++ {
			x := bits.RotateLeft64(words[i-1].h, 23) ^ words[i].h
			feats = append(feats, word{mix64(x), words[i-1].num || words[i].num})
		}
	}
	counts := [2]map[uint64]int{{}, {}}
	for _, f := range feats {
		k := 0
		if f.num {
			k = 1
		}
		counts[k][f.h]++
	}
	var sums [64]int64
	var total int64
	for k, base := range [2]int64{WordWeight, NumberWeight} {
		for h, n := range counts[k] {
			w := base * int64(bits.Len(uint(n)))
			total += w
			for b := range 64 {
				if h>>b&1 == 1 {
					sums[b] += w
				}
			}
		}
	}
	var out uint64
	for b, v := range sums {
		if 2*v > total {
			out |= 1 << b
		}
	}
	return out
}

// TestSimhashMatchesReference: Simhash is refSimhash on real main texts,
// on testweb's realistic pages, and on random texts built to hit the edge
// cases (long words, digits, non-ASCII letters and digits, invalid UTF-8,
// repeated phrases).
func TestSimhashMatchesReference(t *testing.T) {
	var texts []string
	paths, _ := filepath.Glob("testdata/docs/*.html.gz")
	if len(paths) < 7 {
		t.Fatalf("testdata: %d pages", len(paths))
	}
	for _, p := range paths {
		texts = append(texts, MainText(readGz(t, p)))
	}
	texts = append(texts, MainText(realisticPage(t)))
	parts := []string{"a", "Word", "ÉCOLE", "straße", "٣٤", "x1", "2026-11-25", "\xff", "\xe2\x82", " ", "\n", ".",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ééééééééééééééééééééééééééééééééé", "See also"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var b []byte
		for range rng.IntN(200) {
			b = append(b, parts[rng.IntN(len(parts))]...)
			if rng.IntN(3) == 0 {
				b = append(b, ' ')
			}
		}
		texts = append(texts, string(b))
	}
	texts = append(texts, "", "one", "1", "two words")
	for i, s := range texts {
		if got, want := Simhash(s), refSimhash(s); got != want {
			t.Errorf("text %d (%.60q): Simhash %016x, reference %016x", i, s, got, want)
		}
	}
}

func FuzzSimhashMatchesReference(f *testing.F) {
	for _, s := range []string{"", "a", "a b", "Version 5.1 of the ÉCOLE", "\xff\xfe x", "٣ ٤ ٥"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Simhash(s), refSimhash(s); got != want {
			t.Errorf("Simhash %016x, reference %016x", got, want)
		}
	})
}
