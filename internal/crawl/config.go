package crawl

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/hostmap"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// Config is a crawl's configuration: the `crawl:` section of the YAML file
// (kebab-case keys), overridden by flags. The zero value works: every zero
// field means its documented default.
type Config struct {
	// DataDir holds the crawl state (frontier, robots cache, counters),
	// the crawl log and, unless WARCDir is set, the WARC files. Default
	// "./courtesy-data". A directory with an unfinished crawl is resumed.
	DataDir string `yaml:"data"`
	// WARCDir receives the WARC files and their CDXJ indexes. Default
	// DataDir/warc.
	WARCDir string `yaml:"warc-dir"`
	// WARCPrefix starts every WARC file name. Default "courtesy".
	WARCPrefix string `yaml:"warc-prefix"`
	// WARCMaxBytes rotates WARC files at this size. Default 1 GB.
	WARCMaxBytes int64 `yaml:"warc-max-bytes"`
	// WARCWriters is the number of WARC files written at once, so that
	// records are compressed in parallel. Default 2; with more than one,
	// file names carry "-wN" after the prefix.
	WARCWriters int `yaml:"warc-writers"`
	// WARCGzipLevel is the gzip level of WARC records: 1 (fastest) to 9
	// (smallest). Default 0 means 1: records are compressed one gzip
	// member each (WARC 1.1 annex D), so a 2 KB page pays a member's
	// fixed costs three times; level 1 cut that CPU by about a quarter
	// against level 6 on testweb records for a 5 % larger file (0.54 vs
	// 0.52 of the input; measured 2026-11-22). At level 1, records under
	// 64 KiB are compressed by package gzmember (warc.Options
	// SmallMemberBytes), whose members are as small for less CPU.
	WARCGzipLevel int `yaml:"warc-gzip-level"`
	// WARCRobots archives every robots.txt response the crawl fetches
	// (response, request and metadata records, and a crawl.log line with
	// discovery path "P"). Default true; "warc-robots: false" leaves
	// robots.txt out of the WARC files and crawl.log.
	WARCRobots *bool `yaml:"warc-robots"`
	// StoreCacheBytes is the block cache of the crawl's store (frontier,
	// robots, digests): Pebble's cache, which must hold the last level's
	// Bloom filters (about 1.25 bytes per known URL) for the seen-test to
	// stay a filter probe. Default 64 MiB, enough for tens of millions of
	// URLs; give 512 MiB to a crawl that will know 100 million
	// (docs/frontier.md "Memory and scale"). At most 64 GiB.
	StoreCacheBytes int64 `yaml:"store-cache-bytes"`
	// CrawlID names the crawl in the frontier. Default "DEFAULT".
	CrawlID string `yaml:"crawl-id"`
	// MaxPages stops the crawl once this many URLs were completed
	// (fetched, refused by robots, or given up). 0 means no limit.
	MaxPages int64 `yaml:"max-pages"`
	// MaxDuration stops the crawl after this long (per run). 0 means no
	// limit.
	MaxDuration time.Duration `yaml:"max-duration"`
	// Workers is the number of concurrent fetches. Default 256: a fetch
	// spends most of its time waiting (network, fsync), so many workers
	// keep 2 cores busy.
	Workers int `yaml:"workers"`
	// UserAgent is sent with every request; its first product token selects
	// the robots.txt group. Default fetch.DefaultUserAgent.
	UserAgent string `yaml:"user-agent"`
	// Delay is the default per-host delay between the end of a fetch and
	// the start of the next; robots.txt may ask for more. 0 means the
	// politeness section's default delay (1s unless set there); negative
	// means no delay.
	Delay time.Duration `yaml:"delay"`
	// Politeness tunes the gate (backoff, robots cache, unauthorized mode,
	// manual per-host delays, ...); its Agent, UserAgent and DefaultDelay
	// come from the fields above. In the YAML file it is the top-level
	// `politeness:` section shared with the proxy (one politeness
	// authority), not a key of `crawl:`.
	Politeness politeness.Config `yaml:"-"`
	// Scope says which URLs are crawled.
	Scope Scope `yaml:"scope"`
	// Traps are the per-site limits.
	Traps traps.Limits `yaml:"traps"`
	// TLS says how https origins' certificates are checked (tls.go).
	TLS TLS `yaml:"tls"`
	// HonorNoArchive keeps pages marked noarchive (meta robots or
	// X-Robots-Tag) out of the WARC files. Default true; set
	// "honor-noarchive: false" to archive them anyway.
	HonorNoArchive *bool `yaml:"honor-noarchive"`
	// Sitemaps turns sitemap discovery (robots Sitemap: lines and
	// /sitemap.xml) on or off. Default true.
	Sitemaps *bool `yaml:"sitemaps"`
	// MaxSitemapsPerHost bounds the sitemap files fetched per host.
	// Default 20.
	MaxSitemapsPerHost int `yaml:"max-sitemaps-per-host"`
	// MaxRetries is how often a URL that failed (network error, 5xx, 429)
	// is tried again, with exponential backoff from RetryDelay. Default 2.
	MaxRetries int `yaml:"max-retries"`
	// RetryDelay is the first retry's delay when the answer has no
	// Retry-After (which sets the delay itself). Default 30s.
	RetryDelay time.Duration `yaml:"retry-delay"`
	// MaxRetryDelay caps the doubling retry delay. Default 15m: a crawl
	// of hours gives a failing server a real pause between tries (Heritrix
	// waits 15 min after a connection failure), yet a URL is never held
	// longer than that.
	MaxRetryDelay time.Duration `yaml:"max-retry-delay"`
	// MaxHostFailures retires a host after this many consecutive
	// host-level failures (DNS, connect, TLS, timeout; any HTTP answer
	// resets the count, so a page's own 5xx never counts) or robots.txt
	// unavailable answers. Default 5.
	MaxHostFailures int `yaml:"max-host-failures"`
	// MaxHostWait retires a host that asks to be left alone longer than
	// this (robots.txt unavailable with a long Retry-After, a 429/503
	// backoff of hours), so that it does not hold the crawl open.
	// Default 10m.
	MaxHostWait time.Duration `yaml:"max-host-wait"`
	// AddressPolicy says which addresses hosts may resolve to
	// (package addrpolicy): "no-link-local" (the default) refuses
	// link-local addresses, among them the cloud metadata service at
	// 169.254.169.254, and other addresses no web server is reached at;
	// "public-only" also refuses loopback and private networks, for a
	// crawl of the public web run from inside an organisation's network;
	// "allow" refuses nothing. Hosts a --resolve rule maps are never
	// refused. A refused host is retired and its URLs logged with status
	// -5001 (blocked by a user setting).
	AddressPolicy string `yaml:"address-policy"`
	// HeadBeforeGet sends a HEAD first for URLs whose extension suggests a
	// format not wanted (pdf, zip, mp3, ...) and skips the GET when the
	// Content-Type confirms it. Default false.
	HeadBeforeGet bool `yaml:"head-before-get"`
	// WantedTypes are the media types worth a GET after a HEAD ("type/*"
	// for a whole type). Empty means the fetcher's default (HTML, XML,
	// text).
	WantedTypes []string `yaml:"wanted-types"`
	// StructuredData extracts every HTML page's RDFa, microdata and
	// JSON-LD into DataDir/rdf/*.nq.gz (graph = the page URL) and counts
	// them in its WARC metadata record (structured.go). Default false.
	StructuredData bool `yaml:"structured-data"`
	// Images also follows img src links. Default false.
	Images bool `yaml:"images"`
	// PageRequisites also fetches everything a page needs to render
	// (extract.Options.Requisites: images, scripts, media, the url() and
	// @import references of styles and stylesheets), as wget
	// --page-requisites and Heritrix's embeds do; an in-scope page's
	// requisites are fetched even out of scope (on a CDN), up to three
	// embeds deep (an imported stylesheet's font), as Heritrix's
	// transclusion rule allows (it stops at two), and they do not count
	// against max-depth. Default false.
	PageRequisites bool `yaml:"page-requisites"`
	// FollowRelNofollow also follows links marked rel=nofollow, as wget
	// and Heritrix (obeyRelNofollow false) do. rel=nofollow asks search
	// engines not to credit the link; it is not a crawling directive, but
	// StormCrawler and Nutch leave such links, and so does the crawler by
	// default. A page's meta robots nofollow is obeyed either way.
	FollowRelNofollow bool `yaml:"follow-rel-nofollow"`
	// ScriptURLs also follows absolute URLs found in inline scripts by
	// pattern. Default false.
	ScriptURLs bool `yaml:"script-urls"`
	// ProgressInterval is the period of the progress log lines when stdout
	// is not a terminal. Default 10s.
	ProgressInterval time.Duration `yaml:"progress-interval"`
	// DuplicateHosts are host aliases the operator knows to serve the
	// same content as another host (duplicate hosts), each
	// "ALIAS=CANONICAL": ALIAS is "host" (every port) or "host:port",
	// CANONICAL is "[scheme://]host[:port]" (without scheme and port the
	// URL's scheme and port stay). URLs on ALIAS are queued and fetched
	// under CANONICAL; "host=host" pins a host so that robots.txt cannot
	// move it. A list, not a map, because host names hold the dots that
	// separate config keys. At most 10,000 entries. Default none.
	DuplicateHosts []string `yaml:"duplicate-hosts"`
	// DedupIndexes are CDXJ indexes of earlier crawls (this crawler's,
	// pywb's or warcio's): a payload they hold is archived as a revisit
	// record pointing at that capture, not in full (dedupindex.go).
	// Default none.
	DedupIndexes []string `yaml:"dedup-indexes"`
	// RobotsHost follows the robots.txt Host directive (Yandex; REGP
	// §3.2.13): URLs of an origin whose robots.txt names another host as
	// its preferred ("master") name are queued under that host. Default
	// true.
	RobotsHost *bool `yaml:"robots-host"`
	// MirrorSites follows the REGP Mirror-site directive: URLs of an origin that names a mirror "to visit instead"
	// are queued under the first mirror in scope. Default true.
	MirrorSites *bool `yaml:"mirror-sites"`
	// DetectDuplicateHosts moves the URLs of a host whose home page and
	// one more page (at the same path) are exact copies of another
	// host's to that host (the Viuva Negra report's SameHomeAnd1Doc, 92 %
	// precise there; samehome.go). Default true.
	DetectDuplicateHosts *bool `yaml:"detect-duplicate-hosts"`
	// MaxHostRewrites bounds the host rewrites learned from robots.txt
	// files (Host, Mirror-site); once reached, further ones are ignored.
	// Default 100,000 (about 200 bytes each); negative means none are
	// learned.
	MaxHostRewrites int `yaml:"max-host-rewrites"`
	// EgressIPs are the addresses the crawler's requests leave from, as
	// the sites see them: REGP Ip-allow and Ip-disallow lines are matched
	// against every one of them (a site that refuses any of them is not
	// crawled). Default: the machine's non-loopback interface addresses,
	// or its loopback addresses when it has no other. Behind NAT, give the
	// public address. At most 64.
	EgressIPs []string `yaml:"egress-ips"`
}

// Scope says which URLs are crawled.
type Scope struct {
	// Mode is "seeds" (default: the seed hosts, on the seeds' ports),
	// "domains" (hosts ending in one of Domains, plus the seed hosts) or
	// "all".
	Mode string `yaml:"mode"`
	// Domains are host suffixes in scope with Mode "domains", e.g.
	// ".pt" or "example.org" (the host itself and its subdomains).
	Domains []string `yaml:"domains"`
	// Include are regular expressions; a URL matching one is in scope
	// whatever Mode says.
	Include []string `yaml:"include"`
	// Exclude are regular expressions; a URL matching one is out of scope
	// whatever else says.
	Exclude []string `yaml:"exclude"`
	// MaxOffScopeHops lets the crawl follow links this many hops out of
	// scope (to fetch what in-scope pages link to). Default 0.
	MaxOffScopeHops int `yaml:"max-off-scope-hops"`
	// ExternalLinks is the policy for links to another in-scope site:
	// "home-page" (replace them by the site's home page), "deep-link"
	// (follow them as they are) or "combined" (both; default).
	ExternalLinks string `yaml:"external-links"`
}

// Scope modes and external-link policies.
const (
	ScopeSeeds   = "seeds"
	ScopeDomains = "domains"
	ScopeAll     = "all"

	PolicyHomePage = "home-page"
	PolicyDeepLink = "deep-link"
	PolicyCombined = "combined"
)

// ParseScope reads the --scope flag: "seeds", "all", "domains:SUF1,SUF2",
// or a bare comma-separated list of domain suffixes.
func ParseScope(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == ScopeSeeds:
		return Scope{Mode: ScopeSeeds}, nil
	case s == ScopeAll:
		return Scope{Mode: ScopeAll}, nil
	}
	list := strings.TrimPrefix(s, ScopeDomains+":")
	var ds []string
	for d := range strings.SplitSeq(list, ",") {
		if d = strings.TrimSpace(d); d != "" {
			ds = append(ds, strings.ToLower(d))
		}
	}
	if len(ds) == 0 {
		return Scope{}, fmt.Errorf("crawl: scope %q: want seeds, all, or domain suffixes", s)
	}
	return Scope{Mode: ScopeDomains, Domains: ds}, nil
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// withDefaults returns c with zero fields set.
// DefaultMaxPageSize is the crawler's cap on one body as transferred
// (traps.Limits.MaxSize): 10 MiB. The trap limits' own 2 MB, from an
// archive of the early web, cuts real pages of today (documentation pages
// reach 2.5 MB); wget has no cap and Heritrix allows far more, so the
// crawler keeps a cap against endless bodies but sets it higher. The
// summary says how many pages were cut.
const DefaultMaxPageSize = 10 << 20

// noPageCap stands for no cap on a page (traps max-size negative): far
// beyond any body, and far from overflowing the readers' limit+1.
const noPageCap = 1 << 40

// noCapDecoded bounds a page's decoded body when the page cap is off: a
// decompression bomb of a few megabytes would otherwise expand to
// gigabytes in memory.
const noCapDecoded = 256 << 20

func (c Config) withDefaults() Config {
	if c.DataDir == "" {
		c.DataDir = "courtesy-data"
	}
	if c.WARCDir == "" {
		c.WARCDir = filepath.Join(c.DataDir, "warc")
	}
	if c.Workers <= 0 {
		c.Workers = 256
	}
	if c.WARCGzipLevel == 0 {
		c.WARCGzipLevel = 1
	}
	if c.WARCWriters <= 0 {
		c.WARCWriters = 2
	}
	if c.MaxSitemapsPerHost <= 0 {
		c.MaxSitemapsPerHost = 20
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 2
	}
	if c.MaxRetryDelay <= 0 {
		c.MaxRetryDelay = 15 * time.Minute
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = 30 * time.Second
	}
	if c.MaxHostFailures <= 0 {
		c.MaxHostFailures = 5
	}
	if c.MaxHostWait <= 0 {
		c.MaxHostWait = 10 * time.Minute
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = 10 * time.Second
	}
	if c.MaxHostRewrites == 0 {
		c.MaxHostRewrites = defaultMaxHostRewrites
	}
	if c.Traps.MaxSize == 0 {
		c.Traps.MaxSize = DefaultMaxPageSize
	}
	if c.Scope.Mode == "" {
		c.Scope.Mode = ScopeSeeds
	}
	if c.AddressPolicy == "" {
		c.AddressPolicy = addrpolicy.NoLinkLocal.String()
	}
	if c.Scope.ExternalLinks == "" {
		c.Scope.ExternalLinks = PolicyCombined
	}
	return c
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	var errs []error
	if _, err := parseEgress(c.EgressIPs); err != nil {
		errs = append(errs, err)
	}
	if c.AddressPolicy != "" {
		if _, err := addrpolicy.Parse(c.AddressPolicy); err != nil {
			errs = append(errs, fmt.Errorf("crawl: address-policy: %w", err))
		}
	}
	if c.WARCWriters < 0 || c.WARCWriters > 64 {
		errs = append(errs, fmt.Errorf("crawl: warc-writers %d not in 1..64", c.WARCWriters))
	}
	if c.StoreCacheBytes < 0 || c.StoreCacheBytes > 64<<30 {
		errs = append(errs, fmt.Errorf("crawl: store-cache-bytes %d not in 0..%d", c.StoreCacheBytes, int64(64<<30)))
	}
	if c.WARCGzipLevel < 0 || c.WARCGzipLevel > 9 {
		errs = append(errs, fmt.Errorf("crawl: warc-gzip-level %d not in 0..9", c.WARCGzipLevel))
	}
	if c.Workers < 0 || c.Workers > 10000 {
		errs = append(errs, fmt.Errorf("crawl: workers %d not in 1..10000", c.Workers))
	}
	if c.MaxPages < 0 || c.MaxDuration < 0 {
		errs = append(errs, errors.New("crawl: max-pages and max-duration must not be negative"))
	}
	switch c.Scope.Mode {
	case "", ScopeSeeds, ScopeDomains, ScopeAll:
	default:
		errs = append(errs, fmt.Errorf("crawl: scope mode %q: want seeds, domains or all", c.Scope.Mode))
	}
	switch c.Scope.ExternalLinks {
	case "", PolicyHomePage, PolicyDeepLink, PolicyCombined:
	default:
		errs = append(errs, fmt.Errorf("crawl: external-links %q: want home-page, deep-link or combined", c.Scope.ExternalLinks))
	}
	for _, re := range append(append([]string{}, c.Scope.Include...), c.Scope.Exclude...) {
		if _, err := regexp.Compile(re); err != nil {
			errs = append(errs, fmt.Errorf("crawl: scope regexp: %w", err))
		}
	}
	if err := c.Traps.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.TLS.config(); err != nil {
		errs = append(errs, err)
	}
	for _, p := range c.DedupIndexes {
		if st, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("crawl: dedup index: %w", err))
		} else if st.IsDir() {
			errs = append(errs, fmt.Errorf("crawl: dedup index %s is a directory: name its .cdxj files", p))
		}
	}
	if _, err := hostmap.ParseDuplicateHosts(c.DuplicateHosts); err != nil {
		errs = append(errs, fmt.Errorf("crawl: %w", err))
	}
	return errors.Join(errs...)
}

// maxEgressIPs bounds Config.EgressIPs.
const maxEgressIPs = 64

// parseEgress reads Config.EgressIPs.
func parseEgress(list []string) ([]netip.Addr, error) {
	if len(list) > maxEgressIPs {
		return nil, fmt.Errorf("crawl: egress-ips: %d addresses, at most %d", len(list), maxEgressIPs)
	}
	out := make([]netip.Addr, 0, len(list))
	for _, s := range list {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("crawl: egress-ips: %w", err)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// egressIPs returns the configured egress addresses, else the machine's
// interface addresses (non-loopback ones, or loopback when there are no
// others), at most maxEgressIPs.
func egressIPs(list []string, addrs []net.Addr) []netip.Addr {
	if ips, err := parseEgress(list); err == nil && len(ips) > 0 {
		return ips
	}
	var public, loop []netip.Addr
	for _, a := range addrs {
		pfx, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		ip := pfx.Addr().Unmap()
		switch {
		case ip.IsLoopback():
			loop = append(loop, ip)
		case ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast():
		default:
			public = append(public, ip)
		}
	}
	if len(public) == 0 {
		public = loop
	}
	return public[:min(len(public), maxEgressIPs)]
}
