package crawl

import (
	"context"
	"net/url"
	"strings"
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

// seedRedirected makes the site a seed redirects to a seed site too, as
// Heritrix does by default (seedsRedirectNewSeeds): a crawl of
// http://example.org/ that answers with https://www.example.org/ is
// meant to crawl the latter, and the seeds scope would drop it as another
// host. Redirects of redirects from a seed count (http to https to www);
// a link or a sitemap entry does not. t is the normalized target.
func (c *Crawler) seedRedirected(ctx context.Context, l frontier.Lease, t *url.URL) {
	if strings.Trim(md1(l.Metadata, mdPath), "R") != "" || c.scope.inScope(t) || c.scope.excluded(t) {
		return
	}
	h := c.scope.key(t)
	c.scope.addSeedHost(h)
	if err := c.seedsKV.SetNoSync([]byte(h), nil); err != nil {
		c.log.Warn("seed host not stored", "host", h, "err", err)
	}
	if c.opts.SeedHosts != nil {
		if err := c.opts.SeedHosts.Add(ctx, []string{h}); err != nil {
			c.log.Warn("seed host not shared", "host", h, "err", err)
		}
	}
	c.log.Info("a seed redirects to another site: crawled as a seed", "seed", l.URL, "to", t.String())
}
