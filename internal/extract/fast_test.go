package extract

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/courtesy-crawler/courtesy/internal/htmlenc"
)

// addReference is textBuf.add as it was before the table-driven loop: the
// reference FuzzTextBuf holds the new one to.
func (tb *textBuf) addReference(t []byte, max int) {
	for i := 0; i < len(t) && !tb.full; {
		c := t[i]
		if c < utf8.RuneSelf {
			if asciiSpace(c) {
				tb.space = tb.started
				i++
				continue
			}
			j := i + 1
			for j < len(t) && t[j] < utf8.RuneSelf && !asciiSpace(t[j]) {
				j++
			}
			tb.write(t[i:j], max, true)
			i = j
			continue
		}
		r, n := utf8.DecodeRune(t[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
		case unicode.IsSpace(r):
			tb.space = tb.started
		default:
			tb.write(t[i:i+n], max, false)
		}
		i += n
	}
}

// FuzzTextBuf feeds the same pieces to textBuf.add and to the reference,
// with word separations between them, and compares text and state.
func FuzzTextBuf(f *testing.F) {
	f.Add("  Hello,\tworld \u00a0 caf\u00e9 ", "\xff\xfe x\x00y", 20)
	f.Add("a", "b", 1)
	f.Add(strings.Repeat("word ", 30), "\u3000\u2003end", 64)
	f.Fuzz(func(t *testing.T, a, b string, max int) {
		max = max%300 + 1
		if max < 1 {
			max += 300
		}
		var got, want textBuf
		for _, piece := range []string{a, b, a} {
			got.add([]byte(piece), max)
			want.addReference([]byte(piece), max)
			got.sep()
			want.sep()
		}
		if got.String() != want.String() || got.full != want.full || got.space != want.space || got.started != want.started {
			t.Fatalf("add(%q, %q, %d) = %q %+v, reference %q %+v", a, b, max, got.String(), got, want.String(), want)
		}
	})
}

// TestDecodeMatchesSniffing holds decode's shortcut for UTF-8
// Content-Types to what htmlenc.Determine decides.
func TestDecodeMatchesSniffing(t *testing.T) {
	t.Parallel()
	bodies := []string{"", "<p>x", "\xfe\xff\x00<", "\xff\xfe<\x00", "\xef\xbb\xbf<p>", `<meta charset="iso-8859-1">caf\xe9`, "caf\xe9"}
	types := []string{"text/html; charset=utf-8", "text/html;charset=utf-8", "TEXT/HTML; CHARSET=UTF-8",
		"text/html; charset=\"utf-8\"", "text/html; charset=latin1", "text/html", "", "text/html; charſet=utf-8", "text/html; charset=utf-8 "}
	for _, body := range bodies {
		for _, ct := range types {
			got, gotName := decode([]byte(body), ct)
			enc, name := htmlenc.Determine([]byte(body), ct)
			want := []byte(body)
			if name != "utf-8" && enc != nil {
				if out, err := enc.NewDecoder().Bytes([]byte(body)); err == nil {
					want = out
				}
			} else {
				name = "utf-8"
			}
			if string(got) != string(want) || gotName != name {
				t.Errorf("decode(%q, %q) = %q, %q; sniffing gives %q, %q", body, ct, got, gotName, want, name)
			}
		}
	}
}

// TestDuplicatesAcrossPooledScanners checks duplicate detection on both
// sides of seenLinear (scan, then map) and that a scanner reused from the
// pool forgets the links of the page before.
func TestDuplicatesAcrossPooledScanners(t *testing.T) {
	base := mustURL(t, "http://example.com/")
	for _, n := range []int{1, seenLinear - 1, seenLinear, seenLinear + 1, 3 * seenLinear} {
		var b strings.Builder
		for round := 0; round < 2; round++ {
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `<a href="/p%d">x</a><link rel=stylesheet href="/p%d">`, i, i)
			}
		}
		for page := 0; page < 3; page++ {
			p, err := HTML(base, []byte(b.String()), "text/html", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Links) != 2*n {
				t.Fatalf("%d distinct links, page %d: got %d links, want %d", n, page, len(p.Links), 2*n)
			}
			for i, l := range p.Links {
				wantHop := HopLink
				if i%2 == 1 {
					wantHop = HopEmbed
				}
				if want := fmt.Sprintf("http://example.com/p%d", i/2); l.Abs != want || l.Hop != wantHop {
					t.Fatalf("link %d = %s %c, want %s %c", i, l.Abs, l.Hop, want, wantHop)
				}
			}
		}
	}
}

func TestRawTagNameCommonTags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw  string
		skip int
		want string
		ok   bool
	}{
		{`<a href="x">`, 1, "a", true},
		{`<DIV class=x>`, 1, "div", true},
		{`<br/>`, 1, "br", true},
		{"</p\n>", 2, "p", true},
		{`</A>`, 2, "a", true},
		{`<my-element>`, 1, "my-element", true},
		{`<a-seventeen-bytes>`, 1, "", false},
		{"<a\x00>", 1, "", false},
		{`</>`, 2, "", false},
	}
	for _, c := range cases {
		if got, ok := rawTagName([]byte(c.raw), c.skip); got != c.want || ok != c.ok {
			t.Errorf("rawTagName(%q, %d) = %q, %v; want %q, %v", c.raw, c.skip, got, ok, c.want, c.ok)
		}
	}
}

// TestTextBufMatchesReference compares textBuf.add with the reference at
// every bound from 1 to 40 bytes, so that each possible cut of a run of
// words (inside a word, at a space, at the end) is seen.
func TestTextBufMatchesReference(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"aa bb cc dd ee", " aa  bb\tcc dd ", "x y z", "caf\u00e9 au lait\u00a0noir", "one"} {
		for max := 1; max <= 40; max++ {
			var got, want textBuf
			for round := 0; round < 2; round++ {
				got.add([]byte(in), max)
				want.addReference([]byte(in), max)
			}
			if got.String() != want.String() || got.full != want.full || got.space != want.space {
				t.Errorf("add(%q) twice, max %d: %q %+v, reference %q %+v", in, max, got.String(), got, want.String(), want)
			}
		}
	}
}
