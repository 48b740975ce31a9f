package cluster

import "context"

// QueueRow is one queue of a crawl as the crawl's index knows it (the
// queue's state at its last update).
type QueueRow struct {
	Key string
	// Queued counts the URLs not completed (leased ones included);
	// InFlight the URLs leased; Completed the URLs acknowledged.
	Queued, InFlight, Completed uint64
	Retired                     bool
}

// QueueRows returns every queue of a crawl from its index, sorted by key:
// at most maxListQueues (about a million); of a crawl with more, the first
// ones found, and LastError says the list was cut.
// It reads the index shards only (HSCAN), never the queues themselves, so
// that a console can list a large crawl's hosts.
func (f *Frontier) QueueRows(ctx context.Context, crawlID string) ([]QueueRow, error) {
	es, err := f.indexEntries(ctx, normCrawl(crawlID))
	if err != nil {
		return nil, err
	}
	out := make([]QueueRow, len(es))
	for i, e := range es {
		out[i] = QueueRow{Key: e.key, Queued: uint64(max(e.queued, 0)), InFlight: uint64(max(e.inflight, 0)),
			Completed: uint64(max(e.completed, 0)), Retired: e.retired}
	}
	return out, nil
}
