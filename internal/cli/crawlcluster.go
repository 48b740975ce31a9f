package cli

// `courtesy crawl --redis-cluster`: one crawl node of a crawl shared on a
// Redis Cluster (frontier, politeness gate and robots.txt cache in Redis;
// WARC files and crawl.log per node).

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/crawl"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/redis/go-redis/v9"
)

// The cluster frontier is a crawl frontier.
var _ crawl.Frontier = (*cluster.Frontier)(nil)

// clusterDrainGrace is how long a crawl node sees the shared crawl with
// nothing queued and nothing in flight before it stops: another node's
// acknowledgement and its page's new links land a moment apart.
const clusterDrainGrace = 3 * time.Second

// crawlNodeKnownCache is how many URLs a crawl node remembers as stored,
// so that links it finds again cost no Redis round trip (about 40 MB).
const crawlNodeKnownCache = 1 << 20

// crawlNode is this process's membership in a shared crawl.
type crawlNode struct {
	rc  redis.UniversalClient
	fr  *cluster.Frontier
	mem *cluster.Membership
	id  string

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
	fr, err := cluster.New(ctx, rc, cluster.Options{KnownCache: crawlNodeKnownCache})
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
	opts.Politeness = &backend
	opts.DrainGrace = clusterDrainGrace
	n := &crawlNode{rc: rc, fr: fr, mem: mem, id: cluster.NewNodeID(), stop: func() {}}
	log.Info("joined the shared crawl", "redis", addrs, "node", n.id)
	return n, nil
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
		return cluster.NodeInfo{ID: n.id, Role: "crawl", CrawlID: frontierID(crawlID), Started: started,
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

// close ends the heartbeats (the node leaves the membership) and closes
// the Redis client.
func (n *crawlNode) close() {
	n.stop()
	n.rc.Close()
}
