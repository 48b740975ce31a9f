package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// NodeInfo is what a node publishes in each heartbeat (the RDFa spider's
// system manager design: every service reports its state each second).
type NodeInfo struct {
	// ID names the node; unique in the deployment (NewNodeID).
	ID string `json:"id"`
	// Role is "crawl" or "serve".
	Role    string `json:"role"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// CrawlID is the crawl the node works on ("" for a serve node).
	CrawlID string    `json:"crawl_id,omitempty"`
	Started time.Time `json:"started"`
	// CPUSeconds is the process's user and system CPU time.
	CPUSeconds float64 `json:"cpu_seconds"`
	// RSSBytes is the resident set size.
	RSSBytes   int64 `json:"rss_bytes"`
	Goroutines int   `json:"goroutines"`
	// PagesPerSec is the fetch rate over the last interval.
	PagesPerSec float64 `json:"pages_per_sec"`
	// InFlight is the number of fetches under way.
	InFlight  int    `json:"in_flight"`
	LastError string `json:"last_error,omitempty"`
}

// NodeStatus is a node as the membership list sees it.
type NodeStatus struct {
	NodeInfo
	// LastSeen is the time of its last heartbeat (the membership clock).
	LastSeen time.Time
	// Dead is set when no heartbeat came for MembershipOptions.DeadAfter.
	Dead bool
}

// MembershipOptions tunes NewMembership. The zero value is ready to use.
type MembershipOptions struct {
	// Prefix starts the Redis keys; no braces. Default "courtesy:nodes:".
	Prefix string
	// Interval is the time between heartbeats; 0 means 1 s.
	Interval time.Duration
	// DeadAfter is how long a node may miss heartbeats before it is
	// listed as dead; 0 means 5 s.
	DeadAfter time.Duration
	// Forget is how long a dead node stays listed; 0 means 1 h.
	Forget time.Duration
	// Now is the clock; nil means Redis server time (so that nodes'
	// clocks need not agree). Tests inject a fake one.
	Now func() time.Time
}

// Membership publishes this node's heartbeats and lists every node's.
// Heartbeats live in one hash tag: a hash of node ID → NodeInfo (JSON)
// and a sorted set of node ID → time of the last heartbeat.
type Membership struct {
	c redis.UniversalClient
	o MembershipOptions
}

// NewMembership returns a Membership on c.
func NewMembership(c redis.UniversalClient, o MembershipOptions) (*Membership, error) {
	if strings.ContainsAny(o.Prefix, "{}") {
		return nil, fmt.Errorf("cluster: membership prefix %q holds a brace", o.Prefix)
	}
	if o.Prefix == "" {
		o.Prefix = "courtesy:nodes:"
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = 5 * time.Second
	}
	if o.Forget <= 0 {
		o.Forget = time.Hour
	}
	return &Membership{c: c, o: o}, nil
}

func (m *Membership) keys() []string {
	return []string{m.o.Prefix + "{nodes}:info", m.o.Prefix + "{nodes}:seen"}
}

func (m *Membership) nowArg() int64 {
	if m.o.Now == nil {
		return -1
	}
	return m.o.Now().UnixMilli()
}

const luaNow = `
local now = tonumber(ARGV[1])
if now < 0 then
  local tt = redis.call('TIME')
  now = tonumber(tt[1]) * 1000 + math.floor(tonumber(tt[2]) / 1000)
end
`

// heartbeatScript: ARGV now, id, info JSON, forget (ms).
var heartbeatScript = redis.NewScript(luaNow + `
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[2], now, ARGV[2])
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[4]))
for _, id in ipairs(old) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return now
`)

// listScript: ARGV now. Returns now, then id, last seen, info per node.
var listScript = redis.NewScript(luaNow + `
local out = {now}
local seen = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #seen, 2 do
  out[#out + 1] = seen[i]
  out[#out + 1] = seen[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[1], seen[i]) or ''
end
return out
`)

// maxInfoBytes bounds a heartbeat (the last error is cut to fit).
const maxInfoBytes = 8 << 10

// Publish writes one heartbeat.
func (m *Membership) Publish(ctx context.Context, info NodeInfo) error {
	if info.ID == "" {
		return errors.New("cluster: heartbeat without a node ID")
	}
	if len(info.LastError) > 1024 {
		info.LastError = info.LastError[:1024]
	}
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("cluster: heartbeat: %w", err)
	}
	if len(b) > maxInfoBytes {
		return fmt.Errorf("cluster: heartbeat of %d bytes (at most %d)", len(b), maxInfoBytes)
	}
	if err := heartbeatScript.Run(ctx, m.c, m.keys(), m.nowArg(), info.ID, b, m.o.Forget.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("cluster: heartbeat: %w", err)
	}
	return nil
}

// Leave removes a node from the list (a clean shutdown).
func (m *Membership) Leave(ctx context.Context, id string) error {
	k := m.keys()
	_, err := m.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, k[0], id)
		p.ZRem(ctx, k[1], id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cluster: leave: %w", err)
	}
	return nil
}

// Nodes lists the nodes, live ones first, each group by ID.
func (m *Membership) Nodes(ctx context.Context) ([]NodeStatus, error) {
	res, err := listScript.Run(ctx, m.c, m.keys(), m.nowArg()).Slice()
	if err != nil {
		return nil, fmt.Errorf("cluster: nodes: %w", err)
	}
	if len(res) < 1 {
		return nil, errors.New("cluster: nodes: empty answer")
	}
	now, _ := asInt(res[0])
	var out []NodeStatus
	for i := 1; i+2 < len(res); i += 3 {
		id, _ := res[i].(string)
		seenS, _ := res[i+1].(string)
		seen, _ := strconv.ParseFloat(seenS, 64)
		js, _ := res[i+2].(string)
		var info NodeInfo
		if js != "" {
			if err := json.Unmarshal([]byte(js), &info); err != nil {
				info.LastError = "unreadable heartbeat: " + err.Error()
			}
		}
		info.ID = id
		st := NodeStatus{NodeInfo: info, LastSeen: time.UnixMilli(int64(seen))}
		st.Dead = now-int64(seen) > m.o.DeadAfter.Milliseconds()
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b NodeStatus) int {
		if a.Dead != b.Dead {
			if a.Dead {
				return 1
			}
			return -1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Run publishes a heartbeat every Interval, with the fields info returns
// (ID, Role, CrawlID, PagesPerSec, InFlight, LastError: the caller's) and
// the process's own (Host, PID, CPU, RSS, goroutines, filled here when
// zero), until ctx ends; then it removes the node. A failed heartbeat is
// retried at the next tick; the last error is returned when ctx ends.
func (m *Membership) Run(ctx context.Context, info func() NodeInfo) error {
	t := time.NewTicker(m.o.Interval)
	defer t.Stop()
	var lastErr error
	var id string
	for {
		ni := info()
		FillProcess(&ni)
		id = ni.ID
		if err := m.Publish(ctx, ni); err != nil && ctx.Err() == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			lctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = m.Leave(lctx, id)
			cancel()
			return lastErr
		case <-t.C:
		}
	}
}

// FillProcess sets the process fields of info left zero: host, PID, CPU
// time, RSS and goroutines.
func FillProcess(info *NodeInfo) {
	if info.Host == "" {
		info.Host, _ = os.Hostname()
	}
	if info.PID == 0 {
		info.PID = os.Getpid()
	}
	if info.Goroutines == 0 {
		info.Goroutines = runtime.NumGoroutine()
	}
	var ru syscall.Rusage
	if info.CPUSeconds == 0 && syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		info.CPUSeconds = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	}
	if info.RSSBytes == 0 {
		info.RSSBytes = rss()
	}
}

// rss reads the resident set size from /proc (Linux); 0 elsewhere.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// NewNodeID returns "host-pid-random", unique across restarts.
func NewNodeID() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%04x", h, os.Getpid(), time.Now().UnixNano()&0xffff)
}
