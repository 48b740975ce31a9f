// Package crawl is the crawl engine behind `courtesy crawl`: it wires the
// frontier, the politeness gate, the fetcher, extraction, sitemaps, traps,
// dedup and the WARC and crawl-log writers into a resumable crawler.
//
//	c, err := crawl.New(crawl.Config{DataDir: "data", MaxDuration: time.Hour},
//		crawl.Options{Logger: logger, Resolver: r})
//	sum, err := c.Run(ctx, []string{"https://example.org/"})
//
// # One URL's life
//
// A dispatcher leases due URLs from the frontier (at most one per host
// queue: the gate's one-in-flight rule) and hands them to a fixed pool of
// workers (no goroutine per URL). A worker takes each URL through one
// pipeline, admit → fetch → process → end (worker.go): every URL ends in
// one place, either handed to the acker or given back to the frontier
// with the reason counted (courtesy_crawl_urls_returned_total). To admit
// a URL the worker applies the host map, then asks the gate, the one
// politeness authority: robots.txt first (fetched and parsed by the gate,
// once per host), then delay, per-path REGP delays, backoff and visit
// windows. A refusal by robots.txt completes the URL (crawl.log -9998). A
// "not yet" of at most a few milliseconds is waited out in the worker (at
// most three times); a longer one holds the host's queue in the frontier
// until the gate's Decision.NextAllowed and returns the URL, so no worker
// waits long on a host. After the fetch the worker holds the queue until
// Permit.Next, the gate's word on when the host is next due. The crawler
// reads what else it needs of robots.txt (sitemaps, REGP Language,
// Encoding and Cookie, Index-page, Change-*, Host, Mirror-site) from the
// gate's parse (Gate.Rules), never parsing the file itself.
//
// The response is deduplicated (payload digest → WARC revisit record;
// simhash of the text, Hamming ≤ 3 → near-duplicate; both count toward the
// site's duplicate limit), parsed (links with meta robots and X-Robots-Tag:
// nofollow → no links, noindex → annotated, noarchive → not archived unless
// HonorNoArchive is off; sitemaps with REGP <type> and <srcloc>), and
// archived: request, response (or revisit) and metadata records (outlinks,
// fetch time, IP, truncation, robots decision). Redirects are links: the target is normalized and queued, and the 3xx is archived.
// Outlinks are crawl-normalized (session ids, directory-list sorts,
// trailing index files), scoped (seed hosts by default; domain suffixes;
// regexps; off-scope hops; external-link policy home-page / deep-link /
// combined) and checked against the trap limits.
//
// # Durability and resume
//
// A URL is acknowledged in the same frontier Put as its outlinks, after its
// WARC records were fsynced (grouped across workers, as the frontier groups
// its commits). So after SIGKILL: every acknowledged URL is in a WARC file
// and its outlinks are queued; URLs in flight are leased only in memory and
// are fetched again; the open WARC file is cut after its last complete
// record (warc.Recover) when the crawl restarts. The same command with the
// same --data resumes.
//
// # Failures
//
// Network errors, 5xx and 429 answers are retried with exponential
// backoff (MaxRetries, RetryDelay, capped at MaxRetryDelay); the last
// answer is the URL's final status. A page's own answer, whatever it is,
// never retires its host: MaxHostFailures network failures in a row
// (DNS, connect, TLS, timeouts) do (frontier.Retire), with the reason
// logged. A host whose robots.txt is
// unavailable is not fetched at all (RFC 9309 §2.3.1.4) and is retired
// after as many tries; 401/403 in the default disallow mode retire it at
// once.
package crawl
