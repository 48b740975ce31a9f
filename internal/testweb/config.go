package testweb

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"time"
)

// Limits on the generation flags, so that a typo cannot ask for a web that
// does not fit in memory or a page that takes seconds to build.
const (
	MaxSites        = 1_000_000
	MaxPagesPerSite = 1_000_000
	MaxPageBytes    = 8 << 20
	MaxLinks        = 1000
	// MaxEndlessBytes bounds Config.EndlessBytes (the Viúva Negra report §6 uses 2 MB as
	// its content size limit; the endless body must exceed any sane one).
	MaxEndlessBytes = 1 << 30
	// MaxSlowDelay bounds Config.SlowDelay.
	MaxSlowDelay = 10 * time.Minute
	// MaxLatency bounds Config.LatencyMax.
	MaxLatency = time.Minute
)

// Config says which web to build. The zero value is a small web (20 generic
// sites of 20 pages, plus the hazard sites); the same Config always gives
// the same web, byte for byte.
type Config struct {
	// Seed selects the web; different seeds give different texts and link
	// graphs. Zero is a valid seed.
	Seed int64
	// Sites is the number of generic sites (site-0000.test ...). Default
	// 20; at most MaxSites. Negative is an error.
	Sites int
	// PagesPerSite is the number of linked pages of each generic site,
	// counting the home page. Default 20; at most MaxPagesPerSite.
	PagesPerSite int
	// PageBytes is the approximate size of a generated HTML page in bytes
	// (the paragraphs are cut to fit; markup and links come on top when
	// they alone exceed it). Default 2048; at most MaxPageBytes.
	PageBytes int
	// LinksPerPage is the number of links from each page to other pages of
	// the same site, besides the navigation. Default 8; at most MaxLinks.
	LinksPerPage int
	// ExternalLinks is the number of links from each page to other sites
	// (deep links included). Default 2; at most MaxLinks. Use NoExternal
	// to have none.
	ExternalLinks int
	// NoExternal, when set, makes pages link only inside their own site
	// (ExternalLinks is then ignored).
	NoExternal bool
	// Profile says what the generic sites look like: ProfilePlain (the
	// default, also "") or ProfileRealistic (PageBytes and LinksPerPage
	// are then ignored for generic sites: sizes and links are drawn).
	Profile Profile
	// Plain leaves the hazard sites out: only the generic sites are
	// served, for pure throughput benchmarks.
	Plain bool
	// Structured adds the structured-data sites (structured-*.test:
	// schema.org data as JSON-LD, microdata and RDFa, and hostile cases).
	// Default false.
	Structured bool
	// SlowDelay is how long slow.test's slow pages wait before answering.
	// Default 3 s; at most MaxSlowDelay.
	SlowDelay time.Duration
	// EndlessBytes bounds the endless body of endless.test, in bytes.
	// Default 4 MiB; at most MaxEndlessBytes.
	EndlessBytes int64
	// EndlessTime bounds how long one endless body streams. Default 10 s.
	EndlessTime time.Duration
	// VisitTime is regp-window.test's REGP Visit-time window,
	// "HH:MM-HH:MM" in UTC (it may wrap midnight). Default "00:00-12:00":
	// mornings only. Tests that must drain a crawl set a window open now.
	VisitTime string
	// LatencyMin and LatencyMax, when LatencyMax > 0, make every response
	// wait before its header for a time in [LatencyMin, LatencyMax], drawn
	// from Seed, the host and the request target: the same URL always
	// waits the same time, so reruns are identical. robots.txt waits too;
	// the listener's own /health and /metrics and unknown hosts do not.
	// Default 0 and 0: no wait. LatencyMax is at most MaxLatency, and
	// LatencyMin is at most LatencyMax. The wait does not change any byte
	// served.
	LatencyMin, LatencyMax time.Duration
	// SitesPerAddr is how many sites share one 127.x address in the
	// /etc/hosts lines. Default 8.
	SitesPerAddr int
	// AddrBase is the first address of the /etc/hosts lines; addresses
	// count up from it and must stay inside 127.0.0.0/8. Default 127.1.0.1.
	AddrBase netip.Addr
}

// Defaults of Config's zero fields.
const (
	DefaultSites         = 20
	DefaultPagesPerSite  = 20
	DefaultPageBytes     = 2048
	DefaultLinksPerPage  = 8
	DefaultExternalLinks = 2
	DefaultSlowDelay     = 3 * time.Second
	DefaultEndlessBytes  = 4 << 20
	DefaultEndlessTime   = 10 * time.Second
	DefaultVisitTime     = "00:00-12:00"
	DefaultSitesPerAddr  = 8
)

// DefaultAddrBase is the first address of the /etc/hosts lines.
var DefaultAddrBase = netip.AddrFrom4([4]byte{127, 1, 0, 1})

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	setDefault(&c.VisitTime, DefaultVisitTime)
	setDefault(&c.Profile, ProfilePlain)
	setDefault(&c.Sites, DefaultSites)
	setDefault(&c.PagesPerSite, DefaultPagesPerSite)
	setDefault(&c.PageBytes, DefaultPageBytes)
	setDefault(&c.LinksPerPage, DefaultLinksPerPage)
	setDefault(&c.ExternalLinks, DefaultExternalLinks)
	if c.NoExternal {
		c.ExternalLinks = 0
	}
	setDefault(&c.SlowDelay, DefaultSlowDelay)
	setDefault(&c.EndlessBytes, DefaultEndlessBytes)
	setDefault(&c.EndlessTime, DefaultEndlessTime)
	setDefault(&c.SitesPerAddr, DefaultSitesPerAddr)
	if !c.AddrBase.IsValid() {
		c.AddrBase = DefaultAddrBase
	}
	return c
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	d := c.withDefaults()
	var errs []error
	if !visitTimeRE.MatchString(d.VisitTime) {
		errs = append(errs, fmt.Errorf("testweb: VisitTime %q: want HH:MM-HH:MM (UTC)", d.VisitTime))
	}
	if d.Profile != ProfilePlain && d.Profile != ProfileRealistic {
		errs = append(errs, fmt.Errorf("testweb: Profile %q: want %q or %q", d.Profile, ProfilePlain, ProfileRealistic))
	}
	check := func(name string, v, lo, hi int64) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("testweb: %s %d out of range [%d, %d]", name, v, lo, hi))
		}
	}
	check("Sites", int64(d.Sites), 1, MaxSites)
	check("PagesPerSite", int64(d.PagesPerSite), 1, MaxPagesPerSite)
	check("PageBytes", int64(d.PageBytes), 1, MaxPageBytes)
	check("LinksPerPage", int64(d.LinksPerPage), 1, MaxLinks)
	if !d.NoExternal {
		check("ExternalLinks", int64(d.ExternalLinks), 1, MaxLinks)
	}
	check("EndlessBytes", d.EndlessBytes, 1, MaxEndlessBytes)
	check("SitesPerAddr", int64(d.SitesPerAddr), 1, 1<<16)
	if d.SlowDelay < 0 || d.SlowDelay > MaxSlowDelay {
		errs = append(errs, fmt.Errorf("testweb: SlowDelay %v out of range [0, %v]", d.SlowDelay, MaxSlowDelay))
	}
	if d.EndlessTime < 0 || d.EndlessTime > MaxSlowDelay {
		errs = append(errs, fmt.Errorf("testweb: EndlessTime %v out of range [0, %v]", d.EndlessTime, MaxSlowDelay))
	}
	if d.LatencyMin < 0 || d.LatencyMax < 0 || d.LatencyMax > MaxLatency || d.LatencyMin > d.LatencyMax {
		errs = append(errs, fmt.Errorf("testweb: latency %v-%v: want 0 <= min <= max <= %v", d.LatencyMin, d.LatencyMax, MaxLatency))
	}
	if !d.AddrBase.Is4() || d.AddrBase.As4()[0] != 127 {
		errs = append(errs, fmt.Errorf("testweb: AddrBase %v is not an IPv4 address in 127.0.0.0/8", d.AddrBase))
	}
	return errors.Join(errs...)
}

// visitTimeRE is the form of Config.VisitTime.
var visitTimeRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-3]):[0-5][0-9]$`)

// setDefault sets *v to d when *v is the zero value.
func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
