package robots

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// MaxSize is the number of bytes of a robots.txt file that are parsed; the
// rest is ignored. RFC 9309 §2.5 requires at least 500 KiB.
const MaxSize = 500 << 10

// maxProblems bounds the problems kept for one file; a file of 500 KiB of
// garbage would otherwise produce tens of thousands.
const maxProblems = 1000

// maxDepth bounds the nesting of REGP `{ }` blocks.
const maxDepth = 8

// maxCachedGroups bounds the per-file cache of groups by agent.
const maxCachedGroups = 64

// Dialect says which rules a file was parsed under.
type Dialect string

const (
	// RFC9309 is the standard of 2022, with the common extensions
	// (Crawl-delay, Sitemap, Host, Request-rate, Visit-time).
	RFC9309 Dialect = "rfc9309"
	// REGP is the Robots Exclusion and Guidance Protocol,
	// selected by a leading `Robot-version: 3.0` (or higher) line.
	REGP Dialect = "regp"
)

// Options tunes parsing. The zero value is ready to use.
type Options struct {
	// EgressIPs are the crawler's own source addresses, matched by the REGP
	// Ip-allow and Ip-disallow directives. Empty means those directives are
	// recorded but never match.
	EgressIPs []netip.Addr
	// URL is the absolute URL the file was fetched from
	// (`https://example.com/robots.txt`). When set, relative Sitemap URLs are
	// resolved against it; empty keeps them as written.
	URL string
}

// fileMode distinguishes parsed files from the two synthetic ones.
type fileMode uint8

const (
	modeParsed fileMode = iota
	modeAllowAll
	modeDisallowAll
)

// File is a parsed robots.txt file. It is immutable and safe for concurrent
// use.
type File struct {
	dialect  Dialect
	mode     fileMode
	version  string
	lastMod  time.Time
	groups   []*block
	global   *block // REGP global command section; empty for RFC 9309
	sitemaps []string
	host     string
	problems []Problem
	egress   []netip.Addr

	// cache holds the groups built so far, by agent as given; it is bounded
	// by maxCachedGroups and does not change what any method returns.
	cache struct {
		sync.RWMutex
		m map[string]*Group
	}
}

// Parse parses body (at most MaxSize bytes are read) with default options.
// It never fails: lines it cannot understand are skipped and reported by
// Problems.
func Parse(body []byte) *File { return ParseOptions(body, Options{}) }

// ParseOptions parses body with opts.
func ParseOptions(body []byte, opts Options) *File {
	p := newParser(opts)
	p.parse(body)
	return p.f
}

// AllowAll returns a file that allows everything (robots.txt answered 4xx).
func AllowAll() *File { return &File{dialect: RFC9309, mode: modeAllowAll, global: &block{}} }

// DisallowAll returns a file that disallows everything (robots.txt
// unreachable: 5xx, network error).
func DisallowAll() *File { return &File{dialect: RFC9309, mode: modeDisallowAll, global: &block{}} }

// Dialect returns the dialect the file was parsed under.
func (f *File) Dialect() Dialect { return f.dialect }

// Version returns the value of the file's leading Robot-version line
// ("3.0"), or "" when it has none. REGP §3.2.1: absent means 1.0.
func (f *File) Version() string { return f.version }

// LastModified returns the REGP Last-modified time of the file (§3.2.2).
func (f *File) LastModified() (time.Time, bool) { return f.lastMod, !f.lastMod.IsZero() }

// Sitemaps returns the Sitemap URLs of the file, in file order, without
// duplicates. Sitemap lines are file-global wherever they appear.
func (f *File) Sitemaps() []string { return slices.Clone(f.sitemaps) }

// Host returns the value of the (first) Host directive, or "".
func (f *File) Host() string { return f.host }

// Extensions returns the REGP values of the file's global command section
// (§3.2), which hold for every crawler unless its group overrides them.
// Empty for RFC 9309 files.
func (f *File) Extensions() Extensions {
	s := settingsOf(f.global.records, false)
	return s.ext.clone()
}

// Problem is one line a parser skipped or found suspicious.
type Problem struct {
	Line    int    // 1-based line number
	Message string // what is wrong, e.g. `unknown directive "dissalow"`
}

// Problems returns what Lint would print for the file, in line order.
func (f *File) Problems() []Problem { return slices.Clone(f.problems) }

// Group returns the rules that apply to the crawler whose product token is
// agent (RFC 9309 §2.2.1: case-insensitive match, all matching groups merged,
// else the `*` group, else an empty group that allows everything). The
// result is never nil.
//
// In a REGP file a group matches when agent contains the group's
// User-agent value (§3.2.3, Tables 4-5); the first matching group is used,
// else the first `*` group.
func (f *File) Group(agent string) *Group {
	f.cache.RLock()
	g, ok := f.cache.m[agent]
	f.cache.RUnlock()
	if ok {
		return g
	}
	g = f.build(agent)
	f.cache.Lock()
	if f.cache.m == nil {
		f.cache.m = make(map[string]*Group)
	}
	if len(f.cache.m) < maxCachedGroups {
		f.cache.m[agent] = g
	}
	f.cache.Unlock()
	return g
}

// Allowed is shorthand for f.Group(agent).Allowed(path).
func (f *File) Allowed(agent, path string) bool { return f.Group(agent).Allowed(path) }

// Group is the merged set of rules for one agent. It is immutable and safe
// for concurrent use.
type Group struct {
	dialect      Dialect
	denyAll      bool
	rules        []rule // RFC 9309: by priority; REGP: in file order
	defaultAllow bool   // REGP: verdict when no rule matches (§3.2.5)
	ips          []ipRule
	ipDenied     bool
	set          settings
	scopes       []scope // REGP nested blocks limited to some paths
}

// rule is one Allow or Disallow line.
type rule struct {
	allow bool
	line  int
	pat   pattern
}

// scope holds the settings of a REGP nested block whose Allow/Disallow
// lines limit it to some paths.
type scope struct {
	pats []pattern
	set  settings
}

// Decision explains the answer of Allowed for one path.
type Decision struct {
	Allowed bool
	// Line is the line of the rule that decided, 0 when none did.
	Line int
	// Rule is the deciding line in canonical form (`Disallow: /x`), or "".
	Rule string
	// Reason says why, when no single rule decided: "no rule matched",
	// "/robots.txt is always allowed", "REGP implicit default", ...
	Reason string
}

// Allowed reports whether a URL may be fetched. path is the URL's path and
// query as sent on the wire (url.URL.RequestURI()); "" means "/".
// /robots.txt is always allowed (RFC 9309 §2.2.2).
func (g *Group) Allowed(path string) bool {
	ok, _ := g.decide(path)
	return ok
}

// Explain is Allowed with the reason for the answer.
func (g *Group) Explain(path string) Decision {
	ok, i := g.decide(path)
	d := Decision{Allowed: ok}
	switch {
	case i >= 0:
		r := &g.rules[i]
		d.Line = r.line
		if r.allow {
			d.Rule = "Allow: " + r.pat.raw
		} else {
			d.Rule = "Disallow: " + r.pat.raw
		}
	case i == decRobotsTxt:
		d.Reason = "/robots.txt is always allowed"
	case i == decDenyAll:
		d.Reason = "robots.txt unavailable: everything disallowed"
	case i == decIP:
		d.Reason = "an egress IP address is excluded by Ip-disallow"
	case g.dialect == REGP && len(g.rules) > 0:
		if ok {
			d.Reason = "no rule matched: implicit Allow: /"
		} else {
			d.Reason = "no rule matched: implicit Disallow: / (first rule is an Allow)"
		}
	default:
		d.Reason = "no rule matched"
	}
	return d
}

const (
	decNone      = -1
	decRobotsTxt = -2
	decDenyAll   = -3
	decIP        = -4
)

func (g *Group) decide(path string) (bool, int) {
	if path == "" {
		path = "/"
	}
	if path == "/robots.txt" || strings.HasPrefix(path, "/robots.txt?") {
		return true, decRobotsTxt
	}
	if g.denyAll {
		return false, decDenyAll
	}
	if g.ipDenied {
		return false, decIP
	}
	if len(g.rules) == 0 {
		return true, decNone
	}
	p := normalizePath(path)
	if g.dialect == REGP {
		// §3.2.5: the last matching line wins.
		for i := len(g.rules) - 1; i >= 0; i-- {
			if g.rules[i].pat.match(p) {
				return g.rules[i].allow, i
			}
		}
		return g.defaultAllow, decNone
	}
	// RFC 9309 §2.2.2: the longest match wins, Allow on a tie; rules are
	// sorted so that the first match is that one.
	for i := range g.rules {
		if g.rules[i].pat.match(p) {
			return g.rules[i].allow, i
		}
	}
	return true, decNone
}

// IPAllowed reports whether the group's REGP Ip-allow/Ip-disallow lines
// (§3.2.4) let a crawler with source address a in. True when there are
// none.
func (g *Group) IPAllowed(a netip.Addr) bool { return ipAllowed(g.ips, a) }

// CrawlDelay returns the Crawl-delay of the group, if any.
func (g *Group) CrawlDelay() (time.Duration, bool) { return g.set.delay, g.set.hasDelay }

// CrawlDelayFor is CrawlDelay for one path: a REGP nested block limited to
// some paths may set its own delay (§3.2, example of §5).
func (g *Group) CrawlDelayFor(path string) (time.Duration, bool) {
	s := g.settingsFor(path)
	return s.delay, s.hasDelay
}

// RequestRate returns the Request-rate in force at t (a REGP file may give
// different rates for different times of day), if any. A rate whose window
// contains t is preferred over one without a window; among several, the
// strictest (longest interval) is returned.
func (g *Group) RequestRate(t time.Time) (Rate, bool) { return pickRate(g.set.rates, t) }

// RequestRateFor is RequestRate for one path (REGP nested blocks).
func (g *Group) RequestRateFor(path string, t time.Time) (Rate, bool) {
	return pickRate(g.settingsFor(path).rates, t)
}

// MinInterval returns the minimum spacing of requests for path at t: the
// larger of the Crawl-delay and the interval of the Request-rate in force
// (REGP §5, Table 10: `Request-rate: 120/m` gives 0.5 s).
func (g *Group) MinInterval(path string, t time.Time) time.Duration {
	s := g.settingsFor(path)
	d := time.Duration(0)
	if s.hasDelay {
		d = s.delay
	}
	if r, ok := pickRate(s.rates, t); ok && r.Interval() > d {
		d = r.Interval()
	}
	return d
}

func pickRate(rates []WindowedRate, t time.Time) (Rate, bool) {
	var best Rate
	found, windowed := false, false
	for _, r := range rates {
		if r.HasWindow && !r.Window.Contains(t) {
			continue
		}
		switch {
		case !found, r.HasWindow && !windowed:
			best, found, windowed = r.Rate, true, r.HasWindow
		case r.HasWindow == windowed && r.Interval() > best.Interval():
			best = r.Rate
		}
	}
	return best, found
}

// IPInterval returns the spacing REGP asks between requests from one
// crawler address at t: the larger of Ip-delay (§3.2.6) and the interval of
// the Ip-rate in force (§3.2.7); 0 when the group has neither. Since every
// request of a crawler leaves from its own egress addresses, a per-host gate
// can apply it like Crawl-delay.
func (g *Group) IPInterval(t time.Time) time.Duration {
	d := g.set.ext.IPDelay
	if r, ok := pickRate(g.set.ext.IPRates, t); ok && r.Interval() > d {
		d = r.Interval()
	}
	return d
}

// VisitTimes returns the group's Visit-time windows (empty: any time).
func (g *Group) VisitTimes() []Window { return slices.Clone(g.set.visits) }

// ForbiddenTimes returns the group's Time-forbidden windows.
func (g *Group) ForbiddenTimes() []Window { return slices.Clone(g.set.forbidden) }

// NextVisit returns the earliest time at or after t at which the group's
// Visit-time and Time-forbidden windows permit a visit; t itself when they
// permit one now or when the group has none. It returns the zero time when
// the windows never permit a visit (for example a daily Time-forbidden
// window that covers every Visit-time window).
func (g *Group) NextVisit(t time.Time) time.Time {
	visits, forbidden := g.set.visits, g.set.forbidden
	c := t
	// Each step moves c to a window boundary; a few dozen steps cover any
	// combination of daily windows and all absolute ones of a real file.
	for range 4 * (len(visits) + len(forbidden) + 4) {
		if len(visits) > 0 {
			in := false
			var next time.Time
			for _, w := range visits {
				if w.Contains(c) {
					in = true
					break
				}
				if s := w.nextStart(c); !s.IsZero() && (next.IsZero() || s.Before(next)) {
					next = s
				}
			}
			if !in {
				if next.IsZero() {
					return time.Time{}
				}
				c = next
				continue
			}
		}
		moved := false
		for _, w := range forbidden {
			if w.Contains(c) {
				e := w.endAfter(c)
				if e.IsZero() {
					return time.Time{}
				}
				c, moved = e, true
				break
			}
		}
		if !moved {
			return c
		}
	}
	return time.Time{}
}

// Extensions returns the REGP values in force for the group: its own,
// else those of the file's global section (§3.2).
func (g *Group) Extensions() Extensions { return g.set.ext.clone() }

// IndexPage reports whether path matches an Index-page line (REGP §3.2.14).
func (g *Group) IndexPage(path string) bool {
	p := normalizePath(path)
	for i := range g.set.indexPages {
		if g.set.indexPages[i].match(p) {
			return true
		}
	}
	return false
}

// ChangeFreq returns the change frequency a Change-* line gives for path
// (REGP §3.2.15); the last matching line wins.
func (g *Group) ChangeFreq(path string) (ChangeFreq, bool) {
	p := normalizePath(path)
	for i := len(g.set.changes) - 1; i >= 0; i-- {
		if g.set.changes[i].pat.match(p) {
			return g.set.changes[i].freq, true
		}
	}
	return "", false
}

func (g *Group) settingsFor(path string) *settings {
	if len(g.scopes) == 0 {
		return &g.set
	}
	p := normalizePath(path)
	for i := len(g.scopes) - 1; i >= 0; i-- {
		for j := range g.scopes[i].pats {
			if g.scopes[i].pats[j].match(p) {
				return &g.scopes[i].set
			}
		}
	}
	return &g.set
}

// ChangeFreq is the update frequency of a REGP Change-* line.
type ChangeFreq string

// The frequencies of REGP §3.2.15 (the sitemap protocol's changefreq).
const (
	ChangeAlways  ChangeFreq = "always"
	ChangeHourly  ChangeFreq = "hourly"
	ChangeDaily   ChangeFreq = "daily"
	ChangeWeekly  ChangeFreq = "weekly"
	ChangeMonthly ChangeFreq = "monthly"
	ChangeYearly  ChangeFreq = "yearly"
	ChangeNever   ChangeFreq = "never"
)

// Change is one Change-* line: pages matching Pattern change with Freq.
type Change struct {
	Freq    ChangeFreq
	Pattern string // as written, `*` and `$` allowed
}

// Extensions are the REGP directives (§3.2) that are neither
// rules nor delays. Every field's zero value means "not given".
type Extensions struct {
	// IPDelay is the Ip-delay (§3.2.6): minimum spacing of requests from
	// one IP address, whatever the crawler's name.
	IPDelay time.Duration
	// IPRates are the Ip-rate lines (§3.2.7).
	IPRates []WindowedRate
	// Languages, Encodings and Charsets list what a crawler must support
	// (§3.2.9), one item per comma-separated entry, q-values kept
	// (`en;q=0.8`).
	Languages, Encodings, Charsets []string
	// Cookies are the Cookie values to send (§3.2.10), as written
	// (`visitor=crawler`).
	Cookies []string
	// MirrorSites are hosts that may be crawled instead (§3.2.11).
	MirrorSites []string
	// IndexPages are the Index-page patterns (§3.2.14), as written.
	IndexPages []string
	// Changes are the Change-* lines (§3.2.15), in file order.
	Changes []Change
}

func (e Extensions) clone() Extensions {
	e.IPRates = slices.Clone(e.IPRates)
	e.Languages = slices.Clone(e.Languages)
	e.Encodings = slices.Clone(e.Encodings)
	e.Charsets = slices.Clone(e.Charsets)
	e.Cookies = slices.Clone(e.Cookies)
	e.MirrorSites = slices.Clone(e.MirrorSites)
	e.IndexPages = slices.Clone(e.IndexPages)
	e.Changes = slices.Clone(e.Changes)
	return e
}

// ValidAgent reports whether token is a product token a crawler may obey
// rules for: RFC 9309 §2.2.1 allows only `[a-zA-Z_-]+`.
func ValidAgent(token string) bool {
	if token == "" {
		return false
	}
	for i := 0; i < len(token); i++ {
		if !isTokenChar(token[i], false) {
			return false
		}
	}
	return true
}

// ProductToken returns the leading product token of a User-Agent header
// value (`Courtesy-Bot/1.0 (+https://…)` gives `Courtesy-Bot`), the part
// that selects a robots.txt group. "" when it does not start with one.
func ProductToken(userAgent string) string {
	s := strings.TrimSpace(userAgent)
	i := 0
	for i < len(s) && isTokenChar(s[i], false) {
		i++
	}
	return s[:i]
}

func isTokenChar(c byte, digits bool) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-' ||
		digits && '0' <= c && c <= '9'
}

// RobotsURL returns the URL of the robots.txt file that governs siteURL
// (RFC 9309 §2.3; REGP §3.1, Table 1): same scheme, host and port, path
// /robots.txt.
func RobotsURL(siteURL string) (string, error) {
	u, err := url.Parse(siteURL)
	if err != nil {
		return "", fmt.Errorf("robots: site URL: %w", err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("robots: site URL %q is not absolute", siteURL)
	}
	r := url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host, Path: "/robots.txt"}
	return r.String(), nil
}
