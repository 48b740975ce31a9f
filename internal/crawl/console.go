package crawl

// What the web console (internal/console) reads and changes of a running
// crawl: the counters (Progress), seeds added while crawling (AddSeeds),
// an operator's blocks and retirements, and the HTTP server that carries
// the console next to /metrics and /health.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// ConsoleOptions turn on the web console on Options.MetricsAddr, next to
// /metrics and /health.
type ConsoleOptions struct {
	// Config is the console's configuration (token, log level, logger);
	// an empty token means a random one.
	Config console.Config
	// Ready, when set, is called once the address listens, with the
	// address and the access token (the command prints them).
	Ready func(addr, token string)
	// Nodes, when set, is the nodes view (a cluster's heartbeats); nil
	// means this process alone.
	Nodes console.Nodes
	// Frontier, when set, is what the hosts views read of a frontier the
	// crawl does not own (a cluster's); seeds, blocks and retirements
	// still go through the crawler. Nil: the embedded frontier's, or no
	// hosts views.
	Frontier console.Frontier
}

// maxMIMETypes bounds the media types counted one by one; later ones are
// counted under "other".
const maxMIMETypes = 200

// consoleState is the crawler's side of the console.
type consoleState struct {
	start    atomic.Int64 // unix nanoseconds of this run's start
	finished atomic.Bool

	// mu guards the response counts.
	mu     sync.Mutex
	status map[string]int64
	mime   map[string]int64

	// blockMu orders an operator's blocks against the crawler's own (a
	// fetch's next allowed time): the crawler holds it for reading while
	// it blocks a queue, an operator for writing.
	blockMu sync.RWMutex
	blocks  map[string]time.Time // operator blocks by queue key
}

// countResponse counts one response by status code and media type.
func (c *Crawler) countResponse(status int, contentType string) {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "" {
		mt = "unknown"
	}
	s := &c.cons
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == nil {
		s.status, s.mime = map[string]int64{}, map[string]int64{}
	}
	s.status[strconv.Itoa(status)]++
	if _, ok := s.mime[mt]; !ok && len(s.mime) >= maxMIMETypes {
		mt = "other"
	}
	s.mime[mt]++
}

// Counts returns the responses received this run and the fetches in
// flight. Unlike Progress it may be called before Run has opened the
// crawl (a cluster node's heartbeats start with the process).
func (c *Crawler) Counts() (pages, inFlight int64) {
	return c.stats.pages.Load(), c.inFlight.Load()
}

// Progress returns the crawl's counters for the console. It is safe to
// call while the crawl runs, from any goroutine.
func (c *Crawler) Progress() console.Progress {
	p := console.Progress{
		Pages: c.stats.pages.Load(), Bytes: c.stats.bytes.Load(), Errors: c.stats.errors.Load(),
		Duplicates: c.stats.dups.Load(), RobotsDenied: c.stats.robotsDenied.Load(),
		InFlight: c.inFlight.Load(), MaxPages: c.cfg.MaxPages, MaxDuration: c.cfg.MaxDuration,
		Finished: c.cons.finished.Load(),
	}
	if ns := c.cons.start.Load(); ns != 0 {
		p.Start = time.Unix(0, ns)
	}
	if c.metrics != nil {
		p.TrapHits = counterSum(c.metrics.trapCuts)
	}
	c.cons.mu.Lock()
	p.Status = make(map[string]int64, len(c.cons.status))
	for k, v := range c.cons.status {
		p.Status[k] = v
	}
	p.MIME = make(map[string]int64, len(c.cons.mime))
	for k, v := range c.cons.mime {
		p.MIME[k] = v
	}
	c.cons.mu.Unlock()
	// The crawl's "waiting" state, as the progress line shows it: nothing
	// in flight, and every host with work left holds until a time.
	if !p.Finished && p.InFlight == 0 {
		if n, next := c.waiting(c.now()); n > 0 {
			p.WaitingUntil = next
		}
	}
	return p
}

// counterSum adds up the children of a counter vector (one per trap
// limit: a handful).
func counterSum(v *prometheus.CounterVec) int64 {
	ch := make(chan prometheus.Metric, 16)
	go func() {
		v.Collect(ch)
		close(ch)
	}()
	var sum float64
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) == nil && d.Counter != nil {
			sum += d.Counter.GetValue()
		}
	}
	return int64(sum)
}

// AddSeeds queues seeds while the crawl runs, as those of the command line:
// normalized, moved by the host rules, their hosts added to the seeds
// scope. It returns how many were new; a URL that does not normalize is an
// error naming it, and nothing is queued.
func (c *Crawler) AddSeeds(ctx context.Context, urls []string) (int, error) {
	if c.fr == nil {
		return 0, errors.New("crawl: add seeds: the crawl is not running")
	}
	items, err := c.seedItems(urls)
	if err != nil {
		return 0, err
	}
	if err := c.shareSeedHosts(ctx, items); err != nil {
		return 0, fmt.Errorf("crawl: add seeds: %w", err)
	}
	added := 0
	for len(items) > 0 {
		n := min(len(items), 1000)
		st, err := c.fr.Put(ctx, items[:n])
		if err != nil {
			return added, fmt.Errorf("crawl: add seeds: %w", err)
		}
		for _, s := range st {
			if s == frontier.OK {
				added++
			}
		}
		items = items[n:]
	}
	c.log.Info("seeds added", "received", len(urls), "added", added)
	return added, nil
}

// seedItems normalizes seeds into frontier items and records their hosts
// for the scope.
func (c *Crawler) seedItems(seeds []string) ([]frontier.Item, error) {
	items := make([]frontier.Item, 0, len(seeds))
	for _, s := range seeds {
		u, err := urlnorm.Normalize(strings.TrimSpace(s), c.norm)
		if err != nil {
			return nil, fmt.Errorf("crawl: seed %q: %w", s, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("crawl: seed %q: not an http or https URL", s)
		}
		u, _ = c.moveHost(u) // duplicate-hosts, and rules of earlier runs
		h := c.scope.key(u)
		c.scope.addSeedHost(h)
		if err := c.seedsKV.SetNoSync([]byte(h), nil); err != nil {
			return nil, fmt.Errorf("crawl: %w", err)
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{
			URL: u.String(), Key: c.queueKey(u), CrawlID: c.cfg.CrawlID, Priority: prioritySeed,
			Metadata: map[string][]string{mdSource: {"seed"}},
		}})
	}
	return items, nil
}

// blockQueue blocks key's queue until t when a URL is given back,
// keeping an operator's later block.
func (c *Crawler) blockQueue(ctx context.Context, key string, t time.Time) error {
	c.cons.blockMu.RLock()
	defer c.cons.blockMu.RUnlock()
	return c.fr.BlockQueueUntil(ctx, c.cfg.CrawlID, key, c.withOperatorBlockLocked(key, t))
}

// withOperatorBlock is t, or an operator's later block of key's queue: the
// hold an acknowledgement carries (frontier.Item.Hold), which a
// URLFrontier service gets as a block that replaces the queue's. The zero
// time stays zero (no hold).
func (c *Crawler) withOperatorBlock(key string, t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	c.cons.blockMu.RLock()
	defer c.cons.blockMu.RUnlock()
	return c.withOperatorBlockLocked(key, t)
}

func (c *Crawler) withOperatorBlockLocked(key string, t time.Time) time.Time {
	if op, ok := c.cons.blocks[key]; ok && op.After(t) {
		return op
	}
	return t
}

// maxOperatorBlocks bounds the operator blocks remembered at once.
const maxOperatorBlocks = 100_000

// consoleFrontier is the console's view of the crawl's frontier, with the
// crawler's own seeding, blocking and retiring.
type consoleFrontier struct {
	console.Frontier
	c *Crawler
}

func (f consoleFrontier) AddSeeds(ctx context.Context, urls []string) (int, error) {
	return f.c.AddSeeds(ctx, urls)
}

// Block blocks (or, with a zero until, unblocks) a queue for an operator;
// the crawler's own blocks after a fetch keep the later time.
func (f consoleFrontier) Block(ctx context.Context, key string, until time.Time) error {
	s := &f.c.cons
	s.blockMu.Lock()
	defer s.blockMu.Unlock()
	if s.blocks == nil {
		s.blocks = map[string]time.Time{}
	}
	now := f.c.now()
	for k, t := range s.blocks {
		if !t.After(now) {
			delete(s.blocks, k)
		}
	}
	if until.IsZero() {
		delete(s.blocks, key)
	} else if _, ok := s.blocks[key]; ok || len(s.blocks) < maxOperatorBlocks {
		s.blocks[key] = until
	} else {
		return fmt.Errorf("crawl: block %s: more than %d hosts blocked", key, maxOperatorBlocks)
	}
	if err := f.c.fr.BlockQueueUntil(ctx, f.c.cfg.CrawlID, key, until); err != nil {
		return fmt.Errorf("crawl: block %s: %w", key, err)
	}
	return nil
}

// Retire retires a queue for an operator, as the crawler retires a failing
// host (the summary lists it).
func (f consoleFrontier) Retire(ctx context.Context, key, reason string) error {
	if f.c.ownFr == nil {
		if _, err := f.Frontier.Host(key); err != nil {
			return err
		}
	} else if _, err := f.c.ownFr.Queue(f.c.cfg.CrawlID, key); err != nil {
		return fmt.Errorf("%w: %s", console.ErrUnknownHost, key)
	}
	f.c.retire(ctx, key, key, "operator: "+reason)
	return nil
}

// serve serves /metrics, /health and, with Options.Console, the console
// on Options.MetricsAddr until the returned stop is called. start is this
// run's start.
func (c *Crawler) serve(ctx context.Context, start time.Time) (stop func(), err error) {
	c.cons.start.Store(start.UnixNano())
	ln, err := net.Listen("tcp", c.opts.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("crawl: metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(c.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if o := c.opts.Console; o != nil {
		cfg := o.Config
		if cfg.Agent == "" {
			cfg.Agent = c.agent
		}
		if cfg.Logger == nil {
			cfg.Logger = c.log
		}
		// The hosts views read the embedded frontier, or the one the
		// console options give; with a frontier service they are the
		// service's to show.
		var fsrc console.Frontier
		if c.ownFr != nil {
			fsrc = consoleFrontier{Frontier: console.FrontierSource(c.ownFr, c.cfg.CrawlID), c: c}
		} else if o.Frontier != nil {
			fsrc = consoleFrontier{Frontier: o.Frontier, c: c}
		}
		var nodes console.Nodes = &console.LocalNode{Crawl: c}
		if o.Nodes != nil {
			nodes = o.Nodes
		}
		cons, err := console.New(cfg, console.Sources{
			Crawl:      c,
			Frontier:   fsrc,
			Politeness: console.PolitenessSource(c.gate, c.rstore),
			Nodes:      nodes,
			FetchLog:   console.CrawlLogTail{Path: filepath.Join(c.cfg.DataDir, "crawl.log")},
		})
		if err != nil {
			cancel()
			ln.Close()
			return nil, fmt.Errorf("crawl: %w", err)
		}
		mux.Handle("/", cons.Handler())
		wg.Go(func() { cons.Run(runCtx) })
		if o.Ready != nil {
			o.Ready(ln.Addr().String(), cons.Token())
		}
		c.log.Info("serving the console", "addr", ln.Addr().String(), "token_id", cons.TokenID())
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Warn("metrics server stopped", "err", err)
		}
	})
	c.log.Info("serving metrics", "addr", ln.Addr().String())
	return func() {
		cancel()
		srv.Close()
		wg.Wait()
	}, nil
}
