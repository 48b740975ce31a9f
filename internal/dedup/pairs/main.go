// Command pairs lists the pages of HTML trees that dedup calls
// near-duplicates: every pair of pages within one tree whose Fingerprint
// lies within the distance, both with at least dedup.MinWords words. It is
// how docs/dedup.md measures precision on real documentation:
//
//	go run ./internal/dedup/pairs -d 3 /usr/share/doc/python3.11/html /usr/share/doc/postgresql-doc-15/html
//
// With -old it uses the fingerprint dedup had before (the extracted text of
// the whole page, every word with a digit one word), for comparison.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/dedup"
	"github.com/courtesy-crawler/courtesy/internal/extract"
)

func main() {
	dist := flag.Int("d", dedup.DefaultDistance, "largest Hamming distance")
	text := flag.Bool("text", false, "fingerprint the whole page's extracted text, not its main content")
	verbose = flag.Bool("v", false, "with -recall, print the word count of each near-duplicate missed")
	recall := flag.Bool("recall", false, "instead of listing pairs, make near-duplicates of every page (a dated line added to its content, its navigation changed) and count those found within the distance")
	flag.Parse()
	total := 0
	for _, root := range flag.Args() {
		type doc struct {
			path  string
			h     uint64
			words int
		}
		var docs []doc
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var h uint64
			var words int
			if *text {
				base, _ := url.Parse("http://x.test/" + filepath.ToSlash(p))
				pg, err := extract.HTML(base, b, "text/html", extract.Options{})
				if err != nil {
					return err
				}
				h, words = dedup.Simhash(pg.Text), len(strings.Fields(pg.Text))
			} else {
				h, words = dedup.Fingerprint(b)
			}
			rel, _ := filepath.Rel(root, p)
			if *recall {
				recalls.check(b, h, words, *dist)
				return nil
			}
			docs = append(docs, doc{rel, h, words})
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "pairs:", err)
			os.Exit(1)
		}
		if *recall {
			continue
		}
		short, pairs := 0, 0
		for i, a := range docs {
			if a.words < dedup.MinWords {
				short++
				continue
			}
			for _, b := range docs[i+1:] {
				if b.words < dedup.MinWords {
					continue
				}
				if d := dedup.Hamming(a.h, b.h); d <= *dist {
					pairs++
					fmt.Printf("%d\t%s\t%s\t%s\n", d, root, a.path, b.path)
				}
			}
		}
		total += pairs
		fmt.Fprintf(os.Stderr, "%s: %d pages, %d under %d words, %d pairs within %d bits\n", root, len(docs), short, dedup.MinWords, pairs, *dist)
	}
	if *recall {
		fmt.Printf("pages %d: dated line found %d (%.1f %%), navigation changed found %d (%.1f %%), both %d (%.1f %%)\n",
			recalls.pages, recalls.dated, pct(recalls.dated, recalls.pages), recalls.nav, pct(recalls.nav, recalls.pages), recalls.both, pct(recalls.both, recalls.pages))
	}
}

func pct(n, d int) float64 { return 100 * float64(n) / float64(max(d, 1)) }

// recallCounts counts the made-up near-duplicates found.
type recallCounts struct{ pages, dated, nav, both int }

var (
	recalls recallCounts
	verbose *bool
)

// check makes near-duplicates of page b: a "Last updated" paragraph with
// a date and time after its first heading (what changes between two
// fetches of a dynamic page), and another navigation bar before it (what
// changes between two sites serving one text).
func (r *recallCounts) check(b []byte, h uint64, words, dist int) {
	if words < dedup.MinWords {
		return
	}
	s := string(b)
	i := strings.Index(s, "</h1>")
	if i < 0 {
		i = strings.Index(s, "</h2>")
	}
	if i < 0 {
		return
	}
	r.pages++
	dated := s[:i+5] + "<p>Last updated on Tuesday 25 November 2026 at 10:42:17, revision 4711.</p>" + s[i+5:]
	j := strings.Index(s, "<body")
	nav := s
	if j >= 0 {
		k := strings.Index(s[j:], ">") + j + 1
		nav = s[:k] + `<nav class="top"><a href="/">Mirror home</a> | <a href="/news/">News</a> | <a href="/about/">About this mirror</a></nav><div class="footer">Mirrored by example.org</div>` + s[k:]
	}
	i += len(nav) - len(s)
	both := nav[:i+5] + "<p>Last updated on Tuesday 25 November 2026 at 10:42:17, revision 4711.</p>" + nav[i+5:]
	for _, v := range []struct {
		text string
		n    *int
	}{{dated, &r.dated}, {nav, &r.nav}, {both, &r.both}} {
		if g, _ := dedup.Fingerprint([]byte(v.text)); dedup.Hamming(g, h) <= dist {
			*v.n++
		} else if *verbose {
			fmt.Fprintf(os.Stderr, "missed: %d words, %d bits\n", words, dedup.Hamming(g, h))
		}
	}
}
