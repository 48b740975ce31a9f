package crawl

// Duplicate hosts found while crawling: the Viuva Negra report (§4.3)
// names duplicate hosts (www and bare names, mirrors, virtual hosts) the
// single largest source of duplicates on the web, and measures two cheap
// tests: SameHome (equal home pages; 68 % precision) and SameHomeAnd1Doc
// (equal home pages and one more equal page; 92 %). The crawler applies
// the second as pages come in: two hosts whose home pages have the same
// payload digest are a candidate pair; when a page at the same path and
// query has the same digest on both, the host whose home came second
// moves to the other for the rest of the crawl, as an operator's
// duplicate-hosts entry would move it. Digests are compared in memory,
// whichever host answers first, so two hosts fetched side by side are
// found as surely as one after the other.

import (
	"net/url"
	"slices"
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
	// maxSameHomes bounds the home pages remembered, and the candidate
	// pairs; maxPairPages the pages remembered per pair while it waits
	// for its second equal page, and maxHeldPages those of all pairs
	// (many parked domains share one home page: about 100 bytes each).
	maxSameHomes = 100_000
	maxPairPages = 64
	maxHeldPages = 200_000
)

// sameHomes is the detector's state: home page digests, and candidate
// pairs with the pages seen on either side.
type sameHomes struct {
	mu    sync.Mutex
	homes map[string]string    // home page digest → the first origin that served it
	pairs map[string]*homePair // alias origin → its pair
	canon map[string][]string  // canonical origin → the aliases of its pairs
	held  int                  // pages remembered by all pairs
	store *kv.Bucket
}

// homePair is a candidate pair: alias's home page copies canon's. pages
// holds, per path and query, the digest a side served and which side.
type homePair struct {
	alias, canon string
	pages        map[string]sidedDigest
}

type sidedDigest struct {
	digest  string
	onAlias bool
}

// openSameHome restores the duplicate hosts found by earlier runs into
// the host map. Called by open after openHostMap.
func (c *Crawler) openSameHome() error {
	c.same = &sameHomes{homes: map[string]string{}, pairs: map[string]*homePair{}, canon: map[string][]string{},
		store: c.db.Bucket(sameHomeBucket)}
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

// sameHome is told the payload digest of each page fetched whole (2xx):
// a home page with another host's home digest makes a candidate pair; a
// page of a pair's host whose path the other host served with the same
// digest confirms the pair, and the alias's URLs move to the canonical
// host from then on.
func (c *Crawler) sameHome(u *url.URL, digest string) {
	if c.same == nil || digest == "" || !boolOr(c.cfg.DetectDuplicateHosts, true) {
		return
	}
	o := politeness.Origin(u)
	where := u.EscapedPath() + "?" + u.RawQuery
	s := c.same
	s.mu.Lock()
	var confirmed *homePair
	if where == "/?" {
		if first, ok := s.homes[digest]; !ok {
			if len(s.homes) < maxSameHomes {
				s.homes[digest] = o
			}
		} else if first != o && s.pairs[o] == nil && len(s.pairs) < maxSameHomes {
			s.pairs[o] = &homePair{alias: o, canon: first, pages: map[string]sidedDigest{}}
			s.canon[first] = append(s.canon[first], o)
		}
	} else {
		if p := s.pairs[o]; p != nil && s.seen(p, where, digest, true) {
			confirmed = p
		}
		for _, a := range s.canon[o] {
			if confirmed == nil && s.seen(s.pairs[a], where, digest, false) {
				confirmed = s.pairs[a]
			}
		}
	}
	if confirmed != nil {
		s.held -= len(confirmed.pages)
		delete(s.pairs, confirmed.alias)
		s.canon[confirmed.canon] = slices.DeleteFunc(s.canon[confirmed.canon], func(a string) bool { return a == confirmed.alias })
	}
	s.mu.Unlock()
	if confirmed != nil {
		c.learnSameHome(confirmed.alias, confirmed.canon)
	}
}

// seen records that a side of pair p served where with digest, within
// the bounds, and reports whether the other side served it with the same
// digest. s.mu is held.
func (s *sameHomes) seen(p *homePair, where, digest string, onAlias bool) bool {
	if d, ok := p.pages[where]; ok {
		return d.onAlias != onAlias && d.digest == digest
	}
	if len(p.pages) < maxPairPages && s.held < maxHeldPages {
		p.pages[where] = sidedDigest{digest, onAlias}
		s.held++
	}
	return false
}

// learnSameHome moves the alias origin's host to the canonical origin,
// unless either is moved already (a rule of the operator's, a
// robots.txt's, or one found before), which keeps the rules free of
// loops; the rule is stored for a resumed crawl.
func (c *Crawler) learnSameHome(alias, canon string) {
	au, err1 := url.Parse(alias + "/")
	cu, err2 := url.Parse(canon + "/")
	if err1 != nil || err2 != nil {
		return
	}
	for _, u := range []*url.URL{au, cu} {
		if moved, _, _ := c.hmap.Resolve(u, hostmap.ProbeNone); moved != nil {
			return
		}
	}
	r, err := hostmap.SameHomeRule(au, cu)
	if err != nil {
		c.log.Warn("duplicate host not moved", "host", au.Host, "canonical", canon, "err", err)
		return
	}
	c.hmap.AddOperator(r)
	c.hostRuleEvents.WithLabelValues("learned").Inc()
	c.log.Info("host rewrite learned", "origin", alias, "rule", hostmap.SourceSameHome+" "+canon,
		"why", "its home page and another page are copies of the canonical host's")
	if err := c.same.store.SetNoSync([]byte(au.Host), []byte(canon)); err != nil {
		c.log.Warn("duplicate host not stored", "host", au.Host, "err", err)
	}
}
