package politeness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Gate is the politeness authority of one process. It is safe for
// concurrent use; share one per process (several Gates on one Redis
// backend share the rules across processes).
type Gate struct {
	cfg    Config
	state  State
	rstore RobotsStore
	dstore DelayStore
	client *http.Client
	obs    Observer
	stored func(origin string)
	now    func() time.Time
	sf     singleflight.Group

	// pop and bw are the popularity tiers and bandwidth classes in force
	// (nil: off), swapped when the config file changes; meter holds this
	// process's download rates per key (bandwidth.go).
	pop   atomic.Pointer[loadedPopularity]
	bw    atomic.Pointer[BandwidthConfig]
	meter *bandwidthMeter

	// mu guards the in-process caches and waiter list below.
	mu struct {
		sync.Mutex
		robots     map[string]*robotsView // by origin
		delays     map[string]cachedDelay // by key, DefaultDelayKey included
		fileDelays map[string]DelayRule   // config-file layer, by key
		// fileDefault is the config file's default delay when it changed
		// after New (SetConfigDefaultDelay); nil means Config.DefaultDelay.
		fileDefault *time.Duration
		waiters     map[string]*waiter // by key
	}
}

type cachedDelay struct {
	e     DelayEntry
	found bool
	at    time.Time
}

// waiter lets Wait calls sleeping on a key wake when this process frees a
// slot of it, instead of polling.
type waiter struct {
	ch chan struct{}
	n  int
}

// maxCachedDelays bounds the in-process delay cache; it is cleared when
// full (entries are re-read from the store).
const maxCachedDelays = 100_000

// releaseTimeout bounds the State call of Permit.Done and Release, which
// take no context (the lease expires anyway if the call fails).
const releaseTimeout = 10 * time.Second

// New returns a Gate. cfg's zero fields take their defaults; nil Backend
// fields get memory implementations. New does no network I/O; it reads
// the popularity list file when cfg.Popularity.List is set.
func New(cfg Config, b Backend) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.Robots.Unauthorized = strings.ToLower(cfg.Robots.Unauthorized)
	g := &Gate{cfg: cfg, state: b.State, rstore: b.Robots, dstore: b.Delays, obs: b.Observer, stored: b.RobotsStored, now: b.Now}
	if g.now == nil {
		g.now = time.Now
	}
	if g.state == nil {
		g.state = NewMemoryState(g.now)
	}
	if g.rstore == nil {
		g.rstore = NewMemoryRobotsStore()
	}
	if g.dstore == nil {
		g.dstore = NewMemoryDelayStore()
	}
	if g.obs == nil {
		g.obs = nopObserver{}
	}
	if g.stored == nil {
		g.stored = func(string) {}
	}
	g.client = robotsClient(b.HTTPClient)
	g.mu.robots = make(map[string]*robotsView)
	g.mu.delays = make(map[string]cachedDelay)
	g.mu.waiters = make(map[string]*waiter)
	g.SetConfigDelays(cfg.Delays)
	g.meter = newBandwidthMeter()
	if err := g.SetConfigBandwidth(cfg.Bandwidth); err != nil {
		return nil, err
	}
	if err := g.SetConfigPopularity(cfg.Popularity); err != nil {
		return nil, err
	}
	return g, nil
}

// Config returns the configuration in force, defaults filled in.
func (g *Gate) Config() Config { return g.cfg }

type nopObserver struct{}

func (nopObserver) RobotsFetched(string, RobotsResult, bool, time.Duration) {}
func (nopObserver) Decided(Decision)                                        {}

// AskOption tunes one Wait, Try or Peek call.
type AskOption func(*askOptions)

type askOptions struct {
	lease time.Duration
}

// WithLease sets the lease of the Permit granted (the proxy's reserve=true
// uses short ones). d ≤ 0 means Config.Lease.
func WithLease(d time.Duration) AskOption {
	return func(o *askOptions) {
		if d > 0 {
			o.lease = d
		}
	}
}

// target is a URL taken apart for the gate.
type target struct {
	url    string
	key    string
	origin string
	path   string
}

func (g *Gate) target(ctx context.Context, u *url.URL) (target, error) {
	if u == nil {
		return target{}, errors.New("politeness: nil URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return target{}, fmt.Errorf("politeness: unsupported scheme %q in %q", u.Scheme, u.Redacted())
	}
	if u.Host == "" {
		return target{}, fmt.Errorf("politeness: no host in %q", u.Redacted())
	}
	key, err := g.cfg.KeyFunc(ctx, u)
	if err != nil {
		return target{}, fmt.Errorf("politeness: key of %q: %w", u.Redacted(), err)
	}
	if key == "" || len(key) > 1024 {
		return target{}, fmt.Errorf("politeness: bad key %q for %q", key, u.Redacted())
	}
	return target{url: u.String(), key: key, origin: Origin(u), path: u.RequestURI()}, nil
}

// Origin returns "scheme://host[:port]" of u, lower-cased, without a
// default port: the site whose robots.txt applies to u.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	}
	return scheme + "://" + host
}

// Try returns a Permit if u may be fetched now, else a Decision saying why
// not and how long to wait. It does not wait for the key, but it does fetch
// robots.txt when the origin's is missing or expired and the key's slot is
// free (that fetch takes the slot, so the Decision is then ReasonDelay).
// err is for bad URLs, backend failures and ctx.
func (g *Gate) Try(ctx context.Context, u *url.URL, opts ...AskOption) (*Permit, Decision, error) {
	t, err := g.target(ctx, u)
	if err != nil {
		return nil, Decision{}, err
	}
	p, d, err := g.ask(ctx, t, false, opts)
	if err == nil {
		g.obs.Decided(d)
	}
	return p, d, err
}

// Peek is Try without taking a slot: the Decision says whether a Permit
// would be granted now. Like Try, it may fetch robots.txt (taking the slot
// for that fetch).
func (g *Gate) Peek(ctx context.Context, u *url.URL) (Decision, error) {
	t, err := g.target(ctx, u)
	if err != nil {
		return Decision{}, err
	}
	_, d, err := g.ask(ctx, t, true, nil)
	return d, err
}

// Wait blocks until u may be fetched and returns the Permit. When
// robots.txt refuses u (ReasonRobots, or ReasonRobotsUnavailable) it
// returns a *DeniedError (see Denied) instead of waiting. Waiters are woken
// when this process frees a slot and poll at most every
// Config.PollInterval for slots held elsewhere; they are not served in
// arrival order.
func (g *Gate) Wait(ctx context.Context, u *url.URL, opts ...AskOption) (*Permit, error) {
	t, err := g.target(ctx, u)
	if err != nil {
		return nil, err
	}
	g.addWaiter(t.key)
	defer g.dropWaiter(t.key)
	for {
		ch := g.waiterChan(t.key)
		p, d, err := g.ask(ctx, t, false, opts)
		if err != nil {
			return nil, err
		}
		if p != nil {
			g.obs.Decided(d)
			return p, nil
		}
		if d.Reason == ReasonRobots || d.Reason == ReasonRobotsUnavailable {
			g.obs.Decided(d)
			return nil, &DeniedError{Decision: d}
		}
		sleep := d.RetryAfter
		if d.Reason == ReasonConcurrency {
			sleep = min(sleep, g.cfg.PollInterval)
		}
		// A floor keeps a mis-set clock from turning this into a spin.
		sleep = max(sleep, time.Millisecond)
		timer := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("politeness: wait for %s: %w", t.key, context.Cause(ctx))
		case <-timer.C:
		case <-ch:
			timer.Stop()
		}
	}
}

// ask is the common path of Try, Peek and Wait: decide, then say when
// asking again may succeed.
func (g *Gate) ask(ctx context.Context, t target, dry bool, opts []AskOption) (*Permit, Decision, error) {
	now := g.now()
	p, d, err := g.decide(ctx, t, dry, opts)
	switch {
	case err != nil:
	case d.Allowed:
		d.NextAllowed = now
	case d.RetryAfter >= 0:
		d.NextAllowed = now.Add(d.RetryAfter)
	}
	if p != nil {
		p.decision = d
	}
	return p, d, err
}

// decide answers one ask: robots.txt, visit windows, then the key's slot.
func (g *Gate) decide(ctx context.Context, t target, dry bool, opts []AskOption) (*Permit, Decision, error) {
	ao := askOptions{lease: g.cfg.Lease}
	for _, o := range opts {
		o(&ao)
	}
	d := Decision{URL: t.url, Key: t.key}
	now := g.now()
	view, blocked, err := g.robotsFor(ctx, t)
	if err != nil {
		return nil, d, err
	}
	if view != nil {
		// A blocked view whose refresh is waiting for the key's slot
		// (blocked != nil: a delay or a backoff, often the one the failed
		// robots.txt fetch itself set) is a "not yet", not a new failure:
		// robots.txt has not been asked again.
		if view.blocked && blocked == nil {
			d.Reason = ReasonRobotsUnavailable
			d.RetryAfter = Never
			if view.retryAt.After(now) {
				d.RetryAfter = view.retryAt.Sub(now)
			} else if !view.retryAt.IsZero() {
				d.RetryAfter = 0
			}
			d.Detail = view.why
			d.RobotsStatus = view.entry.Status
			return nil, d, nil
		}
		if !view.blocked && !view.group.Allowed(t.path) {
			d.Reason, d.RetryAfter = ReasonRobots, Never
			d.Detail = fmt.Sprintf("robots.txt of %s disallows this URL for %s", t.origin, g.cfg.Agent)
			return nil, d, nil
		}
	}
	if blocked != nil {
		// The slot is busy and robots.txt must be fetched first.
		blocked.URL = t.url
		return nil, *blocked, nil
	}
	if next := view.group.NextVisit(now); next.After(now) {
		d.Reason, d.RetryAfter = ReasonWindow, next.Sub(now)
		d.Delays, _ = g.delays(ctx, t.key, view, now)
		d.Detail = fmt.Sprintf("robots.txt visit window of %s opens at %s", t.origin, next.UTC().Format(time.RFC3339))
		return nil, d, nil
	}
	delays, err := g.delays(ctx, t.key, view, now)
	if err != nil {
		return nil, d, err
	}
	delays = effectiveDelay(g.withPath(delays, view, t.path, now))
	return g.acquire(ctx, t, delays, ao.lease, dry)
}

// withPath sets d.Path: REGP lets robots.txt give some paths their own
// Crawl-delay or Request-rate (nested blocks); a URL of such a path waits
// for it after the end of the key's last fetch, when it asks for more
// than the key's own delay.
func (g *Gate) withPath(d Delays, view *robotsView, path string, now time.Time) Delays {
	if view == nil || view.blocked || view.group == nil || path == "" {
		return d
	}
	if need := min(view.group.MinInterval(path, now), g.cfg.MaxCrawlDelay); need > max(d.Robots, d.Rate) {
		d.Path = need
	}
	return d
}

// acquire asks the State for a slot of t.key under delays.
func (g *Gate) acquire(ctx context.Context, t target, delays Delays, lease time.Duration, dry bool) (*Permit, Decision, error) {
	p, d, _, err := g.acquireGrant(ctx, t, delays, lease, dry)
	return p, d, err
}

func (g *Gate) acquireGrant(ctx context.Context, t target, delays Delays, lease time.Duration, dry bool) (*Permit, Decision, Grant, error) {
	d := Decision{URL: t.url, Key: t.key}
	base := delays.Configured
	if !delays.Override {
		base = max(delays.Configured, delays.Robots, delays.Rate, delays.Path)
	}
	req := AcquireRequest{Limit: g.cfg.MaxInFlight, Delay: base, Override: delays.Override, Lease: lease, DryRun: dry}
	if !dry {
		req.LeaseID = newLeaseID()
	}
	gr, err := g.state.Acquire(ctx, t.key, req)
	if err != nil {
		return nil, d, gr, fmt.Errorf("politeness: acquire %s: %w", t.key, err)
	}
	if !delays.Override {
		delays.Adaptive = gr.Adaptive
	}
	delays.Backoff = gr.Backoff
	d.Delays = effectiveDelay(delays)
	if !gr.OK {
		d.Reason, d.RetryAfter = gr.Reason, max(gr.Wait, 0)
		if gr.Reason == ReasonConcurrency {
			// gr.Wait is when the oldest lease expires (minutes), but a
			// fetch in flight usually ends far sooner: the earliest the
			// key can be asked again is one delay after it ends. Telling
			// callers the lease's end parked a host for two minutes (a
			// crawler's queue, a 429's Retry-After) whenever a robots.txt
			// redirect or another process held its slot for a moment.
			d.RetryAfter = min(d.RetryAfter, max(d.Delays.Effective, g.cfg.PollInterval))
		}
		switch gr.Reason {
		case ReasonBackoff:
			d.Detail = fmt.Sprintf("%s asked us to back off (429/503); %d ms left", t.key, d.RetryAfterMillis())
		case ReasonConcurrency:
			d.Detail = fmt.Sprintf("%s already has %d request(s) in flight", t.key, gr.InFlight)
		default:
			d.Detail = fmt.Sprintf("There must be a delay of %d milliseconds between each request.", d.Delays.Effective.Milliseconds())
		}
		return nil, d, gr, nil
	}
	d.Allowed = true
	if dry {
		return nil, d, gr, nil
	}
	now := g.now()
	p := &Permit{g: g, key: t.key, origin: t.origin, id: req.LeaseID, granted: now, deadline: now.Add(lease), decision: d}
	return p, d, gr, nil
}

func newLeaseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Permit is a lease on one of a key's slots. Call Done with the outcome
// of the fetch, or Release if no fetch was made. If neither is called
// before Deadline, the slot frees itself (counting as a fetch that ended
// then). Only the first Done or Release has an effect.
type Permit struct {
	g        *Gate
	key      string
	origin   string
	id       string
	granted  time.Time
	deadline time.Time
	decision Decision
	ended    atomic.Bool
	// endedAt and status are set by the first Done (status -1 for a
	// Release); Next reads them. The holder calls Done or Release, then
	// Next, from one goroutine: Next is not for concurrent use with them.
	endedAt time.Time
	status  int
}

// Key returns the politeness key the permit is for.
func (p *Permit) Key() string { return p.key }

// Deadline returns when the lease expires on its own.
func (p *Permit) Deadline() time.Time { return p.deadline }

// Decision returns the gate's answer that granted the permit (its Delays
// are the delays in force).
func (p *Permit) Decision() Decision { return p.decision }

// Done ends the permit after a fetch: the key's next fetch may start one
// effective delay from now; 429/503 grow the backoff (Retry-After
// honoured), any other HTTP answer resets it; a transport error leaves it.
// The error reports a backend failure; the lease then expires by itself.
func (p *Permit) Done(o Outcome) error {
	if !p.ended.CompareAndSwap(false, true) {
		return nil
	}
	g := p.g
	p.endedAt, p.status = g.now(), o.Status
	dur := o.Duration
	if dur <= 0 {
		dur = g.now().Sub(p.granted)
	}
	req := ReleaseRequest{LeaseID: p.id, Used: true, BackoffBase: g.cfg.BackoffBase, BackoffMax: g.cfg.BackoffMax}
	g.observeBandwidth(p.key, o, dur)
	if g.cfg.AdaptiveFactor > 0 && dur > 0 {
		req.Adaptive = min(time.Duration(float64(dur)*g.cfg.AdaptiveFactor), g.cfg.MaxAdaptiveDelay)
	}
	switch {
	case o.Status == http.StatusTooManyRequests || o.Status == http.StatusServiceUnavailable:
		req.Backoff = BackoffGrow
		req.RetryAfter = min(o.RetryAfter, g.cfg.MaxRetryAfter)
	case o.Status > 0 && o.Err == nil:
		req.Backoff = BackoffReset
	}
	return p.release(req)
}

// Release ends the permit without a fetch (a reservation not used): the
// slot frees and the key's timing is unchanged.
func (p *Permit) Release() error {
	if !p.ended.CompareAndSwap(false, true) {
		return nil
	}
	p.endedAt, p.status = p.g.now(), -1
	return p.release(ReleaseRequest{LeaseID: p.id})
}

// Next returns, after Done or Release, when the permit's key opens for
// its next fetch as the gate decides it: one effective delay after the end
// of the fetch, or later when a 429 or 503 answer grew the key's backoff
// (or, after Release, whatever held the key before). A host scheduler
// holds the key's queue until then, so that nothing is asked of the gate
// that it would refuse. Before Done or Release it returns the grant time.
// Done, Release and Next are meant to be called by the permit's holder,
// one after the other.
func (p *Permit) Next(ctx context.Context) (time.Time, error) {
	if !p.ended.Load() {
		return p.granted, nil
	}
	if p.status != http.StatusTooManyRequests && p.status != http.StatusServiceUnavailable && p.status >= 0 {
		return p.endedAt.Add(p.decision.Delays.Effective), nil
	}
	st, err := p.g.Status(ctx, p.key, p.origin)
	if err != nil {
		return p.endedAt.Add(p.decision.Delays.Effective), err
	}
	next := p.endedAt.Add(p.decision.Delays.Effective)
	if st.NextAllowed.After(next) {
		next = st.NextAllowed
	}
	return next, nil
}

func (p *Permit) release(req ReleaseRequest) error {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	err := p.g.state.Release(ctx, p.key, req)
	p.g.wake(p.key)
	if err != nil {
		return fmt.Errorf("politeness: release %s: %w", p.key, err)
	}
	return nil
}

// addWaiter registers a Wait call on key.
func (g *Gate) addWaiter(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.mu.waiters[key]
	if w == nil {
		w = &waiter{ch: make(chan struct{})}
		g.mu.waiters[key] = w
	}
	w.n++
}

// waiterChan returns the channel closed at the next local release of key
// (taken before asking, so a release in between is not missed).
func (g *Gate) waiterChan(key string) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.waiters[key].ch
}

// dropWaiter unregisters a Wait call on key.
func (g *Gate) dropWaiter(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.mu.waiters[key]
	if w.n--; w.n == 0 {
		delete(g.mu.waiters, key)
	}
}

// wake wakes the Wait calls sleeping on key.
func (g *Gate) wake(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.mu.waiters[key]; w != nil {
		close(w.ch)
		w.ch = make(chan struct{})
	}
}

// KeyStatus is the per-key view for a host scheduler.
type KeyStatus struct {
	Key string
	// Open is true when a Permit would be granted now (robots aside).
	Open bool
	// Reason is why not (ReasonDelay, ReasonConcurrency, ReasonBackoff).
	Reason Reason
	// NextAllowed is the earliest time the key opens (now when Open; for
	// ReasonConcurrency an upper bound).
	NextAllowed time.Time
	// InFlight is the number of unexpired permits, in all processes.
	InFlight int
	// BackoffLevel is the number of consecutive 429/503 answers.
	BackoffLevel int
	// Delays is the delay breakdown (robots parts from the cached
	// robots.txt of origin, if any).
	Delays Delays
}

// Status returns key's state without taking a slot or fetching anything.
// origin ("scheme://host[:port]", see Origin) selects the cached robots.txt
// whose Crawl-delay and Request-rate count; with "" (a caller that knows
// only the key) the key's stored robots delay counts, the one ListDelays
// shows.
func (g *Gate) Status(ctx context.Context, key, origin string) (KeyStatus, error) {
	if key == "" || len(key) > 1024 || strings.ContainsAny(key, " \t\r\n/?#@") {
		return KeyStatus{}, fmt.Errorf("politeness: bad key %q: want a host name, domain or IP address (not a URL)", key)
	}
	now := g.now()
	view := g.cachedView(ctx, origin, now)
	delays, err := g.delays(ctx, key, view, now)
	if err != nil {
		return KeyStatus{}, err
	}
	if origin == "" {
		e, found, err := g.delayEntry(ctx, key)
		if err != nil {
			return KeyStatus{}, err
		}
		if found && e.Robots > delays.Robots {
			delays.Robots = e.Robots // stored capped
			delays = effectiveDelay(delays)
		}
	}
	_, d, gr, err := g.acquireGrant(ctx, target{key: key}, delays, g.cfg.Lease, true)
	if err != nil {
		return KeyStatus{}, err
	}
	st := KeyStatus{Key: key, Open: d.Allowed, Reason: d.Reason, NextAllowed: now.Add(max(d.RetryAfter, 0)),
		InFlight: gr.InFlight, BackoffLevel: gr.BackoffLevel, Delays: d.Delays}
	return st, nil
}
