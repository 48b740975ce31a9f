package politeness

import (
	"context"
	"net/http"
	"time"
)

// RobotsResult classifies a robots.txt fetch (RFC 9309 §2.3.1).
type RobotsResult string

const (
	// RobotsOK: 2xx, the body is parsed.
	RobotsOK RobotsResult = "ok"
	// RobotsNotFound: 4xx other than 401/403 (or too many redirects):
	// no robots.txt, everything allowed (RFC 9309 §2.3.1.3).
	RobotsNotFound RobotsResult = "not-found"
	// RobotsUnauthorized: 401 or 403; allowed or disallowed as
	// RobotsConfig.Unauthorized says.
	RobotsUnauthorized RobotsResult = "unauthorized"
	// RobotsUnavailable: 5xx, 429 or a network error: everything
	// disallowed (RFC 9309 §2.3.1.4) unless a good copy younger than
	// StaleMax is kept.
	RobotsUnavailable RobotsResult = "unavailable"
)

// RobotsEntry is one cached robots.txt result, per origin.
type RobotsEntry struct {
	// Origin is "scheme://host[:port]" as fetched, lower-cased.
	Origin string `json:"origin"`
	// Result classifies the last fetch.
	Result RobotsResult `json:"result"`
	// Status is the HTTP status of the last fetch's final response; 0 for
	// a network error.
	Status int `json:"status,omitempty"`
	// Err is the last fetch's error text, if any.
	Err string `json:"err,omitempty"`
	// Body is the robots.txt body when Result is RobotsOK (at most
	// robots.MaxSize bytes).
	Body []byte `json:"body,omitempty"`
	// Fetched is when the last fetch ended (wall clock of the fetching
	// process; robots TTLs are hours, so clock skew does not matter).
	Fetched time.Time `json:"fetched"`
	// Expires is when the result should be fetched again.
	Expires time.Time `json:"expires"`
	// Failures counts consecutive RobotsUnavailable results (backoff).
	Failures int `json:"failures,omitempty"`
	// Good and GoodFetched keep the last 2xx body while robots.txt is
	// unavailable, for up to StaleMax (RFC 9309 §2.3.1.4).
	Good        []byte    `json:"good,omitempty"`
	GoodFetched time.Time `json:"good_fetched,omitzero"`
}

// RobotsStore persists robots.txt results. Implementations must be safe
// for concurrent use and pass statetest.RobotsStore.
type RobotsStore interface {
	// GetRobots returns the entry for origin, or ErrNotFound.
	GetRobots(ctx context.Context, origin string) (RobotsEntry, error)
	// PutRobots stores e under e.Origin, replacing any previous entry.
	// Entries may be dropped once GoodFetched+StaleMax and Expires have
	// both passed.
	PutRobots(ctx context.Context, e RobotsEntry) error
	// DeleteRobots removes origin's entry; a missing entry is no error.
	DeleteRobots(ctx context.Context, origin string) error
}

// DelayEntry is the stored delay configuration of one key (the polite-proxy thesis:
// manual and robots delays kept apart).
type DelayEntry struct {
	// Key is the politeness key; DefaultDelayKey holds the default delay.
	Key string `json:"key"`
	// HasManual is true when an operator (config file or admin API) set
	// Manual.
	HasManual bool `json:"has_manual,omitempty"`
	// Manual is the operator's delay; 0 with HasManual means no delay.
	Manual time.Duration `json:"manual,omitempty"`
	// Override forces Manual even over robots and adaptive delays.
	Override bool `json:"override,omitempty"`
	// Robots is the Crawl-delay (or Request-rate interval, whichever is
	// larger) last read from the key's robots.txt, capped; 0 when none.
	Robots time.Duration `json:"robots,omitempty"`
	// Updated is when the entry was last written.
	Updated time.Time `json:"updated"`
}

// DefaultDelayKey is the DelayStore key under which SetDefaultDelay keeps
// the runtime default delay. It cannot be a host name.
const DefaultDelayKey = "*"

// DelayStore persists the delay configuration. Implementations must be
// safe for concurrent use and pass statetest.DelayStore.
type DelayStore interface {
	// GetDelay returns key's entry, or ErrNotFound.
	GetDelay(ctx context.Context, key string) (DelayEntry, error)
	// PutDelay stores e under e.Key, replacing any previous entry.
	PutDelay(ctx context.Context, e DelayEntry) error
	// DeleteDelay removes key's entry; a missing entry is no error.
	DeleteDelay(ctx context.Context, key string) error
	// ListDelays returns at most limit entries with keys greater than
	// after, in key order (limit ≤ 0 means 100; at most 10000).
	ListDelays(ctx context.Context, after string, limit int) ([]DelayEntry, error)
}

// Listing bounds for ListDelays.
const (
	DefaultListLimit = 100
	MaxListLimit     = 10000
)

// ListLimit normalizes a ListDelays limit; for implementations.
func ListLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultListLimit
	case limit > MaxListLimit:
		return MaxListLimit
	}
	return limit
}

// Observer receives the gate's events, for metrics. Methods must be fast
// and safe for concurrent use. The proxy adapts it to Prometheus.
type Observer interface {
	// RobotsFetched reports one robots.txt fetch: its result, whether a
	// stale good copy stays in force, and how long it took.
	RobotsFetched(origin string, result RobotsResult, stale bool, took time.Duration)
	// Decided reports one Try or Wait answer (Peek is not reported).
	Decided(d Decision)
}

// Backend is where a Gate keeps its state. Nil fields get the memory
// implementations (state lost at exit).
type Backend struct {
	State  State
	Robots RobotsStore
	Delays DelayStore
	// HTTPClient fetches robots.txt. Nil means a client with
	// RobotsConfig.FetchTimeout over http.DefaultTransport. Its
	// CheckRedirect is replaced (on a copy) to enforce MaxRedirects.
	HTTPClient *http.Client
	// Observer receives events; nil discards them.
	Observer Observer
	// RobotsStored, when set, is called with the origin after every
	// robots.txt result the gate stores (fetched, redirected to, failed):
	// the hook for a caller that keeps state derived from the file (the
	// crawler's host map re-reads Host and Mirror-site lines). It must
	// not block.
	RobotsStored func(origin string)
	// Now is the clock for robots expiry and Permit deadlines, and of the
	// memory State made when State is nil; nil means time.Now. (Other
	// States keep their own clock: Redis uses the server's.)
	Now func() time.Time
}
