package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/proxy"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/service"
	"github.com/courtesy-crawler/courtesy/internal/urlfrontier"
)

// runServe runs the shared frontier: the URLFrontier gRPC service over the
// embedded Pebble frontier, or over a Redis Cluster frontier shared by any
// number of serve nodes, and optionally the HTTP politeness services.
func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "", `Serve Courtesy's frontier over the URLFrontier 2.6 gRPC API (plaintext
HTTP/2), so that StormCrawler crawlers, the URLFrontier client and
Courtesy's own tools share one frontier. Acknowledged puts survive a crash; leases
live in memory. With --redis-cluster, the frontier lives in Redis and any
number of serve nodes share it. See docs/frontier-service.md.`)
	var (
		cf                               commonFlags
		listen, data, metrics, apiListen string
		defaultDelay                     time.Duration
	)
	fs.StringVar(&listen, "listen", "127.0.0.1:7071", "serve gRPC on this `ADDR`")
	fs.StringVar(&data, "data", "courtesy-frontier", "keep the frontier (without --redis-cluster) and the robots cache and delays in this `DIR`")
	var redisAddrs, advertise string
	fs.StringVar(&redisAddrs, "redis-cluster", "", "keep the frontier in this Redis Cluster (seed `ADDRS`, comma-separated; or one plain Redis server), shared with every serve node on it")
	fs.StringVar(&advertise, "advertise", "", "the gRPC `ADDR` ListNodes gives for this node (default: the address listened on, with the real port for :0 and the host name for a wildcard IP)")
	fs.StringVar(&metrics, "metrics-addr", "", "serve Prometheus /metrics on this `ADDR`")
	fs.StringVar(&apiListen, "api-listen", "", "serve the HTTP politeness services (as the proxy's) on this `ADDR`")
	fs.Var(&cf.resolve, "resolve", "send the politeness services' robots.txt fetches for hosts matching `PATTERN=ADDR:PORT` to ADDR:PORT (repeatable; PATTERN is host, *.suffix or *)")
	politenessRedis := fs.String("redis", "", "keep the politeness services' state (each host's slot and next time, backoff, robots.txt and its delays) in this Redis (`ADDR`, or Redis Cluster seeds), shared with the proxies and crawls using it (default: the --redis-cluster Redis, else this process)")
	allowPrivate := fs.Bool("allow-private", false, "let the politeness services' robots.txt fetches reach loopback, private and link-local addresses (SSRF guard off)")
	var consoleToken, consoleCrawl string
	fs.StringVar(&consoleToken, "console-token", "", "the web console's access `TOKEN` for actions, 16 characters or more (default random, printed at start; the console is served on --api-listen)")
	fs.StringVar(&consoleCrawl, "console-crawl", frontier.DefaultCrawl, "the crawl `ID` the console shows and steers")
	fs.DurationVar(&defaultDelay, "default-delay", time.Second, "minimum time between two servings of a queue without its own delay (SetDelay)")
	memLimit := fs.Int("memory-limit-mib", urlfrontier.DefaultMemoryLimitMiB, "Go memory limit in `MiB` (a soft bound the collector works to keep the process under; 0: none; default GOMEMLIMIT when that is set)")
	procs := fs.Int("procs", 0, "Go processors (GOMAXPROCS) to run with (0: the cores plus 6, so that the kernel, not Go's 10 ms time slice, shares the cores between store compactions and waiting calls; default GOMAXPROCS when that is set)")
	fs.StringVar(&cf.logFormat, "log-format", "text", "log line `format`: text (logfmt) or json")
	fs.StringVar(&cf.logLevel, "log-level", "info", "minimum log `level`: trace, debug, info, warn, error (SetLogLevel changes it per package)")
	if err := parseFlagsConfig(env, fs, args, "serve"); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if data == "" {
		return usagef("--data is required")
	}
	if defaultDelay < 0 {
		return usagef("--default-delay must not be negative")
	}
	if err := applyMemoryLimit(fs, *memLimit); err != nil {
		return err
	}
	if err := applyProcs(fs, *procs); err != nil {
		return err
	}
	levels, err := serveLogLevels(env, cf)
	if err != nil {
		return err
	}
	log := levels.Logger("serve")
	consCfg := console.Config{Token: consoleToken, Logger: levels.Logger("console")}
	if err := consCfg.Validate(); err != nil {
		return usagef("--console-token: %v", err)
	}

	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	db, err := kv.Open(filepath.Join(data, "store"), urlfrontier.StoreOptions())
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("serve: listen: %w", err)
	}
	if advertise == "" {
		advertise = advertiseAddr(ln.Addr())
	}
	var (
		f         frontier.API
		ef        *frontier.Frontier // the embedded frontier, without --redis-cluster
		listNodes func(context.Context) ([]string, error)
		consNodes console.Nodes         = &console.LocalNode{}
		consHosts console.Frontier      // the console's hosts views
		sharedRC  redis.UniversalClient // the cluster's Redis, with --redis-cluster
	)
	if redisAddrs != "" {
		sc, err := serveCluster(ctx, redisAddrs, advertise, defaultDelay)
		if err != nil {
			ln.Close()
			return err
		}
		defer sc.stop()
		f, listNodes, consNodes, sharedRC = sc.f, sc.listNodes, sc.nodes, sc.rc
		consHosts = &clusterHosts{f: sc.f, crawl: consoleCrawl}
	} else {
		ef, err = frontier.Open(db, frontier.Options{DefaultDelay: defaultDelay, ReadAheadBytes: urlfrontier.ReadAheadBytes})
		if err != nil {
			ln.Close()
			return err
		}
		defer ef.Close() // before db.Close
		f = ef
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := urlfrontier.NewMetrics(reg, f)
	if err != nil {
		ln.Close()
		return err
	}
	srv, err := urlfrontier.NewServer(urlfrontier.Options{
		Frontier: f, Nodes: []string{advertise}, ListNodes: listNodes, Levels: levels, Metrics: m,
		Logger: levels.Logger("urlfrontier"),
	})
	if err != nil {
		ln.Close()
		return err
	}
	g, health := urlfrontier.NewGRPCServer(srv)

	var consRun func(context.Context) error // the console's loop, with --api-listen
	var https []*http.Server
	var httpLns []net.Listener
	if metrics != "" {
		mln, err := net.Listen("tcp", metrics)
		if err != nil {
			ln.Close()
			return fmt.Errorf("serve: metrics listen: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		https = append(https, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second})
		httpLns = append(httpLns, mln)
		fmt.Fprintf(env.Stdout, "courtesy serve: metrics on http://%s/metrics\n", mln.Addr())
	}
	if apiListen != "" {
		res, err := cf.resolver()
		if err != nil {
			ln.Close()
			return err
		}
		token, tokenFile, err := adminToken(os.Getenv("COURTESY_ADMIN_TOKEN"), data)
		if err != nil {
			ln.Close()
			return fmt.Errorf("serve: %w", err)
		}
		so := servicesOptions{resolve: res, allowPrivate: *allowPrivate, adminToken: token}
		switch {
		case *politenessRedis != "":
			rc, err := cluster.Dial(ctx, []string{*politenessRedis})
			if err != nil {
				ln.Close()
				return fmt.Errorf("serve: --redis: %w", err)
			}
			defer rc.Close()
			so.redis = rc
		case sharedRC != nil:
			so.redis = sharedRC
		}
		h, gate, robots, err := politenessServices(db, reg, levels.Logger("service"), so)
		if err != nil {
			ln.Close()
			return err
		}
		if tokenFile != "" {
			fmt.Fprintf(env.Stdout, "courtesy serve: admin token in %s\n", tokenFile)
		}
		if ef != nil {
			consHosts = console.FrontierSource(ef, consoleCrawl)
		}
		src := console.Sources{Frontier: consHosts, Politeness: console.PolitenessSource(gate, robots), Nodes: consNodes}
		cons, err := console.New(consCfg, src)
		if err != nil {
			ln.Close()
			return err
		}
		h = withConsole(h, cons.Handler())
		consRun = cons.Run
		aln, err := net.Listen("tcp", apiListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("serve: api listen: %w", err)
		}
		https = append(https, &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second})
		httpLns = append(httpLns, aln)
		fmt.Fprintf(env.Stdout, "courtesy serve: politeness services on http://%s\n", aln.Addr())
		printConsole(env.Stdout, "serve", aln.Addr().String(), cons.Token())
	}
	fmt.Fprintf(env.Stdout, "courtesy serve: URLFrontier gRPC on %s\n", ln.Addr())
	log.Info("frontier service started", "listen", ln.Addr().String(), "advertise", advertise, "data", data,
		"redis_cluster", redisAddrs, "default_delay", defaultDelay)

	errc := make(chan error, 1+len(https))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := g.Serve(ln); err != nil {
			errc <- fmt.Errorf("serve: %w", err)
		}
	}()
	consCtx, stopConsole := context.WithCancel(ctx)
	defer stopConsole()
	if consRun != nil {
		wg.Go(func() { consRun(consCtx) })
	}
	for i, hs := range https {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Serve(httpLns[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serve: %w", err)
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	log.Info("frontier service stopping")
	health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	health.SetServingStatus(urlfrontier.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	stopped := make(chan struct{})
	go func() { g.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		g.Stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, hs := range https {
		hs.Shutdown(sctx)
	}
	wg.Wait()
	return runErr
}

// advertiseAddr is the address other nodes reach a listener on: the bound
// address (with the real port when listening on port 0), with the host
// name in place of a wildcard IP.
func advertiseAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return a.String()
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

// servedCluster is a serve node of a Redis Cluster deployment.
type servedCluster struct {
	f *cluster.Frontier
	// rc is the cluster's Redis client (closed by stop).
	rc redis.UniversalClient
	// listNodes answers ListNodes: the live serve and crawl nodes
	// (listedNodes).
	listNodes func(context.Context) ([]string, error)
	// nodes is the console's nodes view: every node's heartbeat and the
	// crawls' totals.
	nodes *clusterNodes
	// stop ends the heartbeats, removes the node from the membership and
	// closes the Redis client.
	stop func()
}

// serveCluster opens the Redis Cluster frontier at addrs (comma-separated
// seeds, or one plain Redis server) and starts this node's heartbeats as a
// "serve" node reachable at advertise.
func serveCluster(ctx context.Context, addrs, advertise string, defaultDelay time.Duration) (*servedCluster, error) {
	rc, err := cluster.Dial(ctx, []string{addrs})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	f, err := cluster.New(ctx, rc, cluster.Options{DefaultDelay: defaultDelay, KeepCompletedURLs: true})
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	mem, err := cluster.NewMembership(rc, cluster.MembershipOptions{})
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	id, started := cluster.NewNodeID(), time.Now()
	info := func() cluster.NodeInfo {
		ni := cluster.NodeInfo{ID: id, Role: "serve", Host: advertise, Version: Version, Started: started, LastError: f.LastError()}
		cluster.FillProcess(&ni)
		return ni
	}
	// The first heartbeat before serving, so that ListNodes lists this
	// node as soon as its address is printed.
	if err := mem.Publish(ctx, info()); err != nil {
		rc.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		mem.Run(hctx, info) // leaves the membership when hctx ends
	}()
	return &servedCluster{
		f:  f,
		rc: rc,
		listNodes: func(ctx context.Context) ([]string, error) {
			ns, err := mem.Nodes(ctx)
			if err != nil {
				return nil, err
			}
			return listedNodes(ns), nil
		},
		nodes: &clusterNodes{mem: mem, fr: f},
		stop: func() {
			cancel()
			<-done
			rc.Close()
		},
	}, nil
}

// serveLogLevels builds the per-package log levels over the handler the
// flags ask for (which lets every level through: the levels filter).
func serveLogLevels(env *Env, cf commonFlags) (*urlfrontier.LogLevels, error) {
	var level slog.Level
	if strings.EqualFold(cf.logLevel, "trace") {
		level = urlfrontier.LevelTrace
	} else if err := level.UnmarshalText([]byte(cf.logLevel)); err != nil {
		return nil, usagef("--log-level %q: want trace, debug, info, warn or error", cf.logLevel)
	}
	opts := &slog.HandlerOptions{Level: urlfrontier.LevelTrace}
	var h slog.Handler
	switch strings.ToLower(cf.logFormat) {
	case "text", "logfmt":
		h = slog.NewTextHandler(env.Stderr, opts)
	case "json":
		h = slog.NewJSONHandler(env.Stderr, opts)
	default:
		return nil, usagef("--log-format %q: want text or json", cf.logFormat)
	}
	return urlfrontier.NewLogLevels(h, level), nil
}

// servicesOptions are the flags of serve's politeness services: --resolve
// and --allow-private for their robots.txt fetches, as the proxy's, and the
// admin token.
type servicesOptions struct {
	resolve      *resolve.Resolver
	allowPrivate bool
	adminToken   string
	// redis, when set, holds the gate's state, robots.txt cache and
	// delays, shared with the other users of that Redis.
	redis redis.UniversalClient
}

// politenessServices is the proxy's HTTP politeness API (politeness
// checks, reservations, admin delays, /health, /metrics) over a gate whose
// robots cache and delays live in the frontier's store, or all of whose
// state lives in o.redis.
func politenessServices(db *kv.DB, reg *prometheus.Registry, log *slog.Logger, o servicesOptions) (http.Handler, *politeness.Gate, politeness.RobotsStore, error) {
	allowPrivate := o.allowPrivate
	backend := politeness.Backend{
		Robots: politeness.NewKVRobotsStore(db),
		Delays: politeness.NewKVDelayStore(db),
	}
	if o.redis != nil {
		backend = redisbackend.Backend(o.redis, redisbackend.Options{})
	}
	backend.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: proxy.Dialer(o.resolve, func() bool { return allowPrivate }), MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}}
	gate, err := politeness.New(politeness.Config{}, backend)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("serve: politeness: %w", err)
	}
	svc, err := service.New(service.Options{Gate: gate, Gatherer: reg, Logger: log, AdminToken: o.adminToken})
	if err != nil {
		return nil, nil, nil, err
	}
	return svc, gate, backend.Robots, nil
}
