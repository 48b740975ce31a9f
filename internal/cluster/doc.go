// Package cluster shares one crawl between many processes through Redis
// Cluster (or a single Redis server): the URL frontier (Frontier, which
// implements frontier.API like the embedded Pebble frontier) and node
// membership with heartbeats (Membership).
//
//	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
//	f, err := cluster.New(ctx, rc, cluster.Options{})
//	leases, err := f.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1})
//	... fetch ...
//	err = f.Ack(ctx, leases[0].URLInfo, time.Time{})
//
// # Key layout
//
// Every queue (crawl ID, key) owns six keys under one hash tag, so they
// live in one cluster slot and every queue operation is one atomic Lua
// script on one master: a meta hash (counters, delay, block, crawl limit,
// retired reason, version, fencing counter), a sorted set of queued URLs
// in due order, a hash of URL records (the seen-test: a 16-byte hash of
// each URL the queue ever held, with its state), a hash of the URLs and
// metadata of the queued ones, a sorted set of leases by expiry and a hash
// of their fencing tokens. A URL is unique within its queue; with the crawler's queues
// (one per host) that is unique within the crawl.
//
// A crawl's ready queues are indexed in IndexShards sorted sets, each in
// its own slot, scored by the time the queue is next servable. After each
// queue script the client writes the queue's new state to its shard with
// a second script that drops updates older than the stored version, so
// updates from many processes may arrive in any order. The shards also
// keep the crawl's totals (Stats) as sums of the queues' last states.
//
// # Leases and fencing
//
// Get moves a URL from the queue's sorted set to its leases, with an
// expiry in Redis time and a fencing token from the queue's counter. Any
// script that touches the queue first moves expired leases back, so a
// process killed with SIGKILL loses nothing: its URLs are served again
// once their leases expire. Ack sends the token of the lease it holds: if
// the lease expired and the URL was leased again, the token differs and
// the ack changes nothing (ErrStaleLease). Counters move only with a
// URL's state (queued, completed), so a repeated or late ack cannot count
// twice.
//
// # The URLFrontier service's calls
//
// ListQueues, ListURLs and the crawl-wide CountURLs read a crawl's
// queues from its index shards (HSCAN, bounded); DeleteQueue and
// PurgeURLs change a queue with one script each, like every other queue
// change; DeleteCrawl SCANs the masters for the crawl's keys. SetActive
// is one flag shared by every process. Completed URLs are kept as hashes
// only, so ListURLs lists the URLs not completed (docs/distributed.md).
//
// # Failures
//
// Every call is safe to repeat: a discovered URL is stored once, an ack
// sets a state, a lease that is repeated leaves the first one to expire,
// an index update older than the stored one is dropped. So the client
// retries every call through network errors and master failovers, with
// backoff, for Options.RetryFor. Redis replicates asynchronously: a write
// acknowledged by a master that dies before its replica has it is lost,
// unless Options.WaitReplicas makes Put and Ack wait for the replica
// (docs/distributed.md).
package cluster
