// Package testweb is a deterministic synthetic web: thousands of virtual
// hosts under the reserved .test TLD (RFC 6761), served by one http.Handler
// on loopback, reproducing the hazards of the Viúva Negra report §4 (spider traps, session
// ids, directory-list reordering, growing URLs, wrong media types, malformed
// HTML, duplicate hosts, the www prefix) and the robots.txt and sitemap
// variety of the polite-proxy thesis (§4.3) and the REGP paper (§3). Every request can be recorded as one
// JSON line, so that a crawl's politeness can be judged afterwards by the
// report package (internal/testweb/report).
//
// # Building and serving
//
// The same Config always gives the same web, byte for byte; the zero value
// is a small web of 20 generic sites plus the hazard sites:
//
//	web, err := testweb.New(testweb.Config{Seed: 1, Sites: 2000, PagesPerSite: 50})
//	srv := &http.Server{Handler: web.Handler()}           // no recording
//	log := testweb.NewLog(f)                              // JSON lines to f
//	srv = &http.Server{Handler: web.LoggedHandler(log)}   // every request recorded
//	defer log.Close()                                     // flushes
//
// The handler chooses the site by the Host header (case-insensitive, port
// and trailing dot ignored). It also answers absolute-form requests
// ("GET http://site-0001.test/ HTTP/1.1"), so that any client can reach every
// host through the listener used as an HTTP proxy (curl -x, http_proxy).
// It only SERVES the synthetic hosts: it never dials out, and a request for
// a host it does not know gets 421 Misdirected Request. CONNECT gets 405.
// Addressed by IP or as localhost, the listener answers /health and
// /metrics (request counters per URL class, Prometheus text format).
//
// Courtesy's own clients reach the hosts with a resolver override
// (--resolve '*.test=127.0.0.1:8081', see internal/resolve); other programs
// can use the /etc/hosts lines of (*Web).HostsLines, which map site names to
// 127.x addresses, several sites per address on purpose (virtual hosting).
//
// # Sites
//
// Generic sites are named site-0000.test, site-0001.test, ... (Config.Sites
// of them): a home page "/" and PagesPerSite-1 further pages, all reachable
// by links from the home page, each with LinksPerPage links inside the site
// and ExternalLinks links to other sites; a robots.txt that disallows
// /private/ (which some pages link to). Unless Config.Plain is set, the
// hazard sites are added on top, each named for what it is
// (robots-503.test, calendar.test, wild.test, ...). (*Web).Sites lists them
// all with their kinds, robots.txt, delay, seed and orphan pages and trap
// kind; docs/testweb.md describes every hazard and what a polite crawler
// should do about it.
//
// # Profiles
//
// Config.Profile decides what the generic sites look like: ProfilePlain (the
// default) serves small pages that all answer 200; ProfileRealistic serves
// heavy-tailed page sizes, 20-60 links, boilerplate shared across a site and
// a few per cent of 404, 500, transient 503, redirect chains, duplicate
// bodies and slow answers (realistic.go has the rates). (*Web).Reachable
// lists what a complete crawl of a generic site gets, so that a crawl's
// coverage can be checked (report.Options.Coverage).
//
// # Knowing what a URL is
//
// (*Web).Lookup(host, target) classifies any request the way the handler
// serves it (site, robots.txt, page, orphan page, sitemap, trap URL and its
// kind, ...), without serving it. The report uses it, and tests can too.
//
// # Recording
//
// A Recorder receives one Entry per request: start and end time, method,
// host, path and query, client address, status, body bytes, User-Agent.
// *Log writes them as hand-encoded JSON lines through a buffer (flushed
// every second and on Flush/Close), *Memory keeps them in memory for
// in-process tests. ReadLog parses a log back.
package testweb
