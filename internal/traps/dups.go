package traps

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"slices"
	"strings"
)

// Dup describes one duplicate page fetched on a site: what the crawler
// knows of where it came from and what it copies.
type Dup struct {
	// URL is the page found to be a duplicate.
	URL string
	// Via is the page whose link led to URL ("" for a seed or when
	// unknown).
	Via string
	// Of is the page URL duplicates, when known (the revisit's target for
	// an exact copy, the near-duplicate index's match for a near one).
	Of string
	// Exact is set for an identical payload, clear for a near-duplicate.
	Exact bool
}

// Rules a duplicate can be trap-shaped by.
const (
	// RuleChain: the page was discovered from a duplicate, or from the very
	// page it copies: a page breeding pages like itself (calendars,
	// "next item" links, session variants).
	RuleChain = "chain"
	// RulePattern: the page and the page it copies share a path pattern
	// (digit runs and query values ignored): /item/7 and /item/8,
	// /list?sort=a and /list?sort=b; and the pattern's pages keep coming
	// back alike: at least half of those fetched under it are such
	// copies.
	RulePattern = "pattern"
)

// Pair is an example of a trap-shaped duplicate, for the report.
type Pair struct {
	URL  string `json:"url"`
	Of   string `json:"of,omitempty"`
	Via  string `json:"via,omitempty"`
	Rule string `json:"rule"`
}

// Bounds of the in-memory evidence kept per site.
const (
	maxDupURLs      = 8192 // URLs of duplicates remembered (as hashes) for the chain rule
	maxPatterns     = 1024 // path patterns counted
	maxExamples     = 5    // example pairs kept
	maxExampleBytes = 2048 // bytes of one URL in an example
)

// dupEvidence is a site's record of its duplicates beyond the counters.
// Only the trap-shaped counts and the examples of a stopped site are
// persisted; the rest starts again after a resume.
type dupEvidence struct {
	urls     map[uint64]bool          // hashes of URLs found to be duplicates
	patterns map[string]*patternCount // path patterns of the pages fetched since the first duplicate
	examples []Pair
}

// patternCount is what a site's pages under one path pattern were: pages
// fetched since the site's first duplicate, and of those the copies of a
// page of the same pattern.
type patternCount struct {
	pages, dups int
}

// trapLike reports whether a pattern's pages keep coming back alike: at
// least half of them copy another page of the pattern. A calendar or a
// timestamped archive is nearly all copies; documentation's release
// notes, where a security release repeats its sibling branch's notes,
// are a few copies among hundreds of pages (Django's documentation: 17
// of about 330).
func (p *patternCount) trapLike() bool { return 2*p.dups >= p.pages }

// countLocked returns the counts of the pattern of u, creating them while
// fewer than maxPatterns are kept (nil beyond).
func (ev *dupEvidence) countLocked(u string) *patternCount {
	p := pathPattern(u)
	pc := ev.patterns[p]
	if pc == nil && len(ev.patterns) < maxPatterns {
		pc = &patternCount{}
		ev.patterns[p] = pc
	}
	return pc
}

// Page counts a page fetched on site that is no duplicate, for the
// pattern rule's share of copies. It costs a map lookup on a site that
// has had no duplicate (its pages are counted from the first one on).
func (c *Checker) Page(site, u string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev := c.evidence[site]; ev != nil {
		if pc := ev.countLocked(clip(u)); pc != nil {
			pc.pages++
		}
	}
}

// DuplicateOf counts one exact or near-duplicate page fetched on site and
// reports whether the site is now stopped (its links no longer followed).
// Every duplicate is counted, but only trap-shaped ones count toward
// MaxDuplicatesPerSite (10, the thesis threshold), because documentation has true
// near-duplicates (members inherited by many classes, pages per version)
// that are no trap. A duplicate is trap-shaped by RuleChain (it was
// discovered from a duplicate, or from the page it copies) or by
// RulePattern (it and the page it copies share a path pattern, and at
// least half of the pages fetched under that pattern are such copies:
// call Page for the other pages). The site stops when more than the limit
// are chained, or when more than the limit share one pattern whose pages
// keep coming back alike. On a site that breeds copies of one page
// (testweb's neardup.test) every duplicate is trap-shaped by both rules,
// so the site stops exactly when the old rule, which counted every
// duplicate, stopped it.
func (c *Checker) DuplicateOf(site string, d Dup) bool {
	d.URL, d.Of, d.Via = clip(d.URL), clip(d.Of), clip(d.Via)
	return c.update(site, func(s *siteCounters) Kind {
		s.dups++
		ev := c.evidenceLocked(site)
		pc := ev.countLocked(d.URL)
		samePattern := d.Of != "" && pathPattern(d.URL) == pathPattern(d.Of)
		if pc != nil {
			pc.pages++
			if samePattern {
				pc.dups++
				s.pattern = max(s.pattern, pc.dups)
			}
		}
		rule := ""
		switch {
		case d.Via != "" && (ev.urls[urlHash(d.Via)] || d.Via == d.Of):
			rule = RuleChain
			s.chain++
		case samePattern && pc != nil && pc.trapLike():
			rule = RulePattern
		}
		if d.URL != "" && len(ev.urls) < maxDupURLs {
			ev.urls[urlHash(d.URL)] = true
		}
		if rule != "" {
			s.trapShaped++
			if len(ev.examples) < maxExamples {
				ev.examples = append(ev.examples, Pair{URL: d.URL, Of: d.Of, Via: d.Via, Rule: rule})
			}
		}
		if lim := c.limits.MaxDuplicatesPerSite; lim > 0 && (s.chain > lim || rule == RulePattern && pc.dups > lim) {
			s.examples = slices.Clone(ev.examples)
			return Duplicates
		}
		return ""
	})
}

// evidenceLocked returns site's evidence, creating it.
func (c *Checker) evidenceLocked(site string) *dupEvidence {
	ev := c.evidence[site]
	if ev == nil {
		ev = &dupEvidence{urls: map[uint64]bool{}, patterns: map[string]*patternCount{}}
		c.evidence[site] = ev
	}
	return ev
}

// clip bounds a URL kept as evidence.
func clip(s string) string {
	if len(s) <= maxExampleBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxExampleBytes], "")
}

func urlHash(s string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, s)
	return h.Sum64()
}

// pathPattern returns the shape of a URL's path and query: every run of
// digits becomes "0" and query values are dropped (keys kept, in order), so
// /calendar/2026/11/ and /calendar/2027/01/ share "/calendar/0/0/", and
// /list?sort=a&page=2 and /list?sort=b&page=3 share "/list?sort&page". An
// unparsable URL is its own pattern.
func pathPattern(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	var b strings.Builder
	digits := func(s string) {
		in := false
		for i := 0; i < len(s); i++ {
			c := s[i]
			if '0' <= c && c <= '9' {
				if !in {
					b.WriteByte('0')
				}
				in = true
				continue
			}
			in = false
			b.WriteByte(c)
		}
	}
	digits(strings.ToLower(u.Host))
	digits(u.EscapedPath())
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, kv := range strings.Split(u.RawQuery, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			k, _, _ := strings.Cut(kv, "=")
			digits(k)
		}
	}
	return b.String()
}

// StoppedSite is a site a site-level limit stopped, for the crawl's report.
type StoppedSite struct {
	Site string `json:"site"`
	Kind Kind   `json:"kind"`
	// Detail says what was reached, as in a Verdict.
	Detail string `json:"detail"`
	// URLs and Duplicates are the site's counters: URLs admitted,
	// duplicates fetched (all of them), and of those TrapShaped (by
	// either rule), Chained (RuleChain) and MaxPattern (the most sharing
	// one pattern).
	URLs       int `json:"urls"`
	Duplicates int `json:"duplicates"`
	TrapShaped int `json:"trap_shaped"`
	Chained    int `json:"chained"`
	MaxPattern int `json:"max_pattern"`
	// Examples are the first trap-shaped duplicates (at most 5) for a
	// site stopped by Duplicates.
	Examples []Pair `json:"examples,omitempty"`
}

// StoppedSites returns every stopped site, sorted by name, with its
// counters and, for the duplicate limit, example pairs.
func (c *Checker) StoppedSites() []StoppedSite {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []StoppedSite
	for name, s := range c.sites {
		if s.trapped == "" {
			continue
		}
		out = append(out, StoppedSite{Site: name, Kind: s.trapped, Detail: c.detailLocked(s.trapped),
			URLs: s.urls, Duplicates: s.dups, TrapShaped: s.trapShaped, Chained: s.chain, MaxPattern: s.pattern,
			Examples: slices.Clone(s.examples)})
	}
	slices.SortFunc(out, func(a, b StoppedSite) int { return strings.Compare(a.Site, b.Site) })
	return out
}

// ReportName is the file name of a stopped site's report under the
// crawl's reports directory: "trap-" and the site name, with any byte
// outside [a-z0-9.-] replaced by "_", and ".txt".
func ReportName(site string) string {
	b := []byte("trap-")
	for i := 0; i < len(site) && i < 200; i++ {
		c := site[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			c = '_'
		}
		b = append(b, c)
	}
	return string(append(b, ".txt"...))
}

// WriteReport writes the report of one stopped site, for people: why it
// was stopped, its counters and the example pairs.
func WriteReport(w io.Writer, s StoppedSite) error {
	var b strings.Builder
	fmt.Fprintf(&b, "site: %s\nstopped by: %s (%s)\n", s.Site, s.Kind, s.Detail)
	fmt.Fprintf(&b, "urls admitted: %d\nduplicates fetched: %d\n", s.URLs, s.Duplicates)
	if s.Kind == Duplicates {
		fmt.Fprintf(&b, "trap-shaped duplicates: %d (discovered from a duplicate: %d; most sharing one path pattern: %d)\n",
			s.TrapShaped, s.Chained, s.MaxPattern)
		b.WriteString("\nThe site's pages kept coming back as copies of pages already fetched, along\n" +
			"the links between them or under one path pattern: the shape of a spider trap.\n" +
			"Pages fetched until then are kept; links found on the site are no longer followed.\n")
		if len(s.Examples) > 0 {
			b.WriteString("\nexamples (page, the page it copies, the page that linked to it, rule):\n")
			for _, p := range s.Examples {
				fmt.Fprintf(&b, "- %s\n  copies %s\n  linked from %s\n  rule %s\n", p.URL, orNone(p.Of), orNone(p.Via), p.Rule)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("traps: report: %w", err)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// encodeExamples and decodeExamples store a stopped site's examples.
func encodeExamples(ps []Pair) []byte {
	var b []byte
	for _, p := range ps {
		for _, s := range []string{p.URL, p.Of, p.Via, p.Rule} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

func decodeExamples(b []byte) []Pair {
	var out []Pair
	for len(b) > 0 && len(out) < maxExamples {
		var f [4]string
		for i := range f {
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) {
				return out
			}
			f[i] = string(b[k : k+int(n)])
			b = b[k+int(n):]
		}
		out = append(out, Pair{URL: f[0], Of: f[1], Via: f[2], Rule: f[3]})
	}
	return out
}
