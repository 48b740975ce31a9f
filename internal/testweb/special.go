package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// special says which hazard site a Site is.
type special int

const (
	specGeneric special = iota
	specHub
	specRobots404
	specRobotsRules
	specCrawlDelay
	specRequestRate
	specRobotsAgents
	specRobots401
	specRobots403
	specRobots500
	specRobots503
	specRobots429
	specRobotsRedirect
	specRobotsTarget
	specREGP
	specREGPWindow
	specRobotsHuge
	specSitemapXML
	specSitemapIndex
	specSitemapText
	specSitemapGzip
	specRedirects
	specRedirectTarget
	specErrors
	specMedia
	specMalformed
	specCompressed
	specMetaRobots
	specDup
	specRobotsHost
	specMirrored
	specCalendar
	specSession
	specGrowing
	specDirList
	specNearDup
	specSlow
	specEndless
	specWild
)

// specialPages is the number of generic pages every hazard site carries
// besides its hazards (home page included).
const specialPages = 8

// defaultRobots is the robots.txt of generic sites and of hazard sites
// whose hazard is elsewhere.
const defaultRobots = "# Generic rules of the synthetic web.\nUser-agent: *\nDisallow: /private/\n"

// specialDef describes one hazard site.
type specialDef struct {
	spec    special
	host    string
	aliases []string
	kinds   []Kind
	trap    Trap
	status  int           // robots.txt status
	robots  string        // robots.txt body for status 200; defaultRobots when ""
	delay   time.Duration // Site.Delay for the `*` group
	orphans int           // orphan pages listed by the sitemaps
}

func specialDefs() []specialDef {
	return []specialDef{
		{spec: specHub, host: "hub.test", kinds: []Kind{KindHub}},
		{spec: specRobots404, host: "robots-404.test", kinds: []Kind{KindRobots404}, status: 404},
		{spec: specRobotsRules, host: "robots-rules.test", kinds: []Kind{KindRobotsRules}, robots: robotsRules},
		{spec: specCrawlDelay, host: "crawl-delay.test", kinds: []Kind{KindCrawlDelay}, delay: time.Second,
			robots: "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"},
		{spec: specRequestRate, host: "request-rate.test", kinds: []Kind{KindRequestRate}, delay: 500 * time.Millisecond,
			robots: "User-agent: *\nRequest-rate: 2/1s\nDisallow: /private/\n"},
		{spec: specRobotsAgents, host: "robots-agents.test", kinds: []Kind{KindRobotsAgents}, robots: robotsAgents},
		{spec: specRobots401, host: "robots-401.test", kinds: []Kind{KindRobots401}, status: 401},
		{spec: specRobots403, host: "robots-403.test", kinds: []Kind{KindRobots403}, status: 403},
		{spec: specRobots500, host: "robots-500.test", kinds: []Kind{KindRobots5xx}, status: 500},
		{spec: specRobots503, host: "robots-503.test", kinds: []Kind{KindRobots5xx}, status: 503},
		{spec: specRobots429, host: "robots-429.test", kinds: []Kind{KindRobots429}, status: 429},
		{spec: specRobotsRedirect, host: "robots-redirect.test", kinds: []Kind{KindRobotsRedirect}, status: 301,
			robots: robotsTarget, delay: 500 * time.Millisecond},
		{spec: specRobotsTarget, host: "robots-target.test", kinds: []Kind{KindCrawlDelay}, robots: robotsTarget,
			delay: 500 * time.Millisecond},
		{spec: specREGP, host: "regp.test", kinds: []Kind{KindRobotsREGP, KindRequestRate, KindSitemapXML},
			robots: robotsREGP, delay: 200 * time.Millisecond, orphans: 2},
		{spec: specREGPWindow, host: "regp-window.test", kinds: []Kind{KindRobotsREGP, KindVisitTime}, robots: robotsREGPWindow},
		{spec: specRobotsHuge, host: "robots-huge.test", kinds: []Kind{KindRobotsHuge}},
		{spec: specSitemapXML, host: "sitemap-xml.test", kinds: []Kind{KindSitemapXML}, orphans: 5},
		{spec: specSitemapIndex, host: "sitemap-index.test", kinds: []Kind{KindSitemapIndex, KindSitemapGzip}, orphans: 6},
		{spec: specSitemapText, host: "sitemap-text.test", kinds: []Kind{KindSitemapText}, orphans: 4},
		{spec: specSitemapGzip, host: "sitemap-gzip.test", kinds: []Kind{KindSitemapGzip}, orphans: 4},
		{spec: specRedirects, host: "redirects.test", kinds: []Kind{KindRedirects}},
		{spec: specRedirectTarget, host: "redirect-target.test", kinds: []Kind{KindRedirects}},
		{spec: specErrors, host: "errors.test", kinds: []Kind{KindErrors}},
		{spec: specMedia, host: "media.test", kinds: []Kind{KindMedia}},
		{spec: specMalformed, host: "malformed.test", kinds: []Kind{KindMalformed}},
		{spec: specCompressed, host: "compressed.test", kinds: []Kind{KindCompressed}},
		{spec: specMetaRobots, host: "meta-robots.test", kinds: []Kind{KindMetaRobots}},
		{spec: specDup, host: "dup.test", aliases: []string{"www.dup.test", "mirror-dup.test"}, kinds: []Kind{KindDuplicate}},
		{spec: specRobotsHost, host: "canonical.test", aliases: []string{"www.canonical.test"}, kinds: []Kind{KindRobotsHost},
			robots: robotsHost},
		{spec: specMirrored, host: "mirrored.test", aliases: []string{"m1.mirrored.test", "m2.mirrored.test"}, kinds: []Kind{KindMirrorSite},
			robots: robotsMirrored},
		{spec: specCalendar, host: "calendar.test", kinds: []Kind{KindTrap}, trap: TrapCalendar},
		{spec: specSession, host: "session.test", kinds: []Kind{KindTrap}, trap: TrapSession},
		{spec: specGrowing, host: "growing.test", kinds: []Kind{KindTrap}, trap: TrapGrowing},
		{spec: specDirList, host: "dirlist.test", kinds: []Kind{KindTrap}, trap: TrapDirList},
		{spec: specNearDup, host: "neardup.test", kinds: []Kind{KindTrap}, trap: TrapNearDup},
		{spec: specSlow, host: "slow.test", kinds: []Kind{KindTrap}, trap: TrapSlow},
		{spec: specEndless, host: "endless.test", kinds: []Kind{KindTrap}, trap: TrapEndless},
		{spec: specWild, host: "wild.test", kinds: []Kind{KindTrap}, trap: TrapWildcard, status: 404},
	}
}

// robotsRules exercises Allow, Disallow, wildcards and $ (RFC 9309
// §2.2.2-2.2.3: the longest match wins, Allow wins a tie).
const robotsRules = `# Allow, Disallow, wildcards and end anchors (RFC 9309 section 2.2).
User-agent: *
Disallow: /private/
Allow: /private/public-*.html
Disallow: /*.pdf$
Disallow: /search
Allow: /search/about$
Disallow: /*?sort=
Disallow: /trap/
`

// robotsAgents has groups for other agents; only the `*` group applies to
// a crawler that is none of them.
const robotsAgents = `User-agent: BadBot
Disallow: /

User-agent: Googlebot
User-agent: Bingbot
Crawl-delay: 2
Disallow: /no-search-engines/

User-agent: *
Disallow: /private/
Disallow: /no-robots/
`

// robotsTarget is served by robots-target.test, and robots-redirect.test's
// robots.txt redirects there: RFC 9309 §2.3.1.2 says the redirected-to
// file's rules apply to the original host.
const robotsTarget = `User-agent: *
Crawl-delay: 0.5
Disallow: /private/
Disallow: /moved-rules/
`

// robotsREGP is a Robot-version 3.0 file in the shape of the REGP paper §3.2's
// example: header, command sequences, nested braces, a global section with
// Sitemap, Visit-time and Language, and ## comments.
const robotsREGP = `Robot-version: 3.0
Last-modified: 30 Oct 2026 04:31:17 UT

User-agent: *
Disallow: /data
Allow: /data/open
Disallow: /private/
Request-rate: 5/1s
{
User-agent: courtesy
Allow: /data/courtesy
Crawl-delay: 0.5
}

User-agent: WebCrawler
Disallow: /

Sitemap: http://regp.test/sitemap.xml
Visit-time: 00:00-23:59 UT ## open all day but the last minute
Language: en, en-us
`

// robotsREGPWindow opens the site to robots only in the morning (UTC),
// with REGP's Visit-time (the REGP paper §3.2.8): a polite crawler waits for the
// window. The Time-forbidden period is in the past and changes nothing.
// The window is Config.VisitTime (default 00:00-12:00, mornings only).
const robotsREGPWindow = `Robot-version: 3.0

User-agent: *
Disallow: /private/
Visit-time: %s UT ## Config.VisitTime
Time-forbidden: 1 Jan 2026 00:00:00 UT-2 Jan 2026 23:59:59 UT
`

// robotsHost is served on canonical.test and www.canonical.test alike, as
// Yandex asks: the Host line names the main mirror (the REGP paper §3.2.13), so
// a crawler entering by www.canonical.test crawls canonical.test instead.
const robotsHost = `User-agent: *
Disallow: /private/
Host: canonical.test
`

// robotsMirrored is mirrored.test's robots.txt: REGP Mirror-site lines
// (the REGP paper §3.2.11) name two mirrors "crawlers should visit instead", to
// spread the load. The mirrors serve defaultRobots (no Mirror-site lines:
// a mirror does not send crawlers on to its siblings).
const robotsMirrored = `Robot-version: 3.0

User-agent: *
Disallow: /private/

Mirror-site: m1.mirrored.test
Mirror-site: m2.mirrored.test
`

// hugeRobots builds robots-huge.test's file: rules at the top, then padding
// past robots.MaxSize (500 KiB, RFC 9309 §2.5), then a rule a conforming
// parser may ignore.
func hugeRobots() []byte {
	var b bytes.Buffer
	b.WriteString("# A robots.txt over 500 KiB (RFC 9309 section 2.5).\nUser-agent: *\nDisallow: /private/\n")
	for i := 0; b.Len() < 600<<10; i++ {
		fmt.Fprintf(&b, "Disallow: /junk/%06d/\n", i)
	}
	b.WriteString("Disallow: /beyond-limit/\n")
	return b.Bytes()
}

// addSpecial adds the hazard sites.
func (w *Web) addSpecial() {
	w.huge = hugeRobots()
	for _, d := range specialDefs() {
		s := &Site{
			Host:         d.host,
			Aliases:      d.aliases,
			Kinds:        d.kinds,
			Trap:         d.trap,
			RobotsStatus: d.status,
			Delay:        d.delay,
			special:      d.spec,
		}
		if s.RobotsStatus == 0 {
			s.RobotsStatus = 200
		}
		switch {
		case d.spec == specRobotsHuge:
			s.Robots = w.huge
		case s.RobotsStatus == 200 || s.RobotsStatus == 301:
			body := d.robots
			if body == "" {
				body = defaultRobots
			}
			if d.spec == specREGPWindow {
				body = fmt.Sprintf(body, w.cfg.VisitTime)
			}
			s.Robots = []byte(body)
		}
		switch d.spec {
		case specRobotsHost:
			// Every name but the one Host names is non-canonical.
			s.NonCanonical = d.aliases
		case specMirrored:
			s.NonCanonical = []string{d.host}
			s.Mirrors = d.aliases
			s.aliasRobots = []byte(defaultRobots)
		}
		if d.spec == specRobotsRedirect {
			s.RobotsRedirect = "http://robots-target.test/robots.txt"
		}
		for i := 1; i <= d.orphans; i++ {
			s.Orphans = append(s.Orphans, "http://"+d.host+orphanPath(i))
		}
		w.add(s)
		if d.spec == specWild {
			w.wild = s
		}
	}
}

// finish fills in what depends on the whole web: seed pages, page counts,
// sitemap lines.
func (w *Web) finish(s *Site) {
	s.SeedPages = []string{s.origin + "/"}
	if s.special == specRobotsHost {
		// Entered by the name its robots.txt does not want crawled.
		s.SeedPages = []string{"http://" + s.Aliases[0] + "/"}
	}
	switch {
	case s.special == specGeneric:
		s.Pages = w.cfg.PagesPerSite
		s.Robots = []byte(defaultRobots)
		s.RobotsStatus = 200
	case s.Trap != "":
		s.Pages = -1
	default:
		s.Pages = specialPages
	}
	switch s.special {
	case specSitemapXML, specREGP:
		s.Sitemaps = []string{s.origin + "/sitemap.xml"}
	case specSitemapIndex:
		s.Sitemaps = []string{s.origin + "/sitemap_index.xml"}
	case specSitemapText:
		s.Sitemaps = []string{s.origin + "/sitemap.txt"}
	case specSitemapGzip:
		s.Sitemaps = []string{s.origin + "/sitemap.xml.gz"}
	}
	if s.RobotsStatus == 200 && s.special != specREGP && s.special != specRobotsHuge && len(s.Sitemaps) > 0 {
		s.Robots = []byte(string(s.Robots) + "\nSitemap: " + s.Sitemaps[0] + "\n")
	}
	if s.special == specDup || s.special == specRobotsHost {
		s.DupGroup = s.Host
	}
}

// orphanPath is the path of orphan page i (1-based).
func orphanPath(i int) string { return "/hidden/orphan-" + strconv.Itoa(i) + ".html" }

// sitemapOrphans returns the orphan numbers sitemap path of s lists.
func sitemapOrphans(s *Site, path string) (from, to int) {
	n := len(s.Orphans)
	if s.special == specSitemapIndex {
		if path == "/sitemaps/a.xml" {
			return 1, n / 2
		}
		return n/2 + 1, n
	}
	return 1, n
}

// sitemapXML builds an XML sitemap listing the home page (if home) and
// orphans from..to, with the REGP paper §3.2.12's <type> and <srcloc> tags.
func sitemapXML(s *Site, home bool, from, to int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	if home {
		fmt.Fprintf(&b, "<url>\n  <loc>%s/</loc>\n  <changefreq>daily</changefreq>\n  <priority>1.0</priority>\n  <type>list</type>\n</url>\n", s.origin)
	}
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "<url>\n  <loc>%s%s</loc>\n  <srcloc>%s/news/show?date=1030&amp;id=%d</srcloc>\n  <lastmod>2026-10-30</lastmod>\n  <changefreq>daily</changefreq>\n  <priority>0.8</priority>\n  <type>data</type>\n</url>\n",
			s.origin, orphanPath(i), s.origin, i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// sitemapIndex lists the two sitemaps of sitemap-index.test, the second
// gzipped.
func sitemapIndex(s *Site) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, p := range []string{"/sitemaps/a.xml", "/sitemaps/b.xml.gz"} {
		fmt.Fprintf(&b, "<sitemap>\n  <loc>%s%s</loc>\n  <lastmod>2026-10-30</lastmod>\n</sitemap>\n", s.origin, p)
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

// sitemapText is a text sitemap: one absolute URL a line.
func sitemapText(s *Site) []byte {
	var b strings.Builder
	b.WriteString(s.origin + "/\n")
	for _, o := range s.Orphans {
		b.WriteString(o + "\n")
	}
	return []byte(b.String())
}

// gzipBytes compresses b; the header carries no name or time, so the
// output is the same on every run.
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}
