package extract

import (
	"slices"
	"strings"
	"testing"
)

func TestCSSRefs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, css string
		want      []string
	}{
		{"unquoted", `body{background:url(bg.png)}`, []string{"bg.png"}},
		{"quoted", `a{b:url("x.png") url('y.png')}`, []string{"x.png", "y.png"}},
		{"space inside parens", `a{b:url(  z.png  )}`, []string{"z.png"}},
		{"upper case", `a{b:URL(u.png)}`, []string{"u.png"}},
		{"import string", `@import "base.css"; @import 'print.css' print;`, []string{"base.css", "print.css"}},
		{"import url", `@import url(theme.css);@IMPORT url("t2.css")`, []string{"theme.css", "t2.css"}},
		{"font face", `@font-face{src:url(f.woff2) format("woff2"),url(f.woff) format("woff")}`, []string{"f.woff2", "f.woff"}},
		{"string not after import", `a:after{content:"x.png"} @media print{a{b:1}}`, nil},
		{"import then other token", `@import screen "x.css";`, nil},
		{"comment hides", `/* url(no.png) */ a{b:url(yes.png)} /* @import "no.css" */`, []string{"yes.png"}},
		{"unterminated comment", `a{b:url(a.png)} /* url(b.png)`, []string{"a.png"}},
		{"not a url function", `a{b:myurl(no.png); c:--url(no2.png); d:_url(no3.png)}`, nil},
		{"escaped paren", `a{b:url(a\).png)}`, []string{"a).png"}},
		{"hex escape", `a{b:url("caf\E9 .png")}`, []string{"café.png"}},
		{"hex escape six digits", `a{b:url(\000041 b.png)}`, []string{"Ab.png"}},
		{"null escape", `a{b:url("\0 x")}`, []string{"\uFFFDx"}},
		{"bad url quote inside", `a{b:url(a"b.png)} c{d:url(ok.png)}`, []string{"ok.png"}},
		{"bad url space inside", `a{b:url(a b.png)} c{d:url(ok.png)}`, []string{"ok.png"}},
		{"empty url", `a{b:url()} c{d:url( )}`, nil},
		{"empty string url kept for the resolver", `a{b:url("")}`, []string{""}},
		{"string with newline is bad", "@import \"a\nb.css\";", nil},
		{"string line continuation", "@import \"a\\\nb.css\";", []string{"ab.css"}},
		{"unterminated string", `@import "last.css`, []string{"last.css"}},
		{"unterminated url", `a{b:url(x.png`, nil},
		{"data url", `a{b:url(data:image/png;base64,AAAA)}`, []string{"data:image/png;base64,AAAA"}},
		{"escaped u is identifier", `a{b:\75rl(x.png)}`, nil},
		{"url in string", `a{content:"url(no.png)"}`, nil},
		{"at end", `url(`, nil},
		{"image-set strings", `a{b:image-set("a.png" 1x, 'b.png' 2x)}`, []string{"a.png", "b.png"}},
		{"webkit image-set", `a{b:-WEBKIT-image-set("c.png" 1x)}`, []string{"c.png"}},
		{"image-set with url and type()", `a{b:image-set(url(d.png) 1x, "e.avif" type("image/avif"))}`, []string{"d.png", "e.avif"}},
		{"not image-set", `a{b:my-image-set("no.png"); c:format("woff2")}`, nil},
		{"after image-set closes", `a{b:image-set("f.png" 1x) "no.png"}`, []string{"f.png"}},
		{"unbalanced close", `a{b:))) image-set("g.png")}`, []string{"g.png"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			cssRefs([]byte(c.css), func(ref []byte) bool {
				got = append(got, string(ref))
				return true
			})
			if !slices.Equal(got, c.want) {
				t.Errorf("cssRefs(%q) = %q, want %q", c.css, got, c.want)
			}
		})
	}
}

func TestCSSRefsStops(t *testing.T) {
	t.Parallel()
	n := 0
	cssRefs([]byte(`a{b:url(1) url(2) url(3)}`), func([]byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("fn called %d times after returning false at 2", n)
	}
}

func TestSrcset(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, v string
		want    []string
	}{
		{"one", "a.png", []string{"a.png"}},
		{"densities", "a.png 1x, a@2x.png 2x", []string{"a.png", "a@2x.png"}},
		{"widths no spaces after comma", "s.jpg 480w,m.jpg 800w,l.jpg 1200w", []string{"s.jpg", "m.jpg", "l.jpg"}},
		{"comma in URL", "img.php?w=1,2 1x, b.png 2x", []string{"img.php?w=1,2", "b.png"}},
		{"trailing comma ends URL", "a.png,b.png", []string{"a.png,b.png"}},
		{"URL then comma", "a.png, b.png", []string{"a.png", "b.png"}},
		{"parens in descriptor", "a.png (x, y) 1x, b.png", []string{"a.png", "b.png"}},
		{"leading junk", " ,, a.png", []string{"a.png"}},
		{"empty", "", nil},
		{"only commas", ",,,", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			srcset([]byte(c.v), func(ref []byte) { got = append(got, string(ref)) })
			if !slices.Equal(got, c.want) {
				t.Errorf("srcset(%q) = %q, want %q", c.v, got, c.want)
			}
		})
	}
}

// TestRequisites checks every page requisite Options.Requisites reads, and
// that without it only the stylesheets, icons and frames are embeds.
func TestRequisites(t *testing.T) {
	t.Parallel()
	page := `<html><head>
<link rel=stylesheet href=/s.css><link rel=icon href=/favicon.ico>
<script src=/app.js></script><script>var x = "/not-a-link.js"</script>
<style>@import "/imp.css"; body{background:url('/bg.png')}</style>
</head><body background=/body.gif>
<img src=/i.png srcset="/i-2x.png 2x, /i-3x.png 3x" alt=x>
<picture><source srcset="/p.webp 1x, /p2.webp 2x" type=image/webp><img src=/p.jpg></picture>
<video src=/v.mp4 poster=/poster.jpg><source src=/v.webm><track src=/subs.vtt></video>
<audio src=/a.ogg></audio><embed src=/e.swf><object data=/o.svg></object>
<input type=image src=/button.png><input type=text src=/no-input.png>
<div style="background-image:url(&quot;/div.png&quot;)">text</div>
<iframe src=/frame.html></iframe><a href=/next.html>next</a>
<table background=/table.gif><td background=/td.gif>cell</td></table>
<img src=data:image/gif;base64,R0lGOD data-src=/lazy.jpg data-srcset="/lazy-2x.jpg 2x"><img class=lazy data-original=/orig.jpg>
<svg><image href=/svg-img.png></image><use xlink:href="/sprite.svg#icon"></use><use href="#local"></use></svg>
</body></html>`
	base := mustURL(t, "http://example.com/dir/page.html")
	embeds := func(o Options) []string {
		p, err := HTML(base, []byte(page), "text/html", o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range p.Links {
			if l.Hop == HopEmbed {
				got = append(got, strings.TrimPrefix(l.Abs, "http://example.com")+" "+l.Context())
			}
		}
		return got
	}
	want := []string{
		"/s.css link/@href", "/favicon.ico link/@href", "/app.js script/@src",
		"/imp.css style", "/bg.png style", "/body.gif body/@background",
		"/i.png img/@src", "/i-2x.png img/@srcset", "/i-3x.png img/@srcset",
		"/p.webp source/@srcset", "/p2.webp source/@srcset", "/p.jpg img/@src",
		"/v.mp4 video/@src", "/poster.jpg video/@poster", "/v.webm source/@src", "/subs.vtt track/@src",
		"/a.ogg audio/@src", "/e.swf embed/@src", "/o.svg object/@data", "/button.png input/@src",
		"/div.png div/@style", "/frame.html iframe/@src", "/table.gif table/@background", "/td.gif td/@background",
		"/lazy.jpg img/@data-src", "/lazy-2x.jpg img/@data-srcset", "/orig.jpg img/@data-original",
		"/svg-img.png image/@href", "/sprite.svg use/@xlink:href",
	}
	// The img src comes before its srcset: src is read in the element's
	// own case, srcset among the requisites first. Compare as sets.
	got := embeds(Options{Requisites: true})
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("with Requisites:\n got %q\nwant %q", got, want)
	}
	if got, want := embeds(Options{}), []string{"/s.css link/@href", "/favicon.ico link/@href", "/frame.html iframe/@src"}; !slices.Equal(got, want) {
		t.Errorf("without Requisites: got %q, want %q", got, want)
	}
}

func TestCSS(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "http://cdn.example.com/css/site.css")
	body := []byte(`@import "theme.css"; @import url(//fonts.example.org/f.css);
@font-face{src:url(../fonts/f.woff2)}
.a{background:url(data:image/gif;base64,R0lGOD)} .b{background:url(/img/b.png#frag)}
.c{background:url(img/c.png)} .d{background:url(img/c.png)} .e{cursor:url(mailto:x)}`)
	p, err := CSS(base, body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range p.Links {
		if l.Hop != HopEmbed || l.Tag != "css" {
			t.Errorf("link %s: hop %s tag %q, want E css", l.Abs, l.Hop, l.Tag)
		}
		got = append(got, l.Abs)
	}
	want := []string{
		"http://cdn.example.com/css/theme.css", "http://fonts.example.org/f.css",
		"http://cdn.example.com/fonts/f.woff2", "http://cdn.example.com/img/b.png",
		"http://cdn.example.com/css/img/c.png",
	}
	if !slices.Equal(got, want) {
		t.Errorf("CSS links:\n got %q\nwant %q", got, want)
	}
	if _, err := CSS(mustURL(t, "ftp://x/a.css"), body, Options{}); err == nil {
		t.Error("CSS with an ftp base: no error")
	}
	if _, err := CSS(base, body, Options{MaxLinks: -1}); err == nil {
		t.Error("CSS with negative MaxLinks: no error")
	}
	// A long data: URL (an inlined font) is no link and no problem.
	p, err = CSS(base, []byte(`@font-face{src:url(data:font/woff2;base64,`+strings.Repeat("A", 20000)+`)}`), Options{})
	if err != nil || len(p.Links) != 0 || len(p.Problems) != 0 {
		t.Errorf("inlined font: %d links, problems %+v, %v", len(p.Links), p.Problems, err)
	}
	// Limits: links kept and bytes read.
	p, err = CSS(base, []byte(strings.Repeat("a{b:url(x.png)} c{d:url(y.png)} e{f:url(z.png)}", 3)), Options{MaxLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Links) != 2 || len(p.Problems) != 1 || p.Problems[0].Kind != ProblemTooManyLinks {
		t.Errorf("MaxLinks 2: %d links, problems %+v", len(p.Links), p.Problems)
	}
	p, err = CSS(base, []byte(`a{b:url(first.png)} c{d:url(second.png)}`), Options{MaxBytes: 22})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || len(p.Links) != 1 {
		t.Errorf("MaxBytes 22: truncated %v, %d links", p.Truncated, len(p.Links))
	}
}

// FuzzCSS: CSS must not panic on any bytes, keep its invariants, and every
// reference cssRefs finds must be a substring of the input unless it was
// unescaped.
func FuzzCSS(f *testing.F) {
	for _, s := range []string{
		`@import "a.css"; a{b:url(x.png)}`, `url(`, `/* `, `url("\`, `@import'`, `url(a\`,
		`a{b:url( "x" )}`, "url(\\31 23)", `@font-face{src:url(f.woff2) format("woff2")}`,
	} {
		f.Add([]byte(s))
	}
	base := mustURL(f, "http://example.com/css/a.css")
	o := Options{MaxLinks: 20, MaxURLLength: 200, MaxBytes: 1 << 14}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := CSS(base, body, o)
		if err != nil {
			t.Fatalf("CSS: %v", err)
		}
		checkInvariants(t, p, o.withDefaults())
		for _, l := range p.Links {
			if l.Hop != HopEmbed {
				t.Fatalf("link %s hop %s", l.Abs, l.Hop)
			}
		}
		cssRefs(body, func(ref []byte) bool {
			if !strings.Contains(string(body), "\\") && !strings.Contains(string(body), string(ref)) {
				t.Fatalf("reference %q is not in the input", ref)
			}
			return true
		})
		srcset(body, func(ref []byte) {
			if len(ref) == 0 || !strings.Contains(string(body), string(ref)) {
				t.Fatalf("srcset candidate %q is not in the input", ref)
			}
		})
	})
}
