package rdf

import "testing"

func TestQuadString(t *testing.T) {
	t.Parallel()
	g := NewIRI("http://ex.org/page")
	tests := []struct {
		name string
		q    Quad
		want string
	}{
		{"iris", Quad{S: NewIRI("http://a/s"), P: NewIRI("http://a/p"), O: NewIRI("http://a/o"), G: g},
			`<http://a/s> <http://a/p> <http://a/o> <http://ex.org/page> .`},
		{"default graph", Quad{S: NewBlank("b1"), P: NewIRI("http://a/p"), O: NewLiteral("x", "", "")},
			`_:b1 <http://a/p> "x" .`},
		{"lang", Quad{S: NewBlank("b1"), P: NewIRI("http://a/p"), O: NewLiteral("chat", RDFLangString, "fr")},
			`_:b1 <http://a/p> "chat"@fr .`},
		{"typed", Quad{S: NewBlank("b1"), P: NewIRI("http://a/p"), O: NewLiteral("1", nsXSD+"integer", "")},
			`_:b1 <http://a/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .`},
		{"xsd string is plain", Quad{S: NewBlank("b"), P: NewIRI("http://a/p"), O: NewLiteral("s", XSDString, "")},
			`_:b <http://a/p> "s" .`},
		{"escapes", Quad{S: NewBlank("b"), P: NewIRI("http://a/p"), O: NewLiteral("a\"b\\c\nd\re\x01", "", "")},
			`_:b <http://a/p> "a\"b\\c\nd\re\u0001" .`},
		{"iri escapes", Quad{S: NewIRI("http://a/x y<z>"), P: NewIRI("http://a/p"), O: NewIRI("http://a/é")},
			`<http://a/x\u0020y\u003Cz\u003E> <http://a/p> <http://a/é> .`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if !(Term{}).IsZero() || NewIRI("x").IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestResolveIRI(t *testing.T) {
	t.Parallel()
	// RFC 3986 §5.4's examples, and IRIs that must keep their characters.
	base := "http://a/b/c/d;p?q"
	tests := map[string]string{
		"g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/",
		"/g": "http://a/g", "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y",
		"#s": "http://a/b/c/d;p?q#s", "g#s": "http://a/b/c/g#s", ";x": "http://a/b/c/;x",
		"": "http://a/b/c/d;p?q", ".": "http://a/b/c/", "./": "http://a/b/c/", "..": "http://a/b/",
		"../g": "http://a/b/g", "../..": "http://a/", "../../g": "http://a/g", "../../../g": "http://a/g",
		"/./g": "http://a/g", "g.": "http://a/b/c/g.", "..g": "http://a/b/c/..g", "./../g": "http://a/b/g",
		"g;x=1/../y": "http://a/b/c/y", "café": "http://a/b/c/café",
	}
	for ref, want := range tests {
		if got := resolveIRI(base, ref); got != want {
			t.Errorf("resolve(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestValidIRIAndLang(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"http://a/b": true, "urn:x": true, "rel/x": false, "http://a/ b": false,
		"http://a/<b>": false, "": false, "http://a/é": true,
	} {
		if validIRI(s) != want {
			t.Errorf("validIRI(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"en": true, "en-GB": true, "zh-Hant-TW": true, "": false,
		"e n": false, "1en": false, "en-": false, "-en": false, "x-1a": true} {
		if validLang(s) != want {
			t.Errorf("validLang(%q) = %v", s, !want)
		}
	}
}
