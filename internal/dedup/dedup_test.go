package dedup

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestDigest checks Digest against SHA-1 values computed elsewhere
// (Python's hashlib and base64.b32encode), so it cannot agree with
// itself by construction.
func TestDigest(t *testing.T) {
	tests := []struct {
		name, payload, want string
	}{
		{"empty", "", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{"hello", "hello", "sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N"},
		{"10,000 x", strings.Repeat("x", 10000), "sha1:7DC43Z4RYUCWZ5IVRAPHAHEKT3FUHGTV"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Digest([]byte(tc.payload)); got != tc.want {
				t.Errorf("Digest = %s, want %s", got, tc.want)
			}
		})
	}
	if got := Digest(nil); got != "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ" {
		t.Errorf("Digest(nil) = %s", got)
	}
}

func TestHamming(t *testing.T) {
	tests := []struct {
		name string
		a, b uint64
		want int
	}{
		{"equal", 0xdeadbeef, 0xdeadbeef, 0},
		{"one-bit", 0, 1, 1},
		{"top-bit", 0, 1 << 63, 1},
		{"all", 0, ^uint64(0), 64},
		{"mixed", 0b1010, 0b0101, 4},
		{"symmetric", 0xff00, 0x00ff, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hamming(tc.a, tc.b); got != tc.want {
				t.Errorf("Hamming = %d, want %d", got, tc.want)
			}
			if got := Hamming(tc.b, tc.a); got != tc.want {
				t.Errorf("not symmetric: %d", got)
			}
		})
	}
}

func TestSimhashBasics(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"case-and-punctuation", "Hello, World! Nice day.", "hello world nice   day", true},
		{"numbers-kept-as-text", "updated 2026-11-22 09:30:15 by admin", "updated 2027-01-01 23:59:59 by admin", false},
		// Every word with a digit once was one word, so these collided.
		{"counting-is-not-another-page", "1 2 3 4 5 6 7 8", "9 10 11 12 13 14 15 16", false},
		{"unicode-case", "ÉCOLE Straße", "école straße", true},
		{"word-order-matters", "alpha beta gamma delta", "delta gamma beta alpha", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := Simhash(tc.a), Simhash(tc.b)
			if (ha == hb) != tc.same {
				t.Errorf("Simhash equal = %v, want %v (%x %x)", ha == hb, tc.same, ha, hb)
			}
		})
	}
	if Simhash("") != 0 || Simhash(" ,.!? ") != 0 {
		t.Error("text without words should hash to 0")
	}
	if Simhash("word") == 0 {
		t.Error("one word hashed to 0")
	}
	// A long token is cut, not rejected.
	if Simhash(strings.Repeat("a", 1000)) != Simhash(strings.Repeat("a", MaxTokenBytes)) {
		t.Error("long tokens not cut at MaxTokenBytes")
	}
}

// TestNearDuplicateTimestamps: the same page served at different times.
func TestNearDuplicateTimestamps(t *testing.T) {
	g := newTextGen(7)
	base := time.Date(2026, 11, 22, 9, 30, 15, 0, time.UTC)
	// Numeric timestamps and counters: numbers weigh a quarter of words,
	// so pages of 200 words or more stay within the distance.
	for i := range 50 {
		body := g.page(200 + 40*i)
		a := Simhash(stampedISO(body, base))
		b := Simhash(stampedISO(body, base.Add(time.Duration(i+1)*97*time.Minute)))
		if d := Hamming(a, b); d > DefaultDistance {
			t.Errorf("page %d: numeric timestamp moved %d bits", i, d)
		}
	}
	// Weekday and month names change too: near-duplicates for long pages,
	// with the probabilistic guarantee simhash gives.
	const n = 200
	near := 0
	for i := range n {
		body := g.page(1000)
		a := Simhash(stamped(body, base))
		b := Simhash(stamped(body, base.Add(time.Duration(i+1)*31*time.Hour)))
		if Hamming(a, b) <= DefaultDistance {
			near++
		}
	}
	if near < n*9/10 {
		t.Errorf("only %d of %d re-dated 1000-word pages within distance %d", near, n, DefaultDistance)
	}
}

func TestDifferentPagesAreFar(t *testing.T) {
	g := newTextGen(11)
	hashes := make([]uint64, 300)
	for i := range hashes {
		hashes[i] = Simhash(stamped(g.page(100+10*i), time.Unix(int64(i), 0)))
	}
	minDist := 64
	for i := range hashes {
		for j := i + 1; j < len(hashes); j++ {
			minDist = min(minDist, Hamming(hashes[i], hashes[j]))
		}
	}
	if minDist <= 2*DefaultDistance {
		t.Errorf("two different pages only %d bits apart", minDist)
	}
}

func TestIndexOptions(t *testing.T) {
	tests := []struct {
		name string
		o    IndexOptions
		ok   bool
	}{
		{"zero", IndexOptions{}, true},
		{"distance-3", IndexOptions{Distance: 3}, true},
		{"distance-4", IndexOptions{Distance: 4}, false},
		{"negative", IndexOptions{MaxPerSite: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewIndex(tc.o)
			if (err == nil) != tc.ok {
				t.Errorf("NewIndex: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func flip(rng *rand.Rand, h uint64, n int) uint64 {
	for _, b := range rng.Perm(64)[:n] {
		h ^= 1 << b
	}
	return h
}

// TestIndexMatchesBruteForce: Near answers exactly what a scan of the
// site's remembered hashes answers, including after evictions.
func TestIndexMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const perSite = 300
	x, err := NewIndex(IndexOptions{MaxPerSite: perSite, MaxSites: 8})
	if err != nil {
		t.Fatal(err)
	}
	sites := []string{"a.example", "b.example", "c.example"}
	kept := map[string][]uint64{} // model: last perSite distinct hashes
	for step := range 5000 {
		s := sites[rng.IntN(len(sites))]
		var h uint64
		switch model := kept[s]; {
		case len(model) > 0 && rng.IntN(2) == 0:
			// Near a stored hash: 0..5 bits away, so some are beyond 3.
			h = flip(rng, model[rng.IntN(len(model))], rng.IntN(6))
		default:
			h = rng.Uint64()
		}
		bestDist, found := 65, false
		for _, c := range kept[s] {
			if d := Hamming(c, h); d <= 3 && d < bestDist {
				bestDist, found = d, true
			}
		}
		_, dist, ok := x.Near(s, h)
		if ok != found || (ok && dist != bestDist) {
			t.Fatalf("step %d: Near = %d,%v; brute force %d,%v", step, dist, ok, bestDist, found)
		}
		if rng.IntN(3) > 0 {
			x.Add(s, h)
			dup := false
			for _, c := range kept[s] {
				dup = dup || c == h
			}
			if !dup {
				kept[s] = append(kept[s], h)
				if len(kept[s]) > perSite {
					kept[s] = kept[s][1:]
				}
			}
		}
	}
	_, n := x.Len()
	if n != len(kept["a.example"])+len(kept["b.example"])+len(kept["c.example"]) {
		t.Errorf("index holds %d hashes, model %d", n, len(kept["a.example"])+len(kept["b.example"])+len(kept["c.example"]))
	}
}

func TestIndexCheckSitesAndBounds(t *testing.T) {
	x, err := NewIndex(IndexOptions{MaxPerSite: 2, MaxSites: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := uint64(0x0123456789abcdef)
	if _, _, ok := x.Check("a", h); ok {
		t.Fatal("empty index found a match")
	}
	if m, d, ok := x.Check("a", h^0b101); !ok || d != 2 || m != h {
		t.Errorf("Check near = %x %d %v", m, d, ok)
	}
	if _, _, ok := x.Near("b", h); ok {
		t.Error("match across sites")
	}
	if _, _, ok := x.Check("a", h^0xffff); ok {
		t.Error("16 bits away reported near")
	}
	x.Add("a", 42) // evicts h (MaxPerSite 2)
	if _, _, ok := x.Near("a", h); ok {
		t.Error("evicted hash still found")
	}
	x.Add("b", 1)
	x.Add("c", 2) // evicts site a (least recently used)
	if _, _, ok := x.Near("a", 42); ok {
		t.Error("evicted site still answers")
	}
	x.Forget("b")
	if sites, hashes := x.Len(); sites != 1 || hashes != 1 {
		t.Errorf("Len = %d sites %d hashes, want 1 1", sites, hashes)
	}
	ex, _ := NewIndex(IndexOptions{Exact: true})
	ex.Add("a", h)
	if _, _, ok := ex.Near("a", h^1); ok {
		t.Error("Exact index reported a near match")
	}
	if _, d, ok := ex.Near("a", h); !ok || d != 0 {
		t.Error("Exact index missed an identical hash")
	}
}

func FuzzSimhash(f *testing.F) {
	f.Add("Hello, World! 2026-11-22")
	f.Add("\xff\xfe école ÉCOLE")
	f.Fuzz(func(t *testing.T, s string) {
		h := Simhash(s)
		if h != Simhash(s) {
			t.Fatal("not deterministic")
		}
		if strings.ToUpper(s) == s && Simhash(strings.ToLower(s)) != h && isASCII(s) {
			t.Fatalf("case changed the hash of %q", s)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func BenchmarkSimhash10KB(b *testing.B) {
	text := newTextGen(3).page(1700)
	for len(text) < 10<<10 {
		text += " " + text
	}
	text = text[:10<<10]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Simhash(text)
	}
}

func BenchmarkIndexCheck(b *testing.B) {
	x, _ := NewIndex(IndexOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	for range DefaultMaxPerSite {
		x.Add("site", rng.Uint64())
	}
	b.ReportAllocs()
	for b.Loop() {
		x.Check("site", rng.Uint64())
	}
}

// TestIndexMaxHashes: the total bound forgets the least recently used
// sites, never the one being added to, and Len stays within it.
func TestIndexMaxHashes(t *testing.T) {
	x, err := NewIndex(IndexOptions{MaxPerSite: 50, MaxHashes: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(50) {
		x.Add("a", i*0x9e3779b97f4a7c15)
		x.Add("b", i*0x9e3779b97f4a7c15+1)
	}
	if sites, hashes := x.Len(); sites != 2 || hashes != 100 {
		t.Fatalf("after a and b: %d sites, %d hashes", sites, hashes)
	}
	x.Add("c", 42)
	sites, hashes := x.Len()
	if sites != 2 || hashes != 51 {
		t.Errorf("after c: %d sites, %d hashes; want a forgotten (2 sites, 51 hashes)", sites, hashes)
	}
	if _, _, ok := x.Near("a", 0); ok {
		t.Error("a still known after it was forgotten")
	}
	if _, _, ok := x.Near("b", 1); !ok {
		t.Error("b forgotten, want a (least recently used) forgotten")
	}
	// One site alone may exceed the bound up to MaxPerSite: it is never
	// forgotten while it is being added to.
	y, _ := NewIndex(IndexOptions{MaxPerSite: 50, MaxHashes: 10})
	for i := range uint64(50) {
		y.Add("solo", i*0x9e3779b97f4a7c15)
	}
	if sites, hashes := y.Len(); sites != 1 || hashes != 50 {
		t.Errorf("solo: %d sites, %d hashes", sites, hashes)
	}
}

// CheckURL names the page a near-duplicate copies, also after the ring
// wrapped, and forgets the URL with its hash.
func TestIndexCheckURL(t *testing.T) {
	x, err := NewIndex(IndexOptions{MaxPerSite: 3})
	if err != nil {
		t.Fatal(err)
	}
	hs := []uint64{0x0000_0000_0000_0000, 0xffff_ffff_0000_0000, 0x0000_ffff_ffff_0000, 0xffff_0000_0000_ffff}
	for i, h := range hs {
		if _, ok := x.CheckURL("s", fmt.Sprintf("http://s.test/%d", i), h); ok {
			t.Fatalf("hash %d: a near-duplicate already", i)
		}
	}
	// hs[0] was forgotten (ring of 3); hs[1..3] are there.
	if _, ok := x.CheckURL("s", "http://s.test/again0", hs[0]^1); ok {
		t.Error("forgotten hash still matched")
	}
	m, ok := x.CheckURL("s", "http://s.test/copy", hs[2]^0b101)
	if !ok || m.URL != "http://s.test/2" || m.Dist != 2 || m.Hash != hs[2] {
		t.Errorf("match = %+v %v, want http://s.test/2 at distance 2", m, ok)
	}
	x.Add("s", 0x1234_5678_9abc_def0)
	if m, ok := x.CheckURL("s", "http://s.test/x", 0x1234_5678_9abc_def0); !ok || m.URL != "" {
		t.Errorf("hash added without a URL: match %+v %v", m, ok)
	}
}
