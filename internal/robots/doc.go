// Package robots parses robots.txt files and answers questions about them:
// may this crawler fetch this URL, how long must it wait between requests,
// when may it visit, which sitemaps and host does the site name. It also
// gives the meaning of robots meta tags and X-Robots-Tag headers. It does
// no I/O.
//
// Parse once, match many:
//
//	f := robots.Parse(body)            // never fails; see f.Problems()
//	g := f.Group("courtesy")           // the crawler's product token
//	if g.Allowed(u.RequestURI()) { ... }
//	delay, ok := g.CrawlDelay()
//	next := g.NextVisit(time.Now())    // Visit-time / Time-forbidden
//
// A File and its Groups are immutable and safe for concurrent use; keep the
// Group of your agent and call Allowed on it: matching allocates nothing
// for ordinary paths.
//
// Two dialects are understood. RFC 9309 (2022) is the default, with the
// common extensions Crawl-delay, Sitemap, Host, Request-rate and
// Visit-time. A file whose first line is `Robot-version: 3.0` (or higher)
// is read as REGP, the Robots Exclusion and Guidance Protocol:
// `##` comments, nested `{ }` blocks, substring User-agent matching, the
// last matching rule wins with the implicit defaults of §3.2.5, blank lines
// end groups and a global command section follows them, and the directives
// Ip-allow, Ip-disallow, Ip-delay, Ip-rate, Time-forbidden, Language,
// Encoding, Charset, Cookie, Mirror-site, Index-page, Change-* and
// Last-modified. See docs/robots.md for the full list of decisions.
//
// Broken files are the norm (the Viuva Negra report §4.1 found 64 % of robots.txt files
// non-compliant): unknown or malformed lines are skipped and listed by
// File.Problems with their line numbers, typos that the RFC 9309 reference
// parser accepts (`Dissallow`, `User agent`, a missing colon) are read, and
// nothing in a file makes parsing fail or panic.
package robots
