package cli

// `courtesy crawl --redis-cluster`: one crawl node of a crawl shared on a
// Redis Cluster (frontier, politeness gate and robots.txt cache in Redis;
// WARC files and crawl.log per node).

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/crawl"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/redis/go-redis/v9"
)

// The cluster frontier is a crawl frontier.
var _ crawl.Frontier = (*cluster.Frontier)(nil)

// clusterDrainGrace is how long a crawl node sees the shared crawl with
// nothing queued and nothing in flight before it stops: another node's
// acknowledgement and its page's new links land a moment apart.
const clusterDrainGrace = 3 * time.Second

// clusterLocalGates, when set, breaks the politeness that the crawl's
// nodes share: each node keeps its politeness gate state, robots.txt cache
// and delays to itself instead of in Redis, and does not hold a host's
// queue in the shared frontier after a fetch (the crawler holds it until
// the gate's next time for the host, a second, shared, guard of the
// delay). The nodes then share only the frontier's one URL in flight per
// host. Nothing in the program sets it; only this package's tests do (in
// the child processes they start, see crawlcluster_gates_test.go), as the
// negative control of the distributed crawl's politeness checks: the same
// report that passes a cluster must fail this one.
var clusterLocalGates bool

// unblockedFrontier is the shared frontier without the crawler's holds of
// a queue after a fetch (clusterLocalGates only).
type unblockedFrontier struct{ *cluster.Frontier }

// BlockQueueUntil does nothing.
func (unblockedFrontier) BlockQueueUntil(context.Context, string, string, time.Time) error {
	return nil
}

// Put drops the holds that acknowledgements carry (frontier.Item.Hold).
func (f unblockedFrontier) Put(ctx context.Context, items []frontier.Item) ([]frontier.Status, error) {
	unheld := make([]frontier.Item, len(items))
	for i, it := range items {
		it.Hold = time.Time{}
		unheld[i] = it
	}
	return f.Frontier.Put(ctx, unheld)
}

// crawlNodeKnownCache is how many URLs a crawl node remembers as stored,
// so that links it finds again cost no Redis round trip (about 40 MB).
const crawlNodeKnownCache = 1 << 20

// crawlNodeReadyCache is how long a crawl node's Get keeps the ready
// queues it read from the shared index to lease from them, before it
// reads the index again (cluster.Options.ReadyCache): its dispatcher asks
// for one or two queues at a time, as workers free up.
const crawlNodeReadyCache = 50 * time.Millisecond

// crawlNode is this process's membership in a shared crawl.
type crawlNode struct {
	rc  redis.UniversalClient
	fr  *cluster.Frontier
	mem *cluster.Membership
	id  string
	log *slog.Logger

	stop func()
}

// joinCluster connects to the Redis deployment at addrs and sets opts to
// use its shared frontier, politeness state, robots.txt cache and delays.
// The caller starts the heartbeats with heartbeat once the crawler exists
// and closes the node when the crawl returns.
func joinCluster(ctx context.Context, addrs string, opts *crawl.Options, log *slog.Logger) (*crawlNode, error) {
	rc, err := cluster.Dial(ctx, []string{addrs})
	if err != nil {
		return nil, fmt.Errorf("crawl: --redis-cluster: %w", err)
	}
	fr, err := cluster.New(ctx, rc, cluster.Options{KnownCache: crawlNodeKnownCache, ReadyCache: crawlNodeReadyCache})
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("crawl: --redis-cluster: %w", err)
	}
	mem, err := cluster.NewMembership(rc, cluster.MembershipOptions{})
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("crawl: --redis-cluster: %w", err)
	}
	backend := redisbackend.Backend(rc, redisbackend.Options{})
	opts.Frontier = fr
	if clusterLocalGates {
		opts.Frontier = unblockedFrontier{fr}
	} else {
		opts.Politeness = &backend
	}
	opts.DrainGrace = clusterDrainGrace
	n := &crawlNode{rc: rc, fr: fr, mem: mem, id: cluster.NewNodeID(), log: log, stop: func() {}}
	log.Info("joined the shared crawl", "redis", addrs, "node", n.id)
	return n, nil
}

// share sets what the node shares with the crawl's other nodes beyond
// joinCluster's frontier and gate: the seed hosts of the seeds scope, and
// politeness permits as long as the node's frontier leases.
func (n *crawlNode) share(cfg *crawl.Config, opts *crawl.Options, lease time.Duration) {
	opts.SeedHosts = &redisSeedHosts{rc: n.rc, key: seedHostsKey(frontierID(cfg.CrawlID))}
	clusterGateLease(&cfg.Politeness, lease)
}

// clusterGateLease makes the politeness gate's permits, shared in Redis,
// last as long as the node's frontier leases (--lease), unless the
// configuration file sets politeness.lease. A node killed while it
// fetches leaves its permit in Redis, holding the host's slot until the
// permit expires; with the gate's own default (2 minutes) the host's URLs,
// served again to the other nodes one --lease after the death, would wait
// at the gate for the rest of those 2 minutes. Like --lease, the permit
// must outlast any fetch, or another node could start on the host before
// the fetch ends.
func clusterGateLease(pc *politeness.Config, lease time.Duration) {
	if pc.Lease == 0 {
		pc.Lease = lease
	}
}

// seedHostsKey is the Redis set of a crawl's seed hosts (one slot).
func seedHostsKey(crawlID string) string {
	return "courtesy:crawl:{seedhosts\x1f" + strings.NewReplacer("%", "%25", "}", "%7D").Replace(crawlID) + "}"
}

// redisSeedHosts is the crawl.SeedHostSet of a shared crawl: a Redis set
// per crawl. Hosts reads the whole set only when its size changed.
type redisSeedHosts struct {
	rc  redis.UniversalClient
	key string

	mu   sync.Mutex
	size int64 // the set's size at the last read; guarded by mu
}

// Add implements crawl.SeedHostSet.
func (s *redisSeedHosts) Add(ctx context.Context, hosts []string) error {
	for len(hosts) > 0 {
		n := min(len(hosts), 1000)
		args := make([]any, n)
		for i, h := range hosts[:n] {
			args[i] = h
		}
		if err := s.rc.SAdd(ctx, s.key, args...).Err(); err != nil {
			return fmt.Errorf("crawl: sharing seed hosts: %w", err)
		}
		hosts = hosts[n:]
	}
	return nil
}

// Hosts implements crawl.SeedHostSet.
func (s *redisSeedHosts) Hosts(ctx context.Context) ([]string, bool, error) {
	size, err := s.rc.SCard(ctx, s.key).Result()
	if err != nil {
		return nil, false, fmt.Errorf("crawl: reading seed hosts: %w", err)
	}
	s.mu.Lock()
	same := size == s.size
	s.mu.Unlock()
	if same {
		return nil, false, nil
	}
	hosts, err := s.rc.SMembers(ctx, s.key).Result()
	if err != nil {
		return nil, false, fmt.Errorf("crawl: reading seed hosts: %w", err)
	}
	s.mu.Lock()
	s.size = int64(len(hosts))
	s.mu.Unlock()
	return hosts, true, nil
}

// heartbeat publishes this node as role "crawl" of crawlID every second
// (pages per second, fetches in flight, the frontier's last error) until
// close.
func (n *crawlNode) heartbeat(ctx context.Context, crawlID string, c *crawl.Crawler) {
	started := time.Now()
	var mu sync.Mutex
	lastT, lastPages := started, int64(0)
	info := func() cluster.NodeInfo {
		pages, inFlight := c.Counts()
		mu.Lock()
		now := time.Now()
		pps := 0.0
		if dt := now.Sub(lastT).Seconds(); dt > 0 {
			pps = float64(pages-lastPages) / dt
		}
		lastT, lastPages = now, pages
		mu.Unlock()
		return cluster.NodeInfo{ID: n.id, Role: "crawl", Version: Version, CrawlID: frontierID(crawlID), Started: started,
			PagesPerSec: pps, InFlight: int(inFlight), LastError: n.fr.LastError()}
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.mem.Run(hctx, info) // leaves the membership when hctx ends
	}()
	n.stop = func() {
		cancel()
		<-done
	}
}

// console sets the console's nodes view (every node of the deployment,
// from the heartbeats, and the totals of crawlID) and its hosts views
// (crawlID's queues in Redis).
func (n *crawlNode) console(o *crawl.ConsoleOptions, crawlID string) {
	o.Nodes = &clusterNodes{mem: n.mem, fr: n.fr, crawlID: frontierID(crawlID)}
	o.Frontier = &clusterHosts{f: n.fr, crawl: frontierID(crawlID)}
}

// close ends the heartbeats (the node leaves the membership), logs the
// shared frontier's Redis work by operation and closes the Redis client.
func (n *crawlNode) close() {
	n.stop()
	n.log.Info(frontierWorkMsg, append(frontierWork(n.fr.Ops()), "empty_leases", n.fr.Counters().EmptyLeases)...)
	n.rc.Close()
}

// frontierWorkMsg is the message of the line that gives the shared
// frontier's Redis work by operation (bench/cluster reads it).
const frontierWorkMsg = "shared frontier Redis work (commands/round trips)"

// frontierWork is one log attribute per operation, its commands and round
// trips (cluster.OpCount) as "C/R", the name's spaces as '_'. (The line
// also gives the empty leases, cluster.Counters.EmptyLeases, as a plain
// number.)
func frontierWork(ops []cluster.OpCount) []any {
	out := make([]any, 0, len(ops))
	for _, o := range ops {
		out = append(out, slog.String(strings.ReplaceAll(o.Op, " ", "_"), fmt.Sprintf("%d/%d", o.Commands, o.RoundTrips)))
	}
	return out
}
