package console

import (
	"context"
	"time"
)

// Progress is a crawl's counters at one moment. The crawler fills it; the
// console derives rates and the ETA from successive values.
type Progress struct {
	// Start is when the crawl (this run) started.
	Start time.Time
	// Pages counts responses received (any status); Bytes their body
	// bytes.
	Pages, Bytes int64
	// Errors counts failed fetches (network errors).
	Errors int64
	// TrapHits counts URLs cut by a trap limit; Duplicates exact and near
	// duplicates; RobotsDenied URLs robots.txt refused.
	TrapHits, Duplicates, RobotsDenied int64
	// Status counts responses by HTTP status code ("200", "404", ...);
	// MIME by media type. Either may be nil.
	Status map[string]int64
	MIME   map[string]int64
	// InFlight is the number of fetches under way.
	InFlight int64
	// MaxPages and MaxDuration bound the crawl (0: unbounded); with them
	// the console shows an ETA.
	MaxPages    int64
	MaxDuration time.Duration
	// WaitingUntil, when not zero, says that everything left is in
	// backoff or delay until then (the crawler knows best); when zero the
	// console derives it from the frontier.
	WaitingUntil time.Time
	// Finished is set once the crawl ended.
	Finished bool
}

// Crawl is what the console reads of a running crawl.
type Crawl interface {
	Progress() Progress
}

// QueueStats are the frontier's totals.
type QueueStats struct {
	// Queued counts URLs left to crawl; InFlight URLs leased.
	Queued, InFlight uint64
	// Completed counts completed URLs.
	Completed uint64
	// Hosts counts the queues; Active those with URLs left; Retired
	// those retired.
	Hosts, Active, Retired uint64
	// NextReady is when the next queue may be served; zero when nothing
	// is queued.
	NextReady time.Time
}

// HostRow is one host (frontier queue) as the hosts table lists it.
type HostRow struct {
	Host     string `json:"host"`
	Queued   uint64 `json:"queued"`
	InFlight uint64 `json:"in_flight"`
	Fetched  uint64 `json:"fetched"`
	Retired  string `json:"retired,omitempty"`
	// BlockedUntil is the frontier's block time for the host (the
	// crawler sets it from the politeness gate after every fetch, and an
	// operator's block); zero when none.
	BlockedUntil time.Time `json:"blocked_until,omitzero"`
}

// QueueEntry is one URL at the head of a host's queue.
type QueueEntry struct {
	URL      string    `json:"url"`
	Priority int       `json:"priority"`
	Depth    int       `json:"depth"`
	Due      time.Time `json:"due,omitzero"`
	Leased   bool      `json:"leased"`
}

// Frontier is what the console reads and changes of the crawl's queues.
type Frontier interface {
	Stats() QueueStats
	// Hosts calls fn with every host until fn returns false.
	Hosts(fn func(HostRow) bool)
	// Host returns one host, or an error wrapping ErrUnknownHost.
	Host(host string) (HostRow, error)
	// Head returns up to n URLs of the host's queue in serving order.
	Head(ctx context.Context, host string, n int) ([]QueueEntry, error)
	// Paused reports whether serving is paused; SetPaused pauses or
	// resumes it.
	Paused() bool
	SetPaused(paused bool)
	// AddSeeds queues absolute http(s) URLs as seeds and returns how many
	// were new.
	AddSeeds(ctx context.Context, urls []string) (int, error)
	// Block keeps the host from being served before until (zero:
	// unblock).
	Block(ctx context.Context, host string, until time.Time) error
	// Retire stops serving the host for good.
	Retire(ctx context.Context, host, reason string) error
}

// DelaySource names where a host's effective delay comes from.
type DelaySource string

// Delay sources, as the hosts table shows them.
const (
	SourceDefault  DelaySource = "default"
	SourceConfig   DelaySource = "config" // a manual delay: config file or admin API
	SourceRobots   DelaySource = "robots" // Crawl-delay
	SourceRate     DelaySource = "request-rate"
	SourceAdaptive DelaySource = "adaptive"
	SourceBackoff  DelaySource = "backoff"
)

// HostPoliteness is one host's politeness state.
type HostPoliteness struct {
	NextAllowed time.Time     `json:"next_allowed,omitzero"`
	Delay       time.Duration `json:"delay_ns"`
	Source      DelaySource   `json:"delay_source"`
	InFlight    int           `json:"in_flight"`
	Backoff     int           `json:"backoff_level"`
}

// RobotsInfo is the robots.txt the politeness gate holds for an origin.
type RobotsInfo struct {
	Origin  string    `json:"origin"`
	Result  string    `json:"result"`
	Status  int       `json:"status,omitempty"`
	Err     string    `json:"error,omitempty"`
	Fetched time.Time `json:"fetched,omitzero"`
	Expires time.Time `json:"expires,omitzero"`
	// Body is the robots.txt body (the last good one while it is
	// unavailable), at most 500 KiB.
	Body []byte `json:"-"`
}

// DelayRow is one politeness key with a manual or robots delay.
type DelayRow struct {
	Key       string        `json:"key"`
	Manual    time.Duration `json:"manual_ns"`
	HasManual bool          `json:"has_manual"`
	Override  bool          `json:"override"`
	Robots    time.Duration `json:"robots_ns"`
	Current   time.Duration `json:"current_ns"`
	Updated   time.Time     `json:"updated,omitzero"`
}

// Politeness is what the console reads and changes of the politeness
// gate.
type Politeness interface {
	// Host returns a host's politeness state (key: its politeness key).
	Host(ctx context.Context, key string) (HostPoliteness, error)
	// Robots returns the robots.txt cached for the host (http or https),
	// or an error wrapping ErrNoRobots.
	Robots(ctx context.Context, host string) (RobotsInfo, error)
	// SetDelay sets a key's manual delay (a host or a registrable domain,
	// as the gate's key mode says); override makes it win over robots.
	SetDelay(ctx context.Context, key string, d time.Duration, override bool) error
	// ClearDelay removes a key's manual delay.
	ClearDelay(ctx context.Context, key string) error
	// Delays lists keys with a manual or robots delay after the key
	// after, at most limit.
	Delays(ctx context.Context, after string, limit int) ([]DelayRow, error)
}

// Node is one heartbeat row of a cluster node (or this process alone).
// The fields a process alone has no value for stay zero.
type Node struct {
	ID string `json:"id"`
	// Role is "crawl" or "serve" in a cluster; empty for a process alone.
	Role string `json:"role,omitempty"`
	// Addr is where other programs reach the node (a serve node's gRPC
	// address); empty when it has none (a crawl node).
	Addr    string `json:"addr,omitempty"`
	Host    string `json:"host,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Version string `json:"version,omitempty"`
	// CrawlID is the crawl a crawl node works on.
	CrawlID string    `json:"crawl_id,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// CPU is the cores the process keeps busy, e.g. 1.5; CPUSeconds its
	// CPU time since it started.
	CPU         float64   `json:"cpu"`
	CPUSeconds  float64   `json:"cpu_seconds,omitempty"`
	RSS         int64     `json:"rss_bytes"`
	Goroutines  int       `json:"goroutines"`
	PagesPerSec float64   `json:"pages_per_s"`
	InFlight    int64     `json:"in_flight"`
	LastSeen    time.Time `json:"last_seen"`
	LastError   string    `json:"last_error,omitempty"`
	// Dead is the source's own verdict (a cluster's membership marks a
	// node dead after a few seconds without a heartbeat). The console
	// also flags a node silent for longer than Config.DeadAfter.
	Dead bool `json:"dead"`
}

// Nodes lists the heartbeats of a cluster's nodes.
type Nodes interface {
	Nodes(ctx context.Context) ([]Node, error)
}

// CrawlTotals are one crawl's totals over every node of a cluster.
type CrawlTotals struct {
	CrawlID       string `json:"crawl_id"`
	Queued        uint64 `json:"queued"`
	InFlight      uint64 `json:"in_flight"`
	Completed     uint64 `json:"completed"`
	Queues        uint64 `json:"queues"`
	ActiveQueues  uint64 `json:"active_queues"`
	RetiredURLs   uint64 `json:"retired_urls"`
	RetiredQueues uint64 `json:"retired_queues"`
}

// ClusterTotals is what a Nodes source of a cluster may also give: the
// totals of the crawls the cluster holds. The nodes view shows them when
// the source has them.
type ClusterTotals interface {
	Totals(ctx context.Context) ([]CrawlTotals, error)
}

// TraceEntry is one decision of the proxy's trace (the /trace of the
// polite-proxy thesis): who asked for what and what the proxy did.
type TraceEntry struct {
	Time    time.Time     `json:"time"`
	Client  string        `json:"client"`
	Method  string        `json:"method"`
	URL     string        `json:"url"`
	Outcome string        `json:"outcome"` // forwarded, cached, waited, rejected-429, forbidden-403, tunnel, error
	Status  int           `json:"status,omitempty"`
	Wait    time.Duration `json:"wait_ns,omitempty"`
}

// ProxyStats are a polite proxy's counters at one moment.
type ProxyStats struct {
	Requests    int64            `json:"requests"`
	Waits       int64            `json:"waits"`
	Forbidden   int64            `json:"forbidden_403"`
	TooMany     int64            `json:"too_many_429"`
	CacheHits   int64            `json:"cache_hits"`
	CacheMisses int64            `json:"cache_misses"`
	Tunnels     int64            `json:"open_tunnels"`
	Clients     map[string]int64 `json:"clients"`
	// Trace is the most recent decisions, newest first.
	Trace []TraceEntry `json:"trace"`
}

// Proxy is what the console reads of a polite proxy.
type Proxy interface {
	ProxyStats() ProxyStats
}

// Fetch is one crawl.log line about a host.
type Fetch struct {
	Time     time.Time     `json:"time"`
	Status   int           `json:"status"`
	Size     int64         `json:"size"`
	URL      string        `json:"url"`
	MIME     string        `json:"mime,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Notes    []string      `json:"annotations,omitempty"`
}

// FetchLog gives a host's recent fetches, newest first.
type FetchLog interface {
	Recent(host string, n int) ([]Fetch, error)
}

// Sources are what a console shows; any may be nil (its views and
// actions then answer 404 "not available here").
type Sources struct {
	Crawl      Crawl
	Frontier   Frontier
	Politeness Politeness
	Nodes      Nodes
	Proxy      Proxy
	FetchLog   FetchLog
}
