package cli

// The console's hosts views over a crawl shared on Redis Cluster: the
// queues come from the crawl's index shards, one host's row and queue head
// from its queue's keys.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// clusterReadTimeout bounds a console read of the cluster frontier made
// without a request's context (the totals and the hosts snapshot).
const clusterReadTimeout = 10 * time.Second

// clusterHosts is console.Frontier over one crawl of the cluster frontier.
// What the index does not hold is left zero: a host's block time in the
// table (its own page reads it from the queue), the crawl's next ready
// time.
type clusterHosts struct {
	f     *cluster.Frontier
	crawl string
}

func (s *clusterHosts) Stats() console.QueueStats {
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	st, _ := s.f.StatsContext(ctx, s.crawl, "") // zero counts on a Redis error (LastError)
	return console.QueueStats{Queued: st.Size, InFlight: st.InProcess, Completed: st.Completed, Hosts: st.Queues,
		Active: st.ActiveQueues, Retired: st.RetiredQueues}
}

func hostRow(q cluster.QueueRow) console.HostRow {
	r := console.HostRow{Host: q.Key, Queued: q.Queued, InFlight: q.InFlight, Fetched: q.Completed}
	if q.Retired {
		r.Retired = "retired"
	}
	return r
}

func (s *clusterHosts) Hosts(fn func(console.HostRow) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	rows, _ := s.f.QueueRows(ctx, s.crawl) // none on a Redis error (LastError)
	for _, q := range rows {
		if !fn(hostRow(q)) {
			return
		}
	}
}

func (s *clusterHosts) Host(host string) (console.HostRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadTimeout)
	defer cancel()
	st, err := s.f.StatsContext(ctx, s.crawl, host)
	if err != nil {
		return console.HostRow{}, fmt.Errorf("cli: host %s: %w", host, err)
	}
	if st.Queues == 0 {
		return console.HostRow{}, fmt.Errorf("%w: %s", console.ErrUnknownHost, host)
	}
	return hostRow(cluster.QueueRow{Key: host, Queued: st.Size + st.Retired, InFlight: st.InProcess, Completed: st.Completed,
		Retired: st.RetiredQueues > 0}), nil
}

// Head lists up to n URLs of the host's queue not completed, in the order
// the queue stores them (not serving order: the cluster's queues are
// served by due time from a sorted set the listing does not read).
func (s *clusterHosts) Head(ctx context.Context, host string, n int) ([]console.QueueEntry, error) {
	if _, err := s.Host(host); err != nil {
		return nil, err
	}
	var out []console.QueueEntry
	err := s.f.ListURLs(ctx, frontier.ListParams{CrawlID: s.crawl, Key: host, Size: n}, func(e frontier.URLEntry) error {
		if !e.Completed {
			out = append(out, console.QueueEntry{URL: e.URL, Priority: int(e.Priority), Depth: e.Depth, Due: e.RefetchFrom})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cli: queue of %s: %w", host, err)
	}
	return out, nil
}

func (s *clusterHosts) Paused() bool          { return !s.f.Active() }
func (s *clusterHosts) SetPaused(paused bool) { s.f.SetActive(!paused) }

func (s *clusterHosts) AddSeeds(ctx context.Context, urls []string) (int, error) {
	return addSeeds(ctx, s.f.Put, s.crawl, urls)
}

// addSeeds queues urls as seeds of crawl (priority 2, depth 0) through put
// and returns how many were new.
func addSeeds(ctx context.Context, put func(context.Context, []frontier.Item) ([]frontier.Status, error), crawl string, urls []string) (int, error) {
	items := make([]frontier.Item, len(urls))
	for i, u := range urls {
		items[i] = frontier.Item{Info: frontier.URLInfo{URL: u, CrawlID: crawl, Priority: 2}}
	}
	st, err := put(ctx, items)
	if err != nil {
		return 0, fmt.Errorf("cli: add seeds: %w", err)
	}
	n := 0
	for _, x := range st {
		if x == frontier.OK {
			n++
		}
	}
	return n, nil
}

func (s *clusterHosts) Block(ctx context.Context, host string, until time.Time) error {
	return s.f.BlockQueueUntil(ctx, s.crawl, host, until)
}

func (s *clusterHosts) Retire(ctx context.Context, host, reason string) error {
	err := s.f.Retire(ctx, s.crawl, host, reason)
	if errors.Is(err, frontier.ErrNotFound) {
		return fmt.Errorf("%w: %s", console.ErrUnknownHost, host)
	}
	return err
}
