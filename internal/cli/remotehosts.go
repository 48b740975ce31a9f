package cli

// The console's hosts views over a crawl of a URLFrontier service (crawl
// --frontier): the queues come from ListQueues, each row's counts from its
// queue's GetStats, a host's queue head from ListURLs.

import (
	"context"
	"fmt"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/urlfrontier"
)

const (
	// remoteHostRows bounds the hosts table of a remote frontier: each
	// row costs one GetStats call, and the table is rebuilt while someone
	// looks at it.
	remoteHostRows = 10_000
	// remoteReadTimeout bounds a console read made without a request's
	// context (the totals, the hosts snapshot, the paused state).
	remoteReadTimeout = 10 * time.Second
)

// remoteHosts is console.Frontier over one crawl of a URLFrontier service.
// What the API does not carry is left zero: a host's block time, the
// crawl's next ready time.
type remoteHosts struct {
	c     *urlfrontier.Client
	crawl string
}

func remoteRow(key string, st frontier.Stats) console.HostRow {
	r := console.HostRow{Host: key, Queued: st.Size, InFlight: st.InProcess, Fetched: st.Completed}
	if st.RetiredQueues > 0 {
		r.Retired = "retired"
	}
	return r
}

func (s *remoteHosts) Stats() console.QueueStats {
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	st, _ := s.c.StatsContext(ctx, s.crawl, "") // zero counts while the service is unreachable
	return console.QueueStats{Queued: st.Size, InFlight: st.InProcess, Completed: st.Completed, Hosts: st.Queues,
		Active: st.ActiveQueues, Retired: st.RetiredQueues}
}

func (s *remoteHosts) Hosts(fn func(console.HostRow) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	// An unreachable service or a call past the timeout ends the rows
	// there: the snapshot holds what was read.
	_ = s.c.Queues(ctx, s.crawl, remoteHostRows, func(key string) bool {
		st, err := s.c.StatsContext(ctx, s.crawl, key)
		return err == nil && fn(remoteRow(key, st))
	})
}

func (s *remoteHosts) Host(host string) (console.HostRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	st, err := s.c.StatsContext(ctx, s.crawl, host)
	if err != nil {
		return console.HostRow{}, fmt.Errorf("cli: host %s: %w", host, err)
	}
	if st.Queues == 0 {
		return console.HostRow{}, fmt.Errorf("%w: %s", console.ErrUnknownHost, host)
	}
	return remoteRow(host, st), nil
}

// Head lists up to n URLs of the host's queue not completed, in the order
// the service lists them (not necessarily the serving order); it reads at
// most ten times n URLs to find them.
func (s *remoteHosts) Head(ctx context.Context, host string, n int) ([]console.QueueEntry, error) {
	if _, err := s.Host(host); err != nil {
		return nil, err
	}
	es, err := s.c.URLs(ctx, s.crawl, host, min(10*n, 5000))
	if err != nil {
		return nil, fmt.Errorf("cli: queue of %s: %w", host, err)
	}
	var out []console.QueueEntry
	for _, e := range es {
		if !e.Completed && len(out) < n {
			out = append(out, console.QueueEntry{URL: e.URL, Priority: int(e.Priority), Depth: e.Depth, Due: e.RefetchFrom})
		}
	}
	return out, nil
}

func (s *remoteHosts) Paused() bool {
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	on, err := s.c.Active(ctx)
	return err == nil && !on
}

func (s *remoteHosts) SetPaused(paused bool) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	_ = s.c.SetActive(ctx, !paused) // the client logs an outage
}

func (s *remoteHosts) AddSeeds(ctx context.Context, urls []string) (int, error) {
	return addSeeds(ctx, s.c.Put, s.crawl, urls)
}

func (s *remoteHosts) Block(ctx context.Context, host string, until time.Time) error {
	return s.c.BlockQueueUntil(ctx, s.crawl, host, until)
}

func (s *remoteHosts) Retire(ctx context.Context, host, reason string) error {
	return s.c.Retire(ctx, s.crawl, host, reason)
}
