// Over 600 lines: the proxy command wires the gate, cache, proxy,
// services and config watcher, and owns the YAML file's shape; the
// wiring reads best in one place.

package cli

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/proxy"
	"github.com/courtesy-crawler/courtesy/internal/service"
)

// millis is a delay written in milliseconds, as the polite-proxy thesis' Listing 9 does.
type millis int64

func (m millis) duration() time.Duration { return time.Duration(m) * time.Millisecond }

// listing9Domain is one entry of Listing 9's politeness.domains.
type listing9Domain struct {
	Domain   string `yaml:"domain"`
	Delay    millis `yaml:"delay"`    // milliseconds
	Override bool   `yaml:"override"` // win over a larger robots Crawl-delay
}

// proxyFile is the YAML configuration of `courtesy proxy` (docs/configuration.md).
type proxyFile struct {
	Listen    string `yaml:"listen"`
	APIListen string `yaml:"api-listen"`
	Data      string `yaml:"data"`
	Redis     string `yaml:"redis"`
	// MITM intercepts CONNECT tunnels (--mitm).
	MITM bool `yaml:"mitm"`
	// UpstreamCAFile adds PEM certificates to the system roots trusted for
	// origins (intercepted HTTPS and robots.txt over HTTPS).
	UpstreamCAFile string `yaml:"upstream-ca-file"`
	// UpstreamInsecureHosts are origin hosts whose TLS certificates are
	// not verified (self-signed test servers an operator knows); applies
	// live.
	UpstreamInsecureHosts []string `yaml:"upstream-insecure-hosts"`
	Politeness            struct {
		politeness.Config `yaml:",squash"`
		// Domains and DefaultDomain are the polite-proxy thesis' Listing 9 (delays in ms).
		Domains       []listing9Domain `yaml:"domains"`
		DefaultDomain *listing9Domain  `yaml:"default-domain"`
	} `yaml:"politeness"`
	Proxy proxy.Config `yaml:"proxy"`
	// Console is the web console's section (its token); the console is
	// served with the services.
	Console consoleFile `yaml:"console"`
	Cache   struct {
		Enabled          bool          `yaml:"enabled"`
		MaxBytes         int64         `yaml:"max-bytes"`
		MemoryBytes      int64         `yaml:"memory-bytes"`
		MaxEntryBytes    int64         `yaml:"max-entry-bytes"`
		MaxVariants      int           `yaml:"max-variants"`
		Override         bool          `yaml:"override"`
		OverrideLifetime time.Duration `yaml:"override-lifetime"`
		HeuristicDefault time.Duration `yaml:"heuristic-default"`
		StoreSetCookie   bool          `yaml:"store-set-cookie"`
	} `yaml:"cache"`
	Admin struct {
		Token string `yaml:"token"`
	} `yaml:"admin"`
	Service struct {
		ReserveWindow time.Duration `yaml:"reserve-window"`
		// ReportClients may report fetch statuses to /politeness/done
		// (service.Options.ReportClients).
		ReportClients []string `yaml:"report-clients"`
		// PublicMonitoring opens /trace and /delays without the token.
		PublicMonitoring bool `yaml:"public-monitoring"`
	} `yaml:"service"`
	// The other commands' sections of a shared file: not the proxy's,
	// but not unknown keys either.
	OtherSections otherSections `yaml:",squash"`
}

// otherSections are the sections of the one configuration file that
// belong to other commands (crawl, serve, index, search, testweb); a
// command that checks its own keys strictly passes over them.
type otherSections struct {
	Crawl   map[string]any `yaml:"crawl"`
	Serve   map[string]any `yaml:"serve"`
	Index   map[string]any `yaml:"index"`
	Search  map[string]any `yaml:"search"`
	Testweb map[string]any `yaml:"testweb"`
}

func defaultProxyFile() proxyFile {
	var f proxyFile
	f.Listen = "127.0.0.1:8080"
	f.Data = "./courtesy-data"
	f.Cache.Enabled = true
	f.Cache.Override = true
	f.Proxy.Mode = proxy.ModeWait
	return f
}

// proxyFlags are the command-line flags; set ones override the file.
type proxyFlags struct {
	commonFlags
	listen, apiListen, data, mode, redis string
	defaultDelay, maxWait                time.Duration
	allowPrivate, noCache, mitm          bool
	consoleToken                         string
}

// runProxy runs the polite forward proxy with the politeness services and
// monitoring (docs/proxy.md).
func runProxy(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "proxy", "", `
Run the polite forward proxy (the polite-proxy thesis): point http_proxy / https_proxy at
it and every request obeys robots.txt and per-host delays. Origin-form
requests to the same address reach the politeness services
(POST /politeness, /politeness/verbose), the admin API (/admin/delays,
token in DATA/admin-token unless admin.token is configured) and monitoring
(/health, /metrics, /delays, /trace), unless --api-listen moves them.
See docs/proxy.md and docs/configuration.md.`)
	var fl proxyFlags
	fl.register(fs)
	fs.StringVar(&fl.listen, "listen", "127.0.0.1:8080", "proxy listen `ADDR` (port 0 picks one; the address is printed)")
	fs.StringVar(&fl.apiListen, "api-listen", "", "serve the services and monitoring on this `ADDR` instead of the proxy's")
	fs.StringVar(&fl.data, "data", "./courtesy-data", "state `DIR` (cache, robots cache, delays, admin token)")
	fs.StringVar(&fl.mode, "mode", "wait", "`MODE` for requests that would break a delay: reject (429), wait or sequential")
	fs.DurationVar(&fl.defaultDelay, "default-delay", time.Second, "delay between requests to one host without a configured delay")
	fs.DurationVar(&fl.maxWait, "max-wait", 30*time.Second, "longest a request is held in wait mode before 429")
	fs.BoolVar(&fl.allowPrivate, "allow-private", false, "let requests reach loopback, private and link-local addresses (SSRF guard off)")
	fs.StringVar(&fl.redis, "redis", "", "share the politeness state through Redis at `ADDR` (cluster mode)")
	fs.BoolVar(&fl.noCache, "no-cache", false, "disable the HTTP cache")
	fs.StringVar(&fl.consoleToken, "console-token", "", "the web console's access `TOKEN` for actions, 16 characters or more (default: console.token, else random, printed at start)")
	fs.BoolVar(&fl.mitm, "mitm", false, "intercept HTTPS (CONNECT) with a local CA kept in DATA/mitm-ca.pem, so robots.txt paths, delays and the cache apply to HTTPS too")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	set := flagsSet(fs)
	fc, err := loadProxyFile(fl.config, &fl, set)
	if err != nil {
		return usagef("%v", err)
	}
	log, err := fl.logger(env.Stderr)
	if err != nil {
		return err
	}
	res, err := fl.resolver()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(fc.Data, 0o755); err != nil {
		return fmt.Errorf("proxy: data dir: %w", err)
	}
	// 64 MiB memtables: the cache's metadata records are keyed by hash, so
	// with Pebble's 4 MiB memtables every L0 compaction rewrote them all
	// (12 % of proxy CPU on a miss-heavy load; 1.5 % with these).
	db, err := kv.Open(filepath.Join(fc.Data, "store"), kv.Options{MemTableBytes: 64 << 20})
	if err != nil {
		return err
	}
	defer db.Close()

	// The politeness gate: memory state (or Redis), persistent robots
	// cache and delays; robots.txt fetched through the same guarded dialer
	// as the proxy's own requests.
	var allowPrivate struct {
		sync.Mutex
		v bool
	}
	allowPrivate.v = fc.Proxy.AllowPrivate
	isPrivateAllowed := func() bool { allowPrivate.Lock(); defer allowPrivate.Unlock(); return allowPrivate.v }
	counters := &politeness.Counters{}
	backend := politeness.Backend{
		Robots: politeness.NewKVRobotsStore(db),
		Delays: politeness.NewKVDelayStore(db),
	}
	var check func(context.Context) error // for /health
	if fc.Redis != "" {
		rc := redis.NewClient(&redis.Options{Addr: fc.Redis})
		defer rc.Close()
		check = func(ctx context.Context) error { return rc.Ping(ctx).Err() }
		if err := rc.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("proxy: redis %s: %w", fc.Redis, err)
		}
		backend = redisbackend.Backend(rc, redisbackend.Options{})
	}
	backend.Observer = counters
	upstreamTLS, err := upstreamTLSConfig(fc.UpstreamCAFile)
	if err != nil {
		return usagef("%v", err)
	}
	var insecureHosts atomic.Pointer[map[string]bool]
	setInsecure := func(hosts []string) {
		m := make(map[string]bool, len(hosts))
		for _, h := range hosts {
			m[strings.ToLower(strings.TrimSpace(h))] = true
		}
		insecureHosts.Store(&m)
	}
	setInsecure(fc.UpstreamInsecureHosts)
	insecure := func(host string) bool { return (*insecureHosts.Load())[host] }
	backend.Robots = forgivingRobots{RobotsStore: backend.Robots, insecure: insecure}
	guarded := proxy.Dialer(res, isPrivateAllowed)
	backend.HTTPClient = &http.Client{Transport: &http.Transport{
		DialContext:         guarded,
		DialTLSContext:      proxy.TLSDialer(guarded, upstreamTLS, insecure),
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}}
	polCfg := gateConfig(fc)
	gate, err := politeness.New(polCfg, backend)
	if err != nil {
		return usagef("%v", err)
	}

	var cache *httpcache.Cache
	if fc.Cache.Enabled {
		cache, err = httpcache.Open(db, cacheOptions(fc))
		if err != nil {
			return usagef("%v", err)
		}
		defer cache.Close() // before db.Close (deferred earlier)
	}

	var ca *mitm.CA
	if fc.MITM {
		var created bool
		if ca, created, err = mitm.LoadOrCreateCA(fc.Data); err != nil {
			return err
		}
		if created {
			fmt.Fprintf(env.Stdout, "courtesy proxy: created the interception CA %s; trust it with\n"+
				"  curl --cacert %[1]s ...\n  python3: ssl.create_default_context(cafile=%[1]q), or SSL_CERT_FILE / REQUESTS_CA_BUNDLE=%[1]s\n", ca.CertPath())
		}
		log.Info("intercepting HTTPS", "ca", ca.CertPath())
	}

	if set["console-token"] {
		fc.Console.Token = fl.consoleToken
	}
	consCfg := console.Config{Token: fc.Console.Token, LogLevel: fl.level, Logger: log}
	if err := consCfg.Validate(); err != nil {
		return usagef("--console-token: %v", err)
	}
	tally := &console.ProxyTally{}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	px, err := proxy.New(fc.Proxy, proxy.Options{
		Gate: gate, Cache: cache, Resolver: res, Logger: log, Registry: reg, Counters: counters, MITM: ca,
		UpstreamTLS: upstreamTLS, InsecureHosts: insecure,
		// The low-load mode sets GOMAXPROCS; an operator who set it
		// explicitly keeps it.
		GovernProcs: os.Getenv("GOMAXPROCS") == "",
		Observe:     tally.Observe,
	})
	if err != nil {
		return usagef("%v", err)
	}
	defer px.Close()

	configured := fc.Admin.Token
	if configured == "" {
		configured = os.Getenv("COURTESY_ADMIN_TOKEN") // as serve reads it
	}
	token, tokenFile, err := adminToken(configured, fc.Data)
	if err != nil {
		return err
	}
	var cfgMu sync.Mutex
	current := fc
	svc, err := service.New(service.Options{
		Gate: gate, Proxy: px, Cache: cache, Gatherer: reg, AdminToken: token, Logger: log,
		ReserveWindow: fc.Service.ReserveWindow,
		ReportClients: fc.Service.ReportClients, PublicMonitoring: fc.Service.PublicMonitoring, Check: check,
		Config: func() any {
			cfgMu.Lock()
			fc := current
			cfgMu.Unlock()
			// The file's view, with the politeness and proxy sections as in
			// force (defaults filled in, live changes applied).
			view := redactedConfig(fc).(map[string]any)
			pol := configView(reflect.ValueOf(gate.Config())).(map[string]any)
			if d, err := gate.DefaultDelay(ctx); err == nil {
				pol["default-delay"] = d.String()
			}
			view["politeness"] = pol
			live := px.Config()
			live.Users = fc.Proxy.Users
			view["proxy"] = redactedConfig(proxyFile{Proxy: live}).(map[string]any)["proxy"]
			return view
		},
	})
	if err != nil {
		return err
	}

	tally.Tunnels, tally.Trace = px.Tunnels, px.Trace
	cons, err := console.New(consCfg, console.Sources{Proxy: tally, Politeness: console.PolitenessSource(gate, backend.Robots),
		Nodes: &console.LocalNode{}})
	if err != nil {
		return err
	}
	api := withConsole(svc, cons.Handler())

	ln, err := net.Listen("tcp", fc.Listen)
	if err != nil {
		return fmt.Errorf("proxy: listen: %w", err)
	}
	px.AddSelf(ln.Addr().String())
	var servers []*http.Server
	var apiLn net.Listener
	if fc.APIListen != "" {
		if apiLn, err = net.Listen("tcp", fc.APIListen); err != nil {
			ln.Close()
			return fmt.Errorf("proxy: api listen: %w", err)
		}
		px.AddSelf(apiLn.Addr().String())
		servers = append(servers, proxy.NewServer(px.Handler(nil), fc.Proxy, log), proxy.NewServer(px.Handler(api), fc.Proxy, log))
	} else {
		servers = append(servers, proxy.NewServer(px.Handler(api), fc.Proxy, log))
	}

	fmt.Fprintf(env.Stdout, "courtesy proxy: listening on http://%s\n", ln.Addr())
	apiAddr := ln.Addr()
	if apiLn != nil {
		apiAddr = apiLn.Addr()
		fmt.Fprintf(env.Stdout, "courtesy proxy: services on http://%s\n", apiLn.Addr())
	}
	printConsole(env.Stdout, "proxy", apiAddr.String(), cons.Token())
	if tokenFile != "" {
		fmt.Fprintf(env.Stdout, "courtesy proxy: admin token in %s\n", tokenFile)
	}
	log.Info("proxy started", "listen", ln.Addr().String(), "mode", fc.Proxy.Mode, "data", fc.Data, "redis", fc.Redis, "cache", fc.Cache.Enabled)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 3)
	var wg sync.WaitGroup
	serve := func(srv *http.Server, l net.Listener) {
		defer wg.Done()
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}
	// The config file is watched before the proxy serves, so that a
	// change made once it answers is seen.
	var watcher *config.Watcher
	if fl.config != "" {
		if watcher, err = config.NewWatcher(fl.config); err != nil {
			return err
		}
	}
	wg.Go(func() { cons.Run(ctx) })
	wg.Add(1)
	go serve(servers[0], px.Listener(ln))
	if apiLn != nil {
		wg.Add(1)
		go serve(servers[1], apiLn)
	}
	if watcher != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := watcher.Run(ctx, func() {
				nf, err := loadProxyFile(fl.config, &fl, set)
				if err != nil {
					log.Error("config reload failed; keeping the previous configuration", "file", fl.config, "err", err)
					return
				}
				cfgMu.Lock()
				old := current
				// Keys read only at start keep their values in force, so
				// that /admin/config shows what runs.
				nf, pending := keepStartOnly(old, nf)
				current = nf
				cfgMu.Unlock()
				if len(pending) > 0 {
					log.Warn("config keys changed that apply only at start: restart to apply them", "file", fl.config, "keys", strings.Join(pending, ","))
				}
				if err := applyProxyFile(ctx, old, nf, gate, px, svc); err != nil {
					log.Error("config reload partly applied", "file", fl.config, "err", err)
					return
				}
				allowPrivate.Lock()
				allowPrivate.v = nf.Proxy.AllowPrivate
				allowPrivate.Unlock()
				setInsecure(nf.UpstreamInsecureHosts)
				log.Info("config reloaded", "file", fl.config, "restart-needed", strings.Join(pending, ","))
			})
			if err != nil {
				errc <- err
			}
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	for _, srv := range servers {
		_ = srv.Shutdown(sctx)
	}
	_ = px.Close()
	wg.Wait()
	log.Info("proxy stopped")
	return runErr
}

// forgivingRobots is the proxy command's robots store: a stored
// robots.txt failure caused by a certificate that did not verify is
// forgotten for the hosts the operator has since allowed
// (upstream-insecure-hosts), so that allowing a host is not undone by the
// failure kept from before (across restarts too).
type forgivingRobots struct {
	politeness.RobotsStore
	insecure func(host string) bool
}

func (f forgivingRobots) GetRobots(ctx context.Context, origin string) (politeness.RobotsEntry, error) {
	e, err := f.RobotsStore.GetRobots(ctx, origin)
	if err == nil && e.Result == politeness.RobotsUnavailable && proxy.TLSVerifyFailed(e.Err) {
		if u, perr := url.Parse(origin); perr == nil && f.insecure(strings.ToLower(u.Hostname())) {
			return politeness.RobotsEntry{}, politeness.ErrNotFound
		}
	}
	return e, err
}

// keepStartOnly returns nf with the keys read only at start set back to
// their values in old (the values in force), and the names of those that
// changed: a reload says plainly what needs a restart.
func keepStartOnly(old, nf proxyFile) (proxyFile, []string) {
	var pending []string
	keep := func(name string, changed bool, restore func()) {
		if changed {
			pending = append(pending, name)
			restore()
		}
	}
	keep("listen", old.Listen != nf.Listen, func() { nf.Listen = old.Listen })
	keep("api-listen", old.APIListen != nf.APIListen, func() { nf.APIListen = old.APIListen })
	keep("data", old.Data != nf.Data, func() { nf.Data = old.Data })
	keep("redis", old.Redis != nf.Redis, func() { nf.Redis = old.Redis })
	keep("mitm", old.MITM != nf.MITM, func() { nf.MITM = old.MITM })
	keep("upstream-ca-file", old.UpstreamCAFile != nf.UpstreamCAFile, func() { nf.UpstreamCAFile = old.UpstreamCAFile })
	keep("cache", !reflect.DeepEqual(old.Cache, nf.Cache), func() { nf.Cache = old.Cache })
	keep("service.reserve-window", old.Service.ReserveWindow != nf.Service.ReserveWindow, func() { nf.Service.ReserveWindow = old.Service.ReserveWindow })
	op, np := &old.Proxy, &nf.Proxy
	keep("proxy.upstream-header-timeout", op.UpstreamHeaderTimeout != np.UpstreamHeaderTimeout, func() { np.UpstreamHeaderTimeout = op.UpstreamHeaderTimeout })
	keep("proxy.max-idle-conns-per-host", op.MaxIdleConnsPerHost != np.MaxIdleConnsPerHost, func() { np.MaxIdleConnsPerHost = op.MaxIdleConnsPerHost })
	keep("proxy.max-idle-conns", op.MaxIdleConns != np.MaxIdleConns, func() { np.MaxIdleConns = op.MaxIdleConns })
	keep("proxy.idle-conn-timeout", op.IdleConnTimeout != np.IdleConnTimeout, func() { np.IdleConnTimeout = op.IdleConnTimeout })
	keep("proxy.read-header-timeout", op.ReadHeaderTimeout != np.ReadHeaderTimeout, func() { np.ReadHeaderTimeout = op.ReadHeaderTimeout })
	keep("proxy.max-header-bytes", op.MaxHeaderBytes != np.MaxHeaderBytes, func() { np.MaxHeaderBytes = op.MaxHeaderBytes })
	return nf, pending
}

// upstreamTLSConfig trusts the system roots plus the PEM file, if any.
func upstreamTLSConfig(file string) (*tls.Config, error) {
	if file == "" {
		return nil, nil
	}
	pool, err := fetch.Roots(file)
	if err != nil {
		return nil, fmt.Errorf("proxy: upstream-ca-file: %w", err)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// loadProxyFile builds the configuration: defaults, then the file and the
// environment, then the flags given on the command line.
func loadProxyFile(path string, fl *proxyFlags, set map[string]bool) (proxyFile, error) {
	fc := defaultProxyFile()
	if err := config.Load(path, &fc); err != nil {
		return fc, err
	}
	if set["listen"] || fc.Listen == "" {
		fc.Listen = fl.listen
	}
	if set["api-listen"] {
		fc.APIListen = fl.apiListen
	}
	if set["data"] || fc.Data == "" {
		fc.Data = fl.data
	}
	if set["redis"] {
		fc.Redis = fl.redis
	}
	if set["mode"] {
		fc.Proxy.Mode = proxy.Mode(fl.mode)
	}
	if set["max-wait"] {
		fc.Proxy.MaxWait = fl.maxWait
	}
	if set["allow-private"] {
		fc.Proxy.AllowPrivate = fl.allowPrivate
	}
	if set["mitm"] {
		fc.MITM = fl.mitm
	}
	if set["no-cache"] && fl.noCache {
		fc.Cache.Enabled = false
	}
	if set["default-delay"] {
		fc.Politeness.DefaultDomain = nil
		fc.Politeness.DefaultDelay = fl.defaultDelay
		if fl.defaultDelay == 0 {
			fc.Politeness.DefaultDelay = -1 // 0 means "no delay" on the command line
		}
	}
	if _, err := proxy.ParseMode(string(fc.Proxy.Mode)); err != nil {
		return fc, err
	}
	if err := fc.Proxy.Validate(); err != nil {
		return fc, err
	}
	if err := gateConfig(fc).Validate(); err != nil {
		return fc, err
	}
	return fc, cacheOptions(fc).Validate()
}

// gateConfig merges Listing 9's domains into the politeness config.
func gateConfig(fc proxyFile) politeness.Config {
	return politenessFile(fc.Politeness.Config, fc.Politeness.Domains, fc.Politeness.DefaultDomain).GateConfig()
}

func cacheOptions(fc proxyFile) httpcache.Options {
	c := fc.Cache
	return httpcache.Options{
		MaxBytes: c.MaxBytes, MemoryBytes: c.MemoryBytes, MaxEntryBytes: c.MaxEntryBytes, MaxVariants: c.MaxVariants,
		Policy: httpcache.Policy{
			DisableOverride: !c.Override, OverrideLifetime: c.OverrideLifetime,
			HeuristicDefault: c.HeuristicDefault, StoreSetCookie: c.StoreSetCookie,
		},
	}
}

// applyProxyFile applies a changed file without a restart: manual delays,
// the default delay (when the file's value changed), the proxy's runtime
// settings and the admin token. Listen addresses, data dir, Redis and the
// cache sizes need a restart.
func applyProxyFile(ctx context.Context, old, nf proxyFile, gate *politeness.Gate, px *proxy.Proxy, svc *service.Service) error {
	nc := gateConfig(nf)
	gate.SetConfigDelays(nc.Delays)
	// A popularity list that fails to load keeps the one in force; the
	// rest of the file still applies.
	var errs []error
	errs = append(errs, gate.SetConfigPopularity(nc.Popularity), gate.SetConfigBandwidth(nc.Bandwidth))
	if oc := gateConfig(old); oc.DefaultDelay != nc.DefaultDelay {
		d := max(nc.DefaultDelay, 0)
		if nc.DefaultDelay == 0 {
			d = time.Second
		}
		errs = append(errs, gate.SetConfigDefaultDelay(d))
	}
	if nf.Admin.Token != "" && nf.Admin.Token != old.Admin.Token {
		svc.SetAdminToken(nf.Admin.Token)
	}
	errs = append(errs, px.SetConfig(nf.Proxy), svc.SetTrust(nf.Service.ReportClients, nf.Service.PublicMonitoring))
	return errors.Join(errs...)
}

// adminToken returns the configured token, or the one kept in
// DATA/admin-token (created, random, mode 0600, on first start) and that
// file's path.
func adminToken(configured, data string) (token, file string, err error) {
	if configured != "" {
		return configured, "", nil
	}
	file = filepath.Join(data, "admin-token")
	if b, err := os.ReadFile(file); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, file, nil
		}
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", fmt.Errorf("admin token: %w", err)
	}
	token = hex.EncodeToString(raw[:])
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("admin token: %w", err)
	}
	return token, file, nil
}

// redactedConfig is GET /admin/config: the configuration in force with
// passwords and the token removed.
func redactedConfig(fc proxyFile) any {
	fc.Admin.Token = ""
	fc.Console.Token = ""
	if len(fc.Proxy.Users) > 0 {
		users := make(map[string]string, len(fc.Proxy.Users))
		for u := range fc.Proxy.Users {
			users[u] = "(redacted)"
		}
		fc.Proxy.Users = users
	}
	return configView(reflect.ValueOf(fc))
}

// configView turns a config struct into maps keyed by its YAML names
// (squashed structs inlined, "-" fields and functions left out, durations
// as strings), for JSON.
func configView(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return configView(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		configFields(v, out)
		return out
	case reflect.Slice:
		if v.IsNil() {
			return []any{}
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = configView(v.Index(i))
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[fmt.Sprint(k.Interface())] = configView(v.MapIndex(k))
		}
		return out
	case reflect.Func, reflect.Chan:
		return nil
	}
	if d, ok := v.Interface().(time.Duration); ok {
		return d.String()
	}
	return v.Interface()
}

func configFields(v reflect.Value, out map[string]any) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-" || f.Type.Kind() == reflect.Func:
			continue
		case strings.Contains(opts, "squash") && f.Type.Kind() == reflect.Struct:
			configFields(v.Field(i), out)
			continue
		case name == "":
			name = strings.ToLower(f.Name)
		}
		out[name] = configView(v.Field(i))
	}
}
