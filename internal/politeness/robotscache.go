package politeness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// robotsView is a RobotsEntry made ready to answer: the rules in force.
type robotsView struct {
	entry RobotsEntry
	// file is the robots.txt in force, parsed once here (AllowAll,
	// DisallowAll for the synthetic answers); group is our agent's group.
	file  *robots.File
	group *robots.Group
	// blocked: everything is disallowed (unavailable with no usable good
	// copy, or 401/403 in disallow mode).
	blocked bool
	// retryAt is when a blocked origin's robots.txt is asked again; zero
	// means waiting does not help (401/403).
	retryAt time.Time
	// staleUntil, when set, is when the good copy in force (Good) becomes
	// too old to use (RFC 9309 §2.3.1.4).
	staleUntil time.Time
	why        string
}

// fresh reports whether v may be used at now without asking again.
func (v *robotsView) fresh(now time.Time) bool {
	if v == nil || !now.Before(v.entry.Expires) {
		return false
	}
	return v.staleUntil.IsZero() || now.Before(v.staleUntil)
}

// errTooManyRedirects ends a robots.txt fetch that redirects more than
// RobotsConfig.MaxRedirects times.
var errTooManyRedirects = errors.New("politeness: too many robots.txt redirects")

// robotsClient returns a copy of c (or a default client) that does not
// follow redirects itself: fetchRobots follows them hop by hop, each hop
// under its own host's slot.
func robotsClient(c *http.Client) *http.Client {
	var cl http.Client
	if c != nil {
		cl = *c
	}
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cl
}

// buildView turns an entry into the rules in force at now.
func (g *Gate) buildView(e RobotsEntry, now time.Time) *robotsView {
	v := &robotsView{entry: e}
	// The file's own URL resolves relative Sitemap lines; the egress
	// addresses in ParseOptions make Ip-allow and Ip-disallow match.
	opts := g.cfg.ParseOptions
	opts.URL = e.Origin + "/robots.txt"
	switch e.Result {
	case RobotsOK:
		v.file = robots.ParseOptions(e.Body, opts)
	case RobotsUnauthorized:
		if g.cfg.Robots.Unauthorized == UnauthorizedAllow {
			v.file = robots.AllowAll()
			break
		}
		v.blocked = true
		v.why = fmt.Sprintf("robots.txt of %s answered %d: all URLs disallowed (401/403 read as \"disallow all\")", e.Origin, e.Status)
	case RobotsUnavailable:
		if len(e.Good) > 0 && now.Sub(e.GoodFetched) <= g.cfg.Robots.StaleMax {
			v.file = robots.ParseOptions(e.Good, opts)
			v.staleUntil = e.GoodFetched.Add(g.cfg.Robots.StaleMax)
			break
		}
		v.blocked = true
		v.retryAt = e.Expires
		what := e.Err
		if what == "" {
			what = fmt.Sprintf("status %d", e.Status)
		}
		v.why = fmt.Sprintf("robots.txt of %s unavailable (%s): all URLs disallowed until it can be fetched (RFC 9309 §2.3.1.4)", e.Origin, what)
	default: // RobotsNotFound and anything unknown read from a store
		v.file = robots.AllowAll()
	}
	if v.blocked {
		v.file = robots.DisallowAll()
	}
	v.group = v.file.Group(g.cfg.Agent)
	return v
}

// cachedView returns the origin's view from memory or the store, fresh or
// not; nil when there is none (store errors count as none).
func (g *Gate) cachedView(ctx context.Context, origin string, now time.Time) *robotsView {
	v, _ := g.loadView(ctx, origin, now)
	return v
}

// loadView returns the origin's view from memory, else from the store.
func (g *Gate) loadView(ctx context.Context, origin string, now time.Time) (*robotsView, error) {
	return g.readView(ctx, origin, now, false)
}

// readView is loadView; latest reads the store even when the copy in
// memory is fresh, to see a fetch by another process (or gate) at once.
func (g *Gate) readView(ctx context.Context, origin string, now time.Time, latest bool) (*robotsView, error) {
	if origin == "" {
		return nil, nil
	}
	g.mu.Lock()
	v := g.mu.robots[origin]
	g.mu.Unlock()
	if v.fresh(now) && !latest {
		return v, nil
	}
	e, err := g.rstore.GetRobots(ctx, origin)
	if errors.Is(err, ErrNotFound) {
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("politeness: robots store: %w", err)
	}
	if v != nil && !e.Fetched.After(v.entry.Fetched) {
		return v, nil
	}
	nv := g.buildView(e, now)
	g.cacheView(nv)
	return nv, nil
}

func (g *Gate) cacheView(v *robotsView) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.mu.robots[v.entry.Origin]; !ok && len(g.mu.robots) >= g.cfg.Robots.MaxCached {
		for k := range g.mu.robots { // drop an arbitrary one; the store keeps it
			delete(g.mu.robots, k)
			break
		}
	}
	g.mu.robots[v.entry.Origin] = v
}

// refreshed is what one (shared) robots.txt refresh yields.
type refreshed struct {
	view    *robotsView
	blocked *Decision
}

// robotsFor returns the rules in force for t's origin, fetching robots.txt
// if needed (once per origin however many callers ask). When a fetch is
// needed but the key's slot is busy, blocked is the slot's Decision and
// view is the expired copy, if any.
func (g *Gate) robotsFor(ctx context.Context, t target) (view *robotsView, blocked *Decision, err error) {
	now := g.now()
	v, err := g.loadView(ctx, t.origin, now)
	if err != nil {
		return nil, nil, err
	}
	if v.fresh(now) {
		return v, nil, nil
	}
	ch := g.sf.DoChan(t.origin, func() (any, error) {
		// The fetch outlives the first caller's ctx: others share it.
		// Each hop of a redirect chain may wait for its host's slot and
		// takes up to FetchTimeout.
		budget := time.Duration(g.cfg.Robots.MaxRedirects+1)*g.cfg.Robots.FetchTimeout + releaseTimeout
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
		defer cancel()
		return g.refreshRobots(fctx, t, v)
	})
	select {
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("politeness: robots.txt of %s: %w", t.origin, context.Cause(ctx))
	case r := <-ch:
		if r.Err != nil {
			return nil, nil, r.Err
		}
		res := r.Val.(refreshed)
		if res.blocked != nil {
			b := *res.blocked
			return res.view, &b, nil
		}
		return res.view, nil, nil
	}
}

// refreshRobots fetches t.origin's robots.txt under t.key's slot.
func (g *Gate) refreshRobots(ctx context.Context, t target, old *robotsView) (refreshed, error) {
	now := g.now()
	// Another process may have fetched it meanwhile.
	if v, err := g.loadView(ctx, t.origin, now); err != nil {
		return refreshed{}, err
	} else if v.fresh(now) {
		return refreshed{view: v}, nil
	} else if v != nil {
		old = v
	}
	delays, err := g.delays(ctx, t.key, old, now)
	if err != nil {
		return refreshed{}, err
	}
	lease := max(g.cfg.Lease, g.cfg.Robots.FetchTimeout+releaseTimeout)
	p, d, err := g.acquire(ctx, target{url: t.origin + "/robots.txt", key: t.key}, delays, lease, false)
	if err != nil {
		return refreshed{}, err
	}
	if p == nil {
		return refreshed{view: old, blocked: &d}, nil
	}
	// Re-check under the slot: a fetch by another process ends before
	// its slot frees, so this read sees it.
	if v, err := g.loadView(ctx, t.origin, g.now()); err != nil {
		_ = p.Release()
		return refreshed{}, err
	} else if v.fresh(g.now()) {
		_ = p.Release()
		return refreshed{view: v}, nil
	} else if v != nil {
		old = v
	}
	start := g.now()
	// fetchRobots ends p (and the slot of every redirect hop): the first
	// page waits one delay more.
	fr := g.fetchRobots(ctx, t.origin, p)
	took := g.now().Sub(start)
	var prev *RobotsEntry
	if old != nil {
		prev = &old.entry
	}
	e := g.classify(t.origin, prev, fr, g.now())
	if err := g.rstore.PutRobots(ctx, e); err != nil {
		return refreshed{}, fmt.Errorf("politeness: robots store: %w", err)
	}
	v := g.buildView(e, g.now())
	g.cacheView(v)
	g.obs.RobotsFetched(t.origin, e.Result, e.Result == RobotsUnavailable && !v.blocked, took)
	g.stored(t.origin)
	if err := g.noteRobotsDelay(ctx, t.key, v, g.now()); err != nil {
		return refreshed{}, err
	}
	if err := g.keepRedirectTarget(ctx, t.origin, fr, took); err != nil {
		return refreshed{}, err
	}
	return refreshed{view: v}, nil
}

// keepRedirectTarget stores what a robots.txt redirect chain ended on as
// the robots.txt of that host too, when it was exactly another origin's
// /robots.txt (http://a.example/robots.txt → https://www.a.example/robots.txt,
// the common case): the document is that host's own robots.txt, so its
// Crawl-delay binds the host's next request at once, and no second fetch
// of the same file is made. Without this, the host's own first robots.txt
// fetch came at the configured delay after the hop, though the hop had
// just shown a longer Crawl-delay. A host whose rules are fresh is left
// alone; a chain that failed or did not end on a response stores nothing.
func (g *Gate) keepRedirectTarget(ctx context.Context, origin string, fr fetchResult, took time.Duration) error {
	f := fr.final
	if f == nil || fr.err != nil || fr.tooManyRedirects || f.Path != "/robots.txt" || f.RawQuery != "" || f.User != nil {
		return nil
	}
	other := Origin(f)
	if other == origin {
		return nil
	}
	t, err := g.target(ctx, f)
	if err != nil {
		return nil // not a URL the gate would fetch: nothing to keep
	}
	now := g.now()
	old, err := g.loadView(ctx, other, now)
	if err != nil {
		return err
	}
	if old.fresh(now) {
		return nil
	}
	var prev *RobotsEntry
	if old != nil {
		prev = &old.entry
	}
	e := g.classify(other, prev, fr, now)
	if err := g.rstore.PutRobots(ctx, e); err != nil {
		return fmt.Errorf("politeness: robots store: %w", err)
	}
	v := g.buildView(e, now)
	g.cacheView(v)
	g.obs.RobotsFetched(other, e.Result, e.Result == RobotsUnavailable && !v.blocked, took)
	g.stored(other)
	return g.noteRobotsDelay(ctx, t.key, v, now)
}

// fetchResult is the raw outcome of one robots.txt fetch.
type fetchResult struct {
	status     int
	body       []byte
	retryAfter time.Duration
	err        error
	// tooManyRedirects: the chain was longer than MaxRedirects.
	tooManyRedirects bool
	// final is the URL of the last request made (the end of a redirect
	// chain, or origin/robots.txt).
	final *url.URL
}

// fetchRobots GETs origin/robots.txt under p, the slot of origin's key,
// following up to MaxRedirects redirects (RFC 9309 §2.3.1.2; the rules
// still apply to origin) and reading at most robots.MaxSize bytes of a 2xx
// body. Hops on the same key stay under the slot held, as one robots.txt
// transaction; a hop to another key is a request to another host, so it
// waits for that host's slot and delay like any other request (the held
// permit is done first, so no slot is held while waiting for another).
// fetchRobots ends every permit it holds.
func (g *Gate) fetchRobots(ctx context.Context, origin string, p *Permit) fetchResult {
	next, key, start := origin+"/robots.txt", p.Key(), g.now()
	done := func(fr fetchResult) {
		_ = p.Done(Outcome{Status: fr.status, Err: fr.err, Duration: g.now().Sub(start), RetryAfter: fr.retryAfter})
	}
	for hop := 0; ; hop++ {
		fr, loc := g.getRobots(ctx, next)
		if loc == nil {
			done(fr)
			fr.final, _ = url.Parse(next)
			return fr
		}
		if hop >= g.cfg.Robots.MaxRedirects {
			done(fr)
			return fetchResult{status: fr.status, tooManyRedirects: true, err: errTooManyRedirects}
		}
		t, err := g.target(ctx, loc)
		if err != nil {
			done(fr)
			return fetchResult{err: fmt.Errorf("politeness: robots.txt redirect: %w", err)}
		}
		if t.key != key {
			done(fr)
			if p, err = g.waitSlot(ctx, t); err != nil {
				return fetchResult{err: fmt.Errorf("politeness: robots.txt redirect to %s: %w", loc.Redacted(), err)}
			}
			key, start = t.key, g.now()
		}
		next = loc.String()
	}
}

// getRobots makes one request of a robots.txt fetch. loc is the resolved
// target of a redirect (3xx with a usable http(s) Location), else nil.
func (g *Gate) getRobots(ctx context.Context, rawURL string) (fr fetchResult, loc *url.URL) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Robots.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fetchResult{err: fmt.Errorf("politeness: robots.txt request: %w", err)}, nil
	}
	req.Header.Set("User-Agent", g.cfg.UserAgent)
	resp, err := g.client.Do(req)
	if err != nil {
		return fetchResult{err: err}, nil
	}
	defer resp.Body.Close()
	fr = fetchResult{status: resp.StatusCode, retryAfter: RetryAfter(resp.Header, g.now())}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		// RFC 9309 §2.5: parse at least 500 KiB; the rest is ignored.
		fr.body, err = io.ReadAll(io.LimitReader(resp.Body, robots.MaxSize))
		if err != nil {
			fr.err = fmt.Errorf("politeness: reading robots.txt: %w", err)
		}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		if l, err := resp.Location(); err == nil && (l.Scheme == "http" || l.Scheme == "https") && l.Host != "" {
			return fr, l
		}
	}
	return fr, nil
}

// waitSlot waits, bounded by ctx, for a slot of t's key, for a request
// that is not a page (a robots redirect hop): the key's delay comes from its
// configuration and, when already cached, its own robots.txt; none is
// fetched for it.
func (g *Gate) waitSlot(ctx context.Context, t target) (*Permit, error) {
	lease := max(g.cfg.Lease, g.cfg.Robots.FetchTimeout+releaseTimeout)
	for {
		// The target host's own rules (Crawl-delay, Request-rate), if
		// known, set its delay; no fetch is started for them.
		now := g.now()
		view, err := g.loadView(ctx, t.origin, now)
		if err != nil {
			return nil, err
		}
		delays, err := g.delays(ctx, t.key, view, now)
		if err != nil {
			return nil, err
		}
		p, d, err := g.acquire(ctx, t, delays, lease, false)
		if err != nil || p != nil {
			return p, err
		}
		sleep := d.RetryAfter
		if d.Reason == ReasonConcurrency {
			sleep = min(sleep, g.cfg.PollInterval)
		}
		timer := time.NewTimer(max(sleep, time.Millisecond))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("politeness: wait for %s: %w", t.key, context.Cause(ctx))
		case <-timer.C:
		}
	}
}

// classify turns a fetch into the entry to store (RFC 9309 §2.3.1).
func (g *Gate) classify(origin string, prev *RobotsEntry, fr fetchResult, now time.Time) RobotsEntry {
	rc := g.cfg.Robots
	e := RobotsEntry{Origin: origin, Status: fr.status, Fetched: now}
	if fr.err != nil {
		e.Err = fr.err.Error()
	}
	s := fr.status
	switch {
	case fr.tooManyRedirects:
		// §2.3.1.2: more redirects than followed → "unavailable" (4xx).
		e.Result = RobotsNotFound
	case fr.err != nil || s == http.StatusTooManyRequests || s >= 500:
		e.Result = RobotsUnavailable
	case s >= 200 && s < 300:
		e.Result = RobotsOK
		e.Body = fr.body
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Result = RobotsUnauthorized
	default:
		// Other 4xx, and 3xx that could not be followed (no Location):
		// no usable robots.txt, allow all (§2.3.1.3).
		e.Result = RobotsNotFound
	}
	switch e.Result {
	case RobotsOK:
		e.Expires = now.Add(rc.TTL)
	case RobotsNotFound, RobotsUnauthorized:
		e.Expires = now.Add(rc.NegativeTTL)
	case RobotsUnavailable:
		if prev != nil {
			e.Failures = prev.Failures
			switch {
			case prev.Result == RobotsOK:
				e.Good, e.GoodFetched = prev.Body, prev.Fetched
			case prev.Result == RobotsUnavailable:
				e.Good, e.GoodFetched = prev.Good, prev.GoodFetched
			}
		}
		e.Failures++
		wait := backoffFor(e.Failures, rc.RetryBase, rc.RetryMax)
		wait = max(wait, min(fr.retryAfter, rc.TTL))
		e.Expires = now.Add(wait)
	}
	return e
}
