package crawl

// One leased URL's way through a worker: admit, fetch, process, end;
// and what happens to it and its host when something fails.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// shortWait is the longest the gate's "not yet" is waited out by the
// worker; longer waits block the queue in the frontier instead.
const shortWait = 20 * time.Millisecond

// next is how a pipeline stage left a leased URL: for the acker (ack:
// completed, retried later, or moved to another host), given back to the
// frontier unchanged (back names why, until holds the host's queue till
// then when set), or neither: the next stage takes it.
type next struct {
	ack   *ack
	back  string
	until time.Time
}

// Reasons a URL goes back to the frontier unchanged (the label of
// courtesy_crawl_returned_total).
const (
	backGateFailed  = "gate-failed"       // the gate (its backend) failed
	backNotYet      = "not-yet"           // delay, concurrency, window or backoff
	backRobotsRetry = "robots-retry"      // robots.txt unavailable, to be asked again
	backHostRetired = "host-retired"      // a backoff longer than MaxHostWait retired the host
	backCanceled    = "canceled"          // the crawl is stopping
	backWARCFailed  = "warc-write-failed" // not archived: fetched again later
)

// handle crawls one leased URL as one pipeline: admit (host rules and
// the gate), fetch, process (dedup, extraction, archive), and then ends
// it in one place (end): acknowledged by the acker, or given back to the
// frontier with the reason recorded. It reports whether the acker has the
// URL.
func (c *Crawler) handle(ctx context.Context, wid int, l frontier.Lease) bool {
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		return c.end(ctx, l, c.complete(l, nil, &crawllog.Entry{Status: crawllog.StatusUnsupportedURI, Size: -1, Thread: wid}, -1), time.Time{})
	}
	permit, hs, n := c.admit(ctx, wid, l, u)
	if permit == nil {
		return c.end(ctx, l, n, time.Time{})
	}
	res, hold, ferr := c.fetch(ctx, l, u, permit, hs)
	return c.end(ctx, l, c.process(ctx, wid, l, u, hs, res, ferr), hold)
}

// end is the one way a leased URL leaves the worker: to the acker, or
// back to the frontier unchanged, the reason counted and logged. hold,
// when set, is the gate's next time for the host after a fetch: it
// travels with the acknowledgement (frontier.Item.Hold), or holds the
// queue before the URL is given back, as n.until does. (While the URL
// is leased its queue is not served: the frontier serves one URL per
// queue at a time. So the hold is in place whenever the queue can be
// served again, without a frontier call of its own after every fetch.)
func (c *Crawler) end(ctx context.Context, l frontier.Lease, n next, hold time.Time) bool {
	if n.ack != nil {
		n.ack.final.Hold = c.withOperatorBlock(l.Key, hold)
		c.handOff(n.ack)
		return true
	}
	until := n.until
	if hold.After(until) {
		until = hold
	}
	if !until.IsZero() {
		c.block(ctx, l.Key, until)
	}
	c.metrics.returned.WithLabelValues(n.back).Inc()
	c.log.Debug("URL returned to the frontier", "url", l.URL, "reason", n.back, "until", n.until)
	c.fr.Release(l.URLInfo)
	return false
}

// admit takes a URL through the host map and the gate. It returns a
// permit for the fetch, or nil and how the URL ended: moved to another
// host (robots Host, Mirror-site, duplicate hosts), refused by robots.txt,
// or not yet allowed.
func (c *Crawler) admit(ctx context.Context, wid int, l frontier.Lease, u *url.URL) (*politeness.Permit, *hostState, next) {
	if n, ok := c.moveLeased(wid, l, u, nil); ok { // host map (hostmap.go)
		return nil, nil, n
	}
	permit, n := c.ask(ctx, wid, l, u)
	if permit == nil {
		return nil, nil, n
	}
	hs := c.host(u.Hostname())
	c.firstContact(ctx, u, l, hs)
	// robots.txt fetched again, or a host rule due for a re-check
	// (hostmap.go): the rule is set, kept or dropped before it is used.
	c.recheckHostRules(ctx, u)
	if n, ok := c.moveLeased(wid, l, u, permit); ok { // robots.txt just named another host
		return nil, nil, n
	}
	return permit, hs, next{}
}

// ask asks the gate for u. A "not yet" of at most shortWait is waited out
// here (three times at most); a longer one gives the URL back with the
// gate's Decision.NextAllowed, so no worker waits long on a host.
func (c *Crawler) ask(ctx context.Context, wid int, l frontier.Lease, u *url.URL) (*politeness.Permit, next) {
	for attempt := 0; ; attempt++ {
		// The URL is the referrer of a robots.txt fetch this starts.
		p, d, err := c.gate.Try(c.withRobotsNeed(ctx, wid, l), u)
		if err != nil {
			if ctx.Err() != nil {
				return nil, next{back: backCanceled}
			}
			c.log.Warn("politeness gate failed", "url", l.URL, "err", err)
			return nil, next{back: backGateFailed, until: c.now().Add(5 * time.Second)}
		}
		if p != nil {
			return p, next{}
		}
		switch d.Reason {
		case politeness.ReasonRobots:
			c.stats.robotsDenied.Add(1)
			c.metrics.robotsDenied.Inc()
			return nil, c.complete(l, nil, &crawllog.Entry{Status: crawllog.StatusRobotsDisallowed, Size: -1, Thread: wid,
				Annotations: []string{crawllog.AnnotationRobotsDisallow}}, -1)
		case politeness.ReasonRobotsUnavailable:
			return nil, c.robotsUnavailable(ctx, wid, l, d)
		case politeness.ReasonBackoff:
			if d.RetryAfter > c.cfg.MaxHostWait {
				// Retry-After of hours: do not hold the crawl open for it.
				c.retire(ctx, u.Hostname(), l.Key, "backoff: "+d.Detail)
				return nil, next{back: backHostRetired}
			}
		}
		if d.RetryAfter > 0 && d.RetryAfter <= shortWait && attempt < 3 {
			if !sleep(ctx, d.RetryAfter) {
				return nil, next{back: backCanceled}
			}
			continue
		}
		until := d.NextAllowed
		if floor := c.now().Add(time.Millisecond); until.Before(floor) {
			until = floor
		}
		return nil, next{back: backNotYet, until: until}
	}
}

// fetch makes the request under permit and tells the gate how it went. It
// returns the gate's next time for the host (Permit.Next): the host's
// queue is to be held until then (see end), so that it is not served
// before the gate would open.
func (c *Crawler) fetch(ctx context.Context, l frontier.Lease, u *url.URL, permit *politeness.Permit, hs *hostState) (*fetch.Result, time.Time, error) {
	c.hostsMu.Lock()
	req := hs.req
	c.hostsMu.Unlock()
	if c.cfg.PageRequisites {
		// A page requisite is fetched whatever its type (a page's
		// images are the point): no HEAD first.
		if embeds, _ := transcluded(md1(l.Metadata, mdPath)); embeds > 0 {
			req.NoHeadCheck = true
		}
	}
	if md1(l.Metadata, mdKind) == kindSitemap {
		req.MaxBodySize = c.sitemapMax
	}
	res, ferr := c.fetcher.Fetch(ctx, u, req)
	out := politeness.Outcome{Err: ferr}
	if res != nil {
		out.Status, out.Duration, out.Bytes = res.Status, res.Duration, int64(len(res.RawBody))
		out.RetryAfter = politeness.RetryAfter(res.Header, c.now())
	}
	if err := permit.Done(out); err != nil {
		c.log.Warn("politeness gate: fetch not recorded", "url", l.URL, "err", err)
	}
	nextAt, err := permit.Next(ctx)
	if err != nil {
		c.log.Debug("politeness gate: next time of the host", "key", l.Key, "err", err)
	}
	c.hold(l.Key, nextAt)
	return res, nextAt, ferr
}

// process handles what the fetch gave: a network error is retried (and
// counts toward the host's failures); a response is deduplicated,
// parsed and archived (fetched).
func (c *Crawler) process(ctx context.Context, wid int, l frontier.Lease, u *url.URL, hs *hostState, res *fetch.Result, ferr error) next {
	if ferr == nil {
		return c.fetched(ctx, wid, l, u, hs, res)
	}
	kind := fetch.KindOf(ferr)
	if kind == fetch.KindCanceled || ctx.Err() != nil {
		return next{back: backCanceled}
	}
	c.stats.errors.Add(1)
	c.metrics.errors.WithLabelValues(kind.String()).Inc()
	if kind == fetch.KindRefused {
		return c.refused(ctx, wid, l, u, ferr.Error())
	}
	if fetch.Answered(ferr) && kind != fetch.KindTimeout {
		// A response cut short or mis-framed (a bad chunk size, a body
		// shorter than its Content-Length, a header too long) is the
		// page's fault: the host answered, as with a 500. A header
		// still unfinished at the timeout is the host's slowness, as
		// before (a server trickling every header is retired).
		c.hostsMu.Lock()
		c.answeredLocked(u, hs)
		c.hostsMu.Unlock()
	} else {
		c.hostFailed(ctx, u.Hostname(), l.Key, kind.String())
	}
	return c.retry(l, &crawllog.Entry{Status: statusOf(kind), Size: -1, Thread: wid, FetchStart: c.now()}, ferr, -1, 0)
}

// statusOf maps a fetch error kind to a Heritrix crawl.log status.
func statusOf(k fetch.Kind) int {
	switch k {
	case fetch.KindDNS:
		return crawllog.StatusDNSFailed
	case fetch.KindConnect, fetch.KindTLS:
		return crawllog.StatusConnectFailed
	case fetch.KindTimeout:
		return crawllog.StatusTimeout
	case fetch.KindReset:
		return crawllog.StatusConnectBroken
	case fetch.KindRequest:
		return crawllog.StatusUnsupportedURI
	}
	return crawllog.StatusRuntimeError
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (c *Crawler) block(ctx context.Context, key string, t time.Time) {
	c.hold(key, t)
	if err := c.blockQueue(context.WithoutCancel(ctx), key, t); err != nil { // keeps an operator's later block
		c.log.Debug("frontier block failed", "key", key, "err", err)
	}
}

// robotsUnavailable handles a host whose robots.txt could not be had
// (RFC 9309 §2.3.1.4: 5xx, network error: disallow all) or answered 401/403
// in disallow mode: no request goes to it until robots.txt is fetched
// again; after MaxHostFailures tries, or at once for 401/403, the host is
// retired.
//
// robots.txt belongs to an origin, the queue to a host name: an origin
// that has not answered this run while another origin of the host has (a
// port leaked in a redirect, https on an http-only server), and whose
// robots.txt brought no HTTP answer or a 401/403, is not the host: its
// URL alone waits and is given up after its retries (at once for
// 401/403), and the host's queue is neither held nor retired. A 5xx or
// 429 on robots.txt is the server in trouble, which holds the host.
func (c *Crawler) robotsUnavailable(ctx context.Context, wid int, l frontier.Lease, d politeness.Decision) next {
	u, _ := url.Parse(l.URL)
	hs := c.host(u.Hostname())
	origin := politeness.Origin(u)
	c.hostsMu.Lock()
	if originAlone(hs.answered, origin, d.RobotsStatus) && hs.refused == "" {
		c.hostsMu.Unlock()
		e := &crawllog.Entry{Status: crawllog.StatusPrereqRobotsFailed, Size: -1, Thread: wid, FetchStart: c.now()}
		if d.RetryAfter < 0 || d.RetryAfter > c.cfg.MaxHostWait { // 401/403: asking again changes nothing
			return c.complete(l, nil, e, -1)
		}
		return c.retry(l, e, fmt.Errorf("robots.txt of %s unavailable: %s", origin, d.Detail), -1, max(d.RetryAfter, time.Second))
	}
	hs.robotsFailures++
	n := hs.robotsFailures
	refused := hs.refused
	c.hostsMu.Unlock()
	if refused != "" {
		return c.refused(ctx, wid, l, u, refused)
	}
	if d.RetryAfter >= 0 && d.RetryAfter <= c.cfg.MaxHostWait && n < c.cfg.MaxHostFailures {
		return next{back: backRobotsRetry, until: c.now().Add(max(d.RetryAfter, time.Second))}
	}
	reason := "robots.txt unavailable: " + d.Detail
	c.retire(ctx, u.Hostname(), l.Key, reason)
	return c.complete(l, nil, &crawllog.Entry{Status: crawllog.StatusPrereqRobotsFailed, Size: -1, Thread: wid}, -1)
}

// refused retires a host the address policy (Config.AddressPolicy)
// refused, and logs the URL as blocked by a user setting: asking again
// would meet the same address.
func (c *Crawler) refused(ctx context.Context, wid int, l frontier.Lease, u *url.URL, why string) next {
	c.retire(ctx, u.Hostname(), l.Key, why)
	return c.complete(l, nil, &crawllog.Entry{Status: crawllog.StatusBlockedByUser, Size: -1, Thread: wid, FetchStart: c.now()}, -1)
}

// answeredLocked records that u's host answered: any HTTP answer shows the
// host is up, so a page's own 404, 410, 500 or malformed response never
// counts toward retiring its host (only host-level failures do: DNS,
// connect, TLS, timeouts, robots.txt unavailable). c.hostsMu is held.
func (c *Crawler) answeredLocked(u *url.URL, hs *hostState) {
	hs.failures = 0
	if o := politeness.Origin(u); !hs.answered[o] && len(hs.answered) < maxAnsweredOrigins {
		if hs.answered == nil {
			hs.answered = map[string]bool{}
		}
		hs.answered[o] = true
	}
}

// hostFailed counts a failure of host; MaxHostFailures in a row retire it.
func (c *Crawler) hostFailed(ctx context.Context, host, key, why string) {
	hs := c.host(host)
	c.hostsMu.Lock()
	hs.failures++
	n := hs.failures
	c.hostsMu.Unlock()
	if n >= c.cfg.MaxHostFailures {
		c.retire(ctx, host, key, fmt.Sprintf("%d failures in a row, last: %s", n, why))
	}
}

func (c *Crawler) retire(ctx context.Context, host, key, reason string) {
	hs := c.host(host)
	c.hostsMu.Lock()
	first := hs.retired == ""
	if first {
		hs.retired = reason
	}
	c.hostsMu.Unlock()
	if !first {
		return
	}
	c.log.Warn("host retired", "host", host, "reason", reason)
	c.metrics.retired.Inc()
	if err := c.fr.Retire(context.WithoutCancel(ctx), c.cfg.CrawlID, key, reason); err != nil {
		c.log.Warn("frontier retire failed", "host", host, "err", err)
	}
}

// retry schedules a failed URL again (its acknowledgement, for the acker,
// queues it again), or gives up after MaxRetries and logs the final
// failure (a try to be repeated has no crawl.log line: the log has one
// line per URL). warcIdx is the WARC writer that holds its records, or
// -1. retryAfter is the server's Retry-After (0: none).
//
// The next try waits the server's Retry-After when it sent one (RFC 9110
// §10.2.3: the time the service expects to be unavailable, or to wait
// before asking again), else the exponential backoff from RetryDelay;
// never more than MaxRetryDelay. The host's own pace is the gate's
// business: a 429 or 503 also backs the whole host off there.
func (c *Crawler) retry(l frontier.Lease, e *crawllog.Entry, cause error, warcIdx int, retryAfter time.Duration) next {
	tries, _ := strconv.Atoi(md1(l.Metadata, mdTry))
	tries++
	// A try that got an HTTP answer was annotated with its number by
	// fetched already: once per line.
	if t := crawllog.Tries(tries); !slices.Contains(e.Annotations, t) {
		e.Annotations = append(e.Annotations, t)
	}
	if tries > c.cfg.MaxRetries {
		c.stats.failed.Add(1)
		return c.complete(l, nil, e, warcIdx)
	}
	info := l.URLInfo
	info.Metadata = cloneMD(l.Metadata)
	info.Metadata[mdTry] = []string{strconv.Itoa(tries)}
	wait := retryBackoff(c.cfg.RetryDelay, c.cfg.MaxRetryDelay, tries)
	if retryAfter > 0 {
		wait = min(retryAfter, c.cfg.MaxRetryDelay)
	}
	when := c.now().Add(wait)
	c.hold(l.Key, when)
	c.log.Debug("fetch failed, will retry", "url", l.URL, "try", tries, "at", when, "err", cause)
	return next{ack: &ack{lease: l, final: frontier.Item{Info: info, Known: true, RefetchFrom: when}, warc: warcIdx}}
}

// transient reports whether an HTTP status is worth asking again: server
// errors and 429 Too Many Requests (the gate also backs the host off).
// Codes past 599 have no class (RFC 9110 §15): LinkedIn's 999 is a
// refusal, not a server in trouble.
func transient(status int) bool {
	return status >= 500 && status <= 599 || status == http.StatusTooManyRequests
}

// retryBackoff is the delay before try number tries+1: base doubled per
// try, never more than limit.
func retryBackoff(base, limit time.Duration, tries int) time.Duration {
	d := base
	for i := 1; i < tries && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

func cloneMD(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// originAlone reports whether a robots.txt failure of origin (status 0
// for no HTTP answer) concerns that origin alone, not its host: the
// origin has not answered this run, another origin of the host has, and
// robots.txt brought no answer or a 401/403 (robotsUnavailable).
func originAlone(answered map[string]bool, origin string, status int) bool {
	if answered[origin] || status != 0 && status != http.StatusUnauthorized && status != http.StatusForbidden {
		return false
	}
	for o := range answered {
		if o != origin {
			return true
		}
	}
	return false
}

// maxAnsweredOrigins bounds the origins remembered per host
// (hostState.answered).
const maxAnsweredOrigins = 16

// maxHolds bounds the hold times kept for the progress line.
const maxHolds = 100_000

// hold records that key's queue waits until t.
func (c *Crawler) hold(key string, t time.Time) {
	c.holdsMu.Lock()
	defer c.holdsMu.Unlock()
	if _, ok := c.holds[key]; !ok && len(c.holds) >= maxHolds {
		now := c.now()
		for k, u := range c.holds {
			if !u.After(now) {
				delete(c.holds, k)
			}
		}
		if len(c.holds) >= maxHolds {
			return
		}
	}
	c.holds[key] = t
}

// waiting returns how many hosts wait past now and the earliest time one
// of them opens; expired holds are dropped.
func (c *Crawler) waiting(now time.Time) (int, time.Time) {
	c.holdsMu.Lock()
	defer c.holdsMu.Unlock()
	n, next := 0, time.Time{}
	for k, t := range c.holds {
		if !t.After(now) {
			delete(c.holds, k)
			continue
		}
		n++
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return n, next
}

// robotsDial is the dial function of the robots.txt client: the fetcher's
// (--resolve rules, DNS cache, address policy). A refusal is noted on the
// host, so that robotsUnavailable retires it at once instead of asking
// again.
func (c *Crawler) robotsDial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := c.fetcher.Dial(ctx, network, addr)
	if errors.Is(err, addrpolicy.ErrRefused) {
		host, _, _ := net.SplitHostPort(addr)
		hs := c.host(host)
		c.hostsMu.Lock()
		hs.refused = err.Error()
		c.hostsMu.Unlock()
	}
	return conn, err
}
