package crawl

import (
	"context"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// Frontier is what the crawler asks of its frontier: the embedded
// *frontier.Frontier (opened in the data directory when Options.Frontier
// is nil) or a remote one, such as a URLFrontier service's client. The
// signatures are the embedded frontier's.
type Frontier interface {
	// Get leases URLs due now.
	Get(ctx context.Context, p frontier.GetParams) ([]frontier.Lease, error)
	// Put stores new URLs and acknowledges leased ones (Known items), one
	// status per item; a URL is acknowledged only after its WARC records
	// are on disk.
	Put(ctx context.Context, items []frontier.Item) ([]frontier.Status, error)
	// Release gives a leased URL back unchanged.
	Release(info frontier.URLInfo)
	// BlockQueueUntil holds a queue until t (the gate's next time for the
	// host, Retry-After, backoff).
	BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error
	// SetDelay sets a queue's delay between two servings (robots.txt
	// Crawl-delay and Request-rate; remote frontiers only).
	SetDelay(ctx context.Context, crawlID, key string, d time.Duration) error
	// Retire stops serving a queue for good.
	Retire(ctx context.Context, crawlID, key, reason string) error
	// Stats counts a crawl's URLs.
	Stats(crawlID, key string) frontier.Stats
	// WaitReady waits until a URL may be due, at most d.
	WaitReady(ctx context.Context, d time.Duration)
}

var _ Frontier = (*frontier.Frontier)(nil)

// knower is a Frontier that can tell whether it holds a URL (the embedded
// one). A trap cut is logged only for a URL the frontier does not hold:
// a held URL has, or will have, its own crawl.log line.
type knower interface {
	Known(crawlID, rawURL string) (bool, error)
}

var _ knower = (*frontier.Frontier)(nil)

// shareDelay tells a remote frontier the robots.txt delay of a host's
// queue (the larger of Crawl-delay and the Request-rate interval), so
// that every crawler process sharing the frontier spaces the host's
// URLs: each process has its own politeness gate. The embedded frontier
// needs no delay: the gate already holds the queue after each fetch.
func (c *Crawler) shareDelay(ctx context.Context, key string, g *robots.Group) {
	if c.opts.Frontier == nil || g == nil {
		return
	}
	d := g.MinInterval("/", c.now())
	if d <= 0 {
		return
	}
	if err := c.fr.SetDelay(context.WithoutCancel(ctx), c.cfg.CrawlID, key, d); err != nil {
		c.log.Warn("frontier delay not set", "key", key, "delay", d, "err", err)
	}
}
