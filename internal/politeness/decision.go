package politeness

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reason says why a URL may not be fetched now. The empty Reason means it
// may.
type Reason string

const (
	// ReasonNone: allowed.
	ReasonNone Reason = ""
	// ReasonRobots: robots.txt disallows the URL for our agent. Waiting
	// does not help (RetryAfter is Never).
	ReasonRobots Reason = "robots"
	// ReasonRobotsUnavailable: robots.txt could not be had (5xx, 429,
	// network error, with no good copy younger than 30 days) or was
	// answered 401/403 while Config.Robots.Unauthorized is "disallow":
	// everything is disallowed until it is fetched again.
	ReasonRobotsUnavailable Reason = "robots-unavailable"
	// ReasonDelay: the key's effective delay since the end of its last
	// fetch has not yet passed.
	ReasonDelay Reason = "delay"
	// ReasonConcurrency: the key already has MaxInFlight fetches in
	// flight. RetryAfter is an upper bound (the earliest lease expiry plus
	// the delay); Wait wakes as soon as a slot frees.
	ReasonConcurrency Reason = "concurrency"
	// ReasonWindow: a robots Visit-time or Time-forbidden window is closed.
	ReasonWindow Reason = "window"
	// ReasonBackoff: the origin answered 429 or 503 and asked us (by
	// Retry-After or by our exponential backoff) to stay away longer.
	ReasonBackoff Reason = "backoff"
)

// Never is Decision.RetryAfter when waiting will not change the answer.
const Never time.Duration = -1

// Decision is the gate's answer for one URL.
type Decision struct {
	// URL is the URL asked about, as given.
	URL string
	// Key is the politeness key of the URL (Config.KeyFunc).
	Key string
	// Allowed is true when a Permit was granted (Try) or would have been
	// (Peek).
	Allowed bool
	// Reason says why not; ReasonNone when Allowed.
	Reason Reason
	// RetryAfter is how long to wait before asking again: 0 when Allowed,
	// Never (-1) when waiting does not help (ReasonRobots, 401/403 in
	// disallow mode), otherwise the time until the blocking condition
	// lifts at the earliest.
	RetryAfter time.Duration
	// NextAllowed is when asking again may succeed: the time of the
	// decision when Allowed, that time plus RetryAfter otherwise, zero
	// when RetryAfter is Never. A host scheduler (the crawler's frontier)
	// holds the key's queue until then.
	NextAllowed time.Time
	// Delays is the delay breakdown in force for the key and this URL.
	Delays Delays
	// Detail is a human sentence for logs and the verbose service's
	// `error` field (the verbose politeness service); "" when Allowed.
	Detail string
	// RobotsStatus, with ReasonRobotsUnavailable, is the HTTP status of
	// the robots.txt answer that blocks the origin (5xx, 429, or 401/403
	// in disallow mode); 0 when no answer came (DNS, connect, TLS,
	// timeout), which tells an origin that is not there from one in
	// trouble.
	RobotsStatus int
}

// RetryAfterMillis is RetryAfter in whole milliseconds, rounded up, for
// the verbose politeness service's `retryAfter`: -1 when no delay applies (allowed, or
// waiting does not help).
func (d Decision) RetryAfterMillis() int64 {
	if d.Allowed || d.RetryAfter < 0 {
		return -1
	}
	return int64((d.RetryAfter + time.Millisecond - 1) / time.Millisecond)
}

// Delays is the breakdown of a key's effective delay (the polite-proxy thesis keeps
// the manual, robots and current delays apart).
type Delays struct {
	// Configured is the manual delay of the key, else the default delay
	// scaled by the key's popularity tier and bandwidth class (Default,
	// Popularity and Bandwidth say how).
	Configured time.Duration
	// Default is the default delay in force before scaling; 0 when
	// Manual.
	Default time.Duration
	// Popularity is the popularity tier that scaled the default delay
	// (Config.Popularity); zero when none did (manual delay, no list, or
	// a domain in no tier).
	Popularity PopularityInfo
	// Bandwidth is the key's measured download rate and the class that
	// scaled the default delay (Config.Bandwidth); Class is "" when none
	// did, and the whole is zero when the key has no sample or the
	// classes are off.
	Bandwidth BandwidthInfo
	// Manual is true when Configured comes from SetDelay or the config
	// file rather than the default.
	Manual bool
	// Override is true when the manual delay is forced: it then wins over
	// Robots, Rate and Adaptive.
	Override bool
	// Robots is the robots Crawl-delay, already capped at
	// Config.MaxCrawlDelay; 0 when none.
	Robots time.Duration
	// Rate is the interval implied by the robots Request-rate in force;
	// 0 when none.
	Rate time.Duration
	// Adaptive is AdaptiveFactor × the last fetch's duration; 0 when off.
	Adaptive time.Duration
	// Backoff is what remains of the 429/503 backoff; 0 when none.
	Backoff time.Duration
	// Path is the Crawl-delay or Request-rate interval that a REGP nested
	// block gives the asked URL's path (capped at Config.MaxCrawlDelay);
	// 0 when none, when the URL is not known (Status), or when Override.
	// It spaces a fetch of that path from the end of the key's last
	// fetch, whatever that fetch was; it does not hold the key for
	// other paths, so it is not part of Effective.
	Path time.Duration
	// Effective is the gap enforced after the end of a fetch: the largest
	// of Configured, Robots, Rate and Adaptive (only Configured when
	// Override). Backoff is applied on top, as a time the key is closed.
	Effective time.Duration
	// Source names the part that sets the gap this URL waits for, the
	// larger of Effective and Path.
	Source DelaySource
}

// DelaySource names the part of Delays that sets the gap.
type DelaySource string

const (
	// SourceDefault: the default delay (possibly scaled by popularity or
	// bandwidth).
	SourceDefault DelaySource = "default"
	// SourceManual: the key's manual delay (SetDelay or the config file).
	SourceManual DelaySource = "manual"
	// SourceCrawlDelay: the robots.txt Crawl-delay.
	SourceCrawlDelay DelaySource = "crawl-delay"
	// SourceRequestRate: the robots.txt Request-rate (or REGP Ip-delay,
	// Ip-rate).
	SourceRequestRate DelaySource = "request-rate"
	// SourceAdaptive: AdaptiveFactor times the last fetch's duration.
	SourceAdaptive DelaySource = "adaptive"
	// SourcePath: a REGP nested block's delay for the URL's path.
	SourcePath DelaySource = "path"
)

// Gap is the spacing the asked URL needs after the end of the key's last
// fetch: Effective, or Path when larger.
func (d Delays) Gap() time.Duration { return max(d.Effective, d.Path) }

// effectiveDelay fills in d.Effective and d.Source from the other fields.
// A forced manual delay (Override) is final; otherwise the largest of the
// configured delay and the delays the site and its answers ask for wins,
// so no source can make the crawler faster than another allows.
func effectiveDelay(d Delays) Delays {
	configured := SourceDefault
	if d.Manual {
		configured = SourceManual
	}
	if d.Override {
		d.Path = 0
		d.Effective, d.Source = d.Configured, configured
		return d
	}
	d.Effective = max(d.Configured, d.Robots, d.Rate, d.Adaptive)
	d.Source = configured
	for _, c := range []struct {
		v   time.Duration
		src DelaySource
	}{{d.Robots, SourceCrawlDelay}, {d.Rate, SourceRequestRate}, {d.Adaptive, SourceAdaptive}, {d.Path, SourcePath}} {
		if c.v > d.Configured && c.v == d.Gap() {
			d.Source = c.src
			break
		}
	}
	return d
}

// Outcome is what happened to a fetch made under a Permit.
type Outcome struct {
	// Status is the HTTP status code; 0 when there was no response.
	Status int
	// Err is the transport error, if any.
	Err error
	// Duration is how long the fetch took; 0 means "measure it": the time
	// from the grant of the Permit to Done.
	Duration time.Duration
	// RetryAfter is the server's Retry-After (see RetryAfter), 0 when
	// absent. Honoured for 429 and 503, capped at Config.MaxRetryAfter.
	RetryAfter time.Duration
	// Bytes is the size of the response body received, in bytes; with
	// Duration it gives the download rate of bandwidth classes
	// (Config.Bandwidth). 0 means unknown: no sample is taken.
	Bytes int64
}

// RetryAfter parses the Retry-After header of h (RFC 9110 §10.2.3: either
// delay-seconds or an HTTP-date, relative to now). It returns 0 when the
// header is absent, malformed or in the past.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	d, _ := ParseRetryAfter(h.Get("Retry-After"), now)
	return d
}

// maxRetryAfterSeconds bounds delay-seconds so the conversion to a Duration
// cannot overflow (about 292 years would; 100 years is plenty).
const maxRetryAfterSeconds = 100 * 365 * 24 * 3600

// ParseRetryAfter parses a Retry-After value: delay-seconds (a non-negative
// integer) or an HTTP-date (any of the three formats of RFC 9110 §5.6.7).
// ok is false for a malformed value. A date in the past gives 0, true.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			// Only digits can overflow here; a huge number still means
			// "a very long time".
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) && strings.Trim(v, "0123456789") == "" {
				return maxRetryAfterSeconds * time.Second, true
			}
			return 0, false
		}
		return time.Duration(min(n, maxRetryAfterSeconds)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if !t.After(now) {
		return 0, true
	}
	return t.Sub(now), true
}

// DeniedError is returned by Wait when robots.txt refuses the URL; it
// carries the Decision.
type DeniedError struct {
	Decision Decision
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("politeness: %s refused (%s): %s", e.Decision.URL, e.Decision.Reason, e.Decision.Detail)
}

// Denied returns the Decision carried by a *DeniedError in err's chain.
func Denied(err error) (Decision, bool) {
	var de *DeniedError
	if errors.As(err, &de) {
		return de.Decision, true
	}
	return Decision{}, false
}
