package crawl

// Host rewriting: URLs of one host are queued and fetched under another.
//
// Three sources say that two host names serve the same content:
//
//   - the operator's duplicate-hosts list (Config.DuplicateHosts): aliases
//     known beforehand (duplicate hosts, seed 001 §4.3: "crawlers should
//     avoid crawling duphosts to save on bandwidth and storage");
//   - the robots.txt Host directive (Yandex; REGP §3.2.13): the origin's
//     preferred ("master") host name among its mirrors;
//   - the REGP Mirror-site directive (§3.2.11): a mirror "crawlers should
//     visit instead of this corresponding website", to spread the load.
//
// A robots.txt speaks for its own origin only (RFC 9309 §2.3), so a rule
// learned from one moves the URLs of that origin and of no other: a
// site can send our crawl of its own pages to its master or mirror, as
// the seed says, but cannot make us fetch another site's pages from it.
// That is why Mirror-site maps the declaring site onto its mirror and not
// the reverse. Its target must be in scope, or share the registrable
// domain of an in-scope declaring host (www.example.com → example.com),
// in which case it joins the seed hosts; otherwise the directive is
// ignored and the origin is crawled as it is.
//
// URLs queued under a host before its rule was known (seeds, links found
// before its robots.txt was read, a resumed crawl's queue) are not
// fetched: when leased they are completed without a request (crawl.log
// status -5002, annotation host-rewrite:to=HOST) and their rewritten URL
// is queued instead, as a redirect is a link (seed 001 §3.4). Fetching
// them once would spend a request per URL on exactly the duplicate the
// seed tells crawlers to avoid.
//
// Several mirrors spread the load, as the seed says they are there for:
// a URL of the declaring origin goes to one of its in-scope mirrors (at
// most maxMirrors) chosen by rendezvous hashing of its path (highest
// random weight: each mirror scores hash(mirror, path), the highest
// wins). The choice depends on the URL and the mirror names only, so a
// URL always maps to the same mirror, across a resume and a reordered
// robots.txt too, and the frontier's seen-test stays exact; a mirror
// added or removed moves only the URLs it gains or loses.
//
// A URL on one of the mirrors is re-picked the same way (issue 5): a page
// fetched from mirror M1 has relative links on M1, and a link to M2 or to
// the origin, found anywhere, names a path the rule may give to another
// mirror; each goes to the mirror its path picks, so every name of a path
// (origin, M1, M2) converges on one URL and no document is fetched from
// two mirrors. This holds for every URL on a mirror, also when the
// mirror is a seed or in scope on its own: the seen-test compares URLs,
// and it can only be exact if a path of the mirror set has one home. It
// stays within the declaration: a URL only ever moves between hosts the
// origin named and the scope admitted, each fetched under its own URL
// (the archive says which host served what), and nothing moves onto the
// origin. The operator's rules come first (a pin keeps a mirror as it
// is). A rule the mirror's own robots.txt gives (RFC 9309 §2.3: it speaks
// for the mirror) moves the paths the division leaves on that mirror;
// the others go to their own mirror, which honours the mirror's rule as
// well (they are not fetched from it) and keeps one home per path. A
// mirror named by the rules of several origins is re-picked by none:
// whose division would hold is not ours to guess. The choice is the
// one pickMirror makes for the origin's URLs, a function of names and
// path only, so it holds across a resume; when the rule is dropped
// (robots.txt changed) its mirrors are re-picked no more, and URLs
// already queued on them stay where they are. A re-pick is counted and
// logged as any move (source mirror-site; host-rewrite:from=MIRROR).
// The price: a site that names an in-scope stranger among its mirrors
// takes from the stranger the paths its division gives to the other
// mirrors; the scope bounds who can be named, and mirror-sites: false
// turns Mirror-site off.
//
// Mirrors may have rules of their own (a Host line naming the origin, a
// copy of the origin's Mirror-site lines naming the others): a rule is
// learned only without the targets that could lead back, for any path,
// to its origin or to a sibling mirror. loopsLocked walks every branch:
// each mirror of a rule, and the re-pick by every rule naming a mirror
// (not only when it is the one), so that dropping or replacing a rule
// later only takes moves away and cannot make a loop. resolve still
// stops after maxRewriteChain rules and never follows a loop, the last
// guard for rules restored from the store unchecked (restoreLearned).
//
// A learned rule lives as long as its robots.txt says it. It is due for a
// re-check when the robots.txt entry it was read from expires (the gate's
// robots cache, 24 h by default), and at once for rules loaded from an
// earlier run. While a rule is due, one leased URL of its origin per
// probeInterval is left on the origin instead of being moved (URLs found
// meanwhile are queued there too until one is leased): it goes through
// the gate, which fetches the robots.txt again, and the crawler then
// re-reads the entry (recheckHostRules). A 2xx file without the
// directive, a 4xx (no rules, RFC 9309 §2.3.1.3) or 401/403 drops the
// rule (memory and bucket C/hostmap/, logged and counted), and URLs stay
// on the origin from then on; a 5xx or an unreachable robots.txt keeps the
// last known rule (RFC 9309 §2.3.1.4: the site is then treated as fully
// disallowed, and its last good rules still hold). Any robots.txt fetch
// the gate reports (robotsRefreshed) is re-read the same way, so an
// origin whose refreshed file gains a directive is moved from then on.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	// maxDuplicateHosts bounds Config.DuplicateHosts.
	maxDuplicateHosts = 10_000
	// defaultMaxHostRewrites is Config.MaxHostRewrites' default.
	defaultMaxHostRewrites = 100_000
	// maxRewriteChain bounds how many rules one URL goes through
	// (www.a → a → mirror-of-a ...); a loop is never followed.
	maxRewriteChain = 4
	// maxHostSpec bounds a host value: a DNS name is at most 253
	// characters, plus scheme and port.
	maxHostSpec = 300
	// maxMirrors bounds the mirrors one origin's load is spread over;
	// maxMirrorLines bounds the Mirror-site lines read to find them.
	maxMirrors     = 16
	maxMirrorLines = 64
	// probeInterval is how often a URL of an origin whose learned rule is
	// due is left on the origin, so that its robots.txt is fetched again.
	probeInterval = time.Minute
	// maxRefreshed bounds the origins whose robots.txt was fetched and
	// not yet re-read (robotsRefreshed); beyond it one is forgotten, and
	// its rule, if any, is re-checked when it falls due instead.
	maxRefreshed = 10_000

	// hostMapBucket holds the rules learned from robots.txt files, so a
	// resumed crawl applies them before the host is contacted again: key
	// "scheme://authority" of the origin, value "SOURCE TARGET-URL..."
	// (one target, or every mirror of a Mirror-site rule, space
	// separated).
	hostMapBucket = "C/hostmap/"

	// mdMoved is the URL metadata key holding the host a URL was moved
	// from.
	mdMoved = "moved"

	// Rule sources: the label of courtesy_crawl_host_rewrites_total.
	sourceOperator = "duplicate-hosts"
	sourceHost     = "robots-host"
	sourceMirror   = "mirror-site"

	// Crawl log annotations.
	annotationMovedTo   = "host-rewrite:to="
	annotationMovedFrom = "host-rewrite:from="
)

// hostSpec is a parsed host value: "[scheme://]host[:port]".
type hostSpec struct {
	scheme string // "http", "https", or "" when not given
	host   string // normalized host name (lower case, IDNA), IPv6 without brackets
	port   string // "" when not given
}

// parseHostSpec reads a host as robots.txt Host and Mirror-site lines and
// the duplicate-hosts list write it (RFC 1738 host[:port], with the
// optional scheme Yandex allows for an HTTPS master host).
func parseHostSpec(s string, norm urlnorm.Options) (hostSpec, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxHostSpec {
		return hostSpec{}, fmt.Errorf("crawl: host %q: empty or longer than %d bytes", s, maxHostSpec)
	}
	var spec hostSpec
	rest := s
	if i := strings.Index(s, "://"); i >= 0 {
		spec.scheme = strings.ToLower(s[:i])
		if spec.scheme != "http" && spec.scheme != "https" {
			return hostSpec{}, fmt.Errorf("crawl: host %q: scheme must be http or https", s)
		}
		rest = s[i+3:]
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@\\ \t") || rest == "" {
		return hostSpec{}, fmt.Errorf("crawl: host %q: want [scheme://]host[:port]", s)
	}
	u, err := url.Parse("http://" + rest + "/")
	if err != nil || u.Hostname() == "" {
		return hostSpec{}, fmt.Errorf("crawl: host %q: want [scheme://]host[:port]", s)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return hostSpec{}, fmt.Errorf("crawl: host %q: port not in 1..65535", s)
		}
		spec.port = strconv.Itoa(n)
	} else if strings.HasSuffix(rest, ":") {
		return hostSpec{}, fmt.Errorf("crawl: host %q: empty port", s)
	}
	// The host name goes through the crawl normalization, so that it
	// compares equal to the host of a normalized URL.
	nu, err := urlnorm.Normalize("http://"+joinHost(u.Hostname(), "")+"/", norm)
	if err != nil || nu.Hostname() == "" {
		return hostSpec{}, fmt.Errorf("crawl: host %q: bad host name", s)
	}
	spec.host = nu.Hostname()
	return spec, nil
}

// joinHost writes host and port as a URL authority.
func joinHost(host, port string) string {
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// hostRule moves the URLs it matches to another host.
type hostRule struct {
	// scheme limits the rule to one scheme (a robots.txt rule holds for
	// its origin); "" matches every scheme.
	scheme string
	to     hostSpec
	// mirrors, when it holds two or more targets (to is the first), are
	// the mirrors of a Mirror-site rule: each URL goes to the one chosen
	// by pickMirror.
	mirrors []hostSpec
	// keepPort keeps the URL's port when to has none (an operator alias
	// written without scheme and port names only another host name).
	keepPort bool
	source   string
	// due is when a learned rule should be checked against a fresh
	// robots.txt (the expiry of the entry it was read from); zero: never
	// (operator rules).
	due time.Time
	// probe holds the earliest time, in Unix nanoseconds, another URL
	// may be left on the origin to re-check a due rule. Shared by the
	// copies of one rule.
	probe *atomic.Int64
}

// sameTargets reports whether r and o move URLs to the same places.
func (r *hostRule) sameTargets(o *hostRule) bool {
	if r.scheme != o.scheme || r.to != o.to || r.keepPort != o.keepPort || r.source != o.source || len(r.mirrors) != len(o.mirrors) {
		return false
	}
	for i := range r.mirrors {
		if r.mirrors[i] != o.mirrors[i] {
			return false
		}
	}
	return true
}

// targets returns every host the rule may move a URL to.
func (r *hostRule) targets() []hostSpec {
	if len(r.mirrors) > 1 {
		return r.mirrors
	}
	return []hostSpec{r.to}
}

// target returns the host u goes to.
func (r *hostRule) target(u *url.URL) hostSpec {
	if len(r.mirrors) > 1 {
		return r.mirrors[pickMirror(r.mirrors, u.EscapedPath())]
	}
	return r.to
}

// pickMirror chooses the mirror of a path by rendezvous hashing: the
// mirror with the highest hash(mirror, path) wins. It depends on the
// mirror names and the path only, never on the mirrors' order.
func pickMirror(mirrors []hostSpec, path string) int {
	best, bestScore := 0, uint64(0)
	h := fnv.New64a() // FNV-1a: stable across runs and Go versions, as the choice must be
	for i, m := range mirrors {
		h.Reset()
		io.WriteString(h, m.scheme+"://"+joinHost(m.host, m.port)+"\x00"+path)
		score := mix64(h.Sum64())
		if i == 0 || score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// mix64 is the splitmix64 finalizer: FNV's low bits mix poorly, and
// rendezvous hashing compares whole values.
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// identity reports whether the rule leaves u where it is (an operator's
// "host=host" pin).
func (r *hostRule) identity(u *url.URL) bool {
	return len(r.mirrors) < 2 && r.to.host == u.Hostname() && (r.to.scheme == "" || r.to.scheme == u.Scheme) &&
		(r.keepPort && r.to.port == "" || r.to.port == u.Port())
}

// apply returns u moved by r, normalized (a default port is dropped).
func (r *hostRule) apply(u *url.URL, norm urlnorm.Options) (*url.URL, error) {
	to := r.target(u)
	nu := *u
	if to.scheme != "" {
		nu.Scheme = to.scheme
	}
	port := to.port
	if port == "" && r.keepPort {
		port = u.Port()
	}
	nu.Host = joinHost(to.host, port)
	return urlnorm.Normalize(nu.String(), norm)
}

// probeMode says whether resolve may leave a URL on the origin of a
// learned rule due for a re-check, so that it goes through the gate and
// the origin's robots.txt is fetched again.
type probeMode int

const (
	// probeNone applies every rule (after the gate: the rule was just
	// re-checked).
	probeNone probeMode = iota
	// probePeek leaves a discovered URL (link, seed) on the origin while
	// the rule is due and no probe was sent in the last probeInterval.
	probePeek
	// probeClaim leaves a leased URL on the origin under the same
	// condition, and makes it the probe: the next one may stay
	// probeInterval later.
	probeClaim
)

// probe reports whether mode leaves a URL on the origin of r at now.
func (r *hostRule) probes(mode probeMode, now time.Time) bool {
	if mode == probeNone || r.source == sourceOperator || r.due.IsZero() || now.Before(r.due) || r.probe == nil {
		return false
	}
	next := r.probe.Load()
	if now.UnixNano() < next {
		return false
	}
	return mode == probePeek || r.probe.CompareAndSwap(next, now.Add(probeInterval).UnixNano())
}

// parseDuplicateHosts reads Config.DuplicateHosts: "ALIAS=CANONICAL"
// entries. ALIAS is a host (every port) or host:port; CANONICAL a host
// spec.
func parseDuplicateHosts(entries []string) ([]operatorRule, error) {
	if len(entries) > maxDuplicateHosts {
		return nil, fmt.Errorf("crawl: duplicate-hosts: %d entries, at most %d", len(entries), maxDuplicateHosts)
	}
	norm := urlnorm.CrawlDefaults()
	var out []operatorRule
	seen := map[string]bool{}
	for _, e := range entries {
		alias, canon, ok := strings.Cut(e, "=")
		if !ok {
			return nil, fmt.Errorf("crawl: duplicate-hosts entry %q: want ALIAS=CANONICAL", e)
		}
		a, err := parseHostSpec(alias, norm)
		if err != nil {
			return nil, fmt.Errorf("crawl: duplicate-hosts entry %q: alias: %w", e, err)
		}
		if a.scheme != "" {
			return nil, fmt.Errorf("crawl: duplicate-hosts entry %q: the alias takes no scheme (it matches both)", e)
		}
		if a.port == "80" || a.port == "443" {
			// Normalized URLs carry no default port, so such an alias
			// would never match.
			return nil, fmt.Errorf("crawl: duplicate-hosts entry %q: write the alias without its default port", e)
		}
		t, err := parseHostSpec(canon, norm)
		if err != nil {
			return nil, fmt.Errorf("crawl: duplicate-hosts entry %q: canonical: %w", e, err)
		}
		key := joinHost(a.host, a.port)
		if seen[key] {
			return nil, fmt.Errorf("crawl: duplicate-hosts: alias %s given twice", key)
		}
		seen[key] = true
		out = append(out, operatorRule{alias: a, rule: hostRule{to: t, keepPort: t.scheme == "" && t.port == "", source: sourceOperator}})
	}
	// A loop among the operator's own rules is a configuration error.
	m := newHostMap(norm, 0)
	for _, r := range out {
		m.addOperator(r)
	}
	for _, r := range out {
		u := &url.URL{Scheme: "http", Host: joinHost(r.alias.host, r.alias.port), Path: "/"}
		if _, _, loop := m.resolve(u, probeNone); loop {
			return nil, fmt.Errorf("crawl: duplicate-hosts: %s is rewritten in a loop", u.Host)
		}
	}
	return out, nil
}

// operatorRule is one parsed duplicate-hosts entry.
type operatorRule struct {
	alias hostSpec
	rule  hostRule
}

// hostMap holds the rewrite rules. It is safe for concurrent use; the
// fast path (no rules at all, the usual crawl) takes no lock.
type hostMap struct {
	norm    urlnorm.Options
	now     func() time.Time
	max     int          // rules learned from robots.txt, at most
	n       atomic.Int64 // rules held; 0 skips the lock
	learned atomic.Int64 // rules learned from robots.txt (bounded by max)
	moved   atomic.Int64 // URLs moved this run
	dropped atomic.Int64 // learned rules dropped this run
	metric  *prometheus.CounterVec
	// rules counts learned rules by event: learned, dropped.
	rules *prometheus.CounterVec

	// mu guards byAuthority and byHost.
	mu sync.RWMutex
	// byAuthority: rules for one "host[:port]" as a normalized URL
	// writes it (robots.txt rules, operator aliases with a port).
	byAuthority map[string][]hostRule
	// byHost: operator aliases without a port, for every port.
	byHost map[string]hostRule
	// memberOf: for each mirror ("scheme://authority") of a learned
	// Mirror-site rule with two or more targets, the origins whose rule
	// names it, sorted. A mirror named by exactly one rule is re-picked
	// by it (repickLocked).
	memberOf map[string][]string

	// refreshed holds the origins whose robots.txt the gate fetched and
	// the crawler has not re-read yet (at most maxRefreshed).
	refreshed struct {
		sync.Mutex
		origins map[string]bool
	}
}

func newHostMap(norm urlnorm.Options, maxLearned int) *hostMap {
	m := &hostMap{norm: norm, now: time.Now, max: maxLearned, byAuthority: map[string][]hostRule{}, byHost: map[string]hostRule{},
		memberOf: map[string][]string{},
		metric: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_host_rewrites_total",
			Help: "URLs moved to another host (robots Host, REGP Mirror-site, duplicate-hosts), by source."}, []string{"source"}),
		rules: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_host_rewrite_rules_total",
			Help: "Host rewrite rules learned from robots.txt files, or dropped when a later robots.txt no longer had them."}, []string{"event"}),
	}
	m.refreshed.origins = map[string]bool{}
	return m
}

func (m *hostMap) addOperator(r operatorRule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.alias.port == "" {
		m.byHost[r.alias.host] = r.rule
	} else {
		a := joinHost(r.alias.host, r.alias.port)
		// Operator rules come first: the operator knows best.
		m.byAuthority[a] = append([]hostRule{r.rule}, m.byAuthority[a]...)
	}
	m.n.Add(1)
}

// origin writes s as an origin, "scheme://authority".
func (s hostSpec) origin() string {
	return s.scheme + "://" + joinHost(s.host, s.port)
}

// canonicalSpec returns t as a normalized URL writes it (a default port
// dropped), so that its origin compares equal to a URL's; false when t
// does not make a URL.
func canonicalSpec(t hostSpec, norm urlnorm.Options) (hostSpec, bool) {
	u, err := urlnorm.Normalize(t.origin()+"/", norm)
	if err != nil || u.Hostname() == "" {
		return hostSpec{}, false
	}
	return hostSpec{scheme: u.Scheme, host: u.Hostname(), port: u.Port()}, true
}

// findLocked returns the rule for u, and whether it is a re-pick (u is
// on a mirror of another origin's Mirror-site rule). The operator's
// rules come first (host:port, then host); then, on a mirror, the
// Mirror-site rule that names it (repickLocked) when it gives u's path
// to another mirror; then the rule robots.txt of u's origin gave. So the
// declaring origin's division of the paths holds for every name of a
// path, and a mirror's own rule moves the paths the division leaves on
// it: with the mirror's rule first, a path would have two homes (the
// mirror the origin's URL goes to, and the one the mirror's rule names).
func (m *hostMap) findLocked(u *url.URL) (r hostRule, repick, ok bool) {
	if r, ok := m.operatorLocked(u); ok {
		return r, false, true
	}
	if len(m.memberOf) > 0 {
		o := u.Scheme + "://" + u.Host
		if r, ok := m.repickLocked(o, ""); ok && r.mirrors[pickMirror(r.mirrors, u.EscapedPath())].origin() != o {
			return r, true, true
		}
	}
	if r, ok := m.findLearnedLocked(u.Scheme, u.Host); ok {
		return r, false, true
	}
	return hostRule{}, false, false
}

// operatorLocked returns the operator's rule for u (host:port, then
// host).
func (m *hostMap) operatorLocked(u *url.URL) (hostRule, bool) {
	for _, r := range m.byAuthority[u.Host] {
		if r.source == sourceOperator {
			return r, true
		}
	}
	r, ok := m.byHost[u.Hostname()]
	return r, ok
}

// repickLocked returns the Mirror-site rule that re-picks the mirror
// origin o: the rule of the one origin other than skip that names o among
// its two or more mirrors. A mirror named by the rules of several origins
// is re-picked by none: each would divide its paths differently, and
// following one after the other could move a URL around the sites
// without end; the rules still send their own origins' URLs to it.
func (m *hostMap) repickLocked(o, skip string) (hostRule, bool) {
	by := ""
	for _, d := range m.memberOf[o] {
		if d == skip {
			continue
		}
		if by != "" {
			return hostRule{}, false
		}
		by = d
	}
	if by == "" {
		return hostRule{}, false
	}
	scheme, authority, _ := strings.Cut(by, "://")
	r, ok := m.findLearnedLocked(scheme, authority)
	if !ok || len(r.mirrors) < 2 {
		return hostRule{}, false
	}
	return r, true
}

// resolve follows the rules from u, at most maxRewriteChain of them. It
// returns the final URL and the source of the first rule (nil when u stays
// where it is); loop is true when the rules lead back to a host already
// passed, in which case u is not moved. A learned rule due for a
// re-check may stop u on its origin, as mode says, so that the origin's
// robots.txt is read again.
func (m *hostMap) resolve(u *url.URL, mode probeMode) (moved *url.URL, source string, loop bool) {
	if m.n.Load() == 0 {
		return nil, "", false
	}
	var now time.Time
	if mode != probeNone {
		now = m.now()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.resolveLocked(u, mode, now)
}

// resolveLocked is resolve.
func (m *hostMap) resolveLocked(u *url.URL, mode probeMode, now time.Time) (*url.URL, string, bool) {
	cur := u
	var seen [maxRewriteChain + 1]string
	seen[0] = u.Scheme + "://" + u.Host
	source := ""
	for i := range maxRewriteChain {
		r, repick, ok := m.findLocked(cur)
		if !ok || r.identity(cur) {
			break
		}
		// A re-pick never probes: a probe is there to fetch the declaring
		// origin's robots.txt again, which only a URL of that origin does.
		if !repick && r.probes(mode, now) {
			break
		}
		next, err := r.apply(cur, m.norm)
		if err != nil {
			break
		}
		o := next.Scheme + "://" + next.Host
		if o == seen[i] {
			break // a mirror re-picked for a path of its own: it stays
		}
		for _, s := range seen[:i+1] {
			if s == o {
				return nil, "", true
			}
		}
		seen[i+1] = o
		if source == "" {
			source = r.source
		}
		cur = next
	}
	if cur == u {
		return nil, "", false
	}
	return cur, source, false
}

// maxLoopWalk bounds the origins one loop check visits; a check that
// would visit more refuses the target, as a loop would be.
const maxLoopWalk = 1024

// loopsLocked reports whether a rule of origin sending URLs to targets
// could make a loop through its target t: whether the rules, for any
// path, lead from t back to origin, or to another of targets (a target
// that leads to a sibling mirror could come back to itself by the
// sibling's re-pick: t → s by t's own rules, s → t by origin's). The walk
// goes over every branch a path could take (every mirror of a
// Mirror-site rule, not only the one a given path picks), so a rule
// accepted here loops for no path. origin's current rule plays no part:
// the new one replaces it.
func (m *hostMap) loopsLocked(origin string, t hostSpec, targets []hostSpec) bool {
	start := t.origin()
	if start == origin {
		return true
	}
	stops := map[string]bool{origin: true}
	for _, x := range targets {
		stops[x.origin()] = true
	}
	// t's re-pick by another origin's rule counts, although t would be
	// named by two rules (and re-picked by none) if the new rule kept two
	// targets or more: it may keep only t.
	visited := map[step]bool{{origin: start}: true}
	queue := m.stepsLocked(start, origin, true)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if stops[s.origin] {
			return true
		}
		if visited[s] {
			continue
		}
		visited[s] = true
		if len(visited) > maxLoopWalk {
			return true
		}
		queue = append(queue, m.stepsLocked(s.origin, origin, !s.repicked)...)
	}
	return false
}

// stepsLocked returns every origin one rule may move a URL of origin o to,
// whatever its path (the operator's rule; else each mirror of the rules
// that name o, and each target of o's own rule), leaving out the
// rules of origin skip. Without repick, o's re-pick is left out too: o
// was reached by one, and the rule that re-picks it picked it (a path's
// mirror stays there).
func (m *hostMap) stepsLocked(o, skip string, repick bool) []step {
	scheme, authority, _ := strings.Cut(o, "://")
	u := &url.URL{Scheme: scheme, Host: authority, Path: "/"}
	var out []step
	add := func(r *hostRule, ts []hostSpec, repicked bool) {
		for _, t := range ts {
			nr := hostRule{to: t, keepPort: r.keepPort}
			if next, err := nr.apply(u, m.norm); err == nil && next.Scheme+"://"+next.Host != o {
				out = append(out, step{origin: next.Scheme + "://" + next.Host, repicked: repicked})
			}
		}
	}
	if r, ok := m.operatorLocked(u); ok {
		if !r.identity(u) {
			add(&r, r.targets(), false)
		}
		return out
	}
	if repick {
		// Every rule naming o, not only when it is the one: a rule that
		// stops naming o later (replaced, dropped) leaves o to the
		// others, and nothing checks the moves that gives back.
		for _, d := range m.memberOf[o] {
			if d == skip {
				continue
			}
			ds, da, _ := strings.Cut(d, "://")
			if r, ok := m.findLearnedLocked(ds, da); ok && len(r.mirrors) > 1 {
				add(&r, r.mirrors, true)
			}
		}
	}
	if r, ok := m.findLearnedLocked(scheme, authority); ok && o != skip {
		add(&r, r.targets(), false)
	}
	return out
}

// step is one move of the loop check: the origin reached, and whether a
// re-pick reached it.
type step struct {
	origin   string
	repicked bool
}

// errHostMapFull and errHostLoop refuse a learned rule.
var (
	errHostMapFull = errors.New("crawl: host rewrite limit reached")
	errHostLoop    = errors.New("crawl: host rewrite would loop")
)

// indexLocked records r, the learned rule of origin, as naming its
// mirrors (memberOf); unindexLocked forgets it.
func (m *hostMap) indexLocked(origin string, r *hostRule) {
	if len(r.mirrors) < 2 {
		return
	}
	for _, t := range r.mirrors {
		k := t.origin()
		if i, found := slices.BinarySearch(m.memberOf[k], origin); !found {
			m.memberOf[k] = slices.Insert(m.memberOf[k], i, origin)
		}
	}
}

func (m *hostMap) unindexLocked(origin string, r *hostRule) {
	if len(r.mirrors) < 2 {
		return
	}
	for _, t := range r.mirrors {
		k := t.origin()
		if i, found := slices.BinarySearch(m.memberOf[k], origin); found {
			m.memberOf[k] = slices.Delete(m.memberOf[k], i, i+1)
			if len(m.memberOf[k]) == 0 {
				delete(m.memberOf, k)
			}
		}
	}
}

// setLearned sets (to non-nil) or removes (to nil) the robots.txt rule of
// origin scheme://authority. It reports whether its targets changed (a
// new due time alone is no change). Targets that could close a loop
// (loopsLocked) are left out; a rule left with no target is refused
// (errHostLoop).
func (m *hostMap) setLearned(scheme, authority string, to *hostRule) (bool, error) {
	return m.set(scheme, authority, to, true)
}

// restoreLearned is setLearned for a rule stored by an earlier run: its
// targets are the ones kept when it was learned, and no loop check
// leaves one out now. Checked again in the store's order, rather than
// the order they were learned in, a target could be left out that was
// kept before, and the URLs of the paths it had would move: the resumed
// crawl would fetch them again. resolve still never follows a loop.
func (m *hostMap) restoreLearned(scheme, authority string, to *hostRule) (bool, error) {
	return m.set(scheme, authority, to, false)
}

func (m *hostMap) set(scheme, authority string, to *hostRule, check bool) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rules := m.byAuthority[authority]
	idx := -1
	for i, r := range rules {
		if r.source != sourceOperator && r.scheme == scheme {
			idx = i
		}
	}
	origin := scheme + "://" + authority
	if to == nil {
		if idx < 0 {
			return false, nil
		}
		m.unindexLocked(origin, &rules[idx])
		m.byAuthority[authority] = append(rules[:idx:idx], rules[idx+1:]...)
		if len(m.byAuthority[authority]) == 0 {
			delete(m.byAuthority, authority)
		}
		m.n.Add(-1)
		m.learned.Add(-1)
		return true, nil
	}
	r := *to
	r.scheme = scheme
	// Targets as URLs write them, once each, so that a mirror's origin
	// matches the URLs on it (memberOf).
	var targets []hostSpec
	for _, t := range r.targets() {
		if c, ok := canonicalSpec(t, m.norm); ok && !slices.Contains(targets, c) {
			targets = append(targets, c)
		}
	}
	// Refuse targets that could lead back here (a says b, b says a), or
	// to a sibling mirror: every URL must still resolve somewhere else
	// than back to where it was.
	var keep []hostSpec
	for _, t := range targets {
		if !check && t.origin() != origin || !m.loopsLocked(origin, t, targets) {
			keep = append(keep, t)
		}
	}
	if len(keep) == 0 {
		return false, errHostLoop
	}
	r.to, r.mirrors = keep[0], nil
	if len(keep) > 1 {
		r.mirrors = keep
	}
	if idx >= 0 && rules[idx].sameTargets(&r) {
		rules[idx].due = r.due // re-confirmed: next re-check from the new entry's expiry
		return false, nil
	}
	if idx < 0 && m.learned.Load() >= int64(m.max) {
		return false, errHostMapFull
	}
	r.probe = new(atomic.Int64)
	if idx >= 0 {
		m.unindexLocked(origin, &rules[idx])
		rules[idx] = r
	} else {
		rules = append(rules, r)
		m.n.Add(1)
		m.learned.Add(1)
	}
	m.byAuthority[authority] = rules
	m.indexLocked(origin, &r)
	return true, nil
}

// setDue sets when the learned rule of origin scheme://authority, if any,
// is next re-checked.
func (m *hostMap) setDue(scheme, authority string, due time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rules := m.byAuthority[authority]
	for i := range rules {
		if rules[i].source != sourceOperator && rules[i].scheme == scheme {
			rules[i].due = due
		}
	}
}

// findLearnedLocked returns the learned rule of origin
// scheme://authority.
func (m *hostMap) findLearnedLocked(scheme, authority string) (hostRule, bool) {
	for _, r := range m.byAuthority[authority] {
		if r.source != sourceOperator && r.scheme == scheme {
			return r, true
		}
	}
	return hostRule{}, false
}

// due reports whether the learned rule of u's origin is due for a
// re-check.
func (m *hostMap) due(u *url.URL) bool {
	if m.learned.Load() == 0 {
		return false
	}
	now := m.now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, r := range m.byAuthority[u.Host] {
		if r.source != sourceOperator && r.scheme == u.Scheme {
			return !r.due.IsZero() && !now.Before(r.due)
		}
	}
	return false
}

// noteRefreshed records that origin's robots.txt was fetched.
func (m *hostMap) noteRefreshed(origin string) {
	m.refreshed.Lock()
	defer m.refreshed.Unlock()
	if len(m.refreshed.origins) >= maxRefreshed && !m.refreshed.origins[origin] {
		// Full of origins never granted a permit since (disallowed,
		// retired): forget one; a rule of its own is still re-checked
		// when it falls due.
		for o := range m.refreshed.origins {
			delete(m.refreshed.origins, o)
			break
		}
	}
	m.refreshed.origins[origin] = true
}

// takeRefreshed reports whether origin's robots.txt was fetched since the
// last call for it.
func (m *hostMap) takeRefreshed(origin string) bool {
	m.refreshed.Lock()
	defer m.refreshed.Unlock()
	if !m.refreshed.origins[origin] {
		return false
	}
	delete(m.refreshed.origins, origin)
	return true
}

// openHostMap builds the host map from the configuration and the rules
// persisted by earlier runs, and registers its metric. Called by open.
func (c *Crawler) openHostMap() error {
	ops, err := parseDuplicateHosts(c.cfg.DuplicateHosts)
	if err != nil {
		return err
	}
	c.hmap = newHostMap(c.norm, max(c.cfg.MaxHostRewrites, 0))
	c.hmap.now = c.now
	for _, r := range ops {
		c.hmap.addOperator(r)
	}
	c.metrics.reg.MustRegister(c.hmap.metric, c.hmap.rules)
	c.hostRules = c.db.Bucket(hostMapBucket)
	// Rules of an earlier run are due at once: the first URL of each such
	// origin re-reads its robots.txt before the rule is trusted again.
	due := c.now()
	return c.hostRules.Scan(nil, func(k, v []byte) error {
		origin, err := url.Parse(string(k))
		if err != nil || origin.Host == "" {
			return nil // not ours to fail the crawl on; ignored
		}
		r, ok := decodeStoredRule(string(v))
		if !ok {
			return nil
		}
		r.due = due
		if _, err := c.hmap.restoreLearned(origin.Scheme, origin.Host, &r); err != nil {
			c.log.Warn("stored host rewrite ignored", "origin", string(k), "rule", string(v), "err", err)
		}
		return nil
	})
}

// encodeStoredRule writes r as bucket C/hostmap/ holds it.
func encodeStoredRule(r *hostRule) string {
	var b strings.Builder
	b.WriteString(r.source)
	for _, t := range r.targets() {
		b.WriteString(" " + t.scheme + "://" + joinHost(t.host, t.port))
	}
	return b.String()
}

// decodeStoredRule reads what encodeStoredRule wrote (one target in
// earlier versions); false for anything else.
func decodeStoredRule(v string) (hostRule, bool) {
	f := strings.Fields(v)
	if len(f) < 2 || len(f) > maxMirrors+1 || (f[0] != sourceHost && f[0] != sourceMirror) {
		return hostRule{}, false
	}
	r := hostRule{source: f[0]}
	var targets []hostSpec
	for _, s := range f[1:] {
		t, err := url.Parse(s)
		if err != nil || t.Hostname() == "" || t.Path != "" || t.RawQuery != "" || t.Fragment != "" || t.User != nil ||
			(t.Scheme != "http" && t.Scheme != "https") {
			return hostRule{}, false
		}
		targets = append(targets, hostSpec{scheme: t.Scheme, host: t.Hostname(), port: t.Port()})
	}
	r.to = targets[0]
	if len(targets) > 1 {
		r.mirrors = targets
	}
	return r, true
}

// moveHost returns u rewritten by the host map and the host it was moved
// from, or u and "" when it stays. Every move is counted. A discovered
// URL of an origin whose learned rule is due may stay (probePeek).
func (c *Crawler) moveHost(u *url.URL) (*url.URL, string) {
	return c.moveHostProbe(u, probePeek)
}

func (c *Crawler) moveHostProbe(u *url.URL, mode probeMode) (*url.URL, string) {
	if c.hmap == nil || u == nil {
		return u, ""
	}
	nu, source, loop := c.hmap.resolve(u, mode)
	if loop {
		c.log.Debug("host rewrite loop not followed", "url", u.String())
	}
	if nu == nil {
		return u, ""
	}
	c.hmap.moved.Add(1)
	c.hmap.metric.WithLabelValues(source).Inc()
	return nu, u.Host
}

// homeOf returns the home page to queue with a link (the home-page and
// combined policies): the home of the link orig's origin, moved by the
// rules as any URL (moved is where orig itself went). A mirror's own home
// would otherwise be fetched besides the one the declaring site's home
// maps to: the home of a moved link's origin, or of a link on a mirror
// that its path leaves there, goes where "/" of the mirror set goes.
// Homes are not counted as moves: they are derived from a link.
func (c *Crawler) homeOf(orig, moved *url.URL) *url.URL {
	if orig == nil {
		orig = moved
	}
	home := &url.URL{Scheme: orig.Scheme, Host: orig.Host, Path: "/"}
	loop := false
	if c.hmap != nil {
		var h *url.URL
		if h, _, loop = c.hmap.resolve(home, probeNone); h != nil {
			return h
		}
	}
	if loop && orig != moved {
		// orig moved, its home not (the rules loop for "/"): the home
		// of the host the link went to.
		return &url.URL{Scheme: moved.Scheme, Host: moved.Host, Path: "/"}
	}
	return home
}

// withMoved returns a copy of md saying the URL was moved from host.
func withMoved(md map[string][]string, host string) map[string][]string {
	out := cloneMD(md)
	out[mdMoved] = []string{host}
	return out
}

// movedAnnotation adds the crawl log annotation of a moved URL.
func movedAnnotation(l frontier.Lease, e *crawllog.Entry) {
	if from := md1(l.Metadata, mdMoved); from != "" {
		e.Annotations = append(e.Annotations, annotationMovedFrom+from)
	}
}

// moveLeased handles a leased URL whose host has a rule (it was queued
// before the rule was known): it is completed without a request and its
// rewritten URL is queued in its place. It reports whether it did so;
// permit, when not nil, is released unused. Before the gate (permit nil)
// a URL whose origin's learned rule is due may stay, to go through the
// gate as the probe that refreshes its robots.txt; after the gate
// (permit set) the rule, just re-checked, is applied as it stands.
func (c *Crawler) moveLeased(wid int, l frontier.Lease, u *url.URL, permit *politeness.Permit) bool {
	if c.hmap == nil || c.hmap.n.Load() == 0 {
		return false
	}
	mode := probeNone
	if permit == nil {
		mode = probeClaim
	}
	nu, from := c.moveHostProbe(u, mode)
	if from == "" {
		return false
	}
	if permit != nil {
		if err := permit.Release(); err != nil {
			c.log.Warn("politeness gate: unused permit not released", "url", l.URL, "err", err)
		}
	}
	raw := nu.String()
	e := &crawllog.Entry{Status: crawllog.StatusBlockedByProcessor, Size: -1, Thread: wid,
		Annotations: []string{annotationMovedTo + nu.Host}}
	// Scope is checked on the rewritten URL; a URL the rules send out of
	// scope is dropped (logged with the move, not fetched anywhere).
	if !c.scope.inScope(nu) {
		c.metrics.outOfScope.Inc()
		e.Annotations = append(e.Annotations, "out-of-scope")
		c.complete(l, nil, e, -1)
		return true
	}
	if v := c.tr.CheckURL(nu.Hostname(), nu, raw, l.Depth); !v.OK() {
		c.cut(l, raw, md1(l.Metadata, mdPath), v)
		c.complete(l, nil, e, -1)
		return true
	}
	md := withMoved(l.Metadata, from)
	delete(md, mdTry)
	item := frontier.Item{Info: frontier.URLInfo{URL: raw, Key: c.queueKey(nu), CrawlID: c.cfg.CrawlID,
		Depth: l.Depth, Priority: l.Priority, Metadata: md}}
	c.complete(l, []frontier.Item{item}, e, -1)
	return true
}

// robotsRefreshed is the gate's report of a robots.txt fetch (via the
// crawler's politeness.Observer): the origin's rule is re-read at its
// next permit (recheckHostRules).
func (c *Crawler) robotsRefreshed(origin string) {
	if c.hmap != nil {
		c.hmap.noteRefreshed(origin)
	}
}

// recheckHostRules runs after the gate granted a permit for u: when u's
// origin's robots.txt was fetched since it was last read, or its learned
// rule is due, the stored robots.txt entry is read again and the rule set,
// kept or dropped (learnFromRobots).
func (c *Crawler) recheckHostRules(ctx context.Context, u *url.URL) {
	if c.hmap == nil {
		return
	}
	origin := politeness.Origin(u)
	if !c.hmap.takeRefreshed(origin) && !c.hmap.due(u) {
		return
	}
	rules, ok, err := c.gate.Rules(ctx, origin)
	if err != nil || !ok {
		c.log.Debug("robots.txt rules not read for host rewrites", "origin", origin, "err", err)
		return
	}
	c.learnFromRobots(u, rules)
}

// learnFromRobots applies the robots.txt rules of u's origin, as the gate
// read them, to the origin's rule: a 2xx file sets or clears it
// (learnHostRules); 4xx, 401 and 403 mean no rules at all (RFC 9309
// §2.3.1.3) and drop it; 5xx and network errors keep the last known rule
// (RFC 9309 §2.3.1.4), to be checked again when the entry expires.
func (c *Crawler) learnFromRobots(u *url.URL, r politeness.Rules) {
	if c.hmap == nil {
		return
	}
	c.hmap.takeRefreshed(politeness.Origin(u)) // r is as new as any noted fetch
	e := r.Entry
	switch e.Result {
	case politeness.RobotsOK:
		c.learnHostRules(u, r.File, r.Group, e.Expires)
	case politeness.RobotsNotFound, politeness.RobotsUnauthorized:
		c.dropHostRule(u, fmt.Sprintf("robots.txt answers %d", e.Status))
	default:
		c.hmap.setDue(u.Scheme, u.Host, e.Expires)
	}
}

// dropHostRule removes the learned rule of u's origin, if any, from the
// map and the store, and logs and counts it.
func (c *Crawler) dropHostRule(u *url.URL, why string) {
	origin := u.Scheme + "://" + u.Host
	changed, _ := c.hmap.setLearned(u.Scheme, u.Host, nil)
	if !changed {
		return
	}
	c.hmap.dropped.Add(1)
	c.hmap.rules.WithLabelValues("dropped").Inc()
	c.log.Info("host rewrite dropped: URLs stay on the origin", "origin", origin, "why", why)
	if err := c.hostRules.Delete([]byte(origin)); err != nil {
		c.log.Warn("host rewrite not deleted from the store", "origin", origin, "err", err)
	}
}

// learnHostRules reads the Host and Mirror-site directives of the
// robots.txt of u's origin (f, and g its group for our agent) and sets
// or clears the origin's rule; due is when the rule should be checked
// against a fresh robots.txt (zero: never). Called at the first contact
// with a host in a run, and whenever its robots.txt was fetched again.
func (c *Crawler) learnHostRules(u *url.URL, f *robots.File, g *robots.Group, due time.Time) {
	if c.hmap == nil || f == nil {
		return
	}
	var rule *hostRule
	// target reads one directive value: the URL of u's origin moved
	// there, or false when the value is bad, names the origin itself (it
	// is the master), or is out of scope.
	target := func(value, source string) (hostSpec, bool) {
		spec, err := parseHostSpec(value, c.norm)
		if err != nil {
			c.log.Debug("robots.txt host value ignored", "origin", u.Scheme+"://"+u.Host, "source", source, "err", err)
			return hostSpec{}, false
		}
		// No scheme: the origin's; no port: the scheme's default
		// (RFC 1738 §3.1), as Yandex reads Host.
		r := hostRule{to: spec, source: source}
		if r.to.scheme == "" {
			r.to.scheme = u.Scheme
		}
		t, err := r.apply(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}, c.norm)
		if err != nil || (t.Scheme == u.Scheme && t.Host == u.Host) {
			return hostSpec{}, false
		}
		if !c.acceptHostTarget(u, t, source) {
			return hostSpec{}, false
		}
		return hostSpec{scheme: t.Scheme, host: t.Hostname(), port: t.Port()}, true
	}
	if boolOr(c.cfg.RobotsHost, true) && f.Host() != "" {
		if t, ok := target(f.Host(), sourceHost); ok {
			rule = &hostRule{to: t, source: sourceHost}
		}
	}
	if rule == nil && boolOr(c.cfg.MirrorSites, true) && g != nil {
		// Every in-scope mirror, in file order, without repeats: the load
		// is spread over them (pickMirror).
		var mirrors []hostSpec
		for i, m := range g.Extensions().MirrorSites {
			if i >= maxMirrorLines || len(mirrors) >= maxMirrors {
				break
			}
			t, ok := target(m, sourceMirror)
			if ok && !slices.Contains(mirrors, t) {
				mirrors = append(mirrors, t)
			}
		}
		if len(mirrors) > 0 {
			rule = &hostRule{to: mirrors[0], source: sourceMirror}
			if len(mirrors) > 1 {
				rule.mirrors = mirrors
			}
		}
	}
	origin := u.Scheme + "://" + u.Host
	if rule == nil {
		c.dropHostRule(u, "robots.txt no longer names another host")
		return
	}
	rule.due = due
	changed, err := c.hmap.setLearned(u.Scheme, u.Host, rule)
	if err != nil {
		// A loop is the usual answer to mirrors that serve the declaring
		// site's robots.txt (each naming the others): not worth a warning.
		lvl := slog.LevelWarn
		if errors.Is(err, errHostLoop) {
			lvl = slog.LevelInfo
		}
		c.log.Log(context.Background(), lvl, "host rewrite refused", "origin", origin, "to", encodeStoredRule(rule), "err", err)
		return
	}
	if !changed {
		return
	}
	c.hmap.rules.WithLabelValues("learned").Inc()
	// The stored form holds the targets setLearned kept.
	c.hmap.mu.RLock()
	stored, _ := c.hmap.findLearnedLocked(u.Scheme, u.Host)
	c.hmap.mu.RUnlock()
	v := encodeStoredRule(&stored)
	c.log.Info("host rewrite learned", "origin", origin, "rule", v)
	// Durable with the frontier's next synced commit.
	if err := c.hostRules.SetNoSync([]byte(origin), []byte(v)); err != nil {
		c.log.Warn("host rewrite not stored", "origin", origin, "err", err)
	}
}

// acceptHostTarget decides whether robots.txt may move u's origin to t:
// t must be in scope, or share the registrable domain of an in-scope u
// (www.example.com and example.com), in which case t's host joins the
// seed hosts so that the move does not take the site out of the crawl.
func (c *Crawler) acceptHostTarget(u, t *url.URL, source string) bool {
	if c.scope.inScope(t) {
		return true
	}
	if c.scope.excluded(t) || !c.scope.inScope(u) {
		c.log.Info("robots.txt host rewrite ignored: target out of scope", "origin", u.Scheme+"://"+u.Host, "to", t.Host, "source", source)
		return false
	}
	du, err1 := urlnorm.Key(u, urlnorm.ByDomain)
	dt, err2 := urlnorm.Key(t, urlnorm.ByDomain)
	if err1 != nil || err2 != nil || du != dt {
		c.log.Info("robots.txt host rewrite ignored: target out of scope and in another domain", "origin", u.Scheme+"://"+u.Host, "to", t.Host, "source", source)
		return false
	}
	h := t.Hostname()
	c.scope.addSeedHost(h)
	if err := c.seedsKV.SetNoSync([]byte(h), nil); err != nil {
		c.log.Warn("seed host not stored", "host", h, "err", err)
	}
	return true
}

// hostRewrites returns the URLs moved this run (Summary.HostRewrites).
func (c *Crawler) hostRewrites() int64 {
	if c.hmap == nil {
		return 0
	}
	return c.hmap.moved.Load()
}
