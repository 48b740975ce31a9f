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

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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

	// hostMapBucket holds the rules learned from robots.txt files, so a
	// resumed crawl applies them before the host is contacted again: key
	// "scheme://authority" of the origin, value "SOURCE TARGET-URL".
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
	// keepPort keeps the URL's port when to has none (an operator alias
	// written without scheme and port names only another host name).
	keepPort bool
	source   string
}

// identity reports whether the rule leaves u where it is (an operator's
// "host=host" pin).
func (r *hostRule) identity(u *url.URL) bool {
	return r.to.host == u.Hostname() && (r.to.scheme == "" || r.to.scheme == u.Scheme) &&
		(r.keepPort && r.to.port == "" || r.to.port == u.Port())
}

// apply returns u moved by r, normalized (a default port is dropped).
func (r *hostRule) apply(u *url.URL, norm urlnorm.Options) (*url.URL, error) {
	nu := *u
	if r.to.scheme != "" {
		nu.Scheme = r.to.scheme
	}
	port := r.to.port
	if port == "" && r.keepPort {
		port = u.Port()
	}
	nu.Host = joinHost(r.to.host, port)
	return urlnorm.Normalize(nu.String(), norm)
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
		if _, _, loop := m.resolve(u); loop {
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
	max     int          // rules learned from robots.txt, at most
	n       atomic.Int64 // rules held; 0 skips the lock
	learned atomic.Int64 // rules learned from robots.txt (bounded by max)
	moved   atomic.Int64 // URLs moved this run
	metric  *prometheus.CounterVec

	// mu guards byAuthority and byHost.
	mu sync.RWMutex
	// byAuthority: rules for one "host[:port]" as a normalized URL
	// writes it (robots.txt rules, operator aliases with a port).
	byAuthority map[string][]hostRule
	// byHost: operator aliases without a port, for every port.
	byHost map[string]hostRule
}

func newHostMap(norm urlnorm.Options, maxLearned int) *hostMap {
	return &hostMap{norm: norm, max: maxLearned, byAuthority: map[string][]hostRule{}, byHost: map[string]hostRule{},
		metric: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_host_rewrites_total",
			Help: "URLs moved to another host (robots Host, REGP Mirror-site, duplicate-hosts), by source."}, []string{"source"})}
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

// findLocked returns the rule for u. The operator's rules come first
// (host:port, then host), then the one robots.txt of u's origin gave.
func (m *hostMap) findLocked(u *url.URL) (hostRule, bool) {
	rules := m.byAuthority[u.Host]
	for _, r := range rules {
		if r.source == sourceOperator {
			return r, true
		}
	}
	if r, ok := m.byHost[u.Hostname()]; ok {
		return r, true
	}
	for _, r := range rules {
		if r.source != sourceOperator && r.scheme == u.Scheme {
			return r, true
		}
	}
	return hostRule{}, false
}

// resolve follows the rules from u, at most maxRewriteChain of them. It
// returns the final URL and the source of the first rule (nil when u stays
// where it is); loop is true when the rules lead back to a host already
// passed, in which case u is not moved.
func (m *hostMap) resolve(u *url.URL) (moved *url.URL, source string, loop bool) {
	if m.n.Load() == 0 {
		return nil, "", false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.resolveLocked(u)
}

func (m *hostMap) resolveLocked(u *url.URL) (*url.URL, string, bool) {
	cur := u
	var seen [maxRewriteChain + 1]string
	seen[0] = u.Scheme + "://" + u.Host
	source := ""
	for i := range maxRewriteChain {
		r, ok := m.findLocked(cur)
		if !ok || r.identity(cur) {
			break
		}
		next, err := r.apply(cur, m.norm)
		if err != nil {
			break
		}
		o := next.Scheme + "://" + next.Host
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

// errHostMapFull and errHostLoop refuse a learned rule.
var (
	errHostMapFull = errors.New("crawl: host rewrite limit reached")
	errHostLoop    = errors.New("crawl: host rewrite would loop")
)

// setLearned sets (to non-nil) or removes (to nil) the robots.txt rule of
// origin scheme://authority. It reports whether anything changed.
func (m *hostMap) setLearned(scheme, authority string, to *hostRule) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rules := m.byAuthority[authority]
	idx := -1
	for i, r := range rules {
		if r.source != sourceOperator && r.scheme == scheme {
			idx = i
		}
	}
	if to == nil {
		if idx < 0 {
			return false, nil
		}
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
	if idx >= 0 && rules[idx] == r {
		return false, nil
	}
	if idx < 0 && m.learned.Load() >= int64(m.max) {
		return false, errHostMapFull
	}
	old := append([]hostRule(nil), rules...)
	if idx >= 0 {
		rules[idx] = r
	} else {
		rules = append(rules, r)
		m.n.Add(1)
		m.learned.Add(1)
	}
	m.byAuthority[authority] = rules
	// Refuse a rule that closes a loop (a says b, b says a): the origin
	// must still resolve somewhere else than back to itself.
	if _, _, loop := m.resolveLocked(&url.URL{Scheme: scheme, Host: authority, Path: "/"}); loop {
		m.byAuthority[authority] = old
		if idx < 0 {
			m.n.Add(-1)
			m.learned.Add(-1)
		}
		if len(old) == 0 {
			delete(m.byAuthority, authority)
		}
		return false, errHostLoop
	}
	return true, nil
}

// openHostMap builds the host map from the configuration and the rules
// persisted by earlier runs, and registers its metric. Called by open.
func (c *Crawler) openHostMap() error {
	ops, err := parseDuplicateHosts(c.cfg.DuplicateHosts)
	if err != nil {
		return err
	}
	c.hmap = newHostMap(c.norm, max(c.cfg.MaxHostRewrites, 0))
	for _, r := range ops {
		c.hmap.addOperator(r)
	}
	c.metrics.reg.MustRegister(c.hmap.metric)
	c.hostRules = c.db.Bucket(hostMapBucket)
	return c.hostRules.Scan(nil, func(k, v []byte) error {
		origin, err := url.Parse(string(k))
		if err != nil || origin.Host == "" {
			return nil // not ours to fail the crawl on; ignored
		}
		source, target, _ := strings.Cut(string(v), " ")
		t, err := url.Parse(target)
		if err != nil || t.Host == "" || (source != sourceHost && source != sourceMirror) {
			return nil
		}
		r := &hostRule{to: hostSpec{scheme: t.Scheme, host: t.Hostname(), port: t.Port()}, source: source}
		if _, err := c.hmap.setLearned(origin.Scheme, origin.Host, r); err != nil {
			c.log.Warn("stored host rewrite ignored", "origin", string(k), "target", target, "err", err)
		}
		return nil
	})
}

// moveHost returns u rewritten by the host map and the host it was moved
// from, or u and "" when it stays. Every move is counted.
func (c *Crawler) moveHost(u *url.URL) (*url.URL, string) {
	if c.hmap == nil || u == nil {
		return u, ""
	}
	nu, source, loop := c.hmap.resolve(u)
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
// permit, when not nil, is released unused.
func (c *Crawler) moveLeased(wid int, l frontier.Lease, u *url.URL, permit *politeness.Permit) bool {
	if c.hmap == nil || c.hmap.n.Load() == 0 {
		return false
	}
	nu, from := c.moveHost(u)
	if from == "" {
		return false
	}
	if permit != nil {
		_ = permit.Release()
	}
	raw := nu.String()
	e := &crawllog.Entry{Status: crawllog.StatusBlockedByProcessor, Size: -1, Thread: wid,
		Annotations: []string{annotationMovedTo + nu.Host}}
	// Scope is checked on the rewritten URL; a URL the rules send out of
	// scope is dropped (logged with the move, not fetched anywhere).
	if !c.scope.inScope(nu) {
		c.metrics.outOfScope.Inc()
		e.Annotations = append(e.Annotations, "out-of-scope")
		return c.complete(l, nil, e, -1)
	}
	if v := c.tr.CheckURL(nu.Hostname(), nu, raw, l.Depth); !v.OK() {
		c.cut(l, raw, md1(l.Metadata, mdPath), v)
		return c.complete(l, nil, e, -1)
	}
	md := withMoved(l.Metadata, from)
	delete(md, mdTry)
	item := frontier.Item{Info: frontier.URLInfo{URL: raw, Key: c.queueKey(nu), CrawlID: c.cfg.CrawlID,
		Depth: l.Depth, Priority: l.Priority, Metadata: md}}
	return c.complete(l, []frontier.Item{item}, e, -1)
}

// learnHostRules reads the Host and Mirror-site directives of the
// robots.txt of u's origin (f, and g its group for our agent) and sets
// or clears the origin's rule. Called once per host per run, at first
// contact.
func (c *Crawler) learnHostRules(u *url.URL, f *robots.File, g *robots.Group) {
	if c.hmap == nil || f == nil {
		return
	}
	var rule *hostRule
	var target *url.URL
	consider := func(value, source string) bool {
		spec, err := parseHostSpec(value, c.norm)
		if err != nil {
			c.log.Debug("robots.txt host value ignored", "origin", u.Scheme+"://"+u.Host, "source", source, "err", err)
			return false
		}
		// No scheme: the origin's; no port: the scheme's default
		// (RFC 1738 §3.1), as Yandex reads Host.
		r := hostRule{to: spec, source: source}
		if r.to.scheme == "" {
			r.to.scheme = u.Scheme
		}
		t, err := r.apply(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}, c.norm)
		if err != nil || (t.Scheme == u.Scheme && t.Host == u.Host) {
			return false // the origin names itself: it is the master
		}
		if !c.acceptHostTarget(u, t, source) {
			return false
		}
		r.to = hostSpec{scheme: t.Scheme, host: t.Hostname(), port: t.Port()}
		rule, target = &r, t
		return true
	}
	if boolOr(c.cfg.RobotsHost, true) && f.Host() != "" {
		consider(f.Host(), sourceHost)
	}
	if rule == nil && boolOr(c.cfg.MirrorSites, true) && g != nil {
		for i, m := range g.Extensions().MirrorSites {
			if i >= 16 || consider(m, sourceMirror) {
				break
			}
		}
	}
	origin := u.Scheme + "://" + u.Host
	changed, err := c.hmap.setLearned(u.Scheme, u.Host, rule)
	if err != nil {
		to := ""
		if target != nil {
			to = target.Host
		}
		c.log.Warn("host rewrite refused", "origin", origin, "to", to, "err", err)
		return
	}
	if !changed {
		return
	}
	if rule == nil {
		c.log.Info("host rewrite dropped: robots.txt no longer names another host", "origin", origin)
		if err := c.hostRules.Delete([]byte(origin)); err != nil {
			c.log.Warn("host rewrite not deleted from the store", "origin", origin, "err", err)
		}
		return
	}
	to := target.Scheme + "://" + target.Host
	c.log.Info("host rewrite learned", "origin", origin, "to", to, "source", rule.source)
	// Durable with the frontier's next synced commit.
	if err := c.hostRules.SetNoSync([]byte(origin), []byte(rule.source+" "+to)); err != nil {
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
