package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"
)

// checkTagNames tokenizes data and fails t at the first start or end tag
// whose name as rawTagName reads it differs from the tokenizer's own
// TagName (where rawTagName gives up, tagName calls TagName itself).
func checkTagNames(t *testing.T, data []byte) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(data))
	for i := 0; i < 1<<16; i++ {
		skip := 0
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			skip = 1
		case html.EndTagToken:
			skip = 2
		default:
			continue
		}
		raw := bytes.Clone(z.Raw())
		got, ok := rawTagName(raw, skip)
		want, _ := z.TagName()
		if ok && got != string(want) {
			t.Fatalf("token %q: tagName %q, TagName %q", z.Raw(), got, want)
		}
	}
}

func TestTagNameMatchesTokenizer(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, html string }{
		{"plain", `<p>x</p><a href=x>y</a><br/><IMG SRC=x>`},
		{"white space in tags", "<div\n\tclass=x >a</div\r\n><span\f>b</span >"},
		{"self closing and slashes", `<br/><x/y><p/ ><a/b=c></a/>`},
		{"long and custom names", `<my-very-long-custom-element-name>x</my-very-long-custom-element-name><aaaaaaaaaaaaaaaa></aaaaaaaaaaaaaaaa><aaaaaaaaaaaaaaaaa>`},
		{"mixed case", `<ScRiPt>x</sCrIpT><TITLE>t</Title><NoScript><A HREF=y>z</A></NOSCRIPT>`},
		{"NUL and non-ASCII", "<a\x00b>x</a\x00b><\u00e9l\u00e9ment>y</\u00e9l\u00e9ment><a\xffb>"},
		{"raw text ends", `<style>a</style ><textarea>b</textarea/><xmp>c</xmp x=y><iframe>d</iframe>`},
		{"bogus end tags", `</>x</ y></3><//a></a`},
		{"end tag with attributes", `</div class="x">`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkTagNames(t, []byte(c.html)) })
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.html"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkTagNames(t, b)
	}
}

// FuzzTagName holds tagName (the name read from the raw token) to the
// tokenizer's TagName on any input.
func FuzzTagName(f *testing.F) {
	for _, s := range []string{`<a href=x>y</a>`, "<A\x00B>x</a\tb>", `<br/></ p><x/y>`, `<script>x</SCRIPT >`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkTagNames(t, data) })
}

// checkRawAttrs tokenizes data and fails t at the first start tag whose
// attributes as attrScanner reads them (deduplicated by name as the
// tokenizer does) differ from TagAttr's, or whose attrs from readRaw
// differ from those read with TagAttr. It returns how many tags readRaw
// handled.
func checkRawAttrs(t *testing.T, data []byte) (handled int) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(data))
	for i := 0; i < 1<<16; i++ {
		switch z.Next() {
		case html.ErrorToken:
			return handled
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		raw := bytes.Clone(z.Raw())
		type kv struct{ k, v []byte }
		var got []kv
		var sc attrScanner
		seen := map[string]bool{}
		ok := sc.start(raw)
		for ok {
			k, v, good, done := sc.next()
			if !good {
				ok = false
				break
			}
			if done {
				break
			}
			lk := string(bytes.ToLower(k)) // the tokenizer's duplicate key: ASCII lower case, NUL kept
			if lk != string(lowerASCII(k)) {
				lk = string(lowerASCII(k))
			}
			if !seen[lk] {
				seen[lk] = true
				got = append(got, kv{k, v})
			}
		}
		if !ok {
			t.Fatalf("tag %q: attrScanner lost its way", raw)
		}
		var viaRaw attrs
		rawOK := viaRaw.readRaw(raw)
		var viaTok attrs
		for j := 0; ; j++ {
			k, v, more := z.TagAttr()
			if k == nil && !more && j == 0 && len(got) == 0 {
				break
			}
			if j >= len(got) {
				t.Fatalf("tag %q: TagAttr has more than %d attributes", raw, len(got))
			}
			wantK := bytes.ReplaceAll(lowerASCII(got[j].k), []byte{0}, []byte("\uFFFD"))
			if !bytes.Equal(k, wantK) {
				t.Fatalf("tag %q attribute %d: key %q, TagAttr %q", raw, j, wantK, k)
			}
			if plainValue(got[j].v) && !bytes.Equal(v, got[j].v) {
				t.Fatalf("tag %q attribute %q: value %q, TagAttr %q", raw, k, got[j].v, v)
			}
			if j < maxAttrs {
				viaTok.set(k, v)
			}
			if !more {
				if j+1 != len(got) {
					t.Fatalf("tag %q: TagAttr has %d attributes, attrScanner %d", raw, j+1, len(got))
				}
				break
			}
		}
		if rawOK {
			handled++
			for _, f := range [][2][]byte{
				{viaRaw.href, viaTok.href}, {viaRaw.src, viaTok.src}, {viaRaw.rel, viaTok.rel},
				{viaRaw.alt, viaTok.alt}, {viaRaw.name, viaTok.name}, {viaRaw.httpEquiv, viaTok.httpEquiv},
				{viaRaw.content, viaTok.content}, {viaRaw.lang, viaTok.lang}, {viaRaw.action, viaTok.action},
				{viaRaw.method, viaTok.method}, {viaRaw.typ, viaTok.typ},
			} {
				if !bytes.Equal(f[0], f[1]) || (f[0] == nil) != (f[1] == nil) {
					t.Fatalf("tag %q: readRaw %+v, TagAttr %+v", raw, viaRaw, viaTok)
				}
			}
			if viaRaw.hasHref != viaTok.hasHref || viaRaw.rdfa != viaTok.rdfa || viaRaw.microdata != viaTok.microdata {
				t.Fatalf("tag %q: readRaw %+v, TagAttr %+v", raw, viaRaw, viaTok)
			}
		}
	}
	return handled
}

func TestRawAttrsMatchTokenizer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, html string
		handled    int // start tags readRaw must handle itself
	}{
		{"quoted and unquoted", `<a href="/x" REL=nofollow title='t "q"'>y</a><img src=a.png alt="">`, 2},
		{"white space around equals", "<a href = \"/x\"\n\trel =\fnext\r\n>", 1},
		{"no values and slashes", `<input disabled checked/><br/><a/href=x><p / class=y>`, 4},
		{"equals first in name", `<a =x href=y ==z>`, 1},
		{"duplicates", `<a href=1 HREF=2 Href=3 rel=a rel=b>`, 1},
		{"unquoted up to '>'", `<a href=x/>t</a><a href=/y/>`, 2},
		{"empty values", `<a href="" rel='' alt=>`, 1},
		{"structured data", `<div itemscope itemtype=x><span property="name" typeof=T vocab=v about=a>`, 2},
		{"entity in used value", `<a href="/x?a=1&amp;b=2">`, 0},
		{"entity in unused value", `<a href=/x title="a&amp;b">`, 1},
		{"carriage return in value", "<a href=\"/x\ry\">", 0},
		{"NUL in key and value", "<a h\x00ref=x href=\"\x00\">", 0},
		{"non-ASCII", "<a href=/caf\u00e9 d\u00e9f=1>", 1},
		{"long key", `<a data-a-very-long-attribute-name=1 href=/x>`, 1},
		{"unterminated quote", `<a href="/x>t</a>`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := checkRawAttrs(t, []byte(c.html)); n != c.handled {
				t.Errorf("readRaw handled %d start tags, want %d", n, c.handled)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.html"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkRawAttrs(t, b)
	}
}

// FuzzRawAttrs holds attrScanner and readRaw to the tokenizer's TagAttr on
// any input.
func FuzzRawAttrs(f *testing.F) {
	for _, s := range []string{`<a href="/x" REL=nofollow>`, "<a =x\n/ b = 'c' d=e/>", `<a href=x&amp;y c="d">`, "<A HREF=\r\x00>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkRawAttrs(t, data) })
}
