// Package traps keeps a crawl out of spider traps (the Viúva Negra report §4.1, §5.4) with
// per-site limits whose defaults are the thresholds of the Viúva Negra report §6 (Table
// 7): 10 duplicates per site, 200-character URLs, 60 s per download and
// 2 MB per content, and 5,000 URLs per site and depth 5 for numbered or
// query URLs (calendars, date archives, paginations, searches) but 100,000
// URLs and depth 20 for the others (documentation runs past 5,000 pages and
// 5 links; the report found its depth 5 cut sites with no trap, §6); plus a limit
// on repeated path segments (growing URLs such as /spider/spider/spider/,
// §4.1) and one on host names per registrable domain (DNS wildcards, §4.1).
//
// URL-level limits (length, depth, repeated segments, hosts per domain) cut
// single URLs before they enter the frontier; the crawl log records each
// cut. Site-level limits (URLs, duplicates) stop following links within the
// site once reached — "the contents harvested until the trap was detected
// are kept" (§5.4) — and are reported once per site through Options.OnTrap.
// Download time and size are enforced by the fetcher (timeout, truncation)
// and counted here with Observe.
//
// Per-site counters are persisted in the shared kv store (bucket "traps/")
// so that they survive a resume. They are written without an fsync of their
// own: the frontier's next synced commit goes through the same write-ahead
// log and makes them durable too, so after SIGKILL a counter is behind by at
// most the pages in flight.
package traps

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// Kind names a limit.
type Kind string

// The limits.
const (
	URLsPerSite           Kind = "urls-per-site"
	Depth                 Kind = "depth"
	Duplicates            Kind = "duplicates"
	URLLength             Kind = "url-length"
	RepeatedSegments      Kind = "repeated-segments"
	HostsPerDomain        Kind = "hosts-per-domain"
	DownloadTime          Kind = "download-time"
	Size                  Kind = "size"
	bucketName                 = "traps/"
	defaultURLs                = 5000
	defaultStaticURLs          = 100_000
	defaultDepth               = 20
	defaultNumberedDepth       = 5
	defaultDuplicates          = 10
	defaultURLLength           = 200
	defaultRepeats             = 2
	defaultHostsPerDomain      = 100
	defaultDownloadTime        = 60 * time.Second
	defaultSize                = 2 << 20
	maxSites                   = 10_000_000
)

// Kinds lists every kind in report order.
var Kinds = []Kind{URLsPerSite, Depth, Duplicates, URLLength, RepeatedSegments, HostsPerDomain, DownloadTime, Size}

// Limits are the thresholds. For every field 0 means the default and a
// negative value means no limit.
type Limits struct {
	// MaxURLsPerSite: dynamic URLs admitted per site (see Dynamic: a query,
	// or a numbered segment), the shapes of the traps that breed URLs
	// without end. Default 5,000, the Viúva Negra report's threshold (§6).
	MaxURLsPerSite int `yaml:"max-urls-per-site"`
	// MaxStaticURLsPerSite: the other URLs admitted per site (named paths
	// without a query, as documentation has). Default 100,000: a backstop
	// behind depth, length and segment limits; Debian's libstdc++ reference
	// alone is 5,300 URLs.
	MaxStaticURLsPerSite int `yaml:"max-static-urls-per-site"`
	// MaxDepth: link hops from a seed. Seeds are depth 0. Default 20, as
	// Heritrix's hop limit: the Viúva Negra report's depth 5 (§6) cut 11.3 %
	// of its sites, on none of which it found a hazard, and it concluded
	// that the limit should be raised (documentation is often deeper).
	MaxDepth int `yaml:"max-depth"`
	// MaxNumberedDepth: link hops from a seed for a numbered URL (see
	// NumberedFrom: a calendar day, an archive month, a page of a
	// pagination, whose number changed along the link), the shapes that
	// breed pages by counting. Default 5, the report's threshold.
	MaxNumberedDepth int `yaml:"max-numbered-depth"`
	// MaxDuplicatesPerSite: exact or near-duplicate pages per site before
	// its links are no longer followed (the Viúva Negra report §6: 10).
	MaxDuplicatesPerSite int `yaml:"max-duplicates-per-site"`
	// MaxURLLength: characters of a URL (the Viúva Negra report §6: 200),
	// counted in the IRI it encodes (urlnorm.IRILength): a percent-encoded
	// non-ASCII character is one, so a title in Cyrillic or Chinese is not
	// cut for its encoding.
	MaxURLLength int `yaml:"max-url-length"`
	// MaxSegmentRepeats: how often one path segment may occur in a URL
	// (default 2: /a/b/a/ passes, /a/a/a/ is a growing-URL trap).
	MaxSegmentRepeats int `yaml:"max-segment-repeats"`
	// MaxHostsPerDomain: host names admitted per registrable domain, the
	// guard against DNS wildcards (default 100).
	MaxHostsPerDomain int `yaml:"max-hosts-per-domain"`
	// MaxDownloadTime: time to download one content (the Viúva Negra report §6: 60 s).
	MaxDownloadTime time.Duration `yaml:"max-download-time"`
	// MaxSize: bytes of one content; longer ones are truncated (the Viúva Negra report
	// §6: 2 MB).
	MaxSize int64 `yaml:"max-size"`
}

// WithDefaults returns l with zero fields set to their defaults.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxURLsPerSite, defaultURLs)
	def(&l.MaxStaticURLsPerSite, defaultStaticURLs)
	def(&l.MaxDepth, defaultDepth)
	def(&l.MaxNumberedDepth, defaultNumberedDepth)
	def(&l.MaxDuplicatesPerSite, defaultDuplicates)
	def(&l.MaxURLLength, defaultURLLength)
	def(&l.MaxSegmentRepeats, defaultRepeats)
	def(&l.MaxHostsPerDomain, defaultHostsPerDomain)
	if l.MaxDownloadTime == 0 {
		l.MaxDownloadTime = defaultDownloadTime
	}
	if l.MaxSize == 0 {
		l.MaxSize = defaultSize
	}
	return l
}

// Validate reports limits that make no sense: every value is meaningful
// (0 default, negative none) except URL lengths too short for any URL.
func (l Limits) Validate() error {
	if l.MaxURLLength > 0 && l.MaxURLLength < len("http://a.b/") {
		return fmt.Errorf("traps: max-url-length %d is shorter than any URL", l.MaxURLLength)
	}
	return nil
}

// Verdict is the answer for one URL.
type Verdict struct {
	// Kind is the limit that refused the URL; "" means admitted.
	Kind Kind
	// Detail says what was over, e.g. "depth 6 > 5".
	Detail string
}

// OK reports whether the URL was admitted.
func (v Verdict) OK() bool { return v.Kind == "" }

func (v Verdict) String() string {
	if v.OK() {
		return "ok"
	}
	return string(v.Kind) + ": " + v.Detail
}

// Options tunes Open. The zero value is ready to use.
type Options struct {
	// OnTrap is called (without locks held) the first time a site reaches
	// a site-level limit; nil means nobody is told.
	OnTrap func(site string, kind Kind, detail string)
	// OnError is told when a site's counters could not be written to
	// the store (the limits still hold in memory for this run); nil
	// means nobody is told.
	OnError func(site string, err error)
}

// Checker applies the limits. It is safe for concurrent use.
type Checker struct {
	limits Limits
	opts   Options
	bucket *kv.Bucket

	// mu guards sites, domains, hits and evidence.
	mu       sync.Mutex
	sites    map[string]*siteCounters
	domains  map[string]int
	hits     map[Kind]int64
	evidence map[string]*dupEvidence // sites with duplicates (dups.go)
}

// siteCounters is one site's counters (persisted).
type siteCounters struct {
	// urls counts the dynamic URLs admitted, static the others.
	urls, static, dups int
	// trapShaped, chain and pattern count the duplicates DuplicateOf
	// found trap-shaped, chained, and the most sharing one pattern.
	trapShaped, chain, pattern int
	trapped                    Kind
	examples                   []Pair // of a site stopped by Duplicates
}

// Open loads the persisted counters from db (nil: memory only) and returns
// a Checker for limits (zero fields: defaults).
func Open(db *kv.DB, limits Limits, opts Options) (*Checker, error) {
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	c := &Checker{limits: limits.WithDefaults(), opts: opts, sites: map[string]*siteCounters{}, domains: map[string]int{}, hits: map[Kind]int64{},
		evidence: map[string]*dupEvidence{}}
	if db == nil {
		return c, nil
	}
	c.bucket = db.Bucket(bucketName)
	examples := map[string][]Pair{}
	err := c.bucket.Scan(nil, func(k, v []byte) error {
		if len(k) > 0 && k[0] == 0 { // hit counters
			if n, ok := binary.Uvarint(v); ok > 0 {
				c.hits[Kind(k[1:])] = int64(n)
			}
			return nil
		}
		if len(k) > 0 && k[0] == 1 { // examples of a stopped site
			examples[string(k[1:])] = decodeExamples(v)
			return nil
		}
		s, err := decodeSite(v)
		if err != nil {
			return fmt.Errorf("traps: site %q: %w", k, err)
		}
		name := string(k)
		c.sites[name] = s
		if d := domainOf(name); d != "" {
			c.domains[d]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("traps: load: %w", err)
	}
	for name, ex := range examples {
		if s := c.sites[name]; s != nil {
			s.examples = ex
		}
	}
	return c, nil
}

// Limits returns the limits in force (defaults filled in).
func (c *Checker) Limits() Limits { return c.limits }

// countersV3 marks the encoding with the static URL counter, countersV2
// the one with the duplicate rule's counters (urls then counted every URL);
// the older one (urls, dups, kind) is still read. No Kind starts with them.
const (
	countersV2 = 0xff
	countersV3 = 0xfe
)

func decodeSite(v []byte) (*siteCounters, error) {
	var f [6]uint64
	nf := 2
	switch {
	case len(v) > 0 && v[0] == countersV2:
		v, nf = v[1:], 5
	case len(v) > 0 && v[0] == countersV3:
		v, nf = v[1:], 6
	}
	for i := 0; i < nf; i++ {
		x, n := binary.Uvarint(v)
		if n <= 0 || x > 1<<40 {
			return nil, errors.New("corrupt counters")
		}
		f[i], v = x, v[n:]
	}
	return &siteCounters{urls: int(f[0]), dups: int(f[1]), trapShaped: int(f[2]), chain: int(f[3]), pattern: int(f[4]), static: int(f[5]), trapped: Kind(v)}, nil
}

func (s *siteCounters) encode() []byte {
	b := []byte{countersV3}
	for _, x := range []int{s.urls, s.dups, s.trapShaped, s.chain, s.pattern, s.static} {
		b = binary.AppendUvarint(b, uint64(x))
	}
	return append(b, s.trapped...)
}

// CheckURL applies the URL-level limits to a discovered URL on site (the
// politeness key, normally the host) found at depth hops from a seed on
// the page via (nil when not known), and reports whether the site no
// longer admits URLs. It counts nothing: call Admitted for the URLs the
// frontier took as new. Seeds (depth 0) are checked for length and
// segments only.
func (c *Checker) CheckURL(site string, u, via *url.URL, raw string, depth int) Verdict {
	l := &c.limits
	// Characters of the IRI, not bytes of its encoding (a URL is never
	// shorter as an IRI, so most need no count).
	if l.MaxURLLength > 0 && len(raw) > l.MaxURLLength {
		if n := urlnorm.IRILength(raw); n > l.MaxURLLength {
			return c.hit(Verdict{URLLength, fmt.Sprintf("%d characters > %d", n, l.MaxURLLength)})
		}
	}
	if l.MaxDepth > 0 && depth > l.MaxDepth {
		return c.hit(Verdict{Depth, fmt.Sprintf("depth %d > %d", depth, l.MaxDepth)})
	}
	if l.MaxNumberedDepth > 0 && depth > l.MaxNumberedDepth && u != nil && NumberedFrom(u, via) {
		return c.hit(Verdict{Depth, fmt.Sprintf("depth %d > %d for a numbered URL", depth, l.MaxNumberedDepth)})
	}
	if l.MaxSegmentRepeats > 0 && u != nil {
		if seg, n := mostRepeated(u.EscapedPath()); n > l.MaxSegmentRepeats {
			return c.hit(Verdict{RepeatedSegments, fmt.Sprintf("segment %q %d times > %d", seg, n, l.MaxSegmentRepeats)})
		}
	}
	c.mu.Lock()
	s := c.sites[site]
	var v Verdict
	switch {
	case s != nil && s.trapped != "":
		v = Verdict{s.trapped, "site stopped: " + c.detailLocked(s.trapped)}
	case s == nil && l.MaxHostsPerDomain > 0:
		if d := domainOf(site); d != "" && c.domains[d] >= l.MaxHostsPerDomain {
			v = Verdict{HostsPerDomain, fmt.Sprintf("domain %s has %d hosts", d, c.domains[d])}
		}
	}
	if !v.OK() {
		c.hits[v.Kind]++
	}
	c.mu.Unlock()
	return v
}

// Numbered reports whether u looks like one of a counted sequence: a path
// segment (a file extension aside) or a query value made of digits and the
// separators of dates, times and numbers only, such as /calendar/2026/11/,
// /2026-11-29/, /item/12345.html or ?page=3. Calendars, date archives,
// pagination and counters make such URLs without end; names with letters
// (page-2.html, a01120.html, v1.2) are not numbered.
func Numbered(u *url.URL) bool { return NumberedFrom(u, nil) }

// NumberedFrom reports whether u, linked from the page via, is numbered
// by a number the link changed: a numbered path segment that via does
// not have at the same place, or a numbered query field (name and value)
// that via's query lacks. Numbers u shares with via are inherited: the
// version directory of a documentation tree (/docs/15/, /3.11/) names
// every page below it and counts nothing, while a calendar's next month
// (/calendar/2026/12/ from /calendar/2026/11/) or a pagination's next
// page changes its number at each hop. Hosts are not compared: a host
// name rule moves links from www.example.org to example.org, and a trap
// breeds on its own host. With via nil every number counts (Numbered).
func NumberedFrom(u, via *url.URL) bool {
	var fromPath, fromQuery string
	if via != nil {
		fromPath, fromQuery = via.EscapedPath(), via.RawQuery
	}
	if numberedPathFrom(u.EscapedPath(), fromPath) {
		return true
	}
	for field := range strings.FieldsFuncSeq(u.RawQuery, isQuerySep) {
		_, v, ok := strings.Cut(field, "=")
		if !ok {
			v = field // a bare value: ?12345
		}
		if counted(v) && !hasField(fromQuery, field) {
			return true
		}
	}
	return false
}

func isQuerySep(r rune) bool { return r == '&' || r == ';' }

// hasField reports whether the query has the field (name=value) as is.
func hasField(query, field string) bool {
	for f := range strings.FieldsFuncSeq(query, isQuerySep) {
		if f == field {
			return true
		}
	}
	return false
}

// numberedPathFrom reports whether an escaped path has a numbered segment
// (its file extension aside) that the path from does not have at the same
// place.
func numberedPathFrom(path, from string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		var prev string
		prev, from, _ = strings.Cut(from, "/")
		if st := stem(seg); counted(st) && st != stem(prev) {
			return true
		}
	}
	return false
}

// stem is a path segment without its file extension.
func stem(seg string) string {
	if i := strings.LastIndexByte(seg, '.'); i >= 0 && letters(seg[i+1:]) {
		return seg[:i]
	}
	return seg
}

// counted reports whether s has a digit and nothing but digits and the
// separators - _ . , : (a percent-encoded separator makes it a name).
func counted(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digit = true
		case c == '-' || c == '_' || c == '.' || c == ',' || c == ':':
		default:
			return false
		}
	}
	return digit
}

// letters reports whether s is a non-empty run of ASCII letters (a file
// extension such as html or php).
func letters(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func (c *Checker) detailLocked(k Kind) string {
	switch k {
	case URLsPerSite:
		return fmt.Sprintf("%d dynamic or %d static URLs reached", c.limits.MaxURLsPerSite, c.limits.MaxStaticURLsPerSite)
	case Duplicates:
		return fmt.Sprintf("more than %d trap-shaped duplicates", c.limits.MaxDuplicatesPerSite)
	}
	return string(k)
}

func (c *Checker) hit(v Verdict) Verdict {
	c.mu.Lock()
	c.hits[v.Kind]++
	c.mu.Unlock()
	return v
}

// Admitted counts the new URLs of site taken by the frontier: dynamic
// ones (Dynamic) and static ones. When the site reaches MaxURLsPerSite
// dynamic or MaxStaticURLsPerSite static URLs it stops admitting URLs
// (OnTrap is told once).
func (c *Checker) Admitted(site string, dynamic, static int) {
	if dynamic <= 0 && static <= 0 {
		return
	}
	c.update(site, func(s *siteCounters) Kind {
		s.urls += max(dynamic, 0)
		s.static += max(static, 0)
		l := &c.limits
		if l.MaxURLsPerSite > 0 && s.urls >= l.MaxURLsPerSite || l.MaxStaticURLsPerSite > 0 && s.static >= l.MaxStaticURLsPerSite {
			return URLsPerSite
		}
		return ""
	})
}

// Dynamic reports whether raw, an absolute URL, has a query or a numbered
// path segment (Numbered): the URLs that searches, facets, sort orders,
// calendars and paginations breed without end, which MaxURLsPerSite
// bounds. It reads the string without parsing it (the crawler asks for
// every new outlink).
func Dynamic(raw string) bool { return DynamicFrom(raw, "") }

// DynamicFrom is Dynamic for raw linked from the page via ("" when not
// known): a numbered path segment via has at the same place is inherited
// (NumberedFrom), so the pages of a versioned documentation tree
// (/docs/15/...) count as static, not as a counter.
func DynamicFrom(raw, via string) bool {
	path, query, ok := pathQuery(raw)
	if !ok {
		return false
	}
	if query != "" {
		return true
	}
	from, _, _ := pathQuery(via)
	return numberedPathFrom(path, from)
}

// pathQuery returns the path and query of an absolute URL without parsing
// it; ok is false when raw has no scheme.
func pathQuery(raw string) (path, query string, ok bool) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", "", false
	}
	rest, _, _ = strings.Cut(rest, "#")
	rest, query, _ = strings.Cut(rest, "?")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:], query, true
	}
	return "", query, true
}

// Duplicate counts one duplicate page of site of which nothing else is
// known: DuplicateOf with an empty Dup, which is never trap-shaped, so it
// never stops the site. It reports whether the site is stopped.
//
// Deprecated: use DuplicateOf, which can tell a trap from documentation.
func (c *Checker) Duplicate(site string) bool {
	return c.DuplicateOf(site, Dup{})
}

// update applies fn to site's counters, persists them and reports whether
// the site is stopped.
func (c *Checker) update(name string, fn func(*siteCounters) Kind) bool {
	c.mu.Lock()
	s := c.sites[name]
	if s == nil {
		if len(c.sites) >= maxSites {
			c.mu.Unlock()
			return false
		}
		s = &siteCounters{}
		c.sites[name] = s
		if d := domainOf(name); d != "" {
			c.domains[d]++
		}
	}
	newly := Kind("")
	if k := fn(s); k != "" && s.trapped == "" {
		s.trapped, newly = k, k
		c.hits[k]++
	}
	stopped := s.trapped != ""
	enc := s.encode()
	var detail string
	var examples []byte
	if newly != "" {
		detail = c.detailLocked(newly)
		if len(s.examples) > 0 {
			examples = encodeExamples(s.examples)
		}
	}
	c.mu.Unlock()
	if c.bucket != nil {
		// Durable with the frontier's next synced commit (package doc).
		if err := c.bucket.SetNoSync([]byte(name), enc); err != nil && c.opts.OnError != nil {
			c.opts.OnError(name, fmt.Errorf("traps: store counters of %s: %w", name, err))
		}
		if examples != nil {
			if err := c.bucket.SetNoSync(append([]byte{1}, name...), examples); err != nil && c.opts.OnError != nil {
				c.opts.OnError(name, fmt.Errorf("traps: store examples of %s: %w", name, err))
			}
		}
	}
	if newly != "" && c.opts.OnTrap != nil {
		c.opts.OnTrap(name, newly, detail)
	}
	return stopped
}

// Stopped reports whether links within site are no longer followed, and
// which limit stopped it.
func (c *Checker) Stopped(site string) (Kind, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sites[site]; s != nil && s.trapped != "" {
		return s.trapped, true
	}
	return "", false
}

// Observe counts a limit the fetcher enforced (DownloadTime, Size).
func (c *Checker) Observe(k Kind) {
	c.mu.Lock()
	c.hits[k]++
	c.mu.Unlock()
}

// Report is what the limits did.
type Report struct {
	// Hits counts URLs cut (URL-level kinds), sites stopped (site-level
	// kinds) and contents cut (download time, size), per kind.
	Hits map[Kind]int64
	// StoppedSites lists the sites stopped, per kind.
	StoppedSites map[Kind][]string
	// Sites is the number of sites with counters.
	Sites int
}

// Report returns the counts so far. Hit counts are persisted with Persist.
func (c *Checker) Report() Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Report{Hits: map[Kind]int64{}, StoppedSites: map[Kind][]string{}, Sites: len(c.sites)}
	for k, n := range c.hits {
		r.Hits[k] = n
	}
	for name, s := range c.sites {
		if s.trapped != "" {
			r.StoppedSites[s.trapped] = append(r.StoppedSites[s.trapped], name)
		}
	}
	return r
}

// Persist writes the hit counters (without fsync; see the package doc).
func (c *Checker) Persist() error {
	if c.bucket == nil {
		return nil
	}
	c.mu.Lock()
	type kv struct {
		k Kind
		n int64
	}
	var all []kv
	for k, n := range c.hits {
		all = append(all, kv{k, n})
	}
	c.mu.Unlock()
	for _, e := range all {
		if err := c.bucket.SetNoSync(append([]byte{0}, e.k...), binary.AppendUvarint(nil, uint64(e.n))); err != nil {
			return fmt.Errorf("traps: persist: %w", err)
		}
	}
	return nil
}

// mostRepeated returns the path segment occurring most often in an escaped
// path, and its count. Empty segments are ignored.
func mostRepeated(path string) (string, int) {
	if strings.Count(path, "/") < 3 {
		return "", 0 // fewer than 3 segments cannot repeat 3 times
	}
	var best string
	bestN := 0
	counts := map[string]int{}
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "" {
			continue
		}
		counts[seg]++
		if n := counts[seg]; n > bestN {
			best, bestN = seg, n
		}
	}
	return best, bestN
}

// domainOf returns the registrable domain of a host (the unit of a DNS
// wildcard), or "" when it has none (an IP address, a public suffix).
func domainOf(host string) string {
	if host == "" {
		return ""
	}
	k, err := urlnorm.Key(&url.URL{Scheme: "http", Host: host}, urlnorm.ByDomain)
	if err != nil || k == host {
		return ""
	}
	return k
}
