package crawl

// The dispatcher: leases from the frontier, hands URLs to the workers.

import (
	"context"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// loop dispatches leased URLs to the workers until the crawl ends; it
// reports whether the frontier was drained.
func (c *Crawler) loop(ctx context.Context, start time.Time) bool {
	// Workers get their own context: stopping the crawl stops dispatch at
	// once but gives fetches in flight a grace period.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	work := make(chan frontier.Lease, c.cfg.Workers)
	done := make(chan struct{}, c.cfg.Workers)
	c.wake = done
	c.acks = make(chan *ack, 2*c.cfg.Workers)
	var ackWG sync.WaitGroup
	ackWG.Go(func() { c.runAcker(workCtx, c.acks) })
	var wg sync.WaitGroup
	for i := range c.cfg.Workers {
		wg.Go(func() {
			for l := range work {
				if !c.handle(workCtx, i+1, l) {
					c.urlDone()
				}
			}
		})
	}
	progressCtx, stopProgress := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	pwg.Go(func() { c.progress(progressCtx, start) })

	runCtx := ctx
	if c.cfg.MaxDuration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, c.cfg.MaxDuration)
		defer cancel()
	}
	drained := false
	idle := 0
	lease := c.opts.Lease
	if lease <= 0 {
		lease = 10 * time.Minute
	}
	var emptySince time.Time // when idle became 1
	repaired := false        // the shared frontier's index was repaired in this empty spell
	var stuckSince time.Time // since when nothing was served or in flight while URLs are queued
	var lastRepair time.Time
	var synced time.Time // when completed last read a shared frontier's total
	for runCtx.Err() == nil {
		c.syncSeedHosts(runCtx, false) // seedhosts.go
		if c.cfg.MaxPages > 0 && c.opts.Frontier != nil && c.now().Sub(synced) >= time.Second {
			// MaxPages counts the whole crawl: other processes complete
			// URLs of a shared frontier too.
			synced = c.now()
			if n := int64(c.fr.Stats(c.cfg.CrawlID, "").Completed); n > c.completed.Load() {
				c.completed.Store(n)
			}
		}
		if c.cfg.MaxPages > 0 && c.completed.Load()+c.inFlight.Load() >= c.cfg.MaxPages {
			if c.inFlight.Load() == 0 {
				break
			}
			c.waitDone(runCtx, done)
			continue
		}
		free := c.freeWorkers()
		if free <= 0 {
			c.waitDone(runCtx, done)
			continue
		}
		if free < getBatch && c.cfg.Workers >= 4*getBatch {
			free = c.gatherFree(runCtx, done)
		}
		if c.cfg.MaxPages > 0 {
			free = min(free, int(c.cfg.MaxPages-c.completed.Load()-c.inFlight.Load()))
			if free <= 0 {
				c.waitDone(runCtx, done)
				continue
			}
		}
		leases, err := c.fr.Get(runCtx, frontier.GetParams{MaxQueues: free, MaxURLsPerQueue: 1, CrawlID: c.cfg.CrawlID, Lease: lease})
		if err != nil {
			if runCtx.Err() == nil {
				c.log.Error("frontier get failed", "err", err)
			}
			break
		}
		if len(leases) == 0 {
			if c.inFlight.Load() == 0 {
				if st := c.fr.Stats(c.cfg.CrawlID, ""); st.Size == 0 {
					// Nothing queued and nothing in flight: done, unless a
					// worker's last Put is on its way (in-flight would
					// then be non-zero), so one more look suffices.
					idle++
					if idle == 1 {
						emptySince = c.now()
					}
					if idle >= 2 && c.now().Sub(emptySince) >= c.opts.DrainGrace {
						if r, ok := c.fr.(indexRepairer); ok && !repaired {
							// A shared frontier's index can miss a queue
							// (a node or a master died between a queue's
							// update and its index's): look once more
							// after a repair before calling the crawl done.
							repaired = true
							if n, err := r.Repair(runCtx); err != nil {
								c.log.Warn("frontier index repair before drain failed", "err", err)
							} else {
								c.log.Info("frontier index repaired before drain", "queues", n)
							}
							idle = 0
							continue
						}
						drained = true
						break
					}
					if idle >= 2 {
						c.fr.WaitReady(runCtx, min(200*time.Millisecond, c.opts.DrainGrace))
					}
					continue
				}
			}
			idle = 0
			if c.inFlight.Load() == 0 {
				// Queued URLs but none served and none in flight: waiting
				// on delays or backoff, or a shared index that lost a
				// queue. Repair such an index now and then.
				if stuckSince.IsZero() {
					stuckSince = c.now()
				}
				if r, ok := c.fr.(indexRepairer); ok && c.now().Sub(stuckSince) >= indexRepairIdle && c.now().Sub(lastRepair) >= indexRepairIdle {
					lastRepair = c.now()
					if n, err := r.Repair(runCtx); err != nil {
						c.log.Warn("frontier index repair failed", "err", err)
					} else {
						c.log.Info("frontier index repaired while idle", "queues", n)
					}
				}
			}
			c.fr.WaitReady(runCtx, 200*time.Millisecond)
			continue
		}
		idle = 0
		repaired = false
		stuckSince = time.Time{}
		for _, l := range leases {
			c.inFlight.Add(1)
			work <- l
		}
	}
	close(work)
	// Give fetches in flight a grace period, then cancel them (their URLs
	// stay leased and are fetched again after a restart).
	waited := make(chan struct{})
	go func() {
		wg.Wait()
		close(c.acks) // the acker drains what the workers handed over
		ackWG.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		cancelWork()
		<-waited
	}
	stopProgress()
	pwg.Wait()
	if err := c.clog.Flush(); err != nil {
		c.log.Warn("crawl log flush failed", "err", err)
	}
	return drained
}

// freeWorkers is how many more URLs the dispatcher may lease: workers
// not busy with a URL (those handed to the acker are not), while the URLs
// waiting for the acker stay under another Workers (a bound on the memory
// their pages' outlinks hold).
func (c *Crawler) freeWorkers() int {
	inFlight, acking := int(c.inFlight.Load()), int(c.acking.Load())
	return min(c.cfg.Workers-(inFlight-acking), 2*c.cfg.Workers-inFlight)
}

// urlDone counts a URL out of the crawl's hands and wakes the dispatcher.
func (c *Crawler) urlDone() {
	c.inFlight.Add(-1)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// getBatch is how many free workers the loop gathers, for at most
// getGather, before it asks the frontier for work: a Get costs a store
// iterator whatever it serves, and at thousands of pages a second one Get
// per finished page was a few percent of the crawl's CPU. Waiting costs
// nothing while most workers are busy (Workers >= 4*getBatch).
const (
	getBatch  = 8
	getGather = 2 * time.Millisecond
)

// gatherFree waits until getBatch workers are free or getGather has
// passed, and returns how many are free.
func (c *Crawler) gatherFree(ctx context.Context, done <-chan struct{}) int {
	t := time.NewTimer(getGather)
	defer t.Stop()
	for {
		free := c.freeWorkers()
		if free >= getBatch {
			return free
		}
		select {
		case <-ctx.Done():
			return free
		case <-t.C:
			return c.freeWorkers()
		case <-done:
		}
	}
}

func (c *Crawler) waitDone(ctx context.Context, done <-chan struct{}) {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-done:
	case <-t.C:
	}
}

// indexRepairIdle is how long a crawl with URLs queued but none served
// and none in flight waits before it repairs a shared frontier's index
// (and between two such repairs): long enough that a crawl waiting on
// delays or backoff pays one index scan per half minute at most.
const indexRepairIdle = 30 * time.Second

// indexRepairer is a shared frontier whose index of queues can miss one
// after a failure (the Redis Cluster frontier): the dispatcher repairs it
// before it calls the crawl drained.
type indexRepairer interface {
	Repair(ctx context.Context) (int, error)
}
