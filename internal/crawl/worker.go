package crawl

// What the worker does with a response: dedup, extraction, archive,
// outlinks, sitemaps; and the first contact with a host.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/dedup"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/sitemap"
	"github.com/courtesy-crawler/courtesy/internal/traps"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// URL metadata keys kept in the frontier.
const (
	mdVia      = "via"      // referrer URL
	mdPath     = "path"     // discovery path (hop letters, Heritrix)
	mdOff      = "off"      // hops out of scope so far
	mdTry      = "try"      // failed tries so far
	mdKind     = "kind"     // "sitemap" for sitemap files
	mdSource   = "source"   // "seed"
	mdNoFollow = "nofollow" // REGP sitemap <type>data</type>: fetch, do not follow
	mdSrcLoc   = "srcloc"   // REGP <srcloc>: the original of this crawler copy
	mdLastMod  = "lastmod"  // sitemap <lastmod>
	mdFreq     = "changefreq"
	mdSMPrio   = "sm-priority"
	// mdSitemapFor is the host whose robots.txt (or /sitemap.xml) named a
	// sitemap file, kept through index children: a sitemap may list that
	// host's URLs besides its own (sitemaps.org cross-submission).
	mdSitemapFor = "sitemap-for"

	kindSitemap = "sitemap"

	prioritySeed   int8 = 2
	priorityHigh   int8 = 1 // sitemap entries, REGP Index-page, Change-*
	priorityNormal int8 = 0
)

func md1(m map[string][]string, k string) string {
	if v := m[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// firstContact runs once per host after its robots.txt was read by the
// gate: it keeps the robots group (REGP Index-page, Change-*) and queues
// the host's sitemaps (robots Sitemap: lines and /sitemap.xml).
func (c *Crawler) firstContact(ctx context.Context, u *url.URL, l frontier.Lease, hs *hostState) {
	c.hostsMu.Lock()
	if hs.sitemapsQueued {
		c.hostsMu.Unlock()
		return
	}
	hs.sitemapsQueued = true
	c.hostsMu.Unlock()
	origin := politeness.Origin(u)
	var sitemaps []string
	rules, ok, err := c.gate.Rules(ctx, origin)
	if err != nil {
		c.log.Debug("robots.txt rules not read", "origin", origin, "err", err)
	}
	if ok {
		c.learnFromRobots(u, rules) // robots Host, REGP Mirror-site; a 4xx drops a stored rule (hostmap.go)
	}
	if ok && rules.Entry.Result == politeness.RobotsOK {
		g := rules.Group
		// REGP Language, Encoding and Cookie go
		// into every request to the host.
		ext := g.Extensions()
		req := fetch.Request{
			AcceptLanguage: strings.Join(ext.Languages, ", "),
			AcceptEncoding: strings.Join(ext.Encodings, ", "),
			Cookie:         strings.Join(ext.Cookies, "; "),
		}
		c.hostsMu.Lock()
		hs.group, hs.req = g, req
		c.hostsMu.Unlock()
		c.shareDelay(ctx, l.Key, g)
		sitemaps = rules.File.Sitemaps() // relative lines resolved against the robots.txt URL
	}
	if !boolOr(c.cfg.Sitemaps, true) || !c.scope.inScope(u) {
		// A host visited out of scope (an off-scope hop, a page
		// requisite on a CDN) is not crawled: its sitemaps would list
		// pages the scope refuses.
		return
	}
	sitemaps = append(sitemaps, origin+"/sitemap.xml")
	var items []frontier.Item
	seen := map[string]bool{}
	for _, s := range sitemaps {
		su, err := urlnorm.Normalize(s, c.norm)
		if err != nil || seen[su.String()] || len(items) >= c.cfg.MaxSitemapsPerHost {
			continue
		}
		seen[su.String()] = true
		// A sitemap on another host is fetched under that host's rules,
		// if it is in scope.
		if su.Hostname() != u.Hostname() && !c.scope.inScope(su) {
			continue
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{
			URL: su.String(), Key: c.queueKey(su), CrawlID: c.cfg.CrawlID, Priority: priorityHigh, Depth: 1,
			Metadata: map[string][]string{mdKind: {kindSitemap}, mdPath: {"P"}, mdVia: {origin + "/robots.txt"}, mdSitemapFor: {strings.ToLower(u.Hostname())}},
		}})
	}
	if len(items) > 0 {
		if _, err := c.fr.Put(context.WithoutCancel(ctx), items); err != nil {
			c.log.Error("frontier put failed", "err", err)
		}
	}
}

// fetched handles a response: dedup, WARC, extraction, crawl log, outlinks
// and the acknowledgement.
func (c *Crawler) fetched(ctx context.Context, wid int, l frontier.Lease, u *url.URL, hs *hostState, res *fetch.Result) next {
	host := u.Hostname()
	c.stats.pages.Add(1)
	c.stats.bytes.Add(int64(len(res.RawBody)))
	if c.cfg.PageRequisites {
		if embeds, _ := transcluded(md1(l.Metadata, mdPath)); embeds > 0 {
			c.stats.requisites.Add(1)
			if md1(l.Metadata, mdOff) != "" {
				c.stats.requisitesOff.Add(1)
			}
		}
	}
	c.countResponse(res.Status, res.ContentType) // console.go
	c.metrics.pages.WithLabelValues(strconv.Itoa(res.Status/100) + "xx").Inc()
	c.metrics.bytes.Add(float64(len(res.RawBody)))
	c.metrics.fetchDuration.Observe(res.Duration.Seconds())
	c.hostsMu.Lock()
	c.answeredLocked(u, hs)
	if !hs.fetched {
		// Hosts that answered this run: the summary's "pages from N hosts".
		hs.fetched = true
		c.stats.fetchedHosts.Add(1)
	}
	c.hostsMu.Unlock()
	e := &crawllog.Entry{
		Status: res.Status, Size: int64(len(res.RawBody)), MIME: res.MediaType(), Thread: wid,
		FetchStart: res.Start, FetchDuration: res.Duration,
	}
	switch res.TruncReason {
	case fetch.TruncSize:
		c.tr.Observe(traps.Size)
		c.stats.truncated.Add(1)
		e.Annotations = append(e.Annotations, crawllog.AnnotationSizeTruncated)
	case fetch.TruncTime:
		c.tr.Observe(traps.DownloadTime)
		e.Annotations = append(e.Annotations, crawllog.AnnotationTimeTruncated)
	}
	if tries, _ := strconv.Atoi(md1(l.Metadata, mdTry)); tries > 0 {
		e.Annotations = append(e.Annotations, crawllog.Tries(tries+1))
	}

	if res.Skipped {
		// HEAD-before-GET: an unwanted media type is not downloaded;
		// the HEAD is logged, nothing is archived.
		e.Size = -1
		e.Annotations = append(e.Annotations, "head:skipped")
		return c.complete(l, nil, e, -1)
	}
	ok := res.Status >= 200 && res.Status < 300
	directives := robots.XRobotsTag(res.Header.Values("X-Robots-Tag"), c.agent)
	var page *extract.Page
	var content *dedup.Content // the page's main content, from extraction's tokens
	var sm *sitemap.Sitemap
	var css *extract.Page // a stylesheet's references, with PageRequisites
	mt := res.MediaType()
	switch {
	case ok && md1(l.Metadata, mdKind) == kindSitemap:
		s, err := sitemap.Parse(bytes.NewReader(res.Body), u, sitemap.Options{})
		if err == nil {
			sm = s
		} else {
			e.Annotations = append(e.Annotations, "sitemap:unparsable")
		}
	case ok && (mt == "text/html" || mt == "application/xhtml+xml" || mt == ""):
		// The near-duplicate fingerprint's main content is gathered from
		// the extractor's own tokens: one pass over the page, not two
		// (the second pass was 40 % of the crawl's CPU on 30 KB pages).
		content = dedup.NewContent() // released after the near-duplicate check below
		p, err := extract.HTML(u, res.Body, res.Header.Get("Content-Type"), extract.Options{Agent: c.agent, Images: c.cfg.Images, Requisites: c.cfg.PageRequisites,
			ScriptURLs: c.cfg.ScriptURLs, Normalize: c.norm, Tokens: content, NoText: true, MaxBytes: c.parseMax})
		if err == nil {
			page = p
			directives = directives.Merge(p.Robots)
		}
	case ok && mt == "text/css" && c.cfg.PageRequisites:
		if p, err := extract.CSS(u, res.Body, extract.Options{Normalize: c.norm, MaxBytes: c.parseMax}); err == nil {
			css = p
		}
	}
	if directives.NoIndex {
		e.Annotations = append(e.Annotations, "noindex")
	}

	// Duplicates: identical payload → revisit record; near-identical text
	// (simhash, Hamming ≤ 3) → annotated. Both count toward the site's
	// duplicate limit.
	digest := dedup.Digest(res.RawBody)
	e.Digest = digest
	var revisit *warc.Revisit
	if ok && len(res.RawBody) > 0 {
		c.sameHome(u, digest) // duplicate hosts (samehome.go)
		dup := false
		if !c.digestsSeen.MayContain(digest) {
			// Certainly a new payload: no store lookup.
		} else if prev, err := c.digestLookup(digest); err == nil {
			if r, ok := decodeRevisit(prev); ok {
				revisit = &r
				e.Annotations = append(e.Annotations, crawllog.AnnotationDuplicateDigest)
				c.stats.revisits.Add(1)
				if r.RecordID == "" && r.TargetURI == l.URL {
					// The same URL's capture in an earlier crawl
					// (--dedup-index): the page is unchanged, not a
					// copy, so neither a duplicate nor the trap
					// rule's business.
					c.stats.unchanged.Add(1)
				} else {
					c.stats.dups.Add(1)
					c.tr.DuplicateOf(host, traps.Dup{URL: l.URL, Via: md1(l.Metadata, mdVia), Of: r.TargetURI, Exact: true})
					dup = true
				}
			}
		} else if !errors.Is(err, kv.ErrNotFound) {
			c.log.Warn("digest lookup failed", "err", err)
		}
		if revisit == nil && page != nil && page.HasText {
			// The main content only (dedup.Fingerprint); pages too short
			// to judge are left to the digest.
			if fp, words := fingerprint(page, content, res.Body); words >= dedup.MinWords {
				if m, near := c.near.CheckURL(host, l.URL, fp); near {
					e.Annotations = append(e.Annotations, crawllog.AnnotationNearDuplicate)
					c.stats.dups.Add(1)
					c.tr.DuplicateOf(host, traps.Dup{URL: l.URL, Via: md1(l.Metadata, mdVia), Of: m.URL})
					dup = true
				}
			}
		}
		if !dup {
			c.tr.Page(host, l.URL) // the trap rule's share of copies per path pattern
		}
	}

	if content != nil {
		// Its buffers hold the page's text: back to the pool before the
		// WARC write, so that a worker holds one page's text only while
		// it needs it (256 workers' worth was 70 MB of the heap).
		content.Release()
		content = nil
	}

	// Links.
	var links []extract.Link
	var smRedirect []frontier.Item // where a sitemap moved to, queued as a sitemap
	follow := !directives.NoFollow && md1(l.Metadata, mdNoFollow) == ""
	if page != nil && follow {
		links = page.Links
	}
	if css != nil && follow {
		links = css.Links
	}
	selfRedirect := false
	if res.Redirect != nil && res.Status >= 300 && res.Status < 400 {
		// Redirects are links: queued, not followed.
		if rl, err := extract.Redirect(u, res.Redirect.String()); err == nil {
			// outlinks takes links normalized with c.norm, as
			// extract.HTML gives them.
			if nu, err := urlnorm.Normalize(rl.Abs, c.norm); err == nil {
				rl.URL, rl.Abs = nu, nu.String()
				if rl.Abs == l.URL {
					selfRedirect = true
				} else if md1(l.Metadata, mdKind) == kindSitemap {
					if it, ok, _ := c.sitemapChild(l, u, hs, nu, "R"); ok {
						smRedirect = append(smRedirect, it)
					}
				} else {
					c.seedRedirected(ctx, l, nu)
					links = append(links, rl)
				}
			}
		}
	}
	items := c.outlinks(l, u, links, page != nil && dirListing(page.Title))
	items = append(items, smRedirect...)
	if sm != nil {
		smItems, other := c.sitemapItems(l, u, hs, sm)
		items = append(items, smItems...)
		if other > 0 {
			e.Annotations = append(e.Annotations, "sitemap:other-host-refused:"+strconv.Itoa(other))
		}
	}

	sd := c.structuredPage(ctx, l.URL, res, page != nil, directives) // structured.go

	// Archive (unless noarchive is honoured); the acker makes the records
	// durable before the acknowledgement: an acknowledged URL is always in
	// a WARC file.
	wi := -1
	if directives.NoArchive && c.honorNA {
		e.Annotations = append(e.Annotations, "noarchive")
	} else {
		ex := &warc.Exchange{
			URL: l.URL, Date: res.Start, Request: res.RequestHeaderBytes(), ResponseHeader: res.HTTPHeaderBytes(),
			Body: res.RawBody, PayloadDigest: digest, Revisit: revisit,
			Metadata: append(c.warcMetadata(l, res, items, links, directives), sd.fields()...),
		}
		if res.RemoteAddr.IsValid() {
			ex.IP = res.RemoteAddr.Addr().String()
		}
		switch res.TruncReason {
		case fetch.TruncSize:
			ex.Truncated = warc.TruncatedLength
		case fetch.TruncTime:
			ex.Truncated = warc.TruncatedTime
		}
		// fetch.TruncDecode is not WARC-Truncated: the record holds every
		// byte sent (WARC 1.1 §5.13 is about the content block); the
		// metadata record notes "truncated: decode".
		wi = wid % len(c.warcs)
		wr, err := c.warcs[wi].WriteExchange(ctx, ex)
		if err != nil {
			// Not archived: return the URL; it is served again.
			c.log.Error("WARC write failed", "url", l.URL, "err", err)
			return next{back: backWARCFailed}
		}
		if ok && revisit == nil && len(res.RawBody) > 0 {
			// Committed by the acker right before the frontier's synced
			// commit of this page, which makes it durable.
			if err := c.digestsW.Set([]byte(digest), encodeRevisit(l.URL, res.Start, wr.Response.RecordID)); err != nil {
				c.log.Warn("payload digest not kept: a later copy is archived in full", "url", l.URL, "err", err)
			}
			c.digestsSeen.Add(digest)
		}
		c.holdQuads(l.URL, sd)
	}
	if transient(res.Status) {
		// Archived and logged; tried again later unless out of tries
		// (the last answer is the final status in crawl.log).
		return c.retry(l, e, fmt.Errorf("crawl: HTTP %d", res.Status), wi, politeness.RetryAfter(res.Header, c.now()))
	}
	if tries, _ := strconv.Atoi(md1(l.Metadata, mdTry)); selfRedirect && tries == 0 && c.cfg.MaxRetries > 0 {
		// A redirect to the URL itself, as a site sends with the cookie
		// it wants back (a session, a consent) or while it warms up:
		// the URL is asked once more, at the host's own pace, where a
		// browser or wget would follow at once. As a link it would be
		// dropped as seen and the page never fetched.
		return c.retry(l, e, fmt.Errorf("crawl: HTTP %d to itself", res.Status), wi, max(c.cfg.Delay, time.Millisecond))
	}
	return c.complete(l, items, e, wi)
}

// fingerprint returns dedup.Fingerprint(body) for a page extracted with
// content as its token sink: from content when extraction tokenized body
// itself (as fetched: UTF-8, under the size from which tokenizing
// differs), else from body.
func fingerprint(page *extract.Page, content *dedup.Content, body []byte) (uint64, int) {
	if content != nil && page.Charset == "utf-8" && !page.Truncated && len(body) < dedup.MaxTokenized {
		return content.Fingerprint()
	}
	return dedup.Fingerprint(body)
}

// warcMetadata builds the metadata record of an exchange (Heritrix field
// names where they exist).
func (c *Crawler) warcMetadata(l frontier.Lease, res *fetch.Result, items []frontier.Item, links []extract.Link, d robots.Directives) []warc.Field {
	f := []warc.Field{
		{Name: "hopsFromSeed", Value: md1(l.Metadata, mdPath)},
		{Name: "fetchTimeMs", Value: strconv.FormatInt(res.Duration.Milliseconds(), 10)},
		{Name: "robots", Value: "allowed"},
	}
	if via := md1(l.Metadata, mdVia); via != "" {
		f = append(f, warc.Field{Name: "via", Value: via})
	}
	if res.RemoteAddr.IsValid() {
		f = append(f, warc.Field{Name: "ip", Value: res.RemoteAddr.Addr().String()})
	}
	if res.Truncated {
		f = append(f, warc.Field{Name: "truncated", Value: string(res.TruncReason)})
	}
	if src := md1(l.Metadata, mdSrcLoc); src != "" {
		// REGP: this URL is the crawler copy of srcloc.
		f = append(f, warc.Field{Name: "srcloc", Value: src})
	}
	if d.NoIndex {
		f = append(f, warc.Field{Name: "robots-meta", Value: "noindex"})
	}
	// Where each outlink was found, for those not in an a/@href (a
	// few per page: the map is made only for them).
	type urlHop struct {
		url string
		hop extract.Hop
	}
	var where map[urlHop]string
	for _, ln := range links {
		if ln.Tag == "a" && ln.Attr == "href" {
			continue
		}
		if where == nil {
			where = map[urlHop]string{}
		}
		if k := (urlHop{ln.Abs, ln.Hop}); where[k] == "" {
			where[k] = ln.Context()
		}
	}
	for i, it := range items {
		if i >= 1000 {
			break
		}
		if it.Known {
			continue
		}
		hop := lastHop(md1(it.Info.Metadata, mdPath))
		ctx := where[urlHop{it.Info.URL, extract.Hop(hop[0])}]
		if ctx == "" {
			ctx = "a/@href"
		}
		f = append(f, warc.Field{Name: "outlink", Value: it.Info.URL + " " + hop + " " + ctx})
	}
	return f
}

func lastHop(p string) string {
	if p == "" {
		return "L"
	}
	return p[len(p)-1:]
}

// sitemapItems queues a sitemap's entries (priority high: the crawl order is
// seeds first, then sitemap entries) and child sitemaps.
// Entries on another host than the sitemap's are refused, and counted,
// unless that host's robots.txt submitted the sitemap.
func (c *Crawler) sitemapItems(l frontier.Lease, u *url.URL, hs *hostState, sm *sitemap.Sitemap) (items []frontier.Item, otherHost int) {
	path := md1(l.Metadata, mdPath)
	submitter := md1(l.Metadata, mdSitemapFor)
	for _, child := range sm.Sitemaps {
		cu, err := urlnorm.Normalize(child, c.norm)
		if err != nil {
			continue
		}
		it, ok, over := c.sitemapChild(l, u, hs, cu, "I")
		if over {
			break
		}
		if ok {
			items = append(items, it)
		}
	}
	for _, e := range sm.URLs {
		// sitemaps.org: a sitemap speaks for its own host only, unless
		// the other host's robots.txt submitted it. Anything else could
		// make any site queue (and vouch for) another site's URLs.
		if e.OtherHost && !sitemapMaySpeakFor(e.Loc, submitter) {
			otherHost++
			continue
		}
		nu, err := urlnorm.Normalize(e.Loc, c.norm)
		if err != nil || !c.scope.inScope(nu) {
			continue
		}
		raw := nu.String()
		// Sitemap entries are at most one hop below the sitemap: they are
		// what the site says exists (orphans included).
		depth := min(l.Depth+1, 2)
		if v := c.tr.CheckURL(nu.Hostname(), nu, u, raw, depth); !v.OK() {
			c.cut(l, raw, path+"I", v)
			continue
		}
		mdm := map[string][]string{mdVia: {l.URL}, mdPath: {path + "I"}}
		if e.Type == "data" {
			mdm[mdNoFollow] = []string{"1"}
		}
		if e.SrcLoc != "" {
			mdm[mdSrcLoc] = []string{e.SrcLoc}
		}
		if !e.LastMod.IsZero() {
			mdm[mdLastMod] = []string{e.LastMod.UTC().Format(time.RFC3339)}
		}
		if e.ChangeFreq != "" {
			mdm[mdFreq] = []string{e.ChangeFreq}
		}
		if e.Priority >= 0 {
			mdm[mdSMPrio] = []string{strconv.FormatFloat(e.Priority, 'f', -1, 64)}
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: raw, Key: c.queueKey(nu), CrawlID: c.cfg.CrawlID, Depth: depth, Priority: priorityHigh, Metadata: mdm}})
	}
	if otherHost > 0 {
		c.log.Debug("sitemap entries on other hosts refused", "sitemap", l.URL, "count", otherHost)
	}
	return items, otherHost
}

// sitemapChild is the item of cu, a sitemap the sitemap of lease l leads
// to: a child of an index (hop "I") or where it redirects (hop "R":
// /sitemap.xml to /sitemap_index.xml, http to https, common; as an
// ordinary link it would be fetched as a page and its entries lost). It
// counts in max-sitemaps-per-host (over: the limit is passed), must be on
// l's host or in scope (ok), and speaks for the robots.txt host l speaks
// for.
func (c *Crawler) sitemapChild(l frontier.Lease, u *url.URL, hs *hostState, cu *url.URL, hop string) (it frontier.Item, ok, over bool) {
	c.hostsMu.Lock()
	hs.sitemaps++
	over = hs.sitemaps > c.cfg.MaxSitemapsPerHost
	c.hostsMu.Unlock()
	raw := cu.String()
	if over || raw == l.URL || (cu.Hostname() != u.Hostname() && !c.scope.inScope(cu)) {
		return it, false, over
	}
	md := map[string][]string{mdKind: {kindSitemap}, mdPath: {md1(l.Metadata, mdPath) + hop}, mdVia: {l.URL}}
	if f := md1(l.Metadata, mdSitemapFor); f != "" {
		md[mdSitemapFor] = []string{f}
	}
	return frontier.Item{Info: frontier.URLInfo{
		URL: raw, Key: c.queueKey(cu), CrawlID: c.cfg.CrawlID, Priority: priorityHigh, Depth: l.Depth, Metadata: md,
	}}, true, false
}

// sitemapMaySpeakFor reports whether a sitemap entry on another host than
// its sitemap is on the host whose robots.txt submitted the sitemap.
func sitemapMaySpeakFor(loc, submitter string) bool {
	if submitter == "" {
		return false
	}
	u, err := url.Parse(loc)
	return err == nil && strings.EqualFold(u.Hostname(), submitter)
}

// complete returns the URL for the acker (end hands it over): logged and
// acknowledged (completed) together with its outlinks in one frontier
// Put, after the WARC writer warcIdx (-1: none) was flushed.
func (c *Crawler) complete(l frontier.Lease, items []frontier.Item, e *crawllog.Entry, warcIdx int) next {
	return next{ack: &ack{lease: l, items: items, entry: e, warc: warcIdx, done: true,
		final: frontier.Item{Info: frontier.URLInfo{URL: l.URL, Key: l.Key, CrawlID: l.CrawlID}, Known: true}}}
}

// digestLookup returns the revisit target stored for a payload digest,
// queued (digestsW) or committed.
func (c *Crawler) digestLookup(digest string) ([]byte, error) {
	if v, ok := c.digestsW.Pending([]byte(digest)); ok {
		return v, nil
	}
	return c.digests.Get([]byte(digest))
}

// logLine writes a URL's line; a nil e (a try to be repeated) writes
// none: as Heritrix does, crawl.log has one line per URL, its final
// outcome, with the number of tries annotated ("3t").
func (c *Crawler) logLine(l frontier.Lease, e *crawllog.Entry) {
	if e == nil {
		return
	}
	e.URL = l.URL
	e.Path = md1(l.Metadata, mdPath)
	e.Via = md1(l.Metadata, mdVia)
	if md1(l.Metadata, mdSource) == "seed" {
		e.Source = "seed"
	}
	movedAnnotation(l, e)
	if err := c.clog.Log(e); err != nil {
		c.log.Warn("crawl log write failed", "err", err)
	}
}

// encodeRevisit / decodeRevisit store what a revisit record refers to:
// the first capture's URL, date and record ID. The ID is "" for a capture
// of an earlier crawl (dedupindex.go): a CDXJ line does not hold it, and
// this crawl's own records always have one.
func encodeRevisit(u string, t time.Time, id string) []byte {
	return []byte(strconv.FormatInt(t.UnixNano(), 10) + " " + id + " " + u)
}

func decodeRevisit(b []byte) (warc.Revisit, bool) {
	parts := strings.SplitN(string(b), " ", 3)
	if len(parts) != 3 {
		return warc.Revisit{}, false
	}
	ns, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || parts[2] == "" {
		return warc.Revisit{}, false
	}
	return warc.Revisit{TargetURI: parts[2], Date: time.Unix(0, ns).UTC(), RecordID: parts[1]}, true
}
