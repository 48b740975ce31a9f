package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes (also gzip-wrapped): Parse must not
// panic, must return either a result or one of its documented errors, and
// every entry must respect the limits.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	conf, _ := filepath.Glob(filepath.Join("testdata", "conformance", "*"))
	files = append(files, conf...)
	for _, name := range files {
		if filepath.Base(name) == "bomb.txt.gz" {
			continue // 60 MiB expanded: too slow per exec
		}
		b, err := os.ReadFile(name)
		if err != nil || len(b) == 0 {
			continue // directories (golden/)
		}
		f.Add(b, false)
	}
	f.Add([]byte("<urlset><url><loc>http://a/&amp;</loc><srcloc>\n/x</srcloc><type>DATA</type></url>"), true)
	f.Add([]byte("<sitemapindex><sitemap><loc>//h/s.xml</loc></sitemap></sitemapindex>"), false)
	base := mustURL(f, "http://www.example.com/sitemap.xml")
	o := Options{MaxEntries: 20, MaxBytes: 1 << 16, MaxURLLength: 200}
	f.Fuzz(func(t *testing.T, data []byte, wrap bool) {
		if wrap {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(data)
			zw.Close()
			data = b.Bytes()
		}
		sm, err := Parse(bytes.NewReader(data), base, o)
		if err != nil {
			if sm != nil {
				t.Fatalf("result with a content error: %v", err)
			}
			if !errors.Is(err, ErrFormat) && !bytes.HasPrefix([]byte(err.Error()), []byte("sitemap: bad gzip header")) &&
				!bytes.HasPrefix([]byte(err.Error()), []byte("sitemap: charset")) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkInvariants(t, sm, o)
	})
}
