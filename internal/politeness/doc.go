// Package politeness is Courtesy's single politeness authority: the
// per-key gate (concurrency, delays, windows, backoff) and the robots.txt
// cache. The proxy, the politeness services and the crawler all ask it
// before they touch an origin.
//
// # Asking
//
// Build one Gate per process and share it:
//
//	g, err := politeness.New(cfg, politeness.Backend{})  // memory backend
//	...
//	p, err := g.Wait(ctx, u)           // blocks until u may be fetched
//	if d, ok := politeness.Denied(err); ok {
//		// robots.txt forbids u (d.Reason is ReasonRobots or
//		// ReasonRobotsUnavailable); d.RetryAfter is Never or when
//		// robots.txt will be asked again.
//	}
//	resp, err := client.Do(req)       // the fetch
//	o := politeness.Outcome{Err: err} // Duration 0: measured from the grant
//	if err == nil {
//		o.Status = resp.StatusCode
//		o.RetryAfter = politeness.RetryAfter(resp.Header, time.Now())
//	}
//	p.Done(o)
//
// Non-blocking callers (the proxy's reject mode, the services) use Try,
// which returns either a Permit or a Decision saying why not and how long to
// wait:
//
//	p, d, err := g.Try(ctx, u)
//	if p == nil { answer429or403(d.Reason, d.RetryAfterMillis()) }
//
// Peek answers the same question without taking a slot (no Permit); Status
// gives the per-key view (in flight, next allowed time, delay breakdown).
// A Permit is a lease: if it is neither Done nor Released within
// Config.Lease (default 2 min; WithLease per call) the slot frees itself,
// so a crashed holder never locks a host. Permit.Release returns an unused
// reservation without recording a fetch.
//
// # The one authority
//
// The gate is the only reader of robots.txt and the only judge of timing.
// Every answer says why and until when: Decision.Reason, Decision.Delays
// (each part of the delay, and Delays.Source, the part that sets the gap)
// and Decision.NextAllowed. After a fetch, Permit.Next says when the key
// opens again. A host scheduler (the crawler's frontier) holds a host's
// queue until one of those two times, and learns it from nowhere else.
// Rules gives the parsed robots.txt of an origin (the file, our group, the
// stored entry), so a caller that needs more of the file than the verdict
// (sitemaps, REGP extensions, the Host line) reads the gate's one parse.
//
// # The rules
//
// Per key (Config.KeyMode, urlnorm.Key: by default the URL's host name,
// port ignored; or its registrable domain, or its IP address):
//
//   - at most Config.MaxInFlight fetches in flight (default 1: never more
//     than one connection per host, as the polite-proxy thesis asks);
//   - the next fetch starts no sooner than the END of the previous one plus
//     the effective delay, the largest of: the configured delay (the key's
//     manual delay, else the default, 1 s, scaled by the key's popularity
//     tier and bandwidth class: Config.Popularity and Config.Bandwidth,
//     off by default, never below a floor; popularity.go and bandwidth.go
//     have the rules), robots Crawl-delay (capped at Config.MaxCrawlDelay,
//     default 30 s), the interval of robots Request-rate (and REGP
//     Ip-delay, Ip-rate), the adaptive delay (Config.AdaptiveFactor × the
//     last fetch's duration; 0 = off) and the backoff after 429/503
//     (Retry-After honoured, exponential otherwise, reset by any other
//     answer). A manual delay set with override wins over robots, rate and
//     adaptive delays even when it is smaller; backoff still applies;
//   - a URL whose path has its own Crawl-delay or Request-rate (a REGP
//     nested block) waits that long after the end of the key's last
//     fetch (Delays.Path), without holding the key for other paths;
//   - robots Visit-time and Time-forbidden windows defer the key until the
//     window opens (Group.NextVisit);
//   - robots.txt Disallow, and REGP Ip-allow/Ip-disallow lines that
//     exclude one of Config.ParseOptions.EgressIPs, refuse the URL for
//     good (ReasonRobots, Never).
//
// Decision.Reason is one of ReasonRobots, ReasonRobotsUnavailable,
// ReasonDelay, ReasonConcurrency, ReasonWindow, ReasonBackoff (empty when
// allowed); Decision.RetryAfterMillis gives the politeness service's
// `retryAfter` (ms, -1 when waiting does not help).
//
// # Robots cache
//
// robots.txt is fetched from scheme://host[:port]/robots.txt once per
// origin even under concurrent demand, and the fetch itself takes the key's
// slot, so the origin sees robots.txt and the first page at least one delay
// apart (a Try on a cold host therefore returns the robots fetch's delay).
// RFC 9309 §2.3.1: 2xx parsed (at most robots.MaxSize bytes); up to 5
// redirects followed (rules still apply to the original host; more →
// allow all); 401/403 per Config.Robots.Unauthorized ("disallow" by
// default, as the polite-proxy thesis and the REGP specification read
// them; "allow" as RFC 9309); other 4xx allow all;
// 5xx, 429 and network errors disallow all and are retried with backoff
// while a previous good copy, if not older than 30 days, stays in force.
// Successes are cached 24 h (RFC 9309 §2.4), 4xx results for the shorter
// Config.Robots.NegativeTTL: a site that adds a robots.txt is heard soon.
//
// # Delays
//
// SetDelay, DeleteDelay, ListDelays and SetDefaultDelay manage the manual
// delays; each key's manual delay, robots delay and current effective delay
// are kept apart (DelayInfo). They are persisted in the DelayStore.
//
// # Backends
//
// Shared state sits behind three small interfaces, each with a memory, an
// embedded (internal/kv) and a Redis implementation, all checked by the
// conformance suite in package statetest:
//
//   - State: in-flight leases, end of the last fetch, backoff and adaptive
//     delay per key. Acquire and Release are each one atomic step (one Lua
//     script round trip in Redis, using Redis server time so the clocks of
//     different machines do not matter). The embedded backend uses the
//     memory State: leases and gaps need no disk.
//   - RobotsStore: cached robots.txt results (NewKVRobotsStore persists them
//     so the cache survives a restart).
//   - DelayStore: manual and robots delays (NewKVDelayStore).
//
// The Redis backend lives in package politeness/redisbackend.
package politeness
