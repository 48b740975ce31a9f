// Package frontier is Courtesy's embedded, persistent URL frontier: the
// URL-seen test, per-host queues (site partitioning, as in the Viuva Negra
// crawler report) with priorities and due times, and leases for URLs handed
// out. It is shaped so that the URLFrontier v2 API (served by
// internal/urlfrontier) maps onto it without change:
//
//	URLFrontier             frontier
//	-----------             --------
//	PutURLs discovered      Put(Item{Info: ...})              seen-test, queue if new
//	PutURLs known           Put(Item{Known: true, RefetchFrom: t})  zero t: completed
//	GetURLs                 Get(GetParams{MaxQueues, MaxURLsPerQueue, Key, CrawlID, Lease})
//	delay_requestable       GetParams.Lease (a URL handed out is invisible until acked or expired)
//	BlockQueueUntil         BlockQueueUntil (sub-second precision; gRPC truncates to seconds)
//	SetDelay                SetDelay
//	SetCrawlLimit           SetCrawlLimit (completed URLs per queue)
//	GetStats                Stats
//	ListQueues/ListCrawls   ListQueues/ListCrawls
//	DeleteQueue/DeleteCrawl DeleteQueue/DeleteCrawl
//	GetURLStatus            URLStatus
//	SetActive               SetActive
//
// A crawl ID is a namespace: queues are keyed by (crawl ID, key) and a URL is
// unique within a crawl. The empty crawl ID means DefaultCrawl. The key is
// the politeness key the caller chooses (host by default).
//
// # Storage
//
// Everything lives in one Pebble store (internal/kv) under the prefix "F/":
//
//	F/c/<crawl name>                        → crawl id, next queue id
//	F/k/<crawl id><queue key>               → queue record (counters, delay, block, limit, retired)
//	F/u/<crawl id><128-bit URL hash>        → URL record (state, queue entry position, creation time)
//	F/q/<crawl id><queue id><due><prio><depth><seq> → queued entry (hash, URL, metadata, creation time)
//	F/d/<crawl id><queue id><128-bit URL hash>      → completed URL (the same value, for ListURLs)
//
// The seen-test is a point lookup of F/u/…, answered first by a bounded
// in-memory cache of fingerprints, then by a Bloom filter of the stored URL
// records for URLs certainly new (seenfilter.go), then through one Pebble
// iterator per Put
// that consults the Bloom filters of every level, the last one included
// (pebble.IterOptions.UseL6Filters; DB.Get skips them), so a new URL costs
// filter probes rather than a data block read. The 16-byte hashes keep the
// key small whatever the URL length, and the URL record leaves out the URL
// (the caller of Lookup or Put knows it; the queue entry holds it for Get),
// which halves the bytes the seen-test keys carry through compactions.
// Queue entries sort by due time (0 = as soon as possible), then priority
// (higher first), then depth (breadth-first), then insertion order.
//
// # Durability and group commit
//
// Every mutation (Put, and the admin calls) goes through one committer
// goroutine owned by the Frontier. It drains all pending operations into one
// Pebble batch, writes each touched queue record once, and commits it with
// pebble.Sync, but without waiting for the fsync (ApplyNoSyncWait): a second
// goroutine, owned by the committer, waits for each group's fsync in commit
// order and only then answers its callers, while the committer already
// applies the next group. So concurrent callers share one fsync, the fsync
// latency does not serialize the committer, and a Put that returned
// survives SIGKILL and power loss. Because one goroutine orders all writes,
// the persisted counters always match the persisted URLs.
//
// Leases live only in memory (as in the reference implementation): after a
// restart every lease is void and the URLs it covered are served again. A
// lease keeps its entry's position and creation time, which with the queue
// are the URL record, so acknowledging a leased URL writes without reading
// (commitGroup; docs/frontier.md).
//
// # Scheduling and memory
//
// The frontier keeps one small record per queue in memory (about 300 bytes
// with its map entries: counters, delay, block time, heap position) and a min-heap of the queues
// that have URLs available, ordered by the time they are next servable:
// max(blocked-until, last-served + delay, due time of the head entry). URLs
// themselves stay on disk, so memory grows with the number of hosts, not the
// number of URLs: measured flat at 455-770 MB of Go heap from 5 M to 84 M
// URLs over 1 M hosts, plus Pebble's bounded cache (docs/frontier.md).
// Get keeps a few entries read ahead for the queues it served recently
// (Options.ReadAhead, bounded in all by Options.ReadAheadBytes; ahead.go),
// so that serving a queue one URL at a time does not cost a store seek per
// URL; the committer keeps them exact. Expired leases are
// reclaimed lazily by Get (a lease heap), so no timer goroutine is needed and
// an injected clock drives every time-dependent rule.
package frontier
