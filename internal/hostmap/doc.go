// Package hostmap rewrites hosts: URLs of one host are queued and
// fetched under another. It is a pure data structure (no I/O): the
// crawler feeds it the robots.txt directives it reads through the
// politeness gate and asks it where each URL goes (Map.Resolve, Map.Learn).
//
// Three sources say that two host names serve the same content:
//
//   - the operator's duplicate-hosts list (Config.DuplicateHosts): aliases
//     known beforehand (duplicate hosts, which a crawler should avoid crawling twice to
//     save bandwidth and storage);
//   - the robots.txt Host directive (Yandex; also in REGP): the origin's
//     preferred ("master") host name among its mirrors;
//   - the REGP Mirror-site directive: a mirror "crawlers should
//     visit instead of this corresponding website", to spread the load.
//
// A robots.txt speaks for its own origin only (RFC 9309 §2.3), so a rule
// learned from one moves the URLs of that origin and of no other: a
// site can send our crawl of its own pages to its master or mirror, but
// cannot make us fetch another site's pages from it.
// That is why Mirror-site maps the declaring site onto its mirror and not
// the reverse. Its target must be in scope, or share the registrable
// domain of an in-scope declaring host (www.example.com → example.com),
// in which case it joins the seed hosts; otherwise the directive is
// ignored and the origin is crawled as it is.
//
// URLs queued under a host before its rule was known (seeds, links found
// before its robots.txt was read, a resumed crawl's queue) are not
// fetched: when leased they are completed without a request (crawl.log
// status -5002, annotation host-rewrite:to=HOST) and their rewritten URL
// is queued instead, as a redirect is a link. Fetching
// them once would spend a request per URL on exactly the duplicate crawlers
// should avoid.
//
// Several mirrors spread the load, which is what they are there for:
// a URL of the declaring origin goes to one of its in-scope mirrors (at
// most MaxMirrors) chosen by rendezvous hashing of its path (highest
// random weight: each mirror scores hash(mirror, path), the highest
// wins). The choice depends on the URL and the mirror names only, so a
// URL always maps to the same mirror, across a resume and a reordered
// robots.txt too, and the frontier's seen-test stays exact; a mirror
// added or removed moves only the URLs it gains or loses.
//
// A URL on one of the mirrors is re-picked the same way: a page
// fetched from mirror M1 has relative links on M1, and a link to M2 or to
// the origin, found anywhere, names a path the rule may give to another
// mirror; each goes to the mirror its path picks, so every name of a path
// (origin, M1, M2) converges on one URL and no document is fetched from
// two mirrors. This holds for every URL on a mirror, also when the
// mirror is a seed or in scope on its own: the seen-test compares URLs,
// and it can only be exact if a path of the mirror set has one home. It
// stays within the declaration: a URL only ever moves between hosts the
// origin named and the scope admitted, each fetched under its own URL
// (the archive says which host served what), and nothing moves onto the
// origin. The operator's rules come first (a pin keeps a mirror as it
// is). A rule the mirror's own robots.txt gives (RFC 9309 §2.3: it speaks
// for the mirror) moves the paths the division leaves on that mirror;
// the others go to their own mirror, which honours the mirror's rule as
// well (they are not fetched from it) and keeps one home per path. A
// mirror named by the rules of several origins is re-picked by none:
// whose division would hold is not ours to guess. The choice is the
// one pickMirror makes for the origin's URLs, a function of names and
// path only, so it holds across a resume; when the rule is dropped
// (robots.txt changed) its mirrors are re-picked no more, and URLs
// already queued on them stay where they are. A re-pick is counted and
// logged as any move (source mirror-site; host-rewrite:from=MIRROR).
// The price: a site that names an in-scope stranger among its mirrors
// takes from the stranger the paths its division gives to the other
// mirrors; the scope bounds who can be named, and mirror-sites: false
// turns Mirror-site off.
//
// Mirrors may have rules of their own (a Host line naming the origin, a
// copy of the origin's Mirror-site lines naming the others): a rule is
// learned only without the targets that could lead back, for any path,
// to its origin or to a sibling mirror. loopsLocked walks every branch:
// each mirror of a rule, and the re-pick by every rule naming a mirror
// (not only when it is the one), so that dropping or replacing a rule
// later only takes moves away and cannot make a loop. resolve still
// stops after maxRewriteChain rules and never follows a loop, the last
// guard for rules restored from the store unchecked (restoreLearned).
//
// A learned rule lives as long as its robots.txt says it. It is due for a
// re-check when the robots.txt entry it was read from expires (the gate's
// robots cache, 24 h by default), and at once for rules loaded from an
// earlier run. While a rule is due, one leased URL of its origin per
// probeInterval is left on the origin instead of being moved (URLs found
// meanwhile are queued there too until one is leased): it goes through
// the gate, which fetches the robots.txt again, and the crawler then
// hands the file's directives to Learn (Map.Recheck says when). A 2xx
// file without the
// directive, a 4xx (no rules, RFC 9309 §2.3.1.3) or 401/403 drops the
// rule (the crawler also deletes it from its store), and URLs stay
// on the origin from then on; a 5xx or an unreachable robots.txt keeps the
// last known rule (RFC 9309 §2.3.1.4: the site is then treated as fully
// disallowed, and its last good rules still hold). Any robots.txt fetch
// the gate reports (Map.NoteRefreshed) is re-read the same way, so an
// origin whose refreshed file gains a directive is moved from then on.
//
// The crawler's side, in crawl/hostmap.go: it builds the Map from the
// operator's list (ParseDuplicateHosts, AddOperator) and the rules its
// store kept (Restore), calls Resolve for every URL it queues or leases,
// and Learn with the directives of every robots.txt the gate read for an
// origin; it stores Stored's form of each learned rule.
package hostmap
