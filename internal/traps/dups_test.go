package traps

import (
	"fmt"
	"strings"
	"testing"
)

func TestPathPattern(t *testing.T) {
	tests := []struct{ a, b string }{
		{"http://c.test/calendar/2026/11/", "http://c.test/calendar/1999/02/"},
		{"http://n.test/item/7", "http://n.test/item/12345"},
		{"http://s.test/page.html?PHPSESSID=abc&x=1", "http://s.test/page.html?PHPSESSID=def&x=2"},
		{"http://d.test/pub/?C=N;O=D", "http://d.test/pub/?C=M;O=A"},
	}
	for _, tc := range tests {
		if pa, pb := pathPattern(tc.a), pathPattern(tc.b); pa != pb {
			t.Errorf("%s → %q, %s → %q: want one pattern", tc.a, pa, tc.b, pb)
		}
	}
	differ := [][2]string{
		{"http://p.test/library/statistics.html", "http://p.test/library/random.html"},
		{"http://p.test/a/x.html", "http://p.test/b/x.html"},
		{"http://p.test/list?sort=a", "http://p.test/list?page=a"},
	}
	for _, d := range differ {
		if pathPattern(d[0]) == pathPattern(d[1]) {
			t.Errorf("%s and %s share pattern %q", d[0], d[1], pathPattern(d[0]))
		}
	}
}

// The duplicate limit applies to trap shapes: documentation full of true
// near-duplicates is never stopped, a page breeding copies of itself is
// stopped at the same duplicate as when every duplicate counted.
func TestDuplicateRule(t *testing.T) {
	const lim = 10
	tests := []struct {
		name     string
		dups     func(i int) Dup
		n        int
		stopAt   int // 1-based duplicate that stops the site; 0: never
		wantRule string
	}{
		{"documentation: inherited members, found from the index", func(i int) Dup {
			return Dup{URL: fmt.Sprintf("http://docs.test/api/class%c.html", 'A'+i%26) + strings.Repeat("x", i/26),
				Via: "http://docs.test/api/index.html", Of: "http://docs.test/api/base.html"}
		}, 200, 0, ""},
		{"documentation: per-version pages, one pattern each", func(i int) Dup {
			return Dup{URL: fmt.Sprintf("http://docs.test/v%d/page%c.html", 2+i%4, 'a'+i/4),
				Via: fmt.Sprintf("http://docs.test/v%d/index.html", 2+i%4), Of: fmt.Sprintf("http://docs.test/v1/page%c.html", 'a'+i/4)}
		}, 80, 0, ""},
		{"neardup: next item from the last", func(i int) Dup {
			return Dup{URL: fmt.Sprintf("http://n.test/item/%d", i+1), Via: fmt.Sprintf("http://n.test/item/%d", i), Of: "http://n.test/item/0"}
		}, 30, lim + 1, RuleChain},
		{"session variants found from non-duplicates", func(i int) Dup {
			return Dup{URL: fmt.Sprintf("http://s.test/p.html?sid=%d", i), Via: fmt.Sprintf("http://s.test/other%c.html", 'a'+i), Of: "http://s.test/p.html?sid=x"}
		}, 20, lim + 1, RulePattern},
		{"exact copies with nothing known", func(int) Dup { return Dup{Exact: true} }, 50, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Open(nil, Limits{MaxDuplicatesPerSite: lim}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			stoppedAt := 0
			for i := range tc.n {
				if c.DuplicateOf("site", tc.dups(i)) && stoppedAt == 0 {
					stoppedAt = i + 1
				}
			}
			if stoppedAt != tc.stopAt {
				t.Fatalf("stopped at duplicate %d, want %d", stoppedAt, tc.stopAt)
			}
			ss := c.StoppedSites()
			if tc.stopAt == 0 {
				if len(ss) != 0 {
					t.Fatalf("stopped sites %+v", ss)
				}
				return
			}
			if len(ss) != 1 || ss[0].Kind != Duplicates || ss[0].Duplicates != tc.n || ss[0].TrapShaped != tc.n || len(ss[0].Examples) != maxExamples {
				t.Fatalf("stopped sites %+v", ss)
			}
			if ss[0].Examples[0].Rule != tc.wantRule {
				t.Errorf("first example by %q, want %q", ss[0].Examples[0].Rule, tc.wantRule)
			}
			var b strings.Builder
			if err := WriteReport(&b, ss[0]); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"stopped by: duplicates", ss[0].Examples[0].URL, "copies " + ss[0].Examples[0].Of} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

// TestPatternShare: a path pattern stops the site only when its pages
// keep coming back alike. Release notes (Django's documentation: a
// security release repeats its sibling branch's notes) are a few copies
// among many pages of one pattern; a timestamped archive is all copies.
func TestPatternShare(t *testing.T) {
	const lim = 10
	tests := []struct {
		name   string
		pages  int
		dupOf  func(i int) string // the page i copies, "" if none
		stopAt int                // 1-based page that stops the site; 0: never
	}{
		{"release notes, one copy in twenty", 400, func(i int) string {
			if i%20 == 19 {
				return fmt.Sprintf("http://docs.test/releases/3.%d.%d.html", i/20, i%7)
			}
			return ""
		}, 0},
		{"timestamped archive, all copies of the first", 40, func(i int) string {
			if i > 0 {
				return "http://docs.test/releases/1.0.0.html"
			}
			return ""
		}, lim + 2},
		{"copies catching up with the pages", 400, func(i int) string {
			if i >= 100 && i%2 == 0 {
				return fmt.Sprintf("http://docs.test/releases/3.%d.0.html", i)
			}
			return ""
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Open(nil, Limits{MaxDuplicatesPerSite: lim}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The site's first duplicate, elsewhere, starts the counting.
			c.DuplicateOf("site", Dup{URL: "http://docs.test/", Of: "http://docs.test/index.html", Exact: true})
			stoppedAt := 0
			for i := range tc.pages {
				u := fmt.Sprintf("http://docs.test/releases/%d.%d.%d.html", i/100, i/10%10, i%10)
				if of := tc.dupOf(i); of != "" {
					if c.DuplicateOf("site", Dup{URL: u, Via: "http://docs.test/releases/", Of: of}) && stoppedAt == 0 {
						stoppedAt = i + 1
					}
					continue
				}
				c.Page("site", u)
			}
			if stoppedAt != tc.stopAt {
				t.Fatalf("stopped at page %d, want %d (stopped sites %+v)", stoppedAt, tc.stopAt, c.StoppedSites())
			}
		})
	}
}

func TestReportName(t *testing.T) {
	tests := map[string]string{
		"neardup.test":       "trap-neardup.test.txt",
		"Example.ORG:8080":   "trap-example.org_8080.txt",
		"../../etc/passwd":   "trap-.._.._etc_passwd.txt",
		"xn--bcher-kva.test": "trap-xn--bcher-kva.test.txt",
	}
	for site, want := range tests {
		if got := ReportName(site); got != want {
			t.Errorf("ReportName(%q) = %q, want %q", site, got, want)
		}
	}
}

func FuzzDecodeExamples(f *testing.F) {
	f.Add(encodeExamples([]Pair{{URL: "http://a.test/1", Of: "http://a.test/0", Via: "", Rule: RuleChain}}))
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		ps := decodeExamples(b)
		if len(ps) > maxExamples {
			t.Fatalf("%d examples", len(ps))
		}
		if again := decodeExamples(encodeExamples(ps)); fmt.Sprint(again) != fmt.Sprint(ps) {
			t.Fatalf("round trip %v → %v", ps, again)
		}
	})
}
