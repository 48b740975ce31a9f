package cli

// The nodes of a crawl shared on Redis Cluster, as ListNodes and the web
// console show them: both read the membership heartbeats (every node
// publishes one a second; a node silent for 5 s is dead).

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/console"
)

// crawlNodePrefix starts a crawl node's ListNodes entry. A crawl node
// serves nothing, so it has no address: its entry is "crawl/" and its node
// ID (host-PID-random), which has no colon, so that a client that dials
// host:port entries cannot mistake it for one.
const crawlNodePrefix = "crawl/"

// listedNodes is what URLFrontier's ListNodes answers from the heartbeats:
// the live serve nodes' gRPC addresses, sorted, then the live crawl nodes
// as crawlNodePrefix+ID, sorted. Serve nodes come first so that a client
// taking the first entry gets an address it can dial. Dead nodes are left
// out.
func listedNodes(ns []cluster.NodeStatus) []string {
	var serve, crawl []string
	for _, n := range ns {
		if n.Dead {
			continue
		}
		switch n.Role {
		case "serve":
			if n.Host != "" && !slices.Contains(serve, n.Host) {
				serve = append(serve, n.Host)
			}
		case "crawl":
			crawl = append(crawl, crawlNodePrefix+n.ID)
		}
	}
	slices.Sort(serve)
	slices.Sort(crawl)
	return append(serve, slices.Compact(crawl)...)
}

// maxTotalsCrawls bounds the crawls whose totals the nodes view reads (one
// Redis round trip per index shard each).
const maxTotalsCrawls = 50

// clusterNodes is the console's nodes view over the membership heartbeats
// (console.Nodes), with the crawls' totals (console.ClusterTotals) as
// `courtesy cluster status` prints them.
type clusterNodes struct {
	mem *cluster.Membership
	fr  *cluster.Frontier
	// crawlID, when set, is the one crawl whose totals are shown (a crawl
	// node's console); empty means every crawl (a serve node's).
	crawlID string

	// mu guards cpu: per node, its last heartbeat's CPU time and the
	// cores busy between its last two heartbeats seen here.
	mu  sync.Mutex
	cpu map[string]cpuSample
}

type cpuSample struct {
	seconds float64
	at      time.Time
	cores   float64
}

// Nodes lists every node the membership holds: live ones and those dead
// for less than an hour, marked dead.
func (c *clusterNodes) Nodes(ctx context.Context) ([]console.Node, error) {
	ns, err := c.mem.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("cli: cluster nodes: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cpu == nil {
		c.cpu = map[string]cpuSample{}
	}
	out := make([]console.Node, len(ns))
	seen := make(map[string]bool, len(ns))
	for i, n := range ns {
		seen[n.ID] = true
		out[i] = consoleNode(n, c.cores(n))
	}
	for id := range c.cpu { // forget nodes the membership forgot
		if !seen[id] {
			delete(c.cpu, id)
		}
	}
	return out, nil
}

// cores is the CPU a node keeps busy: its CPU time over the time between
// the last two of its heartbeats seen here, or, at the first one, its
// average since it started. Guarded by c.mu.
func (c *clusterNodes) cores(n cluster.NodeStatus) float64 {
	prev, ok := c.cpu[n.ID]
	switch {
	case ok && !n.LastSeen.After(prev.at):
		return prev.cores // the same heartbeat as last time
	case ok && n.CPUSeconds >= prev.seconds:
		prev.cores = (n.CPUSeconds - prev.seconds) / n.LastSeen.Sub(prev.at).Seconds()
	default:
		prev.cores = 0
		if up := n.LastSeen.Sub(n.Started).Seconds(); !n.Started.IsZero() && up > 0 {
			prev.cores = n.CPUSeconds / up
		}
	}
	prev.seconds, prev.at = n.CPUSeconds, n.LastSeen
	c.cpu[n.ID] = prev
	return prev.cores
}

// consoleNode is a heartbeat as the console shows it: a serve node's
// advertised gRPC address (its heartbeat's host) is its address.
func consoleNode(n cluster.NodeStatus, cores float64) console.Node {
	cn := console.Node{ID: n.ID, Role: n.Role, Host: n.Host, PID: n.PID, Version: n.Version, CrawlID: n.CrawlID,
		Started: n.Started, CPU: cores, CPUSeconds: n.CPUSeconds, RSS: n.RSSBytes, Goroutines: n.Goroutines,
		PagesPerSec: n.PagesPerSec, InFlight: int64(n.InFlight), LastSeen: n.LastSeen, LastError: n.LastError, Dead: n.Dead}
	if n.Role == "serve" {
		cn.Addr = n.Host
	}
	return cn
}

// Totals returns the totals of the crawl c shows, or of every crawl (at
// most maxTotalsCrawls, by ID).
func (c *clusterNodes) Totals(ctx context.Context) ([]console.CrawlTotals, error) {
	crawls := []string{c.crawlID}
	if c.crawlID == "" {
		crawls = c.fr.ListCrawls() // sorted; nil on a Redis error (the frontier's LastError)
		crawls = crawls[:min(len(crawls), maxTotalsCrawls)]
	}
	out := make([]console.CrawlTotals, 0, len(crawls))
	for _, id := range crawls {
		s, err := c.fr.StatsContext(ctx, id, "")
		if err != nil {
			return nil, fmt.Errorf("cli: cluster totals of %s: %w", id, err)
		}
		out = append(out, console.CrawlTotals{CrawlID: s.CrawlID, Queued: s.Size, InFlight: s.InProcess, Completed: s.Completed,
			Queues: s.Queues, ActiveQueues: s.ActiveQueues, RetiredURLs: s.Retired, RetiredQueues: s.RetiredQueues})
	}
	return out, nil
}
