package politeness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Popularity tiers (the polite-proxy thesis: "a crawler can use a smaller delay
// between requests the higher the score"; popular domains serve millions
// of users and barely notice a crawler). A ranked list of domains (a top
// list such as Tranco, Majestic Million or Cisco Umbrella stands in for the
// PageRank score the thesis mentions) puts each registrable domain in a
// tier; the tier's factor scales the *default* delay of keys in that
// domain. The rules (docs/politeness.md):
//
//   - only the default delay is scaled: a manual delay (config file or
//     admin API, with or without override) is the operator's word and is
//     used as it is;
//   - robots Crawl-delay and Request-rate still count in full, since the
//     effective delay is the largest of the configured (scaled), robots,
//     rate and adaptive delays; backoff applies on top;
//   - a factor below 1 never takes the delay under Floor (nor under the
//     unscaled default when that is smaller); a factor above 1 (a slower
//     tier) is allowed, capped at 24h.

// PopularityConfig configures popularity tiers. The zero value is off.
type PopularityConfig struct {
	// List is the path of the ranked domain list: either CSV lines
	// "rank,domain" (Tranco, Cisco Umbrella; a header line naming a
	// "domain" column and optionally a "rank" or "globalrank" column is
	// understood, as in Majestic Million) or one domain per line, ranked
	// by order. Blank lines and lines starting with '#' are skipped. A
	// listed host name counts for its registrable domain, with the best
	// rank of its names. "" (default) turns popularity off.
	List string `yaml:"list"`
	// Tiers map ranks to factors: a domain of rank r takes the factor of
	// the tier with the smallest Top ≥ r; a domain in no tier is not
	// scaled. Example: [{top: 1000, factor: 0.25}, {top: 100000, factor:
	// 0.5}]. At most 64 tiers.
	Tiers []PopularityTier `yaml:"tiers"`
	// MaxEntries bounds the entries read from List; a longer list is an
	// error (ask for what you mean to load). Default 1,000,000 (the size
	// of the common top-1m lists); at most 10,000,000. Only domains ranked
	// within the largest tier are kept in memory.
	MaxEntries int `yaml:"max-entries"`
	// Floor is the smallest delay a factor below 1 may produce (a default
	// delay already below it is left alone). Default 100ms; negative means
	// no floor.
	Floor time.Duration `yaml:"floor"`
}

// PopularityTier is one tier of PopularityConfig.Tiers.
type PopularityTier struct {
	// Top is the tier's lowest rank: ranks 1..Top (not taken by a smaller
	// tier) belong to it. At least 1.
	Top int `yaml:"top" json:"top"`
	// Factor multiplies the default delay. More than 0, at most 100; above
	// 1 makes the tier slower than the default.
	Factor float64 `yaml:"factor" json:"factor"`
}

// PopularityInfo says which tier scaled a key's default delay.
type PopularityInfo struct {
	// Domain is the registrable domain looked up.
	Domain string `json:"domain"`
	// Rank is its rank in the list (1 is the most popular); 0 when the
	// domain is not in any tier.
	Rank int `json:"rank"`
	// Top is the tier's Top.
	Top int `json:"top"`
	// Factor is the tier's factor.
	Factor float64 `json:"factor"`
}

// Limits of popularity lists.
const (
	defaultPopularityEntries = 1_000_000
	maxPopularityEntries     = 10_000_000
	maxPopularityTiers       = 64
	// maxPopularityLine bounds one line of the list; real lists have lines
	// of well under 200 bytes (Majestic's, with twelve columns, included).
	maxPopularityLine = 4096
	maxScaleFactor    = 100
	maxRank           = 1 << 30
)

func (c PopularityConfig) withDefaults() PopularityConfig {
	setDefault(&c.MaxEntries, defaultPopularityEntries)
	setDefault(&c.Floor, 100*time.Millisecond)
	if c.Floor < 0 {
		c.Floor = 0
	}
	return c
}

// validate reports the first unusable setting (the list itself is checked
// when it is loaded).
func (c PopularityConfig) validate() error {
	var errs []error
	if c.MaxEntries < 0 || c.MaxEntries > maxPopularityEntries {
		errs = append(errs, fmt.Errorf("politeness: popularity.max-entries %d outside 0..%d", c.MaxEntries, maxPopularityEntries))
	}
	if len(c.Tiers) > maxPopularityTiers {
		errs = append(errs, fmt.Errorf("politeness: popularity.tiers: %d tiers, at most %d", len(c.Tiers), maxPopularityTiers))
	}
	seen := make(map[int]bool, len(c.Tiers))
	for i, t := range c.Tiers {
		if t.Top < 1 || t.Top > maxRank {
			errs = append(errs, fmt.Errorf("politeness: popularity.tiers[%d]: top %d outside 1..%d", i, t.Top, maxRank))
		}
		if seen[t.Top] {
			errs = append(errs, fmt.Errorf("politeness: popularity.tiers[%d]: top %d given twice", i, t.Top))
		}
		seen[t.Top] = true
		if !(t.Factor > 0 && t.Factor <= maxScaleFactor) {
			errs = append(errs, fmt.Errorf("politeness: popularity.tiers[%d]: factor %v outside (0, %d]", i, t.Factor, maxScaleFactor))
		}
	}
	if c.List != "" && len(c.Tiers) == 0 {
		errs = append(errs, errors.New("politeness: popularity.list is set but popularity.tiers is empty"))
	}
	if c.List == "" && len(c.Tiers) > 0 {
		errs = append(errs, errors.New("politeness: popularity.tiers are set but popularity.list is empty"))
	}
	return errors.Join(errs...)
}

// Popularity is a loaded popularity list with its tiers. It is immutable
// and safe for concurrent use.
type Popularity struct {
	tiers   []PopularityTier // by Top, ascending
	ranks   map[string]int32 // registrable domain → best rank, ranks ≤ the largest Top only
	floor   time.Duration
	source  string
	entries int
}

// LoadPopularity reads c.List. A nil Popularity with a nil error means
// popularity is off (no list).
func LoadPopularity(c PopularityConfig) (*Popularity, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.List == "" {
		return nil, nil
	}
	f, err := os.Open(c.List)
	if err != nil {
		return nil, fmt.Errorf("politeness: popularity list: %w", err)
	}
	defer f.Close()
	return ParsePopularity(f, c.List, c)
}

// ParsePopularity reads a ranked list from r (see PopularityConfig.List);
// name is used in errors ("FILE:LINE: ..."). c.List is ignored.
func ParsePopularity(r io.Reader, name string, c PopularityConfig) (*Popularity, error) {
	c.List = name
	if err := c.validate(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	p := &Popularity{tiers: slices.Clone(c.Tiers), floor: c.Floor, source: name, ranks: make(map[string]int32)}
	slices.SortFunc(p.tiers, func(a, b PopularityTier) int { return a.Top - b.Top })
	maxTop := 0
	if len(p.tiers) > 0 {
		maxTop = p.tiers[len(p.tiers)-1].Top
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxPopularityLine)
	var (
		line    int
		csv     bool // "rank,domain" or a header's columns
		decided bool
		rankCol = -1 // -1: ranked by order
		dataCol = 0
		minCols = 1
	)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("politeness: popularity list %s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff")) // a byte order mark
		}
		s := strings.TrimSpace(string(b))
		if s == "" || s[0] == '#' {
			continue
		}
		fields := strings.Split(s, ",")
		for i := range fields {
			fields[i] = strings.Trim(strings.TrimSpace(fields[i]), `"`)
		}
		if !decided {
			decided = true
			csv = len(fields) > 1
			if csv && !allDigits(fields[0]) {
				// A header: find the columns.
				dataCol, rankCol = -1, -1
				for i, f := range fields {
					switch strings.ToLower(f) {
					case "domain", "host", "site":
						if dataCol < 0 {
							dataCol = i
						}
					case "rank", "globalrank", "global_rank":
						if rankCol < 0 {
							rankCol = i
						}
					}
				}
				if dataCol < 0 {
					return nil, fail("header %q has no domain column", clipString(s, 80))
				}
				minCols = max(dataCol, rankCol) + 1
				continue
			}
			if csv {
				rankCol, dataCol, minCols = 0, 1, 2
			}
		}
		if !csv && len(fields) > 1 {
			return nil, fail("a CSV line in a list of plain domains")
		}
		if len(fields) < minCols {
			return nil, fail("%d field(s), want at least %d", len(fields), minCols)
		}
		p.entries++
		if p.entries > c.MaxEntries {
			return nil, fail("more than %d entries (popularity.max-entries)", c.MaxEntries)
		}
		rank := p.entries
		if rankCol >= 0 {
			n, err := strconv.Atoi(fields[rankCol])
			if err != nil || n < 1 || n > maxRank {
				return nil, fail("bad rank %q", clipString(fields[rankCol], 40))
			}
			rank = n
		}
		dom, err := listDomain(fields[dataCol])
		if err != nil {
			return nil, fail("%v", err)
		}
		if rank > maxTop {
			continue // in no tier: not kept
		}
		if old, ok := p.ranks[dom]; !ok || int32(rank) < old {
			p.ranks[dom] = int32(rank)
		}
	}
	if err := sc.Err(); err != nil {
		line++
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fail("line longer than %d bytes", maxPopularityLine)
		}
		return nil, fmt.Errorf("politeness: popularity list %s: %w", name, err)
	}
	return p, nil
}

// listDomain turns a listed name into the registrable domain it counts
// for (IP addresses stand for themselves).
func listDomain(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty domain")
	}
	if len(s) > 253*4 {
		return "", fmt.Errorf("domain of %d bytes", len(s))
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a.Unmap().String(), nil
	}
	h := strings.ToLower(strings.TrimSuffix(s, "."))
	if !isASCII(h) || strings.Contains(h, "xn--") {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("bad domain %q: %v", clipString(s, 80), err)
		}
		h = strings.ToLower(a)
	}
	if len(h) == 0 || len(h) > 253 {
		return "", fmt.Errorf("bad domain %q: length", clipString(s, 80))
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("bad domain %q: empty or long label", clipString(s, 80))
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("bad domain %q: character %q", clipString(s, 80), c)
			}
		}
	}
	return registrable(h), nil
}

// registrable is the registrable domain (eTLD+1) of a lower-case host
// name; a public suffix, a single label or an IP address is its own.
func registrable(host string) string {
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}

// keyDomain is the registrable domain of a politeness key (a host name, a
// registrable domain, or an IP address in key-mode ip).
func keyDomain(key string) string {
	if _, err := netip.ParseAddr(key); err == nil {
		return key
	}
	return registrable(key)
}

// Lookup returns the tier of key's registrable domain; ok is false when
// the domain is in no tier.
func (p *Popularity) Lookup(key string) (PopularityInfo, bool) {
	if p == nil {
		return PopularityInfo{}, false
	}
	dom := keyDomain(key)
	r, ok := p.ranks[dom]
	if !ok {
		return PopularityInfo{Domain: dom}, false
	}
	for _, t := range p.tiers {
		if int(r) <= t.Top {
			return PopularityInfo{Domain: dom, Rank: int(r), Top: t.Top, Factor: t.Factor}, true
		}
	}
	return PopularityInfo{Domain: dom}, false
}

// Len returns the number of domains kept (those ranked within a tier).
func (p *Popularity) Len() int {
	if p == nil {
		return 0
	}
	return len(p.ranks)
}

// Entries returns the number of entries read from the list.
func (p *Popularity) Entries() int {
	if p == nil {
		return 0
	}
	return p.entries
}

// Source returns the list's file name.
func (p *Popularity) Source() string {
	if p == nil {
		return ""
	}
	return p.source
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
