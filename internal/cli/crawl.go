package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/crawl"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/traps"
	"github.com/courtesy-crawler/courtesy/internal/urlfrontier"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// The URLFrontier client is a crawl frontier.
var _ crawl.Frontier = (*urlfrontier.Client)(nil)

// crawlFile is the part of the YAML configuration `courtesy crawl` reads:
// the top-level `data` directory, the `politeness:` section shared with the
// proxy (the gate's knobs and the per-domain delays
// of the polite-proxy thesis' configuration format) and the `crawl:`
// section. Other sections (proxy, cache, ...) are left to their commands.
type crawlFile struct {
	Data string `yaml:"data"`
	// Redis, the proxy's key too, shares the politeness state through
	// that Redis (--redis).
	Redis      string                `yaml:"redis"`
	Politeness politeness.FileConfig `yaml:"politeness"`
	Crawl      crawl.Config          `yaml:"crawl"`
	Console    consoleFile           `yaml:"console"`
	Rest       map[string]any        `yaml:",remain"`
}

const crawlDescription = `
Crawl politely from the seed URLs, writing WARC files (with CDXJ indexes)
and a Heritrix-style crawl.log. Robots.txt is obeyed, one request per host
is in flight at a time, and each host waits --delay (or what its robots.txt
asks, if longer) between requests. The state lives in --data: run the same
command again after a crash or Ctrl-C and the crawl resumes where it was.
On a terminal one live progress line is drawn; otherwise progress is logged.

With --frontier ADDR the URLs come from a URLFrontier service (courtesy
serve, or any other) instead of the frontier in --data: several crawl
processes, each with its own --data, share one crawl (--crawl-id) there.
With --redis-cluster ADDRS the process joins crawl --crawl-id on a Redis
Cluster as one crawl node: the frontier and the politeness gate (one
request per host in flight across all nodes) live in Redis, each node
writes its own WARC files and crawl.log, and a node stops when the whole
crawl has nothing queued and nothing in flight.`

// crawlMemoryLimitMiB is the crawl's default Go memory limit: with GOGC
// 100 the heap of a crawl of large pages grows to twice what is live
// (bodies, extraction buffers and WARC records come and go by the
// megabyte), and the limit makes the collector run sooner instead. It is
// soft: a crawl whose live heap needs more keeps running, collecting
// more often.
const crawlMemoryLimitMiB = 320

// runCrawl is `courtesy crawl`.
func runCrawl(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "crawl", "SEED_URL...", crawlDescription)
	var fl commonFlags
	fl.register(fs)
	seedsFile := fs.String("seeds", "", "read seed URLs from `FILE`, one per line (# comments)")
	data := fs.String("data", "courtesy-data", "state `DIR` (frontier, robots cache, crawl.log); an unfinished crawl there is resumed")
	warcDir := fs.String("warc-dir", "", "`DIR` for the WARC files (default DATA/warc)")
	maxPages := fs.Int64("max-pages", 0, "stop after `N` URLs are completed (0: no limit)")
	maxDuration := fs.Duration("max-duration", 0, "stop after this `DURATION` (0: no limit)")
	scope := fs.String("scope", "seeds", "`SCOPE`: seeds (the seeds' hosts, on their ports), all, or domain suffixes like .pt,example.org")
	userAgent := fs.String("user-agent", "", "User-Agent `UA`; its first product token selects the robots.txt group (default courtesy/VERSION (+URL))")
	delay := fs.Duration("delay", time.Second, "default per-host `DURATION` between requests (robots.txt may ask for more)")
	consoleAddrFlag := fs.String("console", "", "serve the web console, /metrics and /health on `ADDR` while crawling (a bare port binds loopback)")
	fs.Var(aliasFlag{fs.Lookup("console")}, "metrics-addr", "same as --console (`ADDR`)")
	consoleToken := fs.String("console-token", "", "the console's access `TOKEN` for actions, 16 characters or more (default: console.token, else random, printed at start)")
	memLimit := fs.Int("memory-limit-mib", crawlMemoryLimitMiB, "Go memory limit in `MiB` (a soft bound the collector works to keep the heap under; 0: none; default GOMEMLIMIT when that is set)")
	addrPolicy := fs.String("address-policy", "no-link-local", "which addresses hosts may resolve to: no-link-local (refuse 169.254.0.0/16, fe80::/10 and the like: cloud metadata services), public-only (also refuse loopback and private networks), allow; --resolve targets are always allowed")
	workers := fs.Int("workers", 256, "concurrent fetches (`N`; at most one per host)")
	caFile := fs.String("ca-file", "", "also trust the certificates of this PEM `FILE` for https sites: an intranet's or a lab's own authority (crawl.tls.ca-file)")
	insecureTLS := fs.Bool("insecure", false, "accept any certificate of https sites, expired or self-signed, as wget --no-check-certificate does (crawl.tls.insecure)")
	requisites := fs.Bool("page-requisites", false, "also fetch what each page needs to render: images, scripts, media, stylesheets' fonts and images, on other hosts too (crawl.page-requisites)")
	relNofollow := fs.Bool("follow-rel-nofollow", false, "also follow links marked rel=nofollow, as wget and Heritrix do (meta robots nofollow is still obeyed; crawl.follow-rel-nofollow)")
	structured := fs.Bool("structured-data", false, "extract RDFa, microdata and JSON-LD from every HTML page into DATA/rdf/*.nq.gz (crawl.structured-data)")
	frontierAddr := fs.String("frontier", "", "use the URLFrontier service at `ADDR` (host:port) instead of the frontier in --data")
	crawlID := fs.String("crawl-id", "", "the crawl's `ID` in the frontier (default DEFAULT)")
	lease := fs.Duration("lease", 10*time.Minute, "with --redis-cluster: how long a URL given to this node stays its own; a node that dies leaves its URLs to the others after this `DURATION`")
	redisAddr := fs.String("redis", "", "share the politeness state (each host's slot and next time, backoff, Retry-After, robots.txt and its delays) with the proxies and crawlers using this Redis (`ADDR`, or Redis Cluster seeds, comma-separated); the frontier stays in --data or --frontier (top-level redis in the file, as the proxy's)")
	redisCluster := fs.String("redis-cluster", "", "join the crawl shared on this Redis Cluster (seed `ADDRS`, comma-separated; or one plain Redis server): frontier, politeness and robots.txt cache in Redis, WARC files and crawl.log in --data")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the crawl to `FILE` (for developers)")
	waitProfile := fs.String("waitprofile", "", "write Go mutex and block profiles of the crawl to `FILE`.mutex and FILE.block (for developers)")
	var dedupIndexes []string
	fs.Func("dedup-index", "a CDXJ `FILE` of an earlier crawl: payloads it holds are archived as revisit records pointing at it (repeatable; added to crawl.dedup-indexes)", func(v string) error {
		dedupIndexes = append(dedupIndexes, v)
		return nil
	})
	var dupHosts []string
	fs.Func("duplicate-host", "`ALIAS=CANONICAL`: crawl the host ALIAS under CANONICAL (repeatable; added to crawl.duplicate-hosts)", func(v string) error {
		dupHosts = append(dupHosts, v)
		return nil
	})
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := applyMemoryLimit(fs, *memLimit); err != nil {
		return err
	}
	log, err := fl.logger(env.Stderr)
	if err != nil {
		return err
	}
	res, err := fl.resolver()
	if err != nil {
		return err
	}
	file := crawlFile{Data: *data}
	if fl.config != "" || hasConfigEnv() {
		if err := config.Load(fl.config, &file); err != nil {
			return err
		}
	}
	cfg := file.Crawl
	if cfg.DataDir == "" {
		cfg.DataDir = file.Data
	}
	// The politeness section is read as the proxy reads it; the crawl's
	// own delay (crawl.delay, --delay), when given, replaces its default.
	cfg.Politeness = file.Politeness.GateConfig()
	set := flagsSet(fs)
	if set["data"] {
		cfg.DataDir = *data
	}
	if set["warc-dir"] {
		cfg.WARCDir = *warcDir
	}
	if set["max-pages"] {
		cfg.MaxPages = *maxPages
	}
	if set["max-duration"] {
		cfg.MaxDuration = *maxDuration
	}
	if set["scope"] || cfg.Scope.Mode == "" {
		sc, err := crawl.ParseScope(*scope)
		if err != nil {
			return usagef("--scope: %v", err)
		}
		cfg.Scope.Mode, cfg.Scope.Domains = sc.Mode, sc.Domains
	}
	if set["user-agent"] {
		cfg.UserAgent = *userAgent
	}
	if set["structured-data"] {
		cfg.StructuredData = *structured
	}
	if set["page-requisites"] {
		cfg.PageRequisites = *requisites
	}
	if set["follow-rel-nofollow"] {
		cfg.FollowRelNofollow = *relNofollow
	}
	if set["ca-file"] {
		cfg.TLS.CAFile = *caFile
	}
	if set["insecure"] {
		cfg.TLS.Insecure = *insecureTLS
	}
	if set["delay"] {
		if *delay < 0 {
			return usagef("--delay must not be negative")
		}
		cfg.Delay = *delay
		if cfg.Delay == 0 {
			cfg.Delay = -1 // --delay 0: no delay
		}
	}
	if set["crawl-id"] {
		cfg.CrawlID = *crawlID
	}
	if set["address-policy"] {
		cfg.AddressPolicy = *addrPolicy
	}
	cfg.DuplicateHosts = append(cfg.DuplicateHosts, dupHosts...)
	cfg.DedupIndexes = append(cfg.DedupIndexes, dedupIndexes...)
	if set["workers"] || cfg.Workers == 0 {
		cfg.Workers = *workers
	}
	if cfg.MaxPages < 0 || cfg.MaxDuration < 0 || cfg.Workers <= 0 {
		return usagef("--max-pages and --max-duration must not be negative, --workers must be positive")
	}
	var seeds, where []string
	for i, s := range fs.Args() {
		seeds, where = append(seeds, s), append(where, fmt.Sprintf("argument %d", i+1))
	}
	if *seedsFile != "" {
		more, lines, err := readSeeds(*seedsFile)
		if err != nil {
			return err
		}
		for i, s := range more {
			seeds, where = append(seeds, s), append(where, fmt.Sprintf("%s:%d", *seedsFile, lines[i]))
		}
	}
	// Every seed is checked before anything is created in --data, and
	// every bad one is named with where it came from.
	if err := checkSeeds(seeds, where); err != nil {
		return err
	}
	if *frontierAddr != "" && *redisCluster != "" {
		return usagef("give --frontier or --redis-cluster, not both")
	}
	if set["redis"] {
		if *redisCluster != "" {
			return usagef("--redis-cluster keeps the politeness state in that Redis already: give --redis or --redis-cluster, not both")
		}
		file.Redis = *redisAddr
	}
	if *redisCluster != "" {
		file.Redis = "" // a shared file's proxy setting: the cluster's Redis holds the state
	}
	if len(seeds) == 0 && !hasState(cfg.DataDir) && *frontierAddr == "" && *redisCluster == "" {
		return usagef("give seed URLs (or --seeds FILE), or a --data directory holding a crawl to resume")
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	opts := crawl.Options{Logger: log, Progress: env.Stdout, Terminal: env.IsTerminal, Resolver: res}
	if set["console"] || set["metrics-addr"] {
		file.Console.Addr = *consoleAddrFlag
	}
	if set["console-token"] {
		file.Console.Token = *consoleToken
	}
	if opts.MetricsAddr = consoleAddr(file.Console.Addr); opts.MetricsAddr != "" {
		ccfg := console.Config{Token: file.Console.Token, LogLevel: fl.level, Logger: log}
		if err := ccfg.Validate(); err != nil {
			return usagef("--console-token: %v", err)
		}
		opts.Console = &crawl.ConsoleOptions{
			Config: ccfg,
			Ready:  func(addr, token string) { printConsole(env.Stdout, "crawl", addr, token) },
		}
	}
	if *frontierAddr != "" {
		fc, err := dialCrawlFrontier(ctx, env, *frontierAddr, cfg.CrawlID, log)
		if err != nil {
			return err
		}
		defer fc.Close()
		opts.Frontier = fc
		if opts.Console != nil {
			opts.Console.Frontier = &remoteHosts{c: fc, crawl: cfg.CrawlID}
		}
		runDone := make(chan struct{})
		defer close(runDone)
		go closeOnStop(ctx, runDone, fc, log)
	}
	if file.Redis != "" {
		rc, err := cluster.Dial(ctx, []string{file.Redis})
		if err != nil {
			return fmt.Errorf("crawl: --redis: %w", err)
		}
		defer rc.Close()
		backend := redisbackend.Backend(rc, redisbackend.Options{})
		opts.Politeness = &backend
		log.Info("politeness state shared through Redis", "redis", file.Redis)
	}
	var node *crawlNode
	if *redisCluster != "" {
		if *lease <= 0 {
			return usagef("--lease must be positive")
		}
		if node, err = joinCluster(ctx, *redisCluster, &opts, log); err != nil {
			return err
		}
		opts.Lease = *lease
		node.share(&cfg, &opts, *lease)
		defer func() { node.close() }()
		if opts.Console != nil {
			node.console(opts.Console, cfg.CrawlID)
		}
	}
	c, err := crawl.New(cfg, opts)
	if err != nil {
		return usagef("%v", err)
	}
	if node != nil {
		node.heartbeat(ctx, cfg.CrawlID, c)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if *waitProfile != "" {
		runtime.SetMutexProfileFraction(10)
		runtime.SetBlockProfileRate(int(100 * time.Microsecond)) // waits of 100 µs or more
		defer writeWaitProfiles(*waitProfile, log)
	}
	sum, err := c.Run(ctx, seeds)
	if errors.Is(err, crawl.ErrNothingToCrawl) {
		if *frontierAddr != "" {
			return usagef("give seed URLs (or --seeds FILE): crawl %q at %s holds no URL", frontierID(cfg.CrawlID), *frontierAddr)
		}
		if *redisCluster != "" {
			return usagef("give seed URLs (or --seeds FILE): crawl %q on %s holds no URL", frontierID(cfg.CrawlID), *redisCluster)
		}
		return usagef("give seed URLs (or --seeds FILE): %s holds no URL left to crawl", cfg.DataDir)
	}
	if err != nil {
		return err
	}
	printSummary(env.Stdout, sum, *frontierAddr != "" || *redisCluster != "")
	return nil
}

// dialCrawlFrontier connects to the URLFrontier service at addr and waits
// until it answers (saying so while it does not), so that the crawl
// starts from the service's real counts.
func dialCrawlFrontier(ctx context.Context, env *Env, addr, crawlID string, log *slog.Logger) (*urlfrontier.Client, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, usagef("--frontier %q: want host:port", addr)
	}
	fc, err := urlfrontier.Dial(addr, urlfrontier.ClientOptions{Logger: log.With("pkg", "urlfrontier")})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		t := time.NewTimer(2 * time.Second)
		defer t.Stop()
		select {
		case <-wctx.Done():
		case <-t.C:
			fmt.Fprintf(env.Stderr, "courtesy crawl: waiting for the frontier service at %s (retrying with backoff)\n", addr)
		}
	}()
	st, err := fc.StatsContext(wctx, crawlID, "")
	if err != nil {
		fc.Close()
		return nil, fmt.Errorf("frontier service %s: %w", addr, err)
	}
	log.Info("using the frontier service", "addr", addr, "crawl", st.CrawlID, "queued", st.Size, "completed", st.Completed)
	return fc, nil
}

// frontierStopGrace is how long a stopped crawl may spend handing its
// last acknowledgements to an unreachable frontier service.
const frontierStopGrace = 30 * time.Second

// closeOnStop closes the frontier client frontierStopGrace after ctx
// ends, unless the crawl returned by then: the client retries calls until
// the service answers, and a crawl stopped during an outage must not wait
// for ever. The URLs not acknowledged stay leased in the service and are
// served again when their lease runs out (their WARC records are kept).
func closeOnStop(ctx context.Context, runDone <-chan struct{}, fc *urlfrontier.Client, log *slog.Logger) {
	select {
	case <-runDone:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(frontierStopGrace)
	defer t.Stop()
	select {
	case <-runDone:
	case <-t.C:
		log.Warn("frontier service still unreachable; stopping without the last acknowledgements (their URLs will be served again)")
		fc.Close()
	}
}

// frontierID is the crawl ID as the frontier names it.
func frontierID(id string) string {
	if strings.TrimSpace(id) == "" {
		return "DEFAULT"
	}
	return id
}

// writeWaitProfiles writes the mutex and block profiles (go tool pprof
// reads them) beside each other.
func writeWaitProfiles(base string, log *slog.Logger) {
	for _, name := range []string{"mutex", "block"} {
		f, err := os.Create(base + "." + name)
		if err == nil {
			err = pprof.Lookup(name).WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			log.Warn("wait profile not written", "profile", name, "err", err)
		}
	}
}

func hasConfigEnv() bool {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, config.EnvPrefix) && !strings.HasPrefix(kv, "COURTESY_CONFIG=") {
			return true
		}
	}
	return false
}

// hasState reports whether dir holds a crawl's state.
func hasState(dir string) bool {
	_, err := os.Stat(dir + "/state")
	return err == nil
}

// readSeeds reads one URL per line; blank lines and # comments are
// skipped. lines holds the 1-based line number of each URL.
func readSeeds(path string) (out []string, lines []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("seeds: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<30))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out, lines = append(out, line), append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("seeds: %s:%d: %w", path, n+1, err)
	}
	return out, lines, nil
}

// maxBadSeeds bounds the bad seeds one error lists.
const maxBadSeeds = 10

// checkSeeds returns a usage error naming every seed (up to maxBadSeeds)
// that is not an absolute http or https URL the crawler can normalize
// (schemes are case-insensitive), with where it came from.
func checkSeeds(seeds, where []string) error {
	var bad []string
	n := 0
	for i, s := range seeds {
		u, err := url.Parse(s)
		ok := err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https"))
		if ok {
			_, err = urlnorm.Normalize(s, urlnorm.CrawlDefaults())
			ok = err == nil
		}
		if ok {
			continue
		}
		n++
		if len(bad) < maxBadSeeds {
			bad = append(bad, fmt.Sprintf("  %s: %q", where[i], s))
		}
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(bad) {
		more = fmt.Sprintf("\n  ... and %d more", n-len(bad))
	}
	return usagef("%d seed(s) are not absolute http or https URLs:\n%s%s", n, strings.Join(bad, "\n"), more)
}

// printSummary prints the end of a crawl for people; shared is set for a
// process sharing its frontier with others (--frontier, --redis-cluster),
// whose totals are the whole crawl's.
func printSummary(w io.Writer, s *crawl.Summary, shared bool) {
	state := "stopped (run the same command again to resume)"
	if s.Finished {
		state = "finished: nothing left to crawl"
	}
	fmt.Fprintf(w, "Crawl %s.\n", state)
	run, all := "this run", "all runs"
	switch {
	case shared:
		run, all = "by this process", "the whole shared crawl"
	case s.Resumed:
		run = "this run only (resumed crawl: see URLs completed for all runs)"
	}
	fmt.Fprintf(w, "  pages fetched       %d (%s) from %s in %s, %s\n", s.Pages, crawl.FormatBytes(s.Bytes), plural(s.Hosts, "host"), s.Duration.Round(time.Millisecond), run)
	fmt.Fprintf(w, "  URLs completed      %d (%s), %d still queued\n", s.Completed, all, s.Queued)
	fmt.Fprintf(w, "  robots.txt refusals %d URLs\n", s.RobotsDenied)
	fmt.Fprintf(w, "  duplicates          %d (%d written as revisit records)\n", s.Duplicates, s.Revisits-s.Unchanged)
	if s.Unchanged > 0 {
		fmt.Fprintf(w, "  unchanged pages     %d (revisit records of an earlier crawl's captures, --dedup-index)\n", s.Unchanged)
	}
	if s.Requisites > 0 {
		fmt.Fprintf(w, "  page requisites     %d fetched (%d out of scope)\n", s.Requisites, s.RequisitesOffScope)
	}
	if s.HostRewrites > 0 {
		fmt.Fprintf(w, "  host rewrites       %d URLs (robots Host, Mirror-site, duplicate hosts)\n", s.HostRewrites)
	}
	fmt.Fprintf(w, "  fetch errors        %d\n", s.Errors)
	if s.Failed > 0 {
		fmt.Fprintf(w, "  failed URLs         %d (given up after their retries; final status in crawl.log)\n", s.Failed)
	}
	fmt.Fprintf(w, "  pages cut at cap    %d (size cap %s; crawl.log: size-truncated)\n", s.Truncated, crawl.FormatBytes(s.MaxSize))
	printTraps(w, s)
	if len(s.Retired) > 0 {
		fmt.Fprintf(w, "  hosts retired       %d (%d URLs left in their queues, not crawled)\n", len(s.Retired), s.RetiredURLs)
	}
	fmt.Fprintf(w, "  WARC files          %s (%d files)\n", s.WARCDir, len(s.WARCFiles))
	fmt.Fprintf(w, "  crawl log           %s\n", s.CrawlLog)
	if s.RDFDir != "" {
		fmt.Fprintf(w, "  structured data     %s (%d quads from %d pages)\n", s.RDFDir, s.RDFQuads, s.RDFPages)
	}
}

// printTraps says what the trap limits did: URLs cut this run (one
// crawl.log line each), link checks refused (the same URL once per page
// linking to it, all runs), and the sites stopped with their reports.
func printTraps(w io.Writer, s *crawl.Summary) {
	var cuts int64
	var parts []string
	for _, k := range traps.Kinds {
		if n := s.TrapCuts[k]; n > 0 {
			cuts += n
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(w, "  trap cuts           %s this run (crawl.log lines", plural(int(cuts), "URL"))
	if len(parts) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(parts, ", "))
	}
	fmt.Fprint(w, ")")
	var refused int64
	for _, n := range s.Traps.Hits {
		refused += n
	}
	if refused > 0 {
		var hits []string
		for _, k := range traps.Kinds {
			if n := s.Traps.Hits[k]; n > 0 {
				hits = append(hits, fmt.Sprintf("%s %d", k, n))
			}
		}
		fmt.Fprintf(w, "; limits hit %d times in all runs (%s)", refused, strings.Join(hits, ", "))
	}
	fmt.Fprintln(w)
	if len(s.Stopped) == 0 {
		return
	}
	const show = 10
	var names []string
	for i, st := range s.Stopped {
		if i == show {
			names = append(names, fmt.Sprintf("... %d more", len(s.Stopped)-show))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", st.Site, st.Kind))
	}
	fmt.Fprintf(w, "  sites stopped       %d by trap limits: %s\n", len(s.Stopped), strings.Join(names, ", "))
	if len(s.TrapReports) > 0 {
		fmt.Fprintf(w, "  trap reports        %s (%s, with example pairs)\n", filepath.Dir(s.TrapReports[0]), plural(len(s.TrapReports), "file"))
	}
}

// plural writes "1 host", "2 hosts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
