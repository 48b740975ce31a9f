package extract

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// FuzzHTML feeds arbitrary bytes and content types: extraction must not
// panic, every link must be absolute http(s) without fragment, and every
// count and size must stay within the options.
func FuzzHTML(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.html"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "text/html")
	}
	f.Add([]byte(`<meta http-equiv=refresh content="0;url='//x/'"><base href=//h/><a href=../a>`), "")
	f.Add([]byte("\xfe\xff\x00<\x00a\x00 \x00h\x00r\x00e\x00f\x00=\x00x\x00>"), "text/html; charset=utf-16")
	f.Add([]byte(`<script>"http:\/\/a\/b" http://[::1]:80/x</script><title>`), "text/html; charset=shift_jis")
	base := mustURL(f, "http://example.com/a/b")
	o := Options{Agent: "courtesy", Images: true, Requisites: true, Forms: true, ScriptURLs: true, TextURLs: true,
		MaxLinks: 50, MaxURLLength: 300, MaxBytes: 1 << 16, MaxText: 500, MaxAnchorText: 40}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		p, err := HTML(base, body, contentType, o)
		if err != nil {
			t.Fatalf("HTML: %v", err)
		}
		checkInvariants(t, p, o.withDefaults())
		// The crawler's normalization on top: the same invariants, and
		// every link is already in its crawl-normal form.
		oc := o
		oc.Normalize = urlnorm.CrawlDefaults()
		pc, err := HTML(base, body, contentType, oc)
		if err != nil {
			t.Fatalf("HTML with crawl normalization: %v", err)
		}
		checkInvariants(t, pc, oc.withDefaults())
		for _, l := range pc.Links {
			if n, err := urlnorm.NormalizeString(l.Abs, oc.Normalize); err != nil || n != l.Abs {
				t.Fatalf("link %q not crawl-normal: %q, %v", l.Abs, n, err)
			}
		}
		// Without the text: the same links, and HasText says whether
		// there was text.
		on := oc
		on.NoText = true
		pn, err := HTML(base, body, contentType, on)
		if err != nil {
			t.Fatalf("HTML with NoText: %v", err)
		}
		if pn.Text != "" || pn.HasText != (pc.Text != "") || pc.HasText != (pc.Text != "") || len(pn.Links) != len(pc.Links) {
			t.Fatalf("NoText: text %q, HasText %v / %v for text %q; %d links, want %d", pn.Text, pn.HasText, pc.HasText, pc.Text, len(pn.Links), len(pc.Links))
		}
		if p.Base == nil || !httpURL(p.Base) {
			t.Fatalf("base %v", p.Base)
		}
		if p.Canonical != nil && !httpURL(p.Canonical) {
			t.Fatalf("canonical %v", p.Canonical)
		}
	})
}
