package crawl

import (
	"context"
	"net/url"
	"strings"
	"sync"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// ack is one URL a worker is done with.
type ack struct {
	lease frontier.Lease
	// items are the new outlinks; final acknowledges the URL (completed,
	// or Known with a refetch date for a retry).
	items []frontier.Item
	final frontier.Item
	entry *crawllog.Entry
	// warc is the index of the WARC writer holding the URL's records, or
	// -1 when none were written.
	warc int
	// done is set when the URL is completed (not a retry).
	done bool
}

// handOff gives a to the acker. From then on the worker is free: the
// dispatcher counts the URL as acking, not as a worker's, so waiting for
// the disk (a group's fsyncs and frontier commit) takes no worker from the
// other hosts. The host's next URL still waits for the acknowledgement:
// the lease holds its queue until then.
func (c *Crawler) handOff(a *ack) {
	c.acking.Add(1)
	c.acks <- a
}

// ackDone counts a handed-off URL out (acknowledged, or given back).
func (c *Crawler) ackDone() {
	c.acking.Add(-1)
	c.urlDone()
}

// maxAckGroup bounds the URLs acknowledged by one frontier Put.
const maxAckGroup = 4096

// runAcker acknowledges what the workers finished, in groups, in two
// stages that overlap: the first writes and fsyncs the WARC writers the
// group used and the group's crawl.log lines (the fsyncs in parallel);
// the second puts every acknowledgement and outlink of the group into the
// frontier in one Put (one more fsync), while the first stage already
// writes the next group. So a URL is acknowledged only once its records
// and its line are on disk, while workers never wait for a disk: they go
// on to the next URL, and the host's next URL is leased only after the
// acknowledgement (the lease holds the queue), which the overlap brings
// sooner. While one group is on its way to the disk the next one gathers,
// so the number of fsyncs per page falls as the load grows (group
// commit). It returns when acks is closed and drained.
func (c *Crawler) runAcker(ctx context.Context, acks <-chan *ack) {
	durable := make(chan ackBatch, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range durable {
			c.commitGroup(ctx, b)
		}
	})
	for a := range acks {
		group := make([]*ack, 1, 256)
		group[0] = a
	drain:
		for len(group) < maxAckGroup {
			select {
			case a, ok := <-acks:
				if !ok {
					break drain
				}
				group = append(group, a)
			default:
				break drain
			}
		}
		if b, ok := c.persistGroup(ctx, group); ok {
			durable <- b
		}
	}
	close(durable)
	wg.Wait()
}

// ackBatch is a group whose records and lines are on disk, ready for the
// frontier.
type ackBatch struct {
	kept  []*ack
	items []frontier.Item
}

// persistGroup is the acker's first stage: records and lines to disk. It
// returns the URLs to acknowledge (those whose WARC writer flushed) with
// their items, ok false when none is left; the others are given back.
func (c *Crawler) persistGroup(ctx context.Context, group []*ack) (ackBatch, bool) {
	// The group's crawl.log lines and WARC records go to disk first, all
	// fsyncs at once (each file its own goroutine: one after the other they
	// were most of the acker's time, and a host's next URL waits for its
	// acknowledgement). A writer that cannot flush loses its group's
	// records, so those URLs are returned to the frontier instead of
	// acknowledged; their lines stay in crawl.log until the next start's
	// repair drops them (a disk failing, rare). So an acknowledged URL
	// always has its line on disk, and so do the trap cuts logged while its
	// page was processed, which the frontier cannot rebuild.
	failed := make([]bool, len(c.warcs))
	used := make([]bool, len(c.warcs))
	// robots.txt records written since the last group: their writers are
	// flushed with the group's, and their lines logged after that.
	robotsLines := c.robotsArc.take()
	for _, rl := range robotsLines {
		used[rl.wi] = true
	}
	for _, a := range group {
		if a.warc >= 0 {
			used[a.warc] = true
		}
		c.logLine(a.lease, a.entry)
	}
	var wg sync.WaitGroup
	for i, u := range used {
		if u {
			wg.Go(func() {
				if err := c.warcs[i].Flush(); err != nil {
					c.log.Error("WARC flush failed; its URLs will be fetched again", "err", err)
					failed[i] = true
				}
			})
		}
	}
	if err := c.clog.Flush(); err != nil {
		c.log.Error("crawl log flush failed", "err", err)
	}
	wg.Wait()
	if c.logRobotsLines(robotsLines, failed) {
		// On disk before the acknowledgements: an acknowledged URL's
		// robots.txt line (logged before it was handed over) survives.
		if err := c.clog.Flush(); err != nil {
			c.log.Error("crawl log flush failed", "err", err)
		}
	}
	group = c.commitQuads(group, failed) // structured data (structured.go), after the WARC flushes
	n := 0
	for _, a := range group {
		n += len(a.items) + 1
	}
	items := make([]frontier.Item, 0, n)
	kept := make([]*ack, 0, len(group))
	for _, a := range group {
		if a.warc >= 0 && failed[a.warc] {
			c.giveBackUnwritten(ctx, a)
			continue
		}
		kept = append(kept, a)
		items = append(items, a.items...)
		items = append(items, a.final)
	}
	return ackBatch{kept: kept, items: items}, len(kept) > 0
}

// giveBackUnwritten gives a URL whose records were lost back to the
// frontier, its queue held first until the hold its acknowledgement
// carried (frontier.Item.Hold): given back, the URL no longer keeps the
// queue from being served.
func (c *Crawler) giveBackUnwritten(ctx context.Context, a *ack) {
	if h := a.final.Hold; !h.IsZero() {
		c.block(ctx, a.lease.Key, h)
	}
	c.fr.Release(a.lease.URLInfo)
	c.ackDone()
}

// commitGroup is the acker's second stage: the frontier commit of a
// persisted group, then the counters.
func (c *Crawler) commitGroup(ctx context.Context, b ackBatch) {
	kept, items := b.kept, b.items
	// The group's payload digests and near-duplicate hashes, gathered
	// since the last group, in one commit: the frontier's synced commit
	// below makes them durable with the pages they describe.
	if err := c.digestsW.Flush(); err != nil {
		c.log.Warn("payload digest index", "err", err)
	}
	if err := c.near.Flush(); err != nil {
		c.log.Warn("near-duplicate index", "err", err)
	}
	st, err := c.fr.Put(context.WithoutCancel(ctx), items)
	if err != nil {
		// The frontier refuses writes (disk full, closed): the leases
		// stay, and the URLs are fetched again after a restart.
		c.log.Error("frontier put failed", "err", err)
		for range kept {
			c.ackDone()
		}
		return
	}
	added := map[string][2]int{} // per host: dynamic, static URLs (traps.DynamicFrom)
	off := 0
	for _, a := range kept {
		for i := range a.items {
			if st[off+i] != frontier.OK {
				continue
			}
			u := a.items[i].Info.URL
			if h := hostOf(u); h != "" {
				n := added[h]
				if traps.DynamicFrom(u, md1(a.items[i].Info.Metadata, mdVia)) {
					n[0]++
				} else {
					n[1]++
				}
				added[h] = n
			}
		}
		off += len(a.items) + 1
		if a.done {
			c.completed.Add(1)
			c.metrics.completed.Inc()
		}
		c.ackDone()
	}
	for h, n := range added {
		c.tr.Admitted(h, n[0], n[1])
		c.metrics.discovered.Add(float64(n[0] + n[1]))
	}
}

// hostOf is url.URL.Hostname of a normalized absolute URL without parsing
// all of it (the acker does this for every new outlink); "" when raw is
// not an absolute URL.
func hostOf(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.ContainsAny(rest, "@[") {
		// Userinfo or an IPv6 literal: let net/url decide.
		u, err := url.Parse(raw)
		if err != nil {
			return ""
		}
		return u.Hostname()
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
