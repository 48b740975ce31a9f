// Package frontier is Courtesy's embedded, persistent URL frontier: the
// URL-seen test, per-host queues (site partitioning, seed 001 §3.3) with
// priorities and due times, and leases for URLs handed out. It is shaped so
// that the URLFrontier v2 API (seed 003; ../shared/reference/urlfrontier-api.md)
// maps onto it without change:
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
//	F/u/<crawl id><128-bit URL hash>        → URL record (state, queue entry position, creation time, URL)
//	F/q/<crawl id><queue id><due><prio><depth><seq> → queued entry (hash, URL, metadata)
//
// The seen-test is a point lookup of F/u/…; Pebble's bloom filters make the
// common miss cheap, and 16-byte hashes keep the key small whatever the URL
// length. Queue entries sort by due time (0 = as soon as possible), then
// priority (higher first), then depth (breadth-first), then insertion order.
//
// # Durability and group commit
//
// Every mutation (Put, and the admin calls) goes through one committer
// goroutine owned by the Frontier. It drains all pending operations into one
// Pebble batch, writes each touched queue record once, and commits with
// pebble.Sync: concurrent callers share one fsync, and a Put that returned
// survives SIGKILL. Because one goroutine orders all writes, the persisted
// counters always match the persisted URLs.
//
// Leases live only in memory (as in the reference implementation): after a
// restart every lease is void and the URLs it covered are served again.
//
// # Scheduling and memory
//
// The frontier keeps one small record per queue in memory (about 200 bytes:
// counters, delay, block time, heap position) and a min-heap of the queues
// that have URLs available, ordered by the time they are next servable:
// max(blocked-until, last-served + delay, due time of the head entry). URLs
// themselves stay on disk, so memory grows with the number of hosts, not the
// number of URLs; 100 M URLs over 1 M hosts need about 200 MB for the
// queue records plus Pebble's bounded block cache. Expired leases are
// reclaimed lazily by Get (a lease heap), so no timer goroutine is needed and
// an injected clock drives every time-dependent rule.
package frontier
