package frontier

import (
	"context"
	"time"
)

// API is what a crawler and a URLFrontier service need of a frontier:
// *Frontier (embedded, one process) implements it, and so does the Redis
// Cluster frontier shared by many processes (internal/cluster). Methods
// without a context or an error are the embedded frontier's in-memory
// calls; a remote implementation bounds them with its own timeout.
type API interface {
	// Put stores discovered URLs (if unknown) and updates known ones.
	Put(ctx context.Context, items []Item) ([]Status, error)
	// Ack acknowledges a leased URL: refetchFrom zero marks it completed.
	Ack(ctx context.Context, info URLInfo, refetchFrom time.Time) error
	// Get leases URLs that are due.
	Get(ctx context.Context, p GetParams) ([]Lease, error)
	// Release ends a lease without changing the URL.
	Release(info URLInfo)
	// WaitReady blocks until a queue may have become servable, d passes
	// or ctx is done.
	WaitReady(ctx context.Context, d time.Duration)
	// BlockQueueUntil keeps a queue from being served before t.
	BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error
	// SetDelay sets a queue's minimum time between servings (key "": the
	// default of the frontier).
	SetDelay(ctx context.Context, crawlID, key string, d time.Duration) error
	// SetCrawlLimit bounds the completed URLs of a queue.
	SetCrawlLimit(ctx context.Context, crawlID, key string, limit uint64) error
	// Retire stops serving a queue for good.
	Retire(ctx context.Context, crawlID, key, reason string) error
	// Stats describes a crawl, or one of its queues.
	Stats(crawlID, key string) Stats
	// Lookup returns the state of a URL, or ErrNotFound.
	Lookup(ctx context.Context, crawlID, rawURL string) (URLStatus, error)
	// ListCrawls returns the crawl IDs, sorted.
	ListCrawls() []string
	// Close releases the frontier's resources.
	Close() error
}

var _ API = (*Frontier)(nil)
