package testweb

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Class says what a URL of the web is.
type Class string

// URL classes.
const (
	ClassRobots      Class = "robots"       // /robots.txt
	ClassPage        Class = "page"         // an HTML page reachable by links
	ClassOrphan      Class = "orphan"       // a page only sitemaps list
	ClassSitemap     Class = "sitemap"      // a sitemap or sitemap index
	ClassRedirect    Class = "redirect"     // answers 3xx
	ClassError       Class = "error"        // a deliberate 4xx or 5xx
	ClassMedia       Class = "media"        // not HTML (whatever the Content-Type says)
	ClassTrap        Class = "trap"         // inside a spider trap; Resource.Trap says which
	ClassNotFound    Class = "not-found"    // nothing there (404)
	ClassUnknownHost Class = "unknown-host" // not a host of this web (421)
)

// Resource is what Lookup knows of a URL.
type Resource struct {
	// Site is the site serving the host; nil for ClassUnknownHost.
	Site *Site
	// Class is what the URL is.
	Class Class
	// Trap is the trap kind for ClassTrap (and for the few pages of a trap
	// site that are not themselves trap URLs, such as its home page: "").
	Trap Trap
	// Status is the status the handler answers (for the slow and endless
	// traps, the status it starts with).
	Status int
	// Nofollow is set for pages that only nofollow links lead to (rel,
	// meta robots or X-Robots-Tag nofollow): a polite crawler never fetches
	// them.
	Nofollow bool
	// Private is set for the members-only copies under /private/, which
	// every robots.txt of the web that answers 200 disallows (to every
	// agent but those a group of robots-agents.test or regp.test allows).
	Private bool
	// Transient, for a page of the realistic profile, is how many times it
	// answers 503 (with or without Retry-After) before it answers 200.
	Transient int
	// Delay is how long a slow page of the realistic profile waits before
	// it answers.
	Delay time.Duration
	// DupOf, for a page of the realistic profile that serves another
	// page's bytes, is that page's path.
	DupOf string
}

type op int

const (
	opNotFound op = iota
	opUnknownHost
	opRobots
	opGeneric
	opPrivate
	opNamed
	opRedirect
	opStatus
	opBytes
	opCalendar
	opSession
	opGrowing
	opDirList
	opNearDup
	opSlow
	opEndless
	opWild
	opLocal
	opReal
)

// route is a Resource plus what the handler needs to serve it.
type route struct {
	Resource
	op     op
	n      int
	host   string // normalized host name
	path   string
	query  string
	str    string // redirect location, title, content type
	links  []link
	opts   pageOpts
	body   []byte
	header [][2]string
	fate   pageFate // opReal
}

// Lookup classifies a request for target (path and query, as in the
// request line) on host, exactly as the handler would serve it.
func (w *Web) Lookup(host, target string) Resource {
	rt := w.route(host, target)
	return rt.Resource
}

func (w *Web) route(host, target string) route {
	s := w.Site(host)
	path, query, _ := strings.Cut(target, "?")
	if s == nil {
		rt := route{Resource: Resource{Class: ClassUnknownHost, Status: 421}, op: opUnknownHost, path: path}
		if (path == "/health" || path == "/metrics") && isLocal(host) {
			rt.Status, rt.op = 200, opLocal
		}
		return rt
	}
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	if strings.IndexByte(path, '%') >= 0 {
		if p, err := url.PathUnescape(path); err == nil {
			path = p
		}
	}
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	rt := route{Resource: Resource{Site: s}, host: NormalizeHost(host), path: path, query: query}
	if path == "/robots.txt" {
		rt.Class, rt.op, rt.Status = ClassRobots, opRobots, s.RobotsStatus
		return rt
	}
	if s.special != specGeneric && w.routeSpecial(s, &rt) {
		if rt.Status == 0 {
			rt.Status = 200 // every route helper sets it; this is a guard
		}
		return rt
	}
	if w.realistic(s) && w.routeRealistic(s, &rt) {
		return rt
	}
	pages := s.pageCount()
	if n, ok := parseGenericPath(path); ok && n < pages && (s.special != specSession || query == "") {
		rt.Class, rt.op, rt.n, rt.Status = ClassPage, opGeneric, n, 200
		return rt
	}
	if n, ok := parsePrivatePath(path); ok && n < pages && hasPrivate(n) {
		rt.Class, rt.op, rt.n, rt.Status, rt.Private = ClassPage, opPrivate, n, 200, true
		return rt
	}
	rt.Class, rt.op, rt.Status = ClassNotFound, opNotFound, 404
	return rt
}

// isLocal reports whether host names the listener itself (an IP address
// or localhost) rather than a site: /health and /metrics answer there.
func isLocal(host string) bool {
	h := strings.Trim(NormalizeHost(host), "[]")
	return h == "localhost" || net.ParseIP(h) != nil
}

// named sets rt to a named page.
func (rt *route) named(title string, links ...link) {
	rt.Class, rt.op, rt.str, rt.links, rt.Status = ClassPage, opNamed, title, links, 200
}

func (rt *route) redirect(status int, location string) {
	rt.Class, rt.op, rt.n, rt.str, rt.Status = ClassRedirect, opRedirect, status, location, status
}

func (rt *route) status(code int) {
	rt.Class, rt.op, rt.n, rt.Status = ClassError, opStatus, code, code
}

func (rt *route) bytes(class Class, ctype string, body []byte) {
	rt.Class, rt.op, rt.str, rt.body, rt.Status = class, opBytes, ctype, body, 200
}

func (rt *route) trap(t Trap, o op) {
	rt.Class, rt.Trap, rt.op, rt.Status = ClassTrap, t, o, 200
}

// homeExtras are the links a hazard site's home page adds to its generic
// links: the way into its hazards.
func (w *Web) homeExtras(s *Site) []link {
	switch s.special {
	case specGeneric:
		if s.index == 0 && w.wild != nil {
			// The way from the generic sites into the hazards.
			return []link{{href: "http://hub.test/", text: "the web directory"}}
		}
	case specHub:
		var l []link
		for _, o := range w.sites {
			if o.special == specGeneric || o == s {
				continue
			}
			l = append(l, link{href: o.SeedPages[0], text: o.Host})
			if len(o.Mirrors) > 0 {
				continue // mirrors are reached through the Mirror-site lines only
			}
			for _, a := range o.Aliases {
				l = append(l, link{href: "http://" + a + "/", text: a})
			}
		}
		if len(w.sites) > 0 && w.sites[0].special == specGeneric {
			l = append(l, link{href: w.sites[0].SeedPages[0], text: "a generic site"})
		}
		return l
	case specRobotsRules:
		return []link{
			{href: "/files/manual.pdf", text: "manual (disallowed: *.pdf$)"},
			{href: "/files/manual.pdf?download=1", text: "manual download (allowed: $ anchors)"},
			{href: "/search?q=robots", text: "search (disallowed)"},
			{href: "/search/about", text: "about search (allowed)"},
			{href: genericPath(1) + "?sort=asc", text: "sorted (disallowed: /*?sort=)"},
			{href: "/trap/a/", text: "a trap robots.txt forbids"},
			{href: "/private/public-info.html", text: "public info (allowed inside /private/)"},
		}
	case specRobotsAgents:
		return []link{
			{href: "/no-robots/page.html", text: "no robots"},
			{href: "/no-search-engines/page.html", text: "no search engines"},
		}
	case specRobotsRedirect:
		return []link{{href: "/moved-rules/page.html", text: "disallowed by the redirected robots.txt"}}
	case specREGP:
		return []link{
			{href: "/data/report.html", text: "data (disallowed)"},
			{href: "/data/open/report.html", text: "open data (allowed)"},
			{href: "/data/courtesy/report.html", text: "data for courtesy"},
			{href: "/news/show?date=1030&id=1", text: "dynamic original page"},
		}
	case specRobotsHuge:
		return []link{
			{href: "/beyond-limit/page.html", text: "disallowed only after 500 KiB"},
			{href: "/junk/000007/page.html", text: "disallowed in the middle"},
		}
	case specSitemapXML, specSitemapIndex, specSitemapText, specSitemapGzip:
		return []link{{href: "/news/show?date=1030&id=1", text: "dynamic original page"}}
	case specRedirects:
		return []link{
			{href: "/r/301", text: "moved permanently"},
			{href: "/r/302", text: "found"},
			{href: "/r/307", text: "temporary redirect"},
			{href: "/r/relative", text: "relative Location"},
			{href: "/chain/1", text: "a chain of five redirects"},
			{href: "/loop/a", text: "a redirect loop"},
			{href: "/away", text: "a redirect to another host"},
		}
	case specErrors:
		return []link{
			{href: "/missing.html", text: "404"},
			{href: "/gone.html", text: "410"},
			{href: "/broken.html", text: "500"},
			{href: "/busy.html", text: "503"},
		}
	case specMedia:
		l := make([]link, 0, len(mediaFiles))
		for _, m := range mediaFiles {
			l = append(l, link{href: m.path, text: m.path})
		}
		return l
	case specCompressed:
		return []link{{href: "/always-gzip.html", text: "gzip whatever Accept-Encoding says"}}
	case specMetaRobots:
		return []link{
			{href: "/noindex.html", text: "noindex"},
			{href: "/nofollow.html", text: "nofollow"},
			{href: "/x-noindex.html", text: "X-Robots-Tag noindex"},
			{href: "/x-nofollow.html", text: "X-Robots-Tag nofollow"},
			{href: "/googlebot-nofollow.html", text: "nofollow for another robot"},
			{href: "/rel-nofollow/target.html", text: "rel=nofollow", rel: "nofollow"},
		}
	case specDup:
		return []link{{href: "http://www.dup.test/", text: "also at www.dup.test"}}
	case specRobotsHost:
		return []link{{href: "http://www.canonical.test/", text: "also at www.canonical.test"}}
	case specCalendar:
		return []link{{href: "/calendar/2026/11/", text: "calendar"}}
	case specSession:
		return nil // the generic links carry the session ids
	case specGrowing:
		return []link{{href: "./a/", text: "more"}}
	case specDirList:
		return []link{{href: "/pub/", text: "files"}}
	case specNearDup:
		return []link{{href: "/item/0", text: "items"}}
	case specSlow:
		return []link{{href: "/slow/1.html", text: "slow 1"}, {href: "/slow/2.html", text: "slow 2"}}
	case specEndless:
		return []link{{href: "/stream.html", text: "live page"}, {href: "/radio.mp3", text: "radio"}}
	}
	return nil
}

// routeSpecial routes the hazard URLs of s; false means "not a hazard URL,
// try the generic pages".
func (w *Web) routeSpecial(s *Site, rt *route) bool {
	p, q := rt.path, rt.query
	switch s.special {
	case specRobotsRules:
		switch {
		case p == "/files/manual.pdf":
			rt.bytes(ClassMedia, "application/pdf", pdfBody)
		case p == "/search":
			rt.named("search results", link{href: genericPath(2), text: "a result"})
		case p == "/search/about":
			rt.named("about search")
		case p == "/private/public-info.html":
			rt.named("public information")
		case strings.HasPrefix(p, "/trap/"):
			return routeGrowing(rt, "/trap/")
		default:
			return false
		}
	case specRobotsAgents:
		if p != "/no-robots/page.html" && p != "/no-search-engines/page.html" {
			return false
		}
		rt.named("for some robots only")
	case specRobotsRedirect:
		if p != "/moved-rules/page.html" {
			return false
		}
		rt.named("disallowed by the redirected rules")
	case specREGP:
		switch {
		case p == "/sitemap.xml":
			rt.bytes(ClassSitemap, "application/xml", sitemapXML(s, true, 1, len(s.Orphans)))
		case p == "/data/report.html" || p == "/data/open/report.html" || p == "/data/courtesy/report.html":
			rt.named("data page")
		default:
			return w.routeOrphans(s, rt)
		}
	case specRobotsHuge:
		if p != "/beyond-limit/page.html" && p != "/junk/000007/page.html" {
			return false
		}
		rt.named("behind a huge robots.txt")
	case specSitemapXML:
		if p != "/sitemap.xml" {
			return w.routeOrphans(s, rt)
		}
		rt.bytes(ClassSitemap, "application/xml", sitemapXML(s, true, 1, len(s.Orphans)))
	case specSitemapIndex:
		switch p {
		case "/sitemap_index.xml":
			rt.bytes(ClassSitemap, "application/xml", sitemapIndex(s))
		case "/sitemaps/a.xml":
			from, to := sitemapOrphans(s, p)
			rt.bytes(ClassSitemap, "application/xml", sitemapXML(s, true, from, to))
		case "/sitemaps/b.xml.gz":
			from, to := sitemapOrphans(s, p)
			rt.bytes(ClassSitemap, "application/gzip", gzipBytes(sitemapXML(s, false, from, to)))
		default:
			return w.routeOrphans(s, rt)
		}
	case specSitemapText:
		if p != "/sitemap.txt" {
			return w.routeOrphans(s, rt)
		}
		rt.bytes(ClassSitemap, "text/plain; charset=utf-8", sitemapText(s))
	case specSitemapGzip:
		if p != "/sitemap.xml.gz" {
			return w.routeOrphans(s, rt)
		}
		rt.bytes(ClassSitemap, "application/gzip", gzipBytes(sitemapXML(s, true, 1, len(s.Orphans))))
	case specRedirects:
		return routeRedirects(rt)
	case specRedirectTarget:
		if p != "/landing.html" {
			return false
		}
		rt.named("landing page after a cross-host redirect")
	case specErrors:
		switch p {
		case "/missing.html":
			rt.status(404)
		case "/gone.html":
			rt.status(410)
		case "/broken.html":
			rt.status(500)
		case "/busy.html":
			rt.status(503)
			rt.header = [][2]string{{"Retry-After", "1"}}
		default:
			return false
		}
	case specMedia:
		for _, m := range mediaFiles {
			if p == m.path {
				rt.bytes(ClassMedia, m.ctype, m.body)
				return true
			}
		}
		return false
	case specCompressed:
		if p != "/always-gzip.html" {
			return false
		}
		rt.named("always gzip")
	case specMetaRobots:
		return routeMetaRobots(rt)
	case specCalendar:
		return routeCalendar(rt)
	case specSession:
		if q == "" {
			return false
		}
		if n, ok := parseGenericPath(p); ok && n < specialPages && sessionID(q) != "" {
			rt.trap(TrapSession, opSession)
			rt.n = n
			return true
		}
		return false
	case specGrowing:
		return routeGrowing(rt, "/")
	case specDirList:
		return routeDirList(rt)
	case specNearDup:
		num, ok := strings.CutPrefix(p, "/item/")
		if !ok {
			return false
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || n >= 1e9 || strconv.Itoa(n) != num {
			return false
		}
		rt.trap(TrapNearDup, opNearDup)
		rt.n = n
	case specSlow:
		if p != "/slow/1.html" && p != "/slow/2.html" && p != "/slow/3.html" {
			return false
		}
		rt.trap(TrapSlow, opSlow)
	case specEndless:
		switch p {
		case "/stream.html":
			rt.trap(TrapEndless, opEndless)
			rt.str = "text/html; charset=utf-8"
		case "/radio.mp3":
			rt.trap(TrapEndless, opEndless)
			rt.str = "audio/mpeg"
		default:
			return false
		}
	case specStructured:
		return w.routeStructured(s, rt)
	case specWild:
		if p != "/" {
			// Only the doorway page: the wildcard names have nothing else.
			rt.Class, rt.op, rt.Status = ClassNotFound, opNotFound, 404
			return true
		}
		rt.op, rt.Status, rt.Class = opWild, 200, ClassPage
		if rt.host != s.Host {
			rt.Trap, rt.Class = TrapWildcard, ClassTrap // a name only the wildcard answers
		}
	default:
		return false
	}
	return true
}

// routeOrphans routes the orphan pages and the <srcloc> originals of a
// sitemap site.
func (w *Web) routeOrphans(s *Site, rt *route) bool {
	if rt.path == "/news/show" {
		rt.named("dynamic original of a crawler page")
		return true
	}
	rest, ok := strings.CutPrefix(rt.path, "/hidden/orphan-")
	if !ok {
		return false
	}
	for i := 1; i <= len(s.Orphans); i++ {
		if rest == strconv.Itoa(i)+".html" {
			rt.named("orphan page " + strconv.Itoa(i))
			rt.Class = ClassOrphan
			return true
		}
	}
	return false
}
