package robots

import (
	"slices"
	"strings"
	"time"
)

// The parsed form of a robots.txt file: groups (records), their
// agents and rules, nested REGP blocks and the settings they carry.

// agentLine is one User-agent line of a group.
type agentLine struct {
	token  string // product token as written ("" when the value has none)
	global bool   // `*`
	line   int
}

// record is an extension line (Crawl-delay, Request-rate, Visit-time and the
// REGP directives) kept in the block it appeared in.
type record struct {
	kind  string // canonical lower-case directive name
	line  int
	after int // User-agent lines of the block before this line
	dur   time.Duration
	rate  WindowedRate
	win   Window
	list  []string
	text  string
	pat   pattern
}

// block is a group (a User-agent run and what follows it), the REGP global
// command section, or a REGP nested `{ }` block.
type block struct {
	agents   []agentLine
	ips      []ipRule
	rules    []rule
	records  []record
	children []*block
	scope    []pattern // nested block: its Allow/Disallow patterns
	started  bool      // a line other than User-agent/Ip-* was seen
	line     int
}

func (b *block) hasGlobal() bool {
	for _, a := range b.agents {
		if a.global {
			return true
		}
	}
	// §3.2.4: an IP token group without User-agent lines implies `*`.
	return len(b.agents) == 0 && len(b.ips) > 0
}

// matchesREGP reports whether agent contains one of the block's User-agent
// values, case-insensitively (REGP §3.2.3, Tables 4-5).
func (b *block) matchesREGP(agent string) bool {
	if agent == "" {
		return false
	}
	for _, a := range b.agents {
		if !a.global && a.token != "" && index(agent, asciiLower(a.token), true) >= 0 {
			return true
		}
	}
	return false
}

// maxWindows bounds the Request-rate, Ip-rate, Visit-time and
// Time-forbidden lines kept per kind for one group, so that NextVisit and
// RequestRate stay cheap on hostile files; later lines are ignored.
const maxWindows = 64

// settings are the non-rule values in force for a group or scope.
type settings struct {
	delay      time.Duration
	hasDelay   bool
	rates      []WindowedRate
	visits     []Window
	forbidden  []Window
	ext        Extensions
	indexPages []pattern
	changes    []changeRule
}

type changeRule struct {
	freq ChangeFreq
	pat  pattern
}

// apply adds one record. firstDelay keeps the first Crawl-delay (crawler-
// commons semantics for RFC 9309 files); otherwise a later one overrides.
func (s *settings) apply(r *record, firstDelay bool) {
	switch r.kind {
	case "crawl-delay":
		if !s.hasDelay || !firstDelay {
			s.delay, s.hasDelay = r.dur, true
		}
	case "request-rate":
		if len(s.rates) < maxWindows {
			s.rates = append(s.rates, r.rate)
		}
	case "visit-time":
		if len(s.visits) < maxWindows {
			s.visits = append(s.visits, r.win)
		}
	case "time-forbidden":
		if len(s.forbidden) < maxWindows {
			s.forbidden = append(s.forbidden, r.win)
		}
	case "ip-delay":
		s.ext.IPDelay = r.dur
	case "ip-rate":
		if len(s.ext.IPRates) < maxWindows {
			s.ext.IPRates = append(s.ext.IPRates, r.rate)
		}
	case "language":
		s.ext.Languages = append(s.ext.Languages, r.list...)
	case "encoding":
		s.ext.Encodings = append(s.ext.Encodings, r.list...)
	case "charset":
		s.ext.Charsets = append(s.ext.Charsets, r.list...)
	case "cookie":
		s.ext.Cookies = append(s.ext.Cookies, r.text)
	case "mirror-site":
		s.ext.MirrorSites = append(s.ext.MirrorSites, r.text)
	case "index-page":
		s.ext.IndexPages = append(s.ext.IndexPages, r.text)
		s.indexPages = append(s.indexPages, r.pat)
	default:
		if f, ok := strings.CutPrefix(r.kind, "change-"); ok {
			s.ext.Changes = append(s.ext.Changes, Change{Freq: ChangeFreq(f), Pattern: r.text})
			s.changes = append(s.changes, changeRule{freq: ChangeFreq(f), pat: r.pat})
		}
	}
}

func settingsOf(recs []record, firstDelay bool) settings {
	var s settings
	for i := range recs {
		s.apply(&recs[i], firstDelay)
	}
	return s
}

// over returns base refined by o (REGP: an inner level overrides an outer
// one; Time-forbidden windows add up, since each forbids).
func (base settings) over(o settings) settings {
	r := base
	if o.hasDelay {
		r.delay, r.hasDelay = o.delay, true
	}
	pick := func(a, b []WindowedRate) []WindowedRate {
		if len(b) > 0 {
			return b
		}
		return a
	}
	r.rates = pick(base.rates, o.rates)
	if len(o.visits) > 0 {
		r.visits = o.visits
	}
	r.forbidden = append(slices.Clip(base.forbidden), o.forbidden...)
	if len(r.forbidden) > maxWindows {
		r.forbidden = r.forbidden[:maxWindows]
	}
	if o.ext.IPDelay > 0 {
		r.ext.IPDelay = o.ext.IPDelay
	}
	r.ext.IPRates = pick(base.ext.IPRates, o.ext.IPRates)
	strs := func(a, b []string) []string {
		if len(b) > 0 {
			return b
		}
		return a
	}
	r.ext.Languages = strs(base.ext.Languages, o.ext.Languages)
	r.ext.Encodings = strs(base.ext.Encodings, o.ext.Encodings)
	r.ext.Charsets = strs(base.ext.Charsets, o.ext.Charsets)
	r.ext.Cookies = strs(base.ext.Cookies, o.ext.Cookies)
	r.ext.MirrorSites = strs(base.ext.MirrorSites, o.ext.MirrorSites)
	if len(o.indexPages) > 0 {
		r.ext.IndexPages, r.indexPages = o.ext.IndexPages, o.indexPages
	}
	if len(o.changes) > 0 {
		r.ext.Changes, r.changes = o.ext.Changes, o.changes
	}
	return r
}

// directive names: canonical name by lower-case spelling, including the
// typos the RFC 9309 reference parser accepts.
var directives = map[string]string{
	"user-agent": "user-agent", "allow": "allow", "disallow": "disallow",
	"sitemap": "sitemap", "host": "host", "crawl-delay": "crawl-delay",
	"request-rate": "request-rate", "visit-time": "visit-time",
	"robot-version": "robot-version", "last-modified": "last-modified",
	"ip-allow": "ip-allow", "ip-disallow": "ip-disallow", "ip-delay": "ip-delay",
	"ip-rate": "ip-rate", "time-forbidden": "time-forbidden",
	"language": "language", "encoding": "encoding", "charset": "charset",
	"cookie": "cookie", "mirror-site": "mirror-site", "index-page": "index-page",
	"change-always": "change-always", "change-hourly": "change-hourly",
	"change-daily": "change-daily", "change-weekly": "change-weekly",
	"change-monthly": "change-monthly", "change-yearly": "change-yearly",
	"change-never": "change-never",
}

// typos are misspellings accepted with a warning: those of the Google
// reference parser (robots.cc, kAllowFrequentTypos) plus `_` for `-`.
var typos = map[string]string{
	"useragent": "user-agent", "user agent": "user-agent", "user_agent": "user-agent",
	"dissallow": "disallow", "dissalow": "disallow", "disalow": "disallow",
	"diasllow": "disallow", "disallaw": "disallow",
	"site-map": "sitemap", "crawldelay": "crawl-delay", "crawl_delay": "crawl-delay",
	"request_rate": "request-rate", "visit_time": "visit-time",
	"robot_version": "robot-version", "robots-version": "robot-version",
}

// regpOnly are the directives of REGP that RFC 9309 files do not get:
// they are honoured only after `Robot-version: 3.0`.
var regpOnly = map[string]bool{
	"last-modified": true, "ip-allow": true, "ip-disallow": true, "ip-delay": true,
	"ip-rate": true, "time-forbidden": true, "language": true, "encoding": true,
	"charset": true, "cookie": true, "mirror-site": true, "index-page": true,
	"change-always": true, "change-hourly": true, "change-daily": true,
	"change-weekly": true, "change-monthly": true, "change-yearly": true,
	"change-never": true,
}
