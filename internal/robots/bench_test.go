package robots

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// genRobots builds a realistic robots.txt of about size bytes: many named
// groups and a large `*` group, prefixes, `*` and `$` wildcards, comments,
// Crawl-delay and Sitemap lines. The same seed gives the same file.
func genRobots(size int) []byte {
	r := rand.New(rand.NewPCG(42, uint64(size)))
	words := []string{"search", "cart", "checkout", "account", "api", "static", "img", "news",
		"archive", "tag", "category", "product", "user", "login", "print", "share", "feed", "amp"}
	agents := []string{"Googlebot", "Bingbot", "Slurp", "DuckDuckBot", "Baiduspider", "YandexBot",
		"facebot", "ia_archiver", "AhrefsBot", "SemrushBot", "MJ-bot", "PetalBot", "CCBot", "GPTBot"}
	var b strings.Builder
	b.WriteString("# robots.txt generated for benchmarks\nSitemap: https://www.example.com/sitemap.xml\n\n")
	path := func() string {
		var p strings.Builder
		for range 1 + r.IntN(3) {
			p.WriteString("/" + words[r.IntN(len(words))])
			if r.IntN(3) == 0 {
				fmt.Fprintf(&p, "-%d", r.IntN(1000))
			}
		}
		switch r.IntN(6) {
		case 0:
			p.WriteString("/*.php$")
		case 1:
			p.WriteString("*?sessionid=")
		case 2:
			p.WriteString("/")
		case 3:
			p.WriteString("$")
		}
		return p.String()
	}
	group := 0
	for b.Len() < size-200 {
		if group%4 == 3 {
			b.WriteString("User-agent: *\n")
		} else {
			k := group / len(agents)
			fmt.Fprintf(&b, "User-agent: %s-%c%c\n", agents[group%len(agents)], 'a'+k/26%26, 'a'+k%26)
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "User-agent: %s\n", agents[r.IntN(len(agents))])
			}
		}
		n := 5 + r.IntN(30)
		for range n {
			if b.Len() >= size-100 {
				break
			}
			if r.IntN(4) == 0 {
				fmt.Fprintf(&b, "Allow: %s\n", path())
			} else {
				fmt.Fprintf(&b, "Disallow: %s\n", path())
			}
			if r.IntN(10) == 0 {
				b.WriteString("# section\n")
			}
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "Crawl-delay: %d\n", 1+r.IntN(10))
		}
		b.WriteString("\n")
		group++
	}
	return []byte(b.String())
}

const benchPath = "/product-17/search/item.php?id=12345&ref=home"

func BenchmarkParse(b *testing.B) {
	for _, size := range []int{10 << 10, 490 << 10} {
		body := genRobots(size)
		name := fmt.Sprintf("%dKB", len(body)>>10)
		b.Run(name+"/courtesy", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(body)
			}
		})
		b.Run(name+"/temoto", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := robotstxt.FromBytes(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	for _, size := range []int{10 << 10, 490 << 10} {
		body := genRobots(size)
		name := fmt.Sprintf("%dKB", len(body)>>10)
		f := Parse(body)
		g := f.Group("somebot")
		t, err := robotstxt.FromBytes(body)
		if err != nil {
			b.Fatal(err)
		}
		tg := t.FindGroup("somebot")
		if g.Allowed(benchPath) != tg.Test(benchPath) {
			b.Logf("%s: the two libraries disagree on %s", name, benchPath)
		}
		b.Run(name+"/courtesy", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Allowed(benchPath)
			}
		})
		b.Run(name+"/temoto", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tg.Test(benchPath)
			}
		})
		b.Run(name+"/courtesy-by-agent", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Allowed("somebot", benchPath)
			}
		})
		b.Run(name+"/temoto-by-agent", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				t.TestAgent(benchPath, "somebot")
			}
		})
	}
}

func TestGenRobotsIsRealistic(t *testing.T) {
	for _, size := range []int{10 << 10, 490 << 10} {
		body := genRobots(size)
		if len(body) < size*9/10 || len(body) > MaxSize {
			t.Errorf("genRobots(%d) gave %d bytes", size, len(body))
		}
		f := Parse(body)
		if ps := f.Problems(); len(ps) != 0 {
			t.Errorf("generated file has problems: %v", ps[:min(3, len(ps))])
		}
		if len(f.groups) < 10 {
			t.Errorf("only %d groups", len(f.groups))
		}
	}
}
