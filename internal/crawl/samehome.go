package crawl

// Duplicate hosts found while crawling: the Viuva Negra report (§4.3)
// names duplicate hosts (www and bare names, mirrors, virtual hosts) the
// single largest source of duplicates on the web, and measures two cheap
// tests: SameHome (equal home pages; 68 % precision) and SameHomeAnd1Doc
// (equal home pages and one more equal page; 92 %). The crawler applies
// the second as pages come in: when a host's home page is an exact copy
// of another host's, the pair is a candidate; when a page at the same
// path on both is a copy too, the candidate's URLs move to the other host
// for the rest of the crawl, as an operator's duplicate-hosts entry would
// move them.

import (
	"net/url"
	"sync"

	"github.com/courtesy-crawler/courtesy/internal/hostmap"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

const (
	// sameHomeBucket holds the duplicate hosts found, so that a resumed
	// crawl keeps moving them: key the alias's host[:port], value the
	// canonical origin.
	sameHomeBucket = "C/samehome/"
	// maxSameHomeCandidates bounds the hosts whose home page copies
	// another's and that wait for a second copy.
	maxSameHomeCandidates = 100_000
)

// sameHomes are the candidate pairs: alias origin → canonical origin.
type sameHomes struct {
	mu    sync.Mutex
	cands map[string]string
	store *kv.Bucket
}

// openSameHome restores the duplicate hosts found by earlier runs into
// the host map. Called by open after openHostMap.
func (c *Crawler) openSameHome() error {
	c.same = &sameHomes{cands: map[string]string{}, store: c.db.Bucket(sameHomeBucket)}
	return c.same.store.Scan(nil, func(k, v []byte) error {
		canon, err := url.Parse(string(v))
		if err == nil {
			var r hostmap.OperatorRule
			if r, err = hostmap.SameHomeRule(&url.URL{Host: string(k)}, canon); err == nil {
				c.hmap.AddOperator(r)
				return nil
			}
		}
		c.log.Warn("stored duplicate host ignored", "host", string(k), "canonical", string(v), "err", err)
		return nil
	})
}

// copyAcrossHosts is told of each page whose payload is an exact copy of
// an earlier capture, of (the revisit's target URI): when the two share a
// path on different hosts, it notes a candidate pair (home pages) or
// confirms one (another page), and a confirmed alias's URLs move to its
// canonical host from then on.
func (c *Crawler) copyAcrossHosts(page, of string) {
	if c.same == nil || !boolOr(c.cfg.DetectDuplicateHosts, true) {
		return
	}
	pu, err1 := url.Parse(page)
	ou, err2 := url.Parse(of)
	if err1 != nil || err2 != nil || pu.Host == "" || ou.Host == "" ||
		pu.Hostname() == ou.Hostname() || pu.EscapedPath() != ou.EscapedPath() || pu.RawQuery != ou.RawQuery {
		return
	}
	// The copy's origin as the host map has it now (a confirmed alias
	// stands for its canonical host).
	if moved, _, _ := c.hmap.Resolve(&url.URL{Scheme: ou.Scheme, Host: ou.Host, Path: "/"}, hostmap.ProbeNone); moved != nil {
		ou = moved
	}
	a, o := politeness.Origin(pu), politeness.Origin(ou)
	if a == o {
		return
	}
	s := c.same
	s.mu.Lock()
	var alias, canon *url.URL
	switch {
	case s.cands[a] == o:
		alias, canon = pu, ou
	case s.cands[o] == a:
		alias, canon = ou, pu
	case pu.EscapedPath() == "/" && pu.RawQuery == "":
		if _, ok := s.cands[a]; !ok && len(s.cands) < maxSameHomeCandidates {
			s.cands[a] = o
		}
	}
	if alias != nil {
		delete(s.cands, politeness.Origin(alias))
	}
	s.mu.Unlock()
	if alias != nil {
		c.learnSameHome(alias, canon)
	}
}

// learnSameHome moves alias's host to canon's origin, unless either is
// moved already (a rule of the operator's, a robots.txt's, or one found
// before), which keeps the rules free of loops; the rule is stored for a
// resumed crawl.
func (c *Crawler) learnSameHome(alias, canon *url.URL) {
	for _, u := range []*url.URL{alias, canon} {
		if moved, _, _ := c.hmap.Resolve(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}, hostmap.ProbeNone); moved != nil {
			return
		}
	}
	r, err := hostmap.SameHomeRule(alias, canon)
	if err != nil {
		c.log.Warn("duplicate host not moved", "host", alias.Host, "canonical", politeness.Origin(canon), "err", err)
		return
	}
	c.hmap.AddOperator(r)
	c.hostRuleEvents.WithLabelValues("learned").Inc()
	c.log.Info("host rewrite learned", "origin", politeness.Origin(alias), "rule", hostmap.SourceSameHome+" "+politeness.Origin(canon),
		"why", "its home page and another page are copies of the canonical host's")
	if err := c.same.store.SetNoSync([]byte(alias.Host), []byte(politeness.Origin(canon))); err != nil {
		c.log.Warn("duplicate host not stored", "host", alias.Host, "err", err)
	}
}
