package crawl

import (
	"context"
	"net/url"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// SeedHostSet shares the hosts of a crawl's seeds between the processes
// of a shared crawl (Options.SeedHosts). The seeds scope admits links to
// the seed hosts only; a process that joins a shared crawl without seeds,
// or with other seeds than the rest, must judge links by the hosts of
// every process's seeds, or it drops the links it alone finds (the
// targets of the redirects it follows, for one).
type SeedHostSet interface {
	// Add adds hosts to the set.
	Add(ctx context.Context, hosts []string) error
	// Hosts returns every host of the set, or changed false (and no
	// hosts) when the set is as it was at the last call.
	Hosts(ctx context.Context) (hosts []string, changed bool, err error)
}

// seedHostSync is how often a crawl reads the shared seed hosts again.
const seedHostSync = time.Second

// shareSeedHosts adds the hosts of seed items to the shared set, before
// they are queued: a process that leases one of them knows its host.
func (c *Crawler) shareSeedHosts(ctx context.Context, items []frontier.Item) error {
	if c.opts.SeedHosts == nil || len(items) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var hosts []string
	for _, it := range items {
		u, err := url.Parse(it.Info.URL)
		if err != nil {
			continue // seeds are normalized URLs
		}
		if h := c.scope.key(u); h != "" && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return c.opts.SeedHosts.Add(ctx, hosts)
}

// syncSeedHosts adds the shared seed hosts to the scope, at most once per
// seedHostSync unless force; a failure is logged and tried again later.
func (c *Crawler) syncSeedHosts(ctx context.Context, force bool) {
	if c.opts.SeedHosts == nil || (!force && c.now().Sub(c.seedSynced) < seedHostSync) {
		return
	}
	c.seedSynced = c.now()
	hosts, changed, err := c.opts.SeedHosts.Hosts(ctx)
	if err != nil {
		c.log.Warn("shared seed hosts not read", "err", err)
		return
	}
	if changed {
		for _, h := range hosts {
			c.scope.addSeedHost(h)
		}
	}
}
