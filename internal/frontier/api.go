package frontier

import (
	"context"
	"time"
)

// API is what a crawler and a URLFrontier service (every call the
// service's server makes) need of a frontier:
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
	// ListQueues returns up to size (0: 100) queue keys of a crawl in key
	// order from start, and how many queues match; without
	// includeInactive, blocked, retired and empty queues are left out.
	ListQueues(crawlID string, start, size int, includeInactive bool) ([]string, int)
	// DeleteQueue removes a queue and its URLs not completed (completed
	// ones stay known), returning how many it removed.
	DeleteQueue(ctx context.Context, crawlID, key string) (uint64, error)
	// DeleteCrawl removes a crawl, returning how many URLs not completed
	// it held.
	DeleteCrawl(ctx context.Context, crawlID string) (uint64, error)
	// SetActive pauses (false) or resumes (true) Get; Put still stores.
	SetActive(active bool)
	// Active reports whether Get serves URLs.
	Active() bool
	// ListURLs calls fn for the URLs p selects, queue by queue in key
	// order.
	ListURLs(ctx context.Context, p ListParams, fn func(URLEntry) error) error
	// CountURLs counts the URLs p selects (Start and Size ignored).
	CountURLs(ctx context.Context, p ListParams) (uint64, error)
	// PurgeURLs deletes the URLs p selects created at or before
	// createdBefore, returning how many; they may be discovered again.
	PurgeURLs(ctx context.Context, p ListParams, createdBefore time.Time) (uint64, error)
	// Close releases the frontier's resources.
	Close() error
}

var _ API = (*Frontier)(nil)
