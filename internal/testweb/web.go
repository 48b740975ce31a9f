package testweb

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TLD is the top-level domain of every synthetic host: reserved for testing
// by RFC 6761 §6.2, so no name here can ever reach a real site.
const TLD = "test"

// Kind names one property of a site; docs/testweb.md says what each one
// reproduces and what a polite crawler should do about it.
type Kind string

// Site kinds. Generic sites have KindGeneric only; each hazard site has the
// kinds its name suggests.
const (
	KindGeneric        Kind = "generic"         // ordinary pages, robots.txt disallowing /private/
	KindHub            Kind = "hub"             // links to every hazard site's home page
	KindRobots404      Kind = "robots-404"      // no robots.txt (404): everything allowed
	KindRobotsRules    Kind = "robots-rules"    // Allow, Disallow, wildcards and $
	KindCrawlDelay     Kind = "crawl-delay"     // Crawl-delay
	KindRequestRate    Kind = "request-rate"    // Request-rate
	KindRobotsAgents   Kind = "robots-agents"   // groups for other agents
	KindRobots401      Kind = "robots-401"      // robots.txt answers 401
	KindRobots403      Kind = "robots-403"      // robots.txt answers 403
	KindRobots5xx      Kind = "robots-5xx"      // robots.txt answers 500 or 503
	KindRobots429      Kind = "robots-429"      // robots.txt answers 429 with Retry-After
	KindRobotsRedirect Kind = "robots-redirect" // robots.txt redirects to another host
	KindRobotsREGP     Kind = "robots-regp"     // REGP Robot-version 3.0 file (the REGP paper §3)
	KindVisitTime      Kind = "visit-time"      // REGP Visit-time window (robots open 00:00-12:00 UTC)
	KindRobotsHuge     Kind = "robots-huge"     // robots.txt over 500 KiB
	KindSitemapXML     Kind = "sitemap-xml"     // XML sitemap with REGP <type>/<srcloc>
	KindSitemapIndex   Kind = "sitemap-index"   // sitemap index of an XML and a gzipped sitemap
	KindSitemapText    Kind = "sitemap-text"    // text sitemap
	KindSitemapGzip    Kind = "sitemap-gzip"    // gzipped XML sitemap
	KindRedirects      Kind = "redirects"       // 301/302, chains, loops, other hosts
	KindErrors         Kind = "errors"          // 404, 410, 500
	KindMedia          Kind = "media"           // non-HTML with right and wrong Content-Type
	KindMalformed      Kind = "malformed"       // malformed HTML
	KindCompressed     Kind = "compressed"      // gzip and br Content-Encoding
	KindMetaRobots     Kind = "meta-robots"     // meta robots, X-Robots-Tag, rel=nofollow
	KindDuplicate      Kind = "duplicate"       // one of several names serving the same content
	KindRobotsHost     Kind = "robots-host"     // robots.txt Host: names the canonical one of its names
	KindMirrorSite     Kind = "mirror-site"     // REGP Mirror-site: lines send crawlers to two mirrors
	KindTrap           Kind = "trap"            // a spider trap; Site.Trap says which
)

// Trap names a kind of spider trap (the Viúva Negra report §4.1).
type Trap string

// Trap kinds.
const (
	TrapCalendar Trap = "calendar"       // infinite calendar, calendar.test
	TrapSession  Trap = "session-id"     // session id in every link, session.test
	TrapGrowing  Trap = "growing-path"   // /a/a/a/..., growing.test (and robots-rules.test/trap/)
	TrapDirList  Trap = "dir-listing"    // Apache directory-listing reorderings, dirlist.test
	TrapNearDup  Trap = "near-duplicate" // pages differing only in a timestamp, neardup.test
	TrapSlow     Trap = "slow"           // answers after Config.SlowDelay, slow.test
	TrapEndless  Trap = "endless"        // endless body, endless.test
	TrapWildcard Trap = "dns-wildcard"   // any *.wild.test name answers, wild.test
)

// Traps lists every trap kind in a stable order.
var Traps = []Trap{TrapCalendar, TrapSession, TrapGrowing, TrapDirList, TrapNearDup, TrapSlow, TrapEndless, TrapWildcard}

// Site is one synthetic site. Sites are built by New and read-only after.
type Site struct {
	// Host is the site's canonical name, lower case, without port.
	Host string
	// Aliases are other names serving the same content (the www. prefix,
	// mirrors; the Viúva Negra report §4.3). Lookup maps them to this site.
	Aliases []string
	// Kinds says what the site reproduces.
	Kinds []Kind
	// Trap is the spider trap the site holds, or "".
	Trap Trap
	// Addr is the 127.x address of the site in HostsLines.
	Addr netip.Addr
	// RobotsStatus is the status /robots.txt answers: 200, 404, 401, 403,
	// 429, 500, 503 or 301.
	RobotsStatus int
	// Robots is the robots.txt body whose rules apply to the site: the body
	// served with status 200, or for a redirect the body at its target
	// (RFC 9309 §2.3.1.2). Nil when robots.txt does not answer 200.
	Robots []byte
	// RobotsRedirect is the absolute URL /robots.txt redirects to, or "".
	RobotsRedirect string
	// Delay is the delay the site's robots.txt asks of a crawler that
	// matches only the `*` group: its Crawl-delay, or the interval of its
	// Request-rate, whichever is longer. Zero when none.
	Delay time.Duration
	// SeedPages are absolute URLs to start a crawl from (the home page).
	SeedPages []string
	// Pages is the number of pages reachable by links from the home page,
	// for sites whose page count is finite and known; -1 for traps.
	Pages int
	// Orphans are absolute URLs of pages that no page links to and only the
	// sitemaps list.
	Orphans []string
	// Sitemaps are the absolute URLs of the site's sitemaps as robots.txt
	// names them (an index counts as one).
	Sitemaps []string
	// DupGroup names the group of duplicate hosts the site belongs to
	// (Host and Aliases), or "".
	DupGroup string
	// NonCanonical are the names of the site whose robots.txt asks
	// crawlers to crawl another name instead: the names a robots.txt
	// Host: line does not name (Yandex; the REGP paper §3.2.13), and the name
	// whose REGP Mirror-site: lines send crawlers to the Mirrors (the REGP paper
	// §3.2.11). A crawler honouring the directives requests nothing there
	// but /robots.txt.
	NonCanonical []string
	// Mirrors are the names the site's Mirror-site: lines declare (they
	// serve the same pages, with a robots.txt of their own without
	// Mirror-site lines); nil for other sites.
	Mirrors []string

	index    int     // position in Web.sites
	special  special // which hazard site, or specGeneric
	identity string  // name hashed to seed the site's content
	origin   string  // scheme and host used in absolute links and canonical tags
	// aliasRobots, when not nil, is the robots.txt body (status 200)
	// served on the Aliases instead of Robots.
	aliasRobots []byte
	// boiler is the realistic profile's shared boilerplate, built on first
	// use.
	boiler atomic.Pointer[boilerplate]
}

// pageCount is the number of generic pages the site serves.
func (s *Site) pageCount() int {
	if s.Pages < 0 {
		return specialPages
	}
	return s.Pages
}

// HasKind reports whether the site has kind k.
func (s *Site) HasKind(k Kind) bool {
	for _, x := range s.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Web is a built synthetic web. It is safe for concurrent use; its only
// mutable state is the request counters /metrics shows, the realistic
// profile's boilerplate (built on first use) and the count of 503s its
// transient pages have answered.
type Web struct {
	cfg    Config
	sites  []*Site
	byHost map[string]*Site
	wild   *Site // wild.test, answering every *.wild.test name; nil when Plain
	width  int   // digits in generic site names
	huge   []byte

	counts [len(classes)]atomic.Int64 // requests served per class, for /metrics

	// transient counts the 503s each transient page of the realistic
	// profile has answered, by host and path.
	transient struct {
		sync.Mutex
		tries map[string]int
	}
}

// New builds the web cfg describes.
func New(cfg Config) (*Web, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &Web{cfg: cfg, byHost: make(map[string]*Site)}
	w.width = len(fmt.Sprint(cfg.Sites - 1))
	if w.width < 4 {
		w.width = 4
	}
	for i := 0; i < cfg.Sites; i++ {
		host := fmt.Sprintf("site-%0*d.%s", w.width, i, TLD)
		s := &Site{Host: host, Kinds: []Kind{KindGeneric}, special: specGeneric}
		w.add(s)
	}
	if !cfg.Plain {
		w.addSpecial()
	}
	if cfg.Structured {
		w.addStructured()
	}
	for _, s := range w.sites {
		w.finish(s)
	}
	w.assignAddrs()
	return w, nil
}

// add appends s to the web and indexes its names.
func (w *Web) add(s *Site) {
	s.index = len(w.sites)
	if s.identity == "" {
		s.identity = s.Host
	}
	if s.origin == "" {
		s.origin = "http://" + s.Host
	}
	w.sites = append(w.sites, s)
	w.byHost[s.Host] = s
	for _, a := range s.Aliases {
		w.byHost[a] = s
	}
}

// assignAddrs gives every name an address, SitesPerAddr names per address.
func (w *Web) assignAddrs() {
	base := w.cfg.AddrBase.As4()
	n := uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	for i, s := range w.sites {
		v := n + uint32(i/w.cfg.SitesPerAddr)
		if v > 0xffffff {
			v = 0xffffff // the rest share the last address of 127/8
		}
		s.Addr = netip.AddrFrom4([4]byte{127, byte(v >> 16), byte(v >> 8), byte(v)})
	}
}

// Config returns the configuration the web was built with, defaults filled
// in.
func (w *Web) Config() Config { return w.cfg }

// Sites returns every site: the generic sites in order, then the hazard
// sites. The slice is shared: do not modify it.
func (w *Web) Sites() []*Site { return w.sites }

// Site returns the site serving host (any case, port and trailing dot
// ignored; aliases and *.wild.test names included), or nil.
func (w *Web) Site(host string) *Site {
	h := NormalizeHost(host)
	if s, ok := w.byHost[h]; ok {
		return s
	}
	if w.wild != nil && strings.HasSuffix(h, "."+w.wild.Host) && validHostname(h) {
		return w.wild
	}
	return nil
}

// Hosts returns every host name the web serves by name, sorted: site names
// and aliases. Names under wild.test answer too but are not listed (there
// are infinitely many).
func (w *Web) Hosts() []string {
	hosts := make([]string, 0, len(w.byHost))
	for h := range w.byHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts
}

// HostsLines returns /etc/hosts lines mapping every host name to its site's
// 127.x address, one line per address (several sites share one, like
// virtual hosting), in address order.
func (w *Web) HostsLines() []string {
	var lines []string
	var cur netip.Addr
	var names []string
	flush := func() {
		if len(names) > 0 {
			lines = append(lines, cur.String()+"\t"+strings.Join(names, " "))
		}
		names = names[:0]
	}
	for _, s := range w.sites {
		if s.Addr != cur {
			flush()
			cur = s.Addr
		}
		names = append(names, s.Host)
		names = append(names, s.Aliases...)
	}
	flush()
	return lines
}

// Addrs returns the distinct addresses of HostsLines, in order.
func (w *Web) Addrs() []netip.Addr {
	var out []netip.Addr
	for _, s := range w.sites {
		if len(out) == 0 || out[len(out)-1] != s.Addr {
			out = append(out, s.Addr)
		}
	}
	return out
}

// NormalizeHost lower-cases host and drops a port and a trailing dot, the
// way the handler matches Host headers.
func NormalizeHost(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	for i := 0; i < len(host); i++ {
		if c := host[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(host)
		}
	}
	return host
}

// validHostname reports whether h is a plausible DNS name (letters,
// digits, hyphens and dots, labels of 1 to 63 bytes, at most 253 bytes), so
// that the wildcard site does not answer for garbage.
func validHostname(h string) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	label := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-':
			label++
			if label > 63 {
				return false
			}
		default:
			return false
		}
	}
	return label > 0
}
