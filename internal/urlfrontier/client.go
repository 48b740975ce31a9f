package urlfrontier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// ClientOptions configures Dial. The zero value works.
type ClientOptions struct {
	// Lease is the delay_requestable asked for when GetParams.Lease is 0;
	// 0 leaves it to the service (30 s for URLFrontier).
	Lease time.Duration
	// CallTimeout bounds one attempt of a call; 0 means 30 s.
	CallTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between two attempts while
	// the service is unreachable (doubling from Min); 0 means 100 ms and
	// 10 s.
	MinBackoff, MaxBackoff time.Duration
	// MaxAttempts bounds the attempts of one call; 0 means no bound (retry
	// until the context ends).
	MaxAttempts int
	// Logger reports outages and recoveries; nil discards.
	Logger *slog.Logger
	// OnRetry, when set, is called before each wait (tests).
	OnRetry func(attempt int, err error)
}

// Client is a remote frontier: the calls Courtesy's crawler makes on a
// *frontier.Frontier, with the same signatures (Get, Put, Release,
// BlockQueueUntil, SetDelay, Retire, Stats, WaitReady: the crawl
// package's Frontier interface), made to a URLFrontier service
// (Courtesy's or any other). While the service is unreachable each call retries with
// exponential backoff until its context ends, and says so in the log; a
// call that fails for another reason returns the error.
type Client struct {
	conn *grpc.ClientConn
	c    pb.URLFrontierClient
	o    ClientOptions
	log  *slog.Logger

	mu   sync.Mutex
	down bool // an outage was logged and not yet its end
	// last holds the last statistics read, by crawl and key, for Stats
	// to answer while the service is unreachable (bounded).
	last map[[2]string]frontier.Stats
}

// Dial returns a client of the service at addr (host:port, plaintext
// HTTP/2). It does not wait for the service: calls do.
func Dial(addr string, o ClientOptions) (*Client, error) {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)),
		// Reconnect about as fast as the calls retry.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: o.MinBackoff, Multiplier: 1.6, Jitter: 0.2, MaxDelay: o.MaxBackoff},
			MinConnectTimeout: min(o.CallTimeout, 20*time.Second),
		}))
	if err != nil {
		return nil, fmt.Errorf("urlfrontier: dial %s: %w", addr, err)
	}
	return &Client{conn: conn, c: pb.NewURLFrontierClient(conn), o: o, log: log}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// retryable reports whether err means the service could not be reached
// (or is shutting down), so that the call may be repeated.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	return false
}

// do runs call with retries while the service is unreachable.
func (c *Client) do(ctx context.Context, what string, call func(ctx context.Context) error) error {
	wait := c.o.MinBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
		err := call(actx)
		cancel()
		if err == nil || !retryable(err) || ctx.Err() != nil || (c.o.MaxAttempts > 0 && attempt >= c.o.MaxAttempts) {
			if err == nil {
				c.mu.Lock()
				if c.down {
					c.down = false
					c.log.Info("frontier service reachable again", "call", what)
				}
				c.mu.Unlock()
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("urlfrontier: %s: %w", what, ctx.Err())
			}
			return fmt.Errorf("urlfrontier: %s: %w", what, err)
		}
		c.mu.Lock()
		if !c.down {
			c.down = true
			c.log.Warn("frontier service unreachable; retrying with backoff", "call", what, "err", err)
		}
		c.mu.Unlock()
		if c.o.OnRetry != nil {
			c.o.OnRetry(attempt, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("urlfrontier: %s: %w (last: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, c.o.MaxBackoff)
	}
}

// Get leases URLs due now (GetURLs). p.Lease is sent as delay_requestable
// in whole seconds (at least 1 when set).
func (c *Client) Get(ctx context.Context, p frontier.GetParams) ([]frontier.Lease, error) {
	lease := p.Lease
	if lease <= 0 {
		lease = c.o.Lease
	}
	req := &pb.GetParams{MaxQueues: clampU32(p.MaxQueues), MaxUrlsPerQueue: clampU32(p.MaxURLsPerQueue), Key: p.Key}
	if lease > 0 {
		req.DelayRequestable = uint32(min(max(lease/time.Second, 1), 1<<32-1))
	}
	if p.AnyCrawl {
		req.Item = &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}
	} else {
		req.Item = &pb.GetParams_CrawlID{CrawlID: p.CrawlID}
	}
	var out []frontier.Lease
	err := c.do(ctx, "GetURLs", func(ctx context.Context) error {
		out = out[:0]
		st, err := c.c.GetURLs(ctx, req)
		if err != nil {
			return err
		}
		expires := time.Now().Add(time.Duration(req.DelayRequestable) * time.Second)
		if req.DelayRequestable == 0 {
			expires = time.Now().Add(30 * time.Second)
		}
		for {
			u, err := st.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				if len(out) > 0 {
					// Leased already: hand them out rather than lease
					// others on a retry.
					return nil
				}
				return err
			}
			out = append(out, frontier.Lease{URLInfo: fromWireInfo(u), Expires: expires})
		}
	})
	return out, err
}

// Put stores discovered URLs and updates known ones, returning one status
// per item: the discovered ones first, in PutDiscovered batches, then the
// known ones on one PutURLs stream. So when a crawler acknowledges a page
// and puts its outlinks in one Put, the acknowledgement is sent only once
// the outlinks are stored: a crash between the two loses no outlink (the
// page is served and fetched again). Items not acked when a stream broke
// are sent again on the next attempt (a repeat is harmless: a discovered
// URL is then SKIPPED, a known one written again).
//
// URLFrontier has no frontier.Item.Hold: a known item's hold is sent as
// BlockQueueUntil of its queue (the latest hold of a queue, to the
// second) before the acknowledgements, so that another crawler of the
// service cannot be served the queue in between. Unlike Hold, the block
// replaces the queue's (the crawler passes the later of its hold and an
// operator's block). A block that fails is logged and the
// acknowledgements still go: the URLs' leases are what ends.
func (c *Client) Put(ctx context.Context, items []frontier.Item) ([]frontier.Status, error) {
	var disc []frontier.URLInfo
	var discAt, knownAt []int
	var known []frontier.Item
	for i, it := range items {
		if it.Known {
			known, knownAt = append(known, it), append(knownAt, i)
		} else {
			disc, discAt = append(disc, it.Info), append(discAt, i)
		}
	}
	out := make([]frontier.Status, len(items))
	if len(disc) > 0 {
		st, err := c.PutDiscovered(ctx, disc)
		if err != nil {
			return nil, err
		}
		for j, i := range discAt {
			out[i] = st[j]
		}
	}
	if len(known) > 0 {
		c.holdQueues(ctx, known)
		st, err := c.putURLs(ctx, known)
		if err != nil {
			return nil, err
		}
		for j, i := range knownAt {
			out[i] = st[j]
		}
	}
	return out, nil
}

// maxHoldCalls bounds the BlockQueueUntil calls of one Put in flight at
// once.
const maxHoldCalls = 16

// holdQueues blocks the queue of each item with a Hold until the latest
// hold of the queue, the calls in parallel, and returns when all ended.
func (c *Client) holdQueues(ctx context.Context, items []frontier.Item) {
	holds := map[[2]string]time.Time{}
	for _, it := range items {
		if it.Hold.IsZero() {
			continue
		}
		key := it.Info.Key
		if key == "" {
			key = frontier.DefaultKey(it.Info.URL)
		}
		if key == "" {
			continue
		}
		k := [2]string{it.Info.CrawlID, key}
		if t, ok := holds[k]; !ok || it.Hold.After(t) {
			holds[k] = it.Hold
		}
	}
	sem := make(chan struct{}, maxHoldCalls)
	var wg sync.WaitGroup
	for k, t := range holds {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.BlockQueueUntil(ctx, k[0], k[1], t); err != nil {
				c.log.Warn("queue not held before its acknowledgement", "crawl", k[0], "key", k[1], "until", t, "err", err)
			}
		})
	}
	wg.Wait()
}

// putURLs sends items on one PutURLs stream, returning one status per item.
func (c *Client) putURLs(ctx context.Context, items []frontier.Item) ([]frontier.Status, error) {
	statuses := make([]frontier.Status, len(items))
	acked := make([]bool, len(items))
	left := len(items)
	err := c.do(ctx, "PutURLs", func(ctx context.Context) error {
		if left == 0 {
			return nil
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		st, err := c.c.PutURLs(ctx)
		if err != nil {
			return err
		}
		var pending []*pb.URLItem
		for i, it := range items {
			if !acked[i] {
				pending = append(pending, toPBPut(strconv.Itoa(i), it))
			}
		}
		go func() {
			for _, it := range pending {
				if st.Send(it) != nil {
					return
				}
			}
			st.CloseSend()
		}()
		for {
			a, err := st.Recv()
			if errors.Is(err, io.EOF) {
				if left > 0 {
					return status.Errorf(codes.Unavailable, "stream ended with %d items not acked", left)
				}
				return nil
			}
			if err != nil {
				return err
			}
			i, err := strconv.Atoi(a.GetID())
			if err != nil || i < 0 || i >= len(items) || acked[i] {
				continue
			}
			acked[i] = true
			left--
			statuses[i] = frontier.Status(a.GetStatus())
		}
	})
	if err != nil {
		return nil, err
	}
	return statuses, nil
}

func toPBPut(id string, it frontier.Item) *pb.URLItem {
	info := toWireInfo(it.Info)
	if !it.Known {
		return &pb.URLItem{ID: id, Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: info}}}
	}
	var due uint64
	if !it.RefetchFrom.IsZero() {
		// Round up: a refetch must not come early, and 0 would mean done.
		due = uint64(max(1, (it.RefetchFrom.UnixNano()+int64(time.Second)-1)/int64(time.Second)))
	}
	return &pb.URLItem{ID: id, Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: info, RefetchableFromDate: due}}}
}

// Ack acknowledges a leased URL: refetchFrom zero completes it, otherwise
// it is due again then (PutURLs known).
func (c *Client) Ack(ctx context.Context, info frontier.URLInfo, refetchFrom time.Time) error {
	st, err := c.Put(ctx, []frontier.Item{{Info: info, Known: true, RefetchFrom: refetchFrom}})
	if err == nil && st[0] != frontier.OK {
		err = fmt.Errorf("urlfrontier: ack %s: %v", info.URL, st[0])
	}
	return err
}

// discoveredBatch bounds the URLs of one PutDiscovered batch (a batch is
// one gRPC message).
const discoveredBatch = 1000

// PutDiscovered stores outlinks (created unless known) in PutDiscovered
// batches of at most 1,000 URLs on one stream, returning one status per
// URL. Batches not acked when the stream broke are sent again.
func (c *Client) PutDiscovered(ctx context.Context, infos []frontier.URLInfo) ([]frontier.Status, error) {
	var batches []*pb.DiscoveredBatch
	for off := 0; off < len(infos); off += discoveredBatch {
		part := infos[off:min(off+discoveredBatch, len(infos))]
		b := &pb.DiscoveredBatch{ID: strconv.Itoa(off), Items: make([]*pb.URLInfo, len(part))}
		for i, in := range part {
			b.Items[i] = toWireInfo(in)
		}
		batches = append(batches, b)
	}
	out := make([]frontier.Status, len(infos))
	acked := make([]bool, len(batches))
	left := len(batches)
	err := c.do(ctx, "PutDiscovered", func(ctx context.Context) error {
		if left == 0 {
			return nil
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		st, err := c.c.PutDiscovered(ctx)
		if err != nil {
			return err
		}
		var pending []*pb.DiscoveredBatch
		for i, b := range batches {
			if !acked[i] {
				pending = append(pending, b)
			}
		}
		go func() {
			for _, b := range pending {
				if st.Send(b) != nil {
					return
				}
			}
			st.CloseSend()
		}()
		for left > 0 {
			a, err := st.Recv()
			if errors.Is(err, io.EOF) {
				return status.Errorf(codes.Unavailable, "stream ended with %d batches not acked", left)
			}
			if err != nil {
				return err
			}
			off, err := strconv.Atoi(a.GetID())
			i := off / discoveredBatch
			if err != nil || off < 0 || off%discoveredBatch != 0 || i >= len(batches) || acked[i] {
				continue
			}
			if len(a.GetStatuses()) != len(batches[i].Items) {
				return fmt.Errorf("%d statuses for %d URLs", len(a.GetStatuses()), len(batches[i].Items))
			}
			for j, s := range a.GetStatuses() {
				out[off+j] = frontier.Status(s)
			}
			acked[i] = true
			left--
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Metadata keys that carry the frontier's Depth and Priority (which the
// URLFrontier API has no field for) through the service and back.
const (
	mdDepth    = "courtesy.depth"
	mdPriority = "courtesy.priority"
)

// toWireInfo converts a URLInfo for the wire, Depth and Priority kept in
// the metadata (replacing metadata of those names).
func toWireInfo(in frontier.URLInfo) *pb.URLInfo {
	md := toPBMetadata(in.Metadata)
	delete(md, mdDepth)
	delete(md, mdPriority)
	if in.Depth != 0 || in.Priority != 0 {
		if md == nil {
			md = map[string]*pb.StringList{}
		}
		if in.Depth != 0 {
			md[mdDepth] = &pb.StringList{Values: []string{strconv.Itoa(in.Depth)}}
		}
		if in.Priority != 0 {
			md[mdPriority] = &pb.StringList{Values: []string{strconv.Itoa(int(in.Priority))}}
		}
	}
	return &pb.URLInfo{Url: in.URL, Key: in.Key, CrawlID: in.CrawlID, Metadata: md}
}

// fromWireInfo is the inverse of toWireInfo; malformed Depth or Priority
// values are dropped.
func fromWireInfo(u *pb.URLInfo) frontier.URLInfo {
	info := frontier.URLInfo{URL: u.GetUrl(), Key: u.GetKey(), CrawlID: u.GetCrawlID(), Metadata: fromPBMetadata(u.GetMetadata())}
	if vs, ok := info.Metadata[mdDepth]; ok {
		if len(vs) == 1 {
			if d, err := strconv.Atoi(vs[0]); err == nil && d >= 0 {
				info.Depth = d
			}
		}
		delete(info.Metadata, mdDepth)
	}
	if vs, ok := info.Metadata[mdPriority]; ok {
		if len(vs) == 1 {
			if p, err := strconv.ParseInt(vs[0], 10, 8); err == nil {
				info.Priority = int8(p)
			}
		}
		delete(info.Metadata, mdPriority)
	}
	if len(info.Metadata) == 0 {
		info.Metadata = nil
	}
	return info
}

// SetDelay sets a queue's delay (the default with an empty key), in whole
// seconds rounded up, as robots.txt Crawl-delay and Request-rate ask.
func (c *Client) SetDelay(ctx context.Context, crawlID, key string, d time.Duration) error {
	secs := uint32(min(max((d+time.Second-1)/time.Second, 0), 1<<32-1))
	return c.do(ctx, "SetDelay", func(ctx context.Context) error {
		_, err := c.c.SetDelay(ctx, &pb.QueueDelayParams{Key: key, CrawlID: crawlID, DelayRequestable: secs})
		return err
	})
}

// BlockQueueUntil keeps a queue from being served before t (rounded up to
// the second; the zero time unblocks), for Retry-After and backoff.
func (c *Client) BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error {
	var sec uint64
	if !t.IsZero() {
		sec = uint64(max(1, (t.UnixNano()+int64(time.Second)-1)/int64(time.Second)))
	}
	return c.do(ctx, "BlockQueueUntil", func(ctx context.Context) error {
		_, err := c.c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Key: key, CrawlID: crawlID, Time: sec})
		return err
	})
}

// ReleaseContext ends the lease on a URL so that it can be served again
// soon: URLFrontier has no such call, so it is acknowledged with a refetch
// date of now (rounded up to the second).
func (c *Client) ReleaseContext(ctx context.Context, info frontier.URLInfo) error {
	return c.Ack(ctx, info, time.Now())
}

// Release is ReleaseContext within CallTimeout, shaped as
// frontier.Frontier.Release: a failure is logged, and costs nothing worse
// than the lease running out.
func (c *Client) Release(info frontier.URLInfo) {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.CallTimeout)
	defer cancel()
	if err := c.ReleaseContext(ctx, info); err != nil {
		c.log.Warn("release failed; the lease will expire", "url", info.URL, "err", err)
	}
}

// Retire stops serving a queue for good (frontier.Frontier.Retire):
// URLFrontier has no such call, so the queue is blocked until the far
// future (year 2242), which keeps its URLs known.
func (c *Client) Retire(ctx context.Context, crawlID, key, reason string) error {
	c.log.Info("retiring queue", "crawl", crawlID, "key", key, "reason", reason)
	return c.BlockQueueUntil(ctx, crawlID, key, time.Unix(maxBlockSeconds, 0))
}

// WaitReady waits between d/2 and d (at most 1 s) or until ctx ends: a
// remote frontier sends no notice when URLs become due, so a crawler that
// got nothing polls. The random part keeps crawlers that share a service
// from polling in a fixed phase: queues are blocked until whole seconds
// (the wire's unit), and a fixed phase would hand every freed queue to
// the same crawler.
func (c *Client) WaitReady(ctx context.Context, d time.Duration) {
	d = min(d, time.Second)
	if d > 1 {
		d = d/2 + rand.N(d/2)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// maxLastStats bounds the statistics Stats remembers.
const maxLastStats = 1024

// Stats is StatsContext within the retry budget of CallTimeout, shaped as
// frontier.Frontier.Stats. On failure it logs and returns the last counts
// it read for the crawl and key (zero counts if none): a crawler that
// stops when nothing is left must not take an outage for an empty
// frontier.
func (c *Client) Stats(crawlID, key string) frontier.Stats {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.CallTimeout)
	defer cancel()
	k := [2]string{frontier.NormalizeCrawlID(crawlID), key}
	s, err := c.StatsContext(ctx, crawlID, key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.log.Warn("stats failed; answering the last counts read", "crawl", crawlID, "key", key, "err", err)
		if s, ok := c.last[k]; ok {
			return s
		}
		return frontier.Stats{CrawlID: k[0]}
	}
	if c.last == nil {
		c.last = map[[2]string]frontier.Stats{}
	}
	if _, ok := c.last[k]; ok || len(c.last) < maxLastStats {
		c.last[k] = s
	}
	return s
}

// StatsContext returns a crawl's or queue's statistics (GetStats).
func (c *Client) StatsContext(ctx context.Context, crawlID, key string) (frontier.Stats, error) {
	var s frontier.Stats
	err := c.do(ctx, "GetStats", func(ctx context.Context) error {
		st, err := c.c.GetStats(ctx, &pb.QueueWithinCrawlParams{Key: key, CrawlID: crawlID})
		if err != nil {
			return err
		}
		s = frontier.Stats{CrawlID: st.GetCrawlID(), Size: st.GetSize(), InProcess: uint64(st.GetInProcess()), Queues: st.GetNumberOfQueues(),
			Completed: st.GetCounts()["completed"], ActiveQueues: st.GetCounts()["active_queues"],
			Retired: st.GetCounts()["retired"], RetiredQueues: st.GetCounts()["retired_queues"]}
		return nil
	})
	return s, err
}

func clampU32(n int) uint32 {
	return uint32(min(max(n, 0), 1<<32-1))
}
