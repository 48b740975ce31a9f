package gzmember

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// decode reads exactly one gzip member from member and fails the test if
// anything follows it.
func decode(t testing.TB, member []byte) []byte {
	t.Helper()
	r := bytes.NewReader(member)
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip member: %v", err)
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes after the member", r.Len())
	}
	return out
}

func records(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{"request", "response", "metadata"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".warc"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	recs := records(t)
	longText := bytes.Repeat(recs["response"], 40) // > 64 KiB, matches 2.7 KB back
	// apart(d): a phrase, then the same phrase d bytes after its start,
	// with a filler between that does not contain it.
	apart := func(d int) []byte {
		p := []byte("a phrase repeated far apart")
		b := append([]byte(nil), p...)
		b = append(b, bytes.Repeat([]byte{'-'}, d-len(p))...)
		return append(b, p...)
	}
	tests := []struct {
		name  string
		parts [][]byte
		// stored says the member must fall back to stored blocks.
		stored bool
	}{
		{name: "empty"},
		{name: "one empty part", parts: [][]byte{{}}},
		{name: "one byte", parts: [][]byte{{'x'}}},
		{name: "four bytes", parts: [][]byte{[]byte("abcd")}},
		{name: "all byte values", stored: true, parts: [][]byte{func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}()}},
		{name: "run of one byte", parts: [][]byte{bytes.Repeat([]byte{'a'}, 100000)}},
		{name: "run of 259", parts: [][]byte{bytes.Repeat([]byte{'z'}, 259)}},
		{name: "request record", parts: [][]byte{recs["request"]}},
		{name: "response in parts", parts: [][]byte{recs["response"][:300], recs["response"][300:], []byte("\r\n\r\n")}},
		{name: "metadata record", parts: [][]byte{recs["metadata"]}},
		{name: "long text", parts: [][]byte{longText}},
		{name: "match at the window's edge", parts: [][]byte{apart(window)}},
		{name: "match beyond the window", parts: [][]byte{apart(window + 1)}},
		{name: "random small", parts: [][]byte{random(100)}, stored: true},
		{name: "random over one stored block", parts: [][]byte{random(200000)}, stored: true},
		{name: "random exactly one stored block", parts: [][]byte{random(maxStored)}, stored: true},
	}
	var e Encoder
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := bytes.Join(tc.parts, nil)
			member := e.AppendMember([]byte("prefix"), tc.parts...)
			if !bytes.HasPrefix(member, []byte("prefix")) {
				t.Fatal("dst prefix lost")
			}
			member = member[len("prefix"):]
			if got := decode(t, member); !bytes.Equal(got, want) {
				t.Fatalf("round trip: got %d bytes, want %d", len(got), len(want))
			}
			// 10 bytes of gzip header and 8 of trailer around the stream.
			stream := len(member) - 18
			if stored := stream == storedSize(len(want)); stored != tc.stored {
				t.Errorf("stored = %v (%d bytes for %d), want %v", stored, stream, len(want), tc.stored)
			}
			if stream > storedSize(len(want)) {
				t.Errorf("stream %d bytes > stored size %d", stream, storedSize(len(want)))
			}
		})
	}
}

// TestRatio pins the encoder's output size on single real WARC records
// (a fresh encoder each, so no code set carries over; TestSequence covers
// the cache) against klauspost/compress at level 1, the encoder it
// replaces for these records. Sizes are deterministic.
func TestRatio(t *testing.T) {
	recs := records(t)
	for _, name := range []string{"request", "response", "metadata"} {
		rec := recs[name]
		var e Encoder
		ours := len(e.AppendMember(nil, rec))
		var buf bytes.Buffer
		zw, _ := kgzip.NewWriterLevel(&buf, 1)
		zw.Write(rec)
		zw.Close()
		theirs := buf.Len()
		t.Logf("%s: %d bytes, gzmember %d, level 1 %d (%.2fx)", name, len(rec), ours, theirs, float64(ours)/float64(theirs))
		if ours > theirs*102/100 {
			t.Errorf("%s: %d bytes > 1.02 x level 1 (%d)", name, ours, theirs)
		}
	}
}

// warcRecords returns the records of testdata/testweb.warc.gz, a WARC file
// of a courtesy crawl of testweb (91 records: warcinfo, then request,
// response and metadata of 30 pages).
func warcRecords(t testing.TB) [][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "testweb.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for {
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, b)
		if err := zr.Reset(br); err == io.EOF {
			return recs
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSequence writes a crawl's records through one encoder, as the WARC
// writer does (codes are reused between members), and compares the total
// with klauspost/compress at level 1.
func TestSequence(t *testing.T) {
	recs := warcRecords(t)
	if len(recs) != 91 {
		t.Fatalf("%d records in testdata, want 91", len(recs))
	}
	var e Encoder
	var buf bytes.Buffer
	zw, _ := kgzip.NewWriterLevel(&buf, 1)
	ours, theirs, raw := 0, 0, 0
	for i, rec := range recs {
		member := e.AppendMember(nil, rec)
		if got := decode(t, member); !bytes.Equal(got, rec) {
			t.Fatalf("record %d differs", i)
		}
		ours += len(member)
		buf.Reset()
		zw.Reset(&buf)
		zw.Write(rec)
		zw.Close()
		theirs += buf.Len()
		raw += len(rec)
	}
	t.Logf("%d records, %d bytes: gzmember %d, level 1 %d (%.3fx)", len(recs), raw, ours, theirs, float64(ours)/float64(theirs))
	if ours > theirs*102/100 {
		t.Errorf("gzmember %d bytes > 1.02 x level 1 (%d)", ours, theirs)
	}
}

// TestReuse checks that one encoder's table, kept between members, never
// lets a member refer to an earlier member's bytes, including across the
// reset of its position base.
func TestReuse(t *testing.T) {
	recs := records(t)
	var e Encoder
	for i := range 50 {
		if i == 25 {
			e.base = 1<<32 - 1 - window - 1000 // force the reset path
		}
		in := recs[[]string{"request", "response", "metadata"}[i%3]]
		if got := decode(t, e.AppendMember(nil, in)); !bytes.Equal(got, in) {
			t.Fatalf("member %d differs", i)
		}
	}
}

func TestTreeBuilder(t *testing.T) {
	fib := make([]uint32, 19)
	fib[0], fib[1] = 1, 1
	for i := 2; i < len(fib); i++ {
		fib[i] = fib[i-1] + fib[i-2]
	}
	rng := rand.New(rand.NewPCG(3, 4))
	skewed := make([]uint32, numLit)
	for i := range skewed {
		if rng.IntN(3) > 0 {
			skewed[i] = uint32(rng.ExpFloat64() * 100)
		}
	}
	tests := []struct {
		name    string
		freq    []uint32
		maxBits uint8
	}{
		{"one symbol", []uint32{0, 0, 5, 0}, 15},
		{"no symbol", []uint32{0, 0, 0}, 7},
		{"two", []uint32{1, 1000}, 15},
		{"fibonacci beyond 7 bits", fib, 7},
		{"fibonacci within 15 bits", fib, 15},
		{"skewed literals", skewed, 15},
	}
	var b treeBuilder
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tab table
			b.build(tc.freq, tc.maxBits, &tab)
			used, kraft := 0, 0.0
			for s, l := range tab.lens[:len(tc.freq)] {
				if l > tc.maxBits {
					t.Errorf("symbol %d: length %d > %d", s, l, tc.maxBits)
				}
				if tc.freq[s] != 0 && l == 0 {
					t.Errorf("symbol %d used but has no code", s)
				}
				if l != 0 {
					used++
					kraft += 1 / float64(uint(1)<<l)
				}
			}
			if used < 2 || kraft != 1 {
				t.Errorf("%d codes, Kraft sum %v: want a complete code of at least 2", used, kraft)
			}
		})
	}
}

// TestOverMaxInput: an input over maxInput is stored, still one valid
// member.
func TestOverMaxInput(t *testing.T) {
	defer func(n int) { maxInput = n }(maxInput)
	maxInput = 100
	in := bytes.Repeat([]byte("abc"), 100)
	var e Encoder
	member := e.AppendMember(nil, in)
	if got := decode(t, member); !bytes.Equal(got, in) {
		t.Fatal("round trip differs")
	}
	if stream := len(member) - 18; stream != storedSize(len(in)) {
		t.Errorf("stream %d bytes, want stored (%d)", stream, storedSize(len(in)))
	}
}

func TestCodes(t *testing.T) {
	// RFC 1951 §3.2.6 examples: literal 0 is 00110000, 144 is 110010000,
	// 256 is 0000000, 280 is 11000000 (written MSB first, so reversed).
	tests := []struct {
		sym  int
		code uint32
		len  uint8
	}{
		{0, 0b00110000, 8},
		{143, 0b10111111, 8},
		{144, 0b110010000, 9},
		{255, 0b111111111, 9},
		{256, 0, 7},
		{279, 0b0010111, 7},
		{280, 0b11000000, 8},
		{285, 0b11000101, 8},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.sym), func(t *testing.T) {
			c := fixedLit[tc.sym]
			if c.len != tc.len || reverse(c.code, uint32(c.len)) != tc.code {
				t.Errorf("symbol %d: code %b/%d, want %b/%d", tc.sym, reverse(c.code, uint32(c.len)), c.len, tc.code, tc.len)
			}
		})
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, rec := range records(f) {
		f.Add(rec, uint16(100))
	}
	f.Add([]byte(""), uint16(0))
	f.Add(bytes.Repeat([]byte("ab"), 300), uint16(7))
	var e Encoder
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		c := min(int(cut), len(in))
		member := e.AppendMember(nil, in[:c], in[c:])
		if got := decode(t, member); !bytes.Equal(got, in) {
			t.Fatalf("round trip of %d bytes: got %d", len(in), len(got))
		}
		if len(member)-18 > storedSize(len(in)) {
			t.Fatalf("%d bytes for %d of input", len(member), len(in))
		}
	})
}

// BenchmarkMember compares the encoder with klauspost/compress level 1 on
// real WARC records; both reuse their state between members as the WARC
// writer does.
func BenchmarkMember(b *testing.B) {
	for _, name := range []string{"request", "metadata", "response"} {
		rec := records(b)[name]
		b.Run(name+"/gzmember", func(b *testing.B) {
			var e Encoder
			var out []byte
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				out = e.AppendMember(out[:0], rec)
			}
			b.ReportMetric(float64(len(out)), "out-bytes")
		})
		b.Run(name+"/klauspost-1", func(b *testing.B) {
			var buf bytes.Buffer
			zw, _ := kgzip.NewWriterLevel(&buf, 1)
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				buf.Reset()
				zw.Reset(&buf)
				zw.Write(rec)
				zw.Close()
			}
			b.ReportMetric(float64(buf.Len()), "out-bytes")
		})
	}
}

// BenchmarkSequence writes testdata/testweb.warc.gz's records one after
// another, as the WARC writer does; ns/op is per record.
func BenchmarkSequence(b *testing.B) {
	recs := warcRecords(b)
	b.Run("gzmember", func(b *testing.B) {
		var e Encoder
		var out []byte
		for i := 0; b.Loop(); i++ {
			out = e.AppendMember(out[:0], recs[i%len(recs)])
		}
	})
	b.Run("klauspost-1", func(b *testing.B) {
		var buf bytes.Buffer
		zw, _ := kgzip.NewWriterLevel(&buf, 1)
		for i := 0; b.Loop(); i++ {
			buf.Reset()
			zw.Reset(&buf)
			zw.Write(recs[i%len(recs)])
			zw.Close()
		}
	})
}
