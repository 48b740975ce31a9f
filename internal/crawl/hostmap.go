package crawl

// Host rewriting (package hostmap has the rules and their reasons): the
// crawler builds the map from the operator's duplicate-hosts list and the
// rules its store kept, moves every URL it queues or leases (Resolve),
// and hands the map the Host and Mirror-site lines of every robots.txt
// the gate reads for an origin (Learn), storing what it learned so that a
// resumed crawl applies it before the host is contacted again.
//
// URLs queued under a host before its rule was known (seeds, links found
// before its robots.txt was read, a resumed crawl's queue) are not
// fetched: when leased they are completed without a request (crawl.log
// status -5002, annotation host-rewrite:to=HOST) and their rewritten URL
// is queued instead, as a redirect is a link. Fetching them once would
// spend a request per URL on exactly the duplicate a crawler should
// avoid.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/hostmap"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	// defaultMaxHostRewrites is Config.MaxHostRewrites' default.
	defaultMaxHostRewrites = 100_000

	// hostMapBucket holds the rules learned from robots.txt files, so a
	// resumed crawl applies them before the host is contacted again: key
	// "scheme://authority" of the origin, value hostmap.Map.Stored's form.
	hostMapBucket = "C/hostmap/"

	// mdMoved is the URL metadata key holding the host a URL was moved
	// from.
	mdMoved = "moved"

	// Crawl log annotations.
	annotationMovedTo   = "host-rewrite:to="
	annotationMovedFrom = "host-rewrite:from="
)

// openHostMap builds the host map from the configuration and the rules
// persisted by earlier runs, and registers its metrics. Called by open.
func (c *Crawler) openHostMap() error {
	ops, err := hostmap.ParseDuplicateHosts(c.cfg.DuplicateHosts)
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	c.hmap = hostmap.New(c.norm, max(c.cfg.MaxHostRewrites, 0), c.now)
	for _, r := range ops {
		c.hmap.AddOperator(r)
	}
	c.hostMoves = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_host_rewrites_total",
		Help: "URLs moved to another host (robots Host, REGP Mirror-site, duplicate-hosts), by source."}, []string{"source"})
	c.hostRuleEvents = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_host_rewrite_rules_total",
		Help: "Host rewrite rules learned from robots.txt files, or dropped when a later robots.txt no longer had them."}, []string{"event"})
	c.metrics.reg.MustRegister(c.hostMoves, c.hostRuleEvents)
	c.hostRules = c.db.Bucket(hostMapBucket)
	// Rules of an earlier run are due at once: the first URL of each such
	// origin re-reads its robots.txt before the rule is trusted again.
	due := c.now()
	return c.hostRules.Scan(nil, func(k, v []byte) error {
		if _, err := c.hmap.Restore(string(k), string(v), due); err != nil {
			c.log.Warn("stored host rewrite ignored", "origin", string(k), "rule", string(v), "err", err)
		}
		return nil // a value it cannot read is not ours to fail the crawl on
	})
}

// moveHost returns u rewritten by the host map and the host it was moved
// from, or u and "" when it stays. Every move is counted. A discovered
// URL of an origin whose learned rule is due may stay (probePeek).
func (c *Crawler) moveHost(u *url.URL) (*url.URL, string) {
	return c.moveHostProbe(u, hostmap.ProbePeek)
}

func (c *Crawler) moveHostProbe(u *url.URL, mode hostmap.ProbeMode) (*url.URL, string) {
	if c.hmap == nil || u == nil {
		return u, ""
	}
	nu, source, loop := c.hmap.Resolve(u, mode)
	if loop {
		c.log.Debug("host rewrite loop not followed", "url", u.String())
	}
	if nu == nil {
		return u, ""
	}
	c.hostMoved.Add(1)
	c.hostMoves.WithLabelValues(source).Inc()
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
		if h, _, loop = c.hmap.Resolve(home, hostmap.ProbeNone); h != nil {
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
// rewritten URL is queued in its place. It reports whether it did so,
// with the URL's acknowledgement for the acker; permit, when not nil, is
// released unused. Before the gate (permit nil)
// a URL whose origin's learned rule is due may stay, to go through the
// gate as the probe that refreshes its robots.txt; after the gate
// (permit set) the rule, just re-checked, is applied as it stands.
func (c *Crawler) moveLeased(wid int, l frontier.Lease, u *url.URL, permit *politeness.Permit) (next, bool) {
	if c.hmap == nil || c.hmap.Len() == 0 {
		return next{}, false
	}
	mode := hostmap.ProbeNone
	if permit == nil {
		mode = hostmap.ProbeClaim
	}
	nu, from := c.moveHostProbe(u, mode)
	if from == "" {
		return next{}, false
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
		return c.complete(l, nil, e, -1), true
	}
	var via *url.URL // the link's page, whose numbers nu inherits (traps.NumberedFrom)
	if ref := md1(l.Metadata, mdVia); ref != "" {
		via, _ = url.Parse(ref)
	}
	if v := c.tr.CheckURL(nu.Hostname(), nu, via, raw, l.Depth); !v.OK() {
		c.cut(l, raw, md1(l.Metadata, mdPath), v)
		return c.complete(l, nil, e, -1), true
	}
	md := withMoved(l.Metadata, from)
	delete(md, mdTry)
	item := frontier.Item{Info: frontier.URLInfo{URL: raw, Key: c.queueKey(nu), CrawlID: c.cfg.CrawlID,
		Depth: l.Depth, Priority: l.Priority, Metadata: md}}
	return c.complete(l, []frontier.Item{item}, e, -1), true
}

// robotsRefreshed is the gate's report of a robots.txt result stored
// (politeness.Backend.RobotsStored): the origin's rule is re-read at its
// next permit (recheckHostRules).
func (c *Crawler) robotsRefreshed(origin string) {
	if c.hmap != nil {
		c.hmap.NoteRefreshed(origin)
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
	if !c.hmap.Recheck(u) {
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
// read them, to the origin's rule (hostmap.Map.Learn): a 2xx file sets or
// clears it; 4xx, 401 and 403 mean no rules at all (RFC 9309 §2.3.1.3)
// and drop it; 5xx and network errors keep the last known rule (RFC 9309
// §2.3.1.4), to be checked again when the entry expires. The change is
// logged, counted and stored (bucket C/hostmap/).
func (c *Crawler) learnFromRobots(u *url.URL, r politeness.Rules) {
	if c.hmap == nil {
		return
	}
	c.hmap.Forget(politeness.Origin(u)) // r is as new as any noted fetch
	e := r.Entry
	var d hostmap.Directives
	why := ""
	switch e.Result {
	case politeness.RobotsOK:
		d.Due = e.Expires
		if boolOr(c.cfg.RobotsHost, true) && r.File != nil {
			d.Host = r.File.Host()
		}
		if boolOr(c.cfg.MirrorSites, true) && r.Group != nil {
			d.Mirrors = r.Group.Extensions().MirrorSites
		}
		why = "robots.txt no longer names another host"
	case politeness.RobotsNotFound, politeness.RobotsUnauthorized:
		why = fmt.Sprintf("robots.txt answers %d", e.Status)
	default:
		d.Keep, d.Due = true, e.Expires
	}
	c.learn(u, d, why)
}

// learn hands an origin's directives to the host map, then logs, counts
// and stores what changed. why says why a rule would be dropped.
func (c *Crawler) learn(u *url.URL, d hostmap.Directives, why string) {
	origin := u.Scheme + "://" + u.Host
	change, err := c.hmap.Learn(u, d, func(t *url.URL, source string) bool { return c.acceptHostTarget(u, t, source) })
	if err != nil {
		// A loop is the usual answer to mirrors that serve the declaring
		// site's robots.txt (each naming the others): not worth a warning.
		lvl := slog.LevelWarn
		if errors.Is(err, hostmap.ErrLoop) {
			lvl = slog.LevelInfo
		}
		c.log.Log(context.Background(), lvl, "host rewrite refused", "origin", origin, "host", d.Host, "mirrors", d.Mirrors, "err", err)
		return
	}
	switch change {
	case hostmap.Dropped:
		c.hostRulesDropped.Add(1)
		c.hostRuleEvents.WithLabelValues("dropped").Inc()
		c.log.Info("host rewrite dropped: URLs stay on the origin", "origin", origin, "why", why)
		if err := c.hostRules.Delete([]byte(origin)); err != nil {
			c.log.Warn("host rewrite not deleted from the store", "origin", origin, "err", err)
		}
	case hostmap.Learned:
		c.hostRuleEvents.WithLabelValues("learned").Inc()
		v, _ := c.hmap.Stored(u) // the targets Learn kept
		c.log.Info("host rewrite learned", "origin", origin, "rule", v)
		// Durable with the frontier's next synced commit.
		if err := c.hostRules.SetNoSync([]byte(origin), []byte(v)); err != nil {
			c.log.Warn("host rewrite not stored", "origin", origin, "err", err)
		}
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
	h := c.scope.key(t)
	c.scope.addSeedHost(h)
	if err := c.seedsKV.SetNoSync([]byte(h), nil); err != nil {
		c.log.Warn("seed host not stored", "host", h, "err", err)
	}
	return true
}

// hostRewrites returns the URLs moved this run (Summary.HostRewrites).
func (c *Crawler) hostRewrites() int64 {
	return c.hostMoved.Load()
}
