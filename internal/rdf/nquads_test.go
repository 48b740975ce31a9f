package rdf

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseQuad(t *testing.T) {
	t.Parallel()
	iri := NewIRI
	for _, tc := range []struct {
		name, in string
		want     Quad
	}{
		{"triple", `<http://a/s> <http://a/p> <http://a/o> .`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: iri("http://a/o")}},
		{"quad", `<http://a/s> <http://a/p> <http://a/o> <http://g/> .`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: iri("http://a/o"), G: iri("http://g/")}},
		{"blank graph", `_:b0 <http://a/p> _:b1 _:g .`,
			Quad{S: NewBlank("b0"), P: iri("http://a/p"), O: NewBlank("b1"), G: NewBlank("g")}},
		{"no spaces", `<http://a/s><http://a/p>"x".`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: NewLiteral("x", "", "")}},
		{"blank dot end", `_:a.b <http://a/p> _:c.`,
			Quad{S: NewBlank("a.b"), P: iri("http://a/p"), O: NewBlank("c")}},
		{"lang", `<http://a/s> <http://a/p> "chat"@fr-BE .`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: NewLiteral("chat", "", "fr-BE")}},
		{"datatype", `<http://a/s> <http://a/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: NewLiteral("1", "http://www.w3.org/2001/XMLSchema#integer", "")}},
		{"xsd string is plain", `<http://a/s> <http://a/p> "x"^^<http://www.w3.org/2001/XMLSchema#string> .`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: NewLiteral("x", "", "")}},
		{"escapes", `<http://a/s> <http://a/p> "a\t\"b\"\n\\ \u00e9 \U0001F600 \'" .`,
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: NewLiteral("a\t\"b\"\n\\ é 😀 '", "", "")}},
		{"iri uchar", `<http://a/\u0020x> <http://a/p> <http://a/o> .`,
			Quad{S: iri("http://a/ x"), P: iri("http://a/p"), O: iri("http://a/o")}},
		{"comment", "<http://a/s> <http://a/p> <http://a/o> . # note",
			Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: iri("http://a/o")}},
		{"unicode label", `_:été <http://a/p> "x" .`,
			Quad{S: NewBlank("été"), P: iri("http://a/p"), O: NewLiteral("x", "", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseQuad(tc.in)
			if err != nil {
				t.Fatalf("ParseQuad: %v", err)
			}
			if got != tc.want {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestParseQuadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"relative iri", `<s> <http://a/p> <http://a/o> .`, "not absolute"},
		{"literal subject", `"s" <http://a/p> <http://a/o> .`, "where a term belongs"},
		{"blank predicate", `<http://a/s> _:p <http://a/o> .`, "where a term belongs"},
		{"no dot", `<http://a/s> <http://a/p> <http://a/o>`, "expected '.'"},
		{"literal graph", `<http://a/s> <http://a/p> <http://a/o> "g" .`, "where a term belongs"},
		{"trailing", `<http://a/s> <http://a/p> <http://a/o> . x`, "after the statement"},
		{"space in iri", `<http://a/ s> <http://a/p> <http://a/o> .`, "not allowed in an IRI"},
		{"unterminated iri", `<http://a/s`, "unterminated IRI"},
		{"unterminated string", `<http://a/s> <http://a/p> "abc`, "unterminated string"},
		{"bad escape", `<http://a/s> <http://a/p> "\x" .`, "unknown escape"},
		{"bad hex", `<http://a/s> <http://a/p> "\u00zz" .`, "bad hex digit"},
		{"surrogate", `<http://a/s> <http://a/p> "\uD800" .`, "not a Unicode scalar"},
		{"too big", `<http://a/s> <http://a/p> "\U00110000" .`, "not a Unicode scalar"},
		{"short escape", `<http://a/s> <http://a/p> "\u00`, "unfinished escape"},
		{"echar in iri", `<http://a/\n> <http://a/p> <http://a/o> .`, "not allowed here"},
		{"empty lang", `<http://a/s> <http://a/p> "x"@ .`, "empty language tag"},
		{"bad subtag", `<http://a/s> <http://a/p> "x"@en- .`, "empty language subtag"},
		{"langString datatype", `<http://a/s> <http://a/p> "x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .`, "needs a language tag"},
		{"datatype not iri", `<http://a/s> <http://a/p> "x"^^foo .`, "datatype IRI"},
		{"empty label", `_: <http://a/p> <http://a/o> .`, "blank node label"},
		{"label starts with dash", `_:-a <http://a/p> <http://a/o> .`, "blank node label"},
		{"invalid utf8", "<http://a/s> <http://a/p> \"\xff\" .", "invalid UTF-8"},
		{"empty", ``, "end of the line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseQuad(tc.in)
			var se *NQuadsError
			if !errors.As(err, &se) {
				t.Fatalf("ParseQuad(%q) = %v, want an *NQuadsError", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "rdf: n-quads line 1 col ") {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestQuadReaderLines(t *testing.T) {
	t.Parallel()
	in := "# header\n\n<http://a/s> <http://a/p> \"1\" .\r\n" +
		"<http://a/s> <http://a/p> bad .\n" +
		"<http://a/s> <http://a/p> \"2\" .\r<http://a/s> <http://a/p> \"3\" .\n" +
		"<http://a/s> <http://a/p> \"" + strings.Repeat("x", 100) + "\" .\n" +
		"<http://a/s> <http://a/p> \"4\" ." // no final newline
	d := NewQuadReader(strings.NewReader(in), QuadReaderOptions{MaxLineBytes: 64})
	var got []string
	var errs []string
	for i := 0; i < 20; i++ {
		q, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		got = append(got, q.O.Value)
	}
	if strings.Join(got, ",") != "1,2,3,4" {
		t.Errorf("values %v, want 1,2,3,4", got)
	}
	if len(errs) != 2 || !strings.Contains(errs[0], "line 4 col 27") || !strings.Contains(errs[1], "line 6: over 64 bytes") {
		t.Errorf("errors %q", errs)
	}
}

func TestParseTerm(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`<http://a/x>`, `_:b`, `"x"@en`, `"1"^^<http://www.w3.org/2001/XMLSchema#int>`} {
		tm, err := ParseTerm(in)
		if err != nil || tm.String() != in {
			t.Errorf("ParseTerm(%q) = %v, %v", in, tm, err)
		}
	}
	for _, in := range []string{``, `<http://a/x> x`, `x`} {
		if _, err := ParseTerm(in); err == nil {
			t.Errorf("ParseTerm(%q) accepted", in)
		}
	}
}

// TestRoundTrip writes quads whose values need every kind of escape and
// reads them back.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	odd := "a\"b\\c\nd\re\tf\x00g\x7fh é 😀 <>{}|^`"
	qs := []Quad{
		{S: NewIRI("http://x/" + odd), P: NewIRI("http://x/p"), O: NewLiteral(odd, "", ""), G: NewIRI("http://g/")},
		{S: NewBlank("b1"), P: NewIRI("http://x/p"), O: NewLiteral(odd, "", "en-GB")},
		{S: NewBlank("b1"), P: NewIRI("http://x/p"), O: NewLiteral(odd, "http://x/"+odd, "")},
	}
	for _, q := range qs {
		got, err := ParseQuad(q.String())
		if err != nil {
			t.Fatalf("ParseQuad(%s): %v", q, err)
		}
		if got != q {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, q)
		}
	}
}

// FuzzParseQuad checks that parsing never panics and that what parses
// survives a round trip through Quad.String.
func FuzzParseQuad(f *testing.F) {
	for _, s := range []string{
		`<http://a/s> <http://a/p> <http://a/o> <http://g/> .`,
		`_:b0 <http://a/p> "x\u00e9\n"@en-US .`,
		`<http://a/s> <http://a/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .`,
		`_:a.b <http://a/p> _:c. # c`,
		`<http://a/\U0001F600> <http://a/p> "\t\b\f\r\"'\\" .`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := ParseQuad(in)
		if err != nil {
			var se *NQuadsError
			if !errors.As(err, &se) {
				t.Fatalf("error of the wrong type: %v", err)
			}
			return
		}
		out := q.String()
		q2, err := ParseQuad(out)
		if err != nil {
			t.Fatalf("ParseQuad(%q) = %v after parsing %q", out, err, in)
		}
		if q2 != q {
			t.Fatalf("round trip of %q:\n got %#v\nwant %#v", in, q2, q)
		}
		if q2.String() != out {
			t.Fatalf("String not stable: %q vs %q", q2.String(), out)
		}
	})
}

// FuzzQuadReader feeds a whole document to a QuadReader with a small line
// bound: it must end, report only its own error kinds, and every quad it
// returns must survive a round trip.
func FuzzQuadReader(f *testing.F) {
	f.Add([]byte("<http://a/s> <http://a/p> \"x\" .\r\n# c\n\n_:b <http://a/p> _:c <http://g/> .\r<http://a/s> <http://a/p> \"y\"@en ."))
	f.Add([]byte(strings.Repeat("x", 300) + "\n<http://a/s> <http://a/p> <http://a/o> ."))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := NewQuadReader(bytes.NewReader(in), QuadReaderOptions{MaxLineBytes: 256})
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatalf("more than %d results from %d bytes", i, len(in))
			}
			q, err := d.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var se *NQuadsError
			if err != nil {
				if !errors.As(err, &se) && !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				continue
			}
			if q2, err := ParseQuad(q.String()); err != nil || q2 != q {
				t.Fatalf("round trip of %v: %v, %v", q, q2, err)
			}
		}
	})
}
