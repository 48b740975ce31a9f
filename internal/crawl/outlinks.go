package crawl

// A page's links become frontier items: scope (off-scope hops, the
// external-link policy, page requisites), trap limits and the crawl.log
// lines of the URLs they cut.

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// dirListing reports whether a page's title is that of a web server's
// directory listing: Apache's, nginx's and lighttpd's "Index of /path/",
// Python's "Directory listing for /path/".
func dirListing(title string) bool {
	return strings.HasPrefix(title, "Index of /") || strings.HasPrefix(title, "Directory listing for /")
}

// below reports whether u is an entry under the directory dir (a URL
// whose path ends in "/"): same scheme and authority, a longer path that
// starts with dir's.
func below(u, dir *url.URL) bool {
	dp := dir.EscapedPath()
	up := u.EscapedPath()
	return strings.HasSuffix(dp, "/") && len(up) > len(dp) && strings.HasPrefix(up, dp) &&
		u.Scheme == dir.Scheme && u.Host == dir.Host
}

// outlinks turns a page's links into frontier items: crawl normalization,
// scope (with off-scope hops and the external-link policy), trap limits.
// listing says src is a directory listing, whose entries below it keep
// its depth: a listing is the server's table of contents, not a page a
// person wrote, and counting each directory level as a link hop cut file
// trees that wget --mirror fetches whole (the path length and
// repeated-segment limits still bound a listing that nests without end).
func (c *Crawler) outlinks(l frontier.Lease, src *url.URL, links []extract.Link, listing bool) []frontier.Item {
	if len(links) == 0 {
		return nil
	}
	srcHost := src.Hostname()
	path := md1(l.Metadata, mdPath)
	off, _ := strconv.Atoi(md1(l.Metadata, mdOff))
	depth := l.Depth + 1
	seen := make(map[string]bool, len(links))
	items := make([]frontier.Item, 0, len(links)) // one allocation, not log2(n)
	// The frontier only encodes an item's metadata (it never keeps or
	// changes the map), so the links of one page that share a hop and an
	// off-scope count share one map: a page's ten or more outlinks cost
	// one or two maps, not one each (a hot allocation in crawl profiles).
	type mdKey struct {
		hop     extract.Hop
		offHops int
	}
	shared := map[mdKey]map[string][]string{}
	var movedFrom string // host the current link was moved from (hostmap.go)
	// addAt queues a link at depth.
	addAt := func(nu *url.URL, raw string, hop extract.Hop, offHops, depth int) {
		if seen[raw] {
			return
		}
		seen[raw] = true
		host := nu.Hostname()
		key := c.queueKey(nu)
		if v := c.tr.CheckURL(host, nu, src, raw, depth); !v.OK() {
			c.cut(l, raw, path+string(hop), v)
			return
		}
		prio := priorityNormal
		if g := c.groupOf(host); g != nil {
			p := nu.EscapedPath()
			if _, ok := g.ChangeFreq(p); ok || g.IndexPage(p) {
				prio = priorityHigh
			}
		}
		mdm := shared[mdKey{hop, offHops}]
		if mdm == nil {
			mdm = map[string][]string{mdVia: {l.URL}, mdPath: {path + string(hop)}}
			if offHops > 0 {
				mdm[mdOff] = []string{strconv.Itoa(offHops)}
			}
			shared[mdKey{hop, offHops}] = mdm
		}
		if movedFrom != "" {
			mdm = withMoved(mdm, movedFrom)
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: raw, Key: key, CrawlID: c.cfg.CrawlID, Depth: depth, Priority: prio, Metadata: mdm}})
	}
	add := func(nu *url.URL, raw string, hop extract.Hop, offHops int) {
		d := depth
		if listing && below(nu, src) {
			d = l.Depth
		}
		addAt(nu, raw, hop, offHops, d)
	}
	for _, ln := range links {
		if ln.NoFollow && !c.cfg.FollowRelNofollow {
			continue
		}
		// Links come normalized with c.norm (extract.Options.Normalize).
		nu, raw := ln.URL, ln.Abs
		if nu == nil || raw == "" || raw == l.URL {
			continue
		}
		orig := nu
		if nu, movedFrom = c.moveHost(nu); movedFrom != "" {
			raw = nu.String() // scope and traps below judge the rewritten URL
		}
		host := nu.Hostname()
		// A site a trap limit stopped: its links are no longer followed.
		// The trap check below refuses them and crawl.log says so (a cut
		// line), so the summary's trap cuts are the log's trap lines.
		offHops := 0
		requisite := c.cfg.PageRequisites && isRequisite(path, ln.Hop)
		if !c.scope.inScope(nu) {
			if c.scope.excluded(nu) || off+1 > c.scope.maxOff && !requisite {
				c.metrics.outOfScope.Inc()
				continue
			}
			offHops = off + 1
		}
		if requisite {
			// What a page needs to render is fetched wherever it is
			// (not replaced by its host's home page), and at the
			// page's depth: a page at the depth limit still renders.
			addAt(nu, raw, ln.Hop, offHops, l.Depth)
			continue
		}
		if host != srcHost && offHops == 0 {
			home := c.homeOf(orig, nu) // moved with its origin's rule (hostmap.go)
			switch c.scope.policy {
			case PolicyHomePage:
				add(home, home.String(), ln.Hop, 0)
				continue
			case PolicyCombined:
				add(nu, raw, ln.Hop, 0)
				add(home, home.String(), ln.Hop, 0)
				continue
			}
		}
		add(nu, raw, ln.Hop, offHops)
	}
	return items
}

// Bounds of the embeds fetched out of scope (Config.PageRequisites), as
// Heritrix's TransclusionDecideRule has them but one deeper: three embeds
// in a row (a page's stylesheet, the stylesheet it imports, that one's
// font; Heritrix's two would leave the font out), redirects among them
// free but bounded.
const (
	maxTranscluded    = 3
	maxTranscludedRun = 5
)

// isRequisite reports whether a link of hop found on the URL reached by
// path is a page requisite: an embed, or a redirect of one, with at most
// maxTranscluded embeds (and maxTranscludedRun embeds and redirects) at
// the end of the path it makes.
func isRequisite(path string, hop extract.Hop) bool {
	if hop != extract.HopEmbed && hop != extract.HopRedirect {
		return false
	}
	embeds, run := transcluded(path) // of path + hop, without building it
	run++
	if hop == extract.HopEmbed {
		embeds++
	}
	return embeds > 0 && embeds <= maxTranscluded && run <= maxTranscludedRun
}

// transcluded counts the embeds, and the embeds and redirects, at the end
// of a hop path: "LER" has one embed in a run of two.
func transcluded(path string) (embeds, run int) {
	for i := len(path) - 1; i >= 0 && (path[i] == byte(extract.HopEmbed) || path[i] == byte(extract.HopRedirect)); i-- {
		run++
		if path[i] == byte(extract.HopEmbed) {
			embeds++
		}
	}
	return embeds, run
}

func (c *Crawler) groupOf(host string) *robots.Group {
	c.hostsMu.Lock()
	defer c.hostsMu.Unlock()
	if hs := c.hosts[host]; hs != nil {
		return hs.group
	}
	return nil
}

// cut records a URL a trap limit refused, once per URL while it is
// remembered (the crawl log says when it cuts).
//
// crawl.log holds one line per URL, its final outcome, so a cut is logged
// only when it is final. A URL the frontier already holds (fetched, or
// queued by an earlier link: a page of a stopped site linking back to its
// home page) gets its own line and none for the cut. A depth cut is never
// logged: it depends on the path that found the link, and the same URL
// found later by a shorter path is crawled (Heritrix writes no line for a
// link beyond the hop limit either, its scope just drops it); the cut is
// counted in the metrics and the trap checker's hits.
func (c *Crawler) cut(l frontier.Lease, raw, path string, v traps.Verdict) {
	c.metrics.trapCuts.WithLabelValues(string(v.Kind)).Inc()
	if v.Kind == traps.Depth {
		return
	}
	c.cutMu.Lock()
	_, logged := c.cutLog[raw]
	c.cutMu.Unlock()
	if logged {
		return // no store lookup for a URL cut again and again
	}
	if k, ok := c.fr.(knower); ok {
		if known, err := k.Known(c.cfg.CrawlID, raw); err != nil {
			c.log.Warn("frontier lookup failed; trap cut logged", "url", raw, "err", err)
		} else if known {
			return
		}
	}
	c.cutMu.Lock()
	if _, dup := c.cutLog[raw]; dup {
		c.cutMu.Unlock()
		return
	}
	if len(c.cutLog) >= 100_000 {
		clear(c.cutLog)
	}
	c.cutLog[raw] = struct{}{}
	c.cutByKind[v.Kind]++
	c.cutMu.Unlock()
	status := crawllog.StatusBlockedByQuota
	ann := "trap:" + string(v.Kind)
	switch v.Kind {
	case traps.URLLength:
		status, ann = crawllog.StatusChaff, crawllog.AnnotationTrapURLLength
	case traps.RepeatedSegments:
		status, ann = crawllog.StatusChaff, crawllog.AnnotationTrapRepeatPath
	case traps.URLsPerSite:
		ann = crawllog.AnnotationTrapMaxURLs
	case traps.Duplicates:
		ann = crawllog.AnnotationTrapDuplicates
	}
	if err := c.clog.Log(&crawllog.Entry{Status: status, Size: -1, URL: raw, Path: path, Via: l.URL, Annotations: []string{ann}}); err != nil {
		c.log.Warn("crawl log write failed", "err", err)
	}
}
