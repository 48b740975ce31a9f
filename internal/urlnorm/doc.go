// Package urlnorm canonicalizes crawlable URLs and derives politeness keys.
//
// Normalize applies the syntax- and scheme-based normalization of RFC 3986
// §6.2.2-6.2.3 to an absolute http or https URL, always:
//
//   - scheme and host lower-cased (the Viuva Negra report §3.4 rule 3);
//   - percent-encoding triplets upper-cased (rule 1), octets of unreserved
//     characters decoded (rule 2), and every byte a component may not hold
//     raw (space, non-ASCII, '<', '|', a stray '%', ...) percent-encoded, so
//     that "/a b" and "/a%20b" meet (the polite-proxy thesis §2.2 step 4);
//   - dot segments removed (RFC 3986 §5.2.4; rule 4, the polite-proxy thesis step 6);
//   - the scheme's default port removed (rule 5, the polite-proxy thesis step 7) and an
//     empty path written "/" (rule 6);
//   - international host names converted to punycode (IDNA 2008 with the
//     UTS #46 lookup mapping, as browsers do), a trailing dot removed, IPv4
//     hosts in WHATWG numeric forms ("127.1", "0x7f.0.0.1") written
//     dotted-quad and IPv6 literals written in RFC 5952 form;
//   - the fragment removed unless Options.KeepFragment (rule 7, the polite-proxy thesis
//     step 3).
//
// The zero Options add nothing else. Every crawler heuristic of the Viuva Negra report
// §3.4 and §4 and the polite-proxy thesis §2.2 is a separate switch in Options;
// CrawlDefaults turns on the ones a crawler wants for the URLs it fetches,
// DedupDefaults the more aggressive set for URL-seen keys.
//
//	u, err := urlnorm.Normalize("HTTP://Example.COM:80/a/./b/../index.html?PHPSESSID=1", urlnorm.CrawlDefaults())
//	// u.String() == "http://example.com/a/"
//
// Resolve turns an href found in a page into an absolute normalized URL,
// tolerating what browsers tolerate (surrounding spaces, tabs and newlines
// inside, backslashes, "http:path" relative references). A Resolver does
// the same for the many links of one page, faster (the base parsed once, a
// fast path for plain references), with results identical to
// ResolveBoth's (FuzzFastResolve compares them). Key derives the
// politeness key (host, registrable domain or IP address).
//
// Inputs longer than Options.MaxLength (default 8 KiB) and malformed URLs
// return an error wrapping ErrMalformed; schemes other than http and https
// return an error wrapping ErrScheme. No input panics.
package urlnorm
