package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/dedup"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/h1"
	"github.com/courtesy-crawler/courtesy/internal/hostmap"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/sitemap"
	"github.com/courtesy-crawler/courtesy/internal/traps"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"github.com/courtesy-crawler/courtesy/internal/warc"
	"github.com/prometheus/client_golang/prometheus"
)

// maxIdleConns bounds the fetcher's keep-alive connections (about 10 KiB
// each in buffers).
const maxIdleConns = 10000

// Options are the crawler's connections to the outside world; the zero
// value works (logs discarded, no progress output).
type Options struct {
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Progress receives the progress display; nil means none.
	Progress io.Writer
	// Terminal draws one live progress line (with \r) instead of periodic
	// lines.
	Terminal bool
	// Resolver overrides name resolution (--resolve); nil resolves
	// normally.
	Resolver *resolve.Resolver
	// MetricsAddr, when set, serves GET /metrics (Prometheus) and
	// GET /health there while the crawl runs.
	MetricsAddr string
	// Console, when set, also serves the web console on MetricsAddr
	// (console.go).
	Console *ConsoleOptions
	// Now is the crawl's one clock: the frontier's due times and leases,
	// the politeness gate's delays and robots.txt expiry, the host map's
	// re-checks, retry times and the summary's duration all read it. nil
	// means time.Now.
	Now func() time.Time
	// Frontier, when set, is the crawl's frontier (a remote URLFrontier
	// service's client) instead of the embedded one in the data
	// directory; the crawler does not close it.
	Frontier Frontier
	// Politeness, when set, supplies the politeness gate's shared state,
	// robots.txt cache and delay store (its State, Robots and Delays, such
	// as redisbackend's on the Redis every crawl node uses) instead of the
	// in-memory state and the stores in the data directory; its other
	// fields are ignored (the crawler sets its own).
	Politeness *politeness.Backend
	// DrainGrace is how long the frontier must stay empty, with nothing
	// in flight here, before the crawl counts as finished. A frontier
	// shared with other crawl processes needs it: their acknowledgements
	// and discovered links land a moment apart. 0 means two looks in a
	// row.
	DrainGrace time.Duration
	// Lease is how long a URL handed to this crawler stays its own before
	// the frontier may serve it to another process sharing the crawl (a
	// crashed one's URLs come back after it); 0 means 10 minutes.
	Lease time.Duration
	// SeedHosts, when set, shares the seed hosts of the seeds scope with
	// the other processes of a shared crawl (seedhosts.go); nil keeps them
	// in this process.
	SeedHosts SeedHostSet
}

// Summary is what a run did.
type Summary struct {
	// Pages counts responses received this run (any status; a resumed
	// crawl counts only its own run: Completed covers all runs); Bytes
	// their body bytes as transferred.
	Pages int64
	Bytes int64
	// Completed counts URLs completed over all runs; Queued the URLs left
	// to crawl (0 when Finished).
	Completed uint64
	Queued    uint64
	// Hosts counts the hosts that answered at least one request this run.
	Hosts int
	// RobotsDenied counts URLs robots.txt refused this run.
	RobotsDenied int64
	// Errors counts failed fetches (network errors) this run.
	Errors int64
	// Duplicates counts exact (revisit) and near duplicates this run.
	Duplicates int64
	Revisits   int64
	// HostRewrites counts URLs moved to another host this run (robots
	// Host, REGP Mirror-site, duplicate-hosts; see hostmap.go).
	HostRewrites int64
	// Traps is what the trap limits did (all runs): Hits counts every
	// refused link check, the same URL once per page linking to it.
	Traps traps.Report
	// TrapCuts counts, per limit, the URLs cut this run: the crawl.log
	// lines with a "trap:" annotation (one per URL, not per link).
	TrapCuts map[traps.Kind]int64
	// Stopped lists every site stopped by a site-level trap limit (all
	// runs), with its example pairs; TrapReports the report files written
	// for them (DATA/reports/, traps.ReportName).
	Stopped     []traps.StoppedSite
	TrapReports []string
	// Unchanged counts the pages archived as revisits of their own
	// capture in an earlier crawl (Config.DedupIndexes) this run; they
	// are in Revisits, not in Duplicates.
	Unchanged int64
	// Requisites counts the page requisites fetched this run
	// (Config.PageRequisites), RequisitesOffScope those fetched out of
	// scope (on a CDN).
	Requisites, RequisitesOffScope int64
	// Truncated counts pages cut at the size cap this run (MaxSize).
	Truncated int64
	// MaxSize is the page size cap in bytes.
	MaxSize int64
	// Retired maps the hosts retired this run to the reason.
	Retired map[string]string
	// RetiredURLs counts the URLs left in the queues of retired hosts
	// (all runs): never crawled, so without a crawl.log line.
	RetiredURLs uint64
	// Failed counts URLs given up this run after MaxRetries tries (network
	// errors, 5xx, 429); crawl.log has their final status.
	Failed int64
	// WARCDir holds the WARC files; WARCFiles lists them (finished ones).
	WARCDir   string
	WARCFiles []string
	// CrawlLog is the crawl.log path.
	CrawlLog string
	// RDFDir holds the quad files when structured data is on ("" when
	// off); RDFPages and RDFQuads count this run's pages with quads and
	// their quads (structured.go).
	RDFDir             string
	RDFPages, RDFQuads int64
	// Duration is this run's wall time.
	Duration time.Duration
	// Finished is true when the frontier was drained: nothing is left.
	Finished bool
	// Resumed is true when the data directory held an earlier crawl.
	Resumed bool
}

// ErrNothingToCrawl is Run's error when the frontier is empty and no seed
// was given.
var ErrNothingToCrawl = errors.New("crawl: nothing to crawl: give seed URLs")

// Crawler runs one crawl. Create it with New and call Run once.
type Crawler struct {
	cfg  Config
	opts Options
	log  *slog.Logger
	now  func() time.Time

	agent string
	norm  urlnorm.Options
	// parseMax is the extractor's cap on the bytes of a page it parses:
	// at least the page cap, so that what was fetched is read.
	parseMax int
	// sitemapMax is the size cap of a sitemap's fetch when the page cap
	// is lower (sitemaps.org allows 50 MB uncompressed); 0: the page's.
	sitemapMax int64
	scope      *scoper
	honorNA    bool
	// seedSynced is when the shared seed hosts were last read (the
	// dispatcher's).
	seedSynced time.Time

	db      *kv.DB
	fr      Frontier
	ownFr   *frontier.Frontier // the embedded frontier, when Options.Frontier is nil
	tr      *traps.Checker
	gate    *politeness.Gate
	rstore  politeness.RobotsStore
	fetcher *fetch.Client
	warcs   []*warc.Writer // WARCWriters of them; worker i uses warcs[i%n]
	// robotsArc archives the robots.txt responses the gate fetches; nil
	// when warc-robots is off (robotsarchive.go).
	robotsArc *robotsArchive
	acks      chan *ack     // workers → acker (runAcker)
	wake      chan struct{} // a URL left the crawl's hands: the dispatcher may lease more
	clog      *crawllog.Writer
	near      *dedup.Index
	digests   *kv.Bucket
	// digestsW gathers the digests' writes until the acker's next
	// frontier commit (kv.Deferred); lookups consult it first.
	digestsW *kv.Deferred
	// digestsSeen filters lookups in digests (a resumed crawl reloads it).
	digestsSeen *digestFilter
	seedsKV     *kv.Bucket
	metrics     *metrics
	hmap        *hostmap.Map // host rewrites (hostmap.go)
	hostRules   *kv.Bucket   // rules learned from robots.txt
	// hostMoves counts moved URLs by rule source, hostRuleEvents learned
	// and dropped rules; hostMoved and hostRulesDropped are this run's
	// totals.
	hostMoves, hostRuleEvents   *prometheus.CounterVec
	hostMoved, hostRulesDropped atomic.Int64
	same                        *sameHomes // duplicate hosts found (samehome.go)

	sd *structuredSink // structured data, nil when off (structured.go)

	// cutLog remembers recently logged trap cuts so that a link found on
	// many pages is logged once.
	cutMu  sync.Mutex
	cutLog map[string]struct{}
	// cutByKind counts the trap cuts logged this run (crawl.log lines).
	cutByKind map[traps.Kind]int64
	// stopped lists the sites a site-level trap limit stopped this run,
	// in order ("site (limit)"), for the progress line; bounded.
	stoppedMu sync.Mutex
	stopped   []string
	nStopped  int

	hostsMu sync.Mutex
	hosts   map[string]*hostState

	// holds are the times until which hosts' queues wait (a gate's "not
	// yet", a backoff, a retry), for the progress line; bounded.
	holdsMu sync.Mutex
	holds   map[string]time.Time

	// inFlight counts the URLs out of the frontier's hands (leased, not
	// yet acknowledged or returned); acking those of them handed to the
	// acker, which no worker holds any more.
	inFlight  atomic.Int64
	acking    atomic.Int64
	completed atomic.Int64
	stats     runStats
	cons      consoleState // console.go
}

// runStats are this run's counters.
type runStats struct {
	pages, bytes, robotsDenied, errors, dups, revisits, fetchedHosts atomic.Int64
	// failed counts URLs given up after their retries (final status in
	// crawl.log); truncated pages cut at the size cap.
	failed, truncated atomic.Int64
	// requisites counts the page requisites fetched (PageRequisites),
	// requisitesOff those out of scope.
	requisites, requisitesOff atomic.Int64
	// unchanged counts the revisits of a URL's own capture in an earlier
	// crawl (--dedup-index).
	unchanged atomic.Int64
}

// hostState is what the crawler remembers of one host in memory.
type hostState struct {
	fetched        bool
	sitemapsQueued bool
	sitemaps       int
	failures       int
	robotsFailures int
	// answered holds the origins (politeness.Origin) of the host that gave
	// an HTTP answer this run, up to maxAnsweredOrigins.
	answered map[string]bool
	retired  string
	refused  string        // why the address policy refused the host's robots.txt fetch
	group    *robots.Group // nil until robots.txt was read
	req      fetch.Request // REGP Language/Encoding/Cookie for the host
}

// New checks cfg and returns a Crawler.
func New(cfg Config, opts Options) (*Crawler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Crawler{cfg: cfg, opts: opts, log: opts.Logger, now: opts.Now, hosts: map[string]*hostState{}, holds: map[string]time.Time{}, cutLog: map[string]struct{}{}, cutByKind: map[traps.Kind]int64{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = fetch.DefaultUserAgent
		c.cfg.UserAgent = cfg.UserAgent
	}
	c.agent = productToken(cfg.UserAgent)
	c.norm = urlnorm.CrawlDefaults()
	c.scope = newScoper(cfg.Scope)
	c.honorNA = boolOr(cfg.HonorNoArchive, true)
	return c, nil
}

// productToken returns the first product token of a User-Agent, the name
// robots.txt groups are matched against (RFC 9309 §2.2.1).
func productToken(ua string) string {
	if i := strings.IndexAny(ua, "/ ;("); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return "courtesy"
	}
	return strings.ToLower(ua)
}

// Run crawls from seeds (absolute URLs; on a resumed crawl they may be
// empty) until the frontier is drained, MaxPages or MaxDuration is reached,
// or ctx is done. It then lets fetches in flight finish (for a few
// seconds), closes the WARC files and returns the summary.
func (c *Crawler) Run(ctx context.Context, seeds []string) (sum *Summary, err error) {
	start := c.now()
	if err := c.open(ctx); err != nil {
		c.close()
		return nil, err
	}
	defer func() {
		if cerr := c.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	st := c.fr.Stats(c.cfg.CrawlID, "")
	resumed := st.Completed > 0 || st.Size > 0
	c.completed.Store(int64(st.Completed))
	if resumed {
		c.log.Info("resuming crawl", "data", c.cfg.DataDir, "completed", st.Completed, "queued", st.Size)
	}
	if err := c.seed(ctx, seeds); err != nil {
		return nil, err
	}
	st = c.fr.Stats(c.cfg.CrawlID, "")
	if r, ok := c.fr.(indexRepairer); ok && st.Size == 0 && st.Completed == 0 {
		// A shared crawl's totals come from its index: look at the
		// queues themselves before saying it is empty.
		if n, err := r.Repair(ctx); err != nil {
			c.log.Warn("frontier index repair failed", "err", err)
		} else if n > 0 {
			c.log.Info("frontier index repaired", "queues", n)
			st = c.fr.Stats(c.cfg.CrawlID, "")
		}
	}
	if st.Size == 0 && st.Completed == 0 {
		return nil, ErrNothingToCrawl
	}

	if c.opts.MetricsAddr != "" {
		stop, err := c.serve(ctx, start)
		if err != nil {
			return nil, err
		}
		defer stop()
	}

	finished := c.loop(ctx, start)
	c.cons.finished.Store(true)

	st = c.fr.Stats(c.cfg.CrawlID, "")
	sum = &Summary{
		Pages: c.stats.pages.Load(), Bytes: c.stats.bytes.Load(),
		Completed: st.Completed, Queued: st.Size, RetiredURLs: st.Retired,
		Hosts:        int(c.stats.fetchedHosts.Load()),
		RobotsDenied: c.stats.robotsDenied.Load(), Errors: c.stats.errors.Load(),
		Duplicates: c.stats.dups.Load(), Revisits: c.stats.revisits.Load(), HostRewrites: c.hostRewrites(),
		Traps: c.tr.Report(), Retired: map[string]string{}, Failed: c.stats.failed.Load(),
		WARCDir: c.cfg.WARCDir, CrawlLog: filepath.Join(c.cfg.DataDir, "crawl.log"),
		Finished: finished, Resumed: resumed,
	}
	sum.RDFDir, sum.RDFPages, sum.RDFQuads = c.structuredSummary()
	sum.Truncated, sum.MaxSize = c.stats.truncated.Load(), c.tr.Limits().MaxSize
	sum.Requisites, sum.RequisitesOffScope = c.stats.requisites.Load(), c.stats.requisitesOff.Load()
	sum.Unchanged = c.stats.unchanged.Load()
	c.cutMu.Lock()
	sum.TrapCuts = maps.Clone(c.cutByKind)
	c.cutMu.Unlock()
	sum.Stopped = c.tr.StoppedSites()
	if sum.TrapReports, err = c.writeTrapReports(sum.Stopped); err != nil {
		c.log.Warn("trap reports not written", "err", err)
		err = nil
	}
	c.hostsMu.Lock()
	for h, hs := range c.hosts {
		if hs.retired != "" {
			sum.Retired[h] = hs.retired
		}
	}
	c.hostsMu.Unlock()
	if err := c.tr.Persist(); err != nil {
		c.log.Warn("trap counters not saved", "err", err)
	}
	if err := c.closeWARCs(); err != nil {
		return sum, fmt.Errorf("crawl: %w", err)
	}
	matches, _ := filepath.Glob(filepath.Join(c.cfg.WARCDir, "*.warc.gz"))
	sort.Strings(matches)
	sum.WARCFiles = matches
	sum.Duration = c.now().Sub(start)
	if c.opts.Progress != nil && c.opts.Terminal {
		fmt.Fprintln(c.opts.Progress)
	}
	c.log.Info("crawl stopped", "finished", finished, "pages", sum.Pages, "completed", sum.Completed, "queued", sum.Queued, "duration", sum.Duration.Round(time.Millisecond))
	return sum, nil
}

// open opens the state, the fetcher and the writers.
func (c *Crawler) open(ctx context.Context) error {
	cfg := &c.cfg
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	if err := os.MkdirAll(cfg.WARCDir, 0o755); err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	// A crash leaves the last WARC file open: cut its partial record.
	recovered, err := warc.Recover(ctx, cfg.WARCDir)
	if err != nil {
		return fmt.Errorf("crawl: recover WARC files: %w", err)
	}
	for _, r := range recovered {
		c.log.Info("recovered WARC file", "path", r.Path, "records", r.Records, "cut_bytes", r.Cut)
	}
	// 32 MiB memtables instead of Pebble's 4 MiB: the crawl writes every
	// page's outlinks, acknowledgement, digest and simhash, and small
	// memtables turned that into constant flushing and compaction (5-6 %
	// less crawl CPU measured, about 40 MB more RSS).
	c.db, err = kv.Open(filepath.Join(cfg.DataDir, "state"), kv.Options{MemTableBytes: 16 << 20, CacheBytes: cfg.StoreCacheBytes})
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	if c.opts.Frontier != nil {
		c.fr = c.opts.Frontier
	} else {
		c.ownFr, err = frontier.Open(c.db, frontier.Options{DefaultLease: 10 * time.Minute, Now: c.now})
		if err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		c.fr = c.ownFr
	}
	c.tr, err = traps.Open(c.db, cfg.Traps, traps.Options{OnTrap: c.onTrap, OnError: func(site string, err error) {
		c.log.Warn("trap counters not stored", "site", site, "err", err)
	}})
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	c.metrics = newMetrics()
	limits := c.tr.Limits()

	policy, _ := addrpolicy.Parse(cfg.AddressPolicy) // Validate checked it
	archiveRobots := boolOr(cfg.WARCRobots, true)
	tlsConf, err := cfg.TLS.config()
	if err != nil {
		return err
	}
	var robotsRT http.RoundTripper = &http.Transport{
		// The pages' certificate checks (crawl.tls).
		TLSClientConfig: tlsConf,
		// It dials as the fetcher does (c.fetcher is made below, before
		// any fetch).
		DialContext: c.robotsDial, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second, ForceAttemptHTTP2: true,
		// Archived: the bytes as transferred (robotsArchive decodes).
		DisableCompression: archiveRobots,
	}
	if archiveRobots {
		// https too, as the fetcher does: the records keep the bytes.
		plain := h1.New(h1.Options{Dial: c.robotsDial, MaxIdlePerHost: 2, IdleTimeout: 30 * time.Second, TLSConfig: tlsConf})
		c.robotsArc = &robotsArchive{c: c, rt: robotsRT, plain: plain, logged: map[uint64]struct{}{}}
		robotsRT = c.robotsArc
	}
	robotsClient := &http.Client{Transport: &userAgentTransport{ua: cfg.UserAgent, rt: robotsRT}}
	pcfg := cfg.Politeness
	pcfg.Agent = c.agent
	pcfg.UserAgent = cfg.UserAgent
	if cfg.Delay != 0 {
		pcfg.DefaultDelay = cfg.Delay // negative: no delay, as in the gate's config
	}
	ifaces, _ := net.InterfaceAddrs() // none known: Ip-allow/Ip-disallow cannot match
	pcfg.ParseOptions.EgressIPs = egressIPs(cfg.EgressIPs, ifaces)
	backend := politeness.Backend{Robots: politeness.NewKVRobotsStore(c.db), Delays: politeness.NewKVDelayStore(c.db)}
	if p := c.opts.Politeness; p != nil {
		backend = politeness.Backend{State: p.State, Robots: p.Robots, Delays: p.Delays}
	}
	c.rstore = backend.Robots
	backend.HTTPClient, backend.Observer, backend.RobotsStored, backend.Now = robotsClient, robotsObserver{m: c.metrics}, c.robotsRefreshed, c.now
	c.gate, err = politeness.New(pcfg, backend)
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	// One keep-alive connection per active host: a crawl keeps thousands
	// of hosts warm at once, and the fetcher's default of 256 idle
	// connections in all would redial most requests.
	fcfg := fetch.Config{UserAgent: cfg.UserAgent, Resolver: c.opts.Resolver, AddrPolicy: policy, MaxIdleConns: maxIdleConns, MaxIdleConnsPerHost: 2,
		HeadBeforeGet: cfg.HeadBeforeGet, WantedTypes: cfg.WantedTypes, TLSConfig: tlsConf}
	// The page cap bounds the page as decoded and as parsed too: the
	// fetcher's decoded cap and the extractor's own default to 8 MiB, and
	// would cut a page the fetch read whole (a 9 MB page, its links at
	// the end). A negative cap is none on the bytes transferred; the
	// decoded body keeps a bound all the same (noCapDecoded), against a
	// small compressed body that expands without end.
	pageMax := limits.MaxSize
	decodedMax := max(fetch.DefaultMaxDecodedSize, pageMax)
	if pageMax < 0 {
		pageMax, decodedMax = noPageCap, noCapDecoded
	}
	fcfg.MaxBodySize = pageMax
	fcfg.MaxDecodedSize = decodedMax
	c.parseMax = int(max(extract.DefaultMaxBytes, fcfg.MaxDecodedSize))
	if pageMax < sitemap.DefaultMaxBytes {
		c.sitemapMax = sitemap.DefaultMaxBytes
	}
	if limits.MaxDownloadTime > 0 && limits.MaxDownloadTime < fetch.DefaultTimeout {
		fcfg.Timeout = limits.MaxDownloadTime
	}
	c.fetcher, err = fetch.New(fcfg)
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	// Several writers (each its own file) let workers compress records in
	// parallel, as Heritrix keeps a pool of WARC writers.
	small := 0
	if cfg.WARCGzipLevel == 1 {
		small = warc.DefaultSmallMemberBytes
	}
	for i := range cfg.WARCWriters {
		prefix := cfg.WARCPrefix
		if prefix == "" {
			prefix = warc.DefaultPrefix
		}
		if cfg.WARCWriters > 1 {
			prefix += fmt.Sprintf("-w%d", i)
		}
		w, err := warc.NewWriter(warc.Options{
			Dir: cfg.WARCDir, Prefix: prefix, MaxFileBytes: cfg.WARCMaxBytes, Level: cfg.WARCGzipLevel, SmallMemberBytes: small,
			Info: []warc.Field{
				{Name: "http-header-user-agent", Value: cfg.UserAgent},
				{Name: "robots", Value: "obey"},
				{Name: "description", Value: "courtesy crawl"},
			},
		})
		if err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		c.warcs = append(c.warcs, w)
	}
	if err := c.repairLog(ctx, filepath.Join(cfg.DataDir, "crawl.log")); err != nil {
		return err
	}
	c.clog, err = crawllog.Create(filepath.Join(cfg.DataDir, "crawl.log"), crawllog.Options{})
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	// Persistent: a resumed crawl still knows each site's simhashes.
	c.near, err = dedup.NewIndex(dedup.IndexOptions{DB: c.db, OnError: func(err error) { c.log.Warn("near-duplicate index", "err", err) }})
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	c.digests = c.db.Bucket("C/digest/")
	c.digestsW = c.digests.Deferred()
	c.digestsSeen = newDigestFilter()
	if err := c.digests.Scan(nil, func(k, _ []byte) error {
		c.digestsSeen.Add(string(k))
		return nil
	}); err != nil {
		return fmt.Errorf("crawl: load payload digests: %w", err)
	}
	if err := c.loadDedupIndexes(); err != nil {
		return err
	}
	if err := c.openStructured(); err != nil {
		return err
	}
	c.seedsKV = c.db.Bucket("C/seedhost/")
	if err := c.openHostMap(); err != nil {
		return err
	}
	if err := c.openSameHome(); err != nil {
		return fmt.Errorf("crawl: duplicate hosts: %w", err)
	}
	// A state whose seed hosts predate the origin keys (no seedKeysMark)
	// keeps its scope by host name; a new one is marked.
	stored, marked := false, false
	if err := c.seedsKV.Scan(nil, func(k, _ []byte) error {
		if string(k) == seedKeysMark {
			marked = true
		} else {
			stored = true
			c.scope.addSeedHost(string(k))
		}
		return nil
	}); err != nil {
		return err
	}
	switch {
	case marked:
	case stored:
		c.scope.byName = true
		c.log.Info("seeds scope by host name, as in the state's earlier runs (a new crawl keys it on host and port)")
	default:
		if err := c.seedsKV.SetNoSync([]byte(seedKeysMark), nil); err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
	}
	return nil
}

// seedKeysMark, stored among the seed hosts, says that they are seedKeys
// (host, or host:port for a port other than the scheme's default), not
// host names alone as before 2026-11-29. It cannot be a host name.
const seedKeysMark = "\x00origin-keys"

// close releases everything open, in reverse order of dependence.
func (c *Crawler) close() error {
	errs := []error{c.closeStructured(), c.closeWARCs()}
	if c.clog != nil {
		errs = append(errs, c.clog.Close())
	}
	if c.fetcher != nil {
		c.fetcher.Close()
	}
	if c.robotsArc != nil && c.robotsArc.plain != nil {
		c.robotsArc.plain.CloseIdle() // its idle connections and reaper
	}
	// Writes gathered for the acker's next commit (none comes now).
	if c.near != nil {
		errs = append(errs, c.near.Flush())
	}
	if c.digestsW != nil {
		errs = append(errs, c.digestsW.Flush())
	}
	if c.ownFr != nil {
		errs = append(errs, c.ownFr.Close())
	}
	if c.db != nil {
		errs = append(errs, c.db.Close())
	}
	c.warcs, c.clog, c.fetcher, c.fr, c.ownFr, c.db = nil, nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// seed normalizes and queues the seeds (a resumed crawl skips the known
// ones through the seen-test) and records their hosts for the scope.
func (c *Crawler) seed(ctx context.Context, seeds []string) error {
	items, err := c.seedItems(seeds) // console.go
	if err != nil {
		return err
	}
	if err := c.shareSeedHosts(ctx, items); err != nil {
		return fmt.Errorf("crawl: seed: %w", err)
	}
	c.syncSeedHosts(ctx, true)
	for len(items) > 0 {
		n := min(len(items), 1000)
		if _, err := c.fr.Put(ctx, items[:n]); err != nil {
			return fmt.Errorf("crawl: seed: %w", err)
		}
		items = items[n:]
	}
	return nil
}

// queueKey is the frontier queue (and politeness key) of a URL: its host,
// or its registrable domain when the gate keys by domain.
func (c *Crawler) queueKey(u *url.URL) string {
	if c.cfg.Politeness.KeyMode == urlnorm.ByDomain {
		if k, err := urlnorm.Key(u, urlnorm.ByDomain); err == nil {
			return k
		}
	}
	return u.Hostname()
}

func (c *Crawler) host(h string) *hostState {
	c.hostsMu.Lock()
	defer c.hostsMu.Unlock()
	hs := c.hosts[h]
	if hs == nil {
		hs = &hostState{}
		c.hosts[h] = hs
	}
	return hs
}

// userAgentTransport sets the User-Agent of robots.txt requests.
type userAgentTransport struct {
	ua string
	rt http.RoundTripper
}

func (t *userAgentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", t.ua)
	}
	return t.rt.RoundTrip(r)
}
