package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
)

// runTestweb serves the synthetic web, or with a first argument "hosts",
// "sites" or "report" runs that subcommand.
func runTestweb(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "hosts":
			return runTestwebHosts(env, args[1:])
		case "sites":
			return runTestwebSites(env, args[1:])
		case "report":
			return runTestwebReport(env, args[1:])
		}
	}
	fs := newFlagSet(env, "testweb", "", `
Serve the synthetic web: thousands of virtual hosts under .test on one
loopback listener, with the hazards a crawler meets on the real web (spider
traps, session ids, growing URLs, duplicate hosts, malformed HTML) and a wide
variety of robots.txt files and sitemaps (see docs/testweb.md). Clients reach
the hosts with --resolve '*.test=ADDR' (courtesy), as an HTTP proxy
(curl -x http://ADDR), or through the /etc/hosts lines of 'testweb hosts'.

Subcommands (same generation flags):
  courtesy testweb hosts [flags]          print /etc/hosts lines
  courtesy testweb sites [flags] [--json] list the sites and their hazards
  courtesy testweb report [flags] LOG     judge a crawl's politeness from a --log file`)
	var gen genFlags
	gen.register(fs)
	listen := fs.String("listen", "127.0.0.1:8081", "listen `ADDR` (a loopback address and port; port 0 picks one)")
	logPath := fs.String("log", "", "write one JSON line per request to `FILE`")
	listenHosts := fs.Bool("listen-hosts", false, "also listen on every 127.x address of 'testweb hosts' (same port as --listen, which must not be 0)")
	latency := fs.String("latency", "", "make every response wait a time in `MIN-MAX` (e.g. 100ms-300ms) before its header, the same for each URL on every run (robots.txt included; default: no wait)")
	if err := parseFlagsConfig(env, fs, args, "testweb"); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *latency != "" {
		lo, hi, err := testweb.ParseLatency(*latency)
		if err != nil {
			return usagef("--latency: %v", err)
		}
		gen.cfg.LatencyMin, gen.cfg.LatencyMax = lo, hi
	}
	web, err := gen.web()
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(*listen)
	if err != nil {
		return usagef("--listen %q: %v", *listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		// The synthetic web is for this machine only.
		return usagef("--listen %q: want a loopback address (127.0.0.0/8, ::1 or localhost)", *listen)
	}
	if *listenHosts && port == "0" {
		return usagef("--listen-hosts needs a fixed --listen port")
	}

	var rec testweb.Recorder
	var wlog *testweb.Log
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return fmt.Errorf("testweb: %w", err)
		}
		defer f.Close()
		wlog = testweb.NewLog(f)
		rec = wlog
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("testweb: %w", err)
	}
	lns = append(lns, ln)
	if *listenHosts {
		for _, a := range web.Addrs() {
			addr := net.JoinHostPort(a.String(), port)
			if addr == ln.Addr().String() {
				continue
			}
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("testweb: --listen-hosts: %w", err)
			}
			lns = append(lns, l)
		}
	}
	addr := ln.Addr().String()
	fmt.Fprintf(env.Stdout, "testweb: serving %d sites (%d host names) on http://%s\n", len(web.Sites()), len(web.Hosts()), addr)
	if c := web.Config(); c.LatencyMax > 0 {
		fmt.Fprintf(env.Stdout, "  every response waits %v-%v before its header\n", c.LatencyMin, c.LatencyMax)
	}
	fmt.Fprintf(env.Stdout, "  courtesy:      --resolve '*.test=%s'\n", addr)
	fmt.Fprintf(env.Stdout, "  other clients: curl -x http://%s http://hub.test/   (or http_proxy=http://%s)\n", addr, addr)
	if *listenHosts {
		fmt.Fprintf(env.Stdout, "  also on %d addresses of 'courtesy testweb hosts', port %s\n", len(lns)-1, port)
	}
	if wlog != nil {
		fmt.Fprintf(env.Stdout, "  logging requests to %s\n", *logPath)
	}

	srv := &http.Server{
		Handler:           web.LoggedHandler(rec),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, len(lns))
	for _, l := range lns {
		go func(l net.Listener) { errc <- srv.Serve(l) }(l)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// Slow and endless responses are bounded by --slow-delay and
	// --endless-time; give them a little while, then cut them.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	lns = nil // Shutdown closed them
	if wlog != nil {
		if err := wlog.Close(); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "testweb: %d requests logged to %s\n", wlog.Entries(), *logPath)
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("testweb: %w", serveErr)
	}
	return nil
}

// genFlags are the flags that decide which web is generated; serve, hosts,
// sites and report must be given the same ones.
type genFlags struct {
	cfg     testweb.Config
	profile string
}

func (g *genFlags) register(fs *flag.FlagSet) {
	fs.Int64Var(&g.cfg.Seed, "seed", 0, "generation seed `N`")
	fs.IntVar(&g.cfg.Sites, "sites", testweb.DefaultSites, "number of generic sites `N`")
	fs.IntVar(&g.cfg.PagesPerSite, "pages-per-site", testweb.DefaultPagesPerSite, "pages of each generic site `N`, home page included")
	fs.IntVar(&g.cfg.PageBytes, "page-bytes", testweb.DefaultPageBytes, "approximate size of a generated page in `BYTES`")
	fs.IntVar(&g.cfg.LinksPerPage, "links", testweb.DefaultLinksPerPage, "links `N` from each page to pages of its own site")
	fs.IntVar(&g.cfg.ExternalLinks, "external-links", testweb.DefaultExternalLinks, "links `N` from each page to other generic sites (0: none)")
	fs.StringVar(&g.profile, "profile", string(testweb.ProfilePlain), "what generic sites look like: `NAME` plain (small pages, no errors) or realistic (heavy-tailed sizes, 20-60 links, shared boilerplate, 404/500/503, redirects, duplicates, slow pages; see docs/testweb.md)")
	fs.BoolVar(&g.cfg.Plain, "plain", false, "leave the hazard sites out (pure throughput benchmarks)")
	fs.BoolVar(&g.cfg.Structured, "structured", false, "add the structured-data sites (structured-*.test: schema.org in JSON-LD, microdata, RDFa)")
	fs.DurationVar(&g.cfg.SlowDelay, "slow-delay", testweb.DefaultSlowDelay, "how long slow.test's slow pages wait (`DURATION`)")
	fs.Int64Var(&g.cfg.EndlessBytes, "endless-bytes", testweb.DefaultEndlessBytes, "bound of endless.test's endless bodies in `BYTES`")
	fs.DurationVar(&g.cfg.EndlessTime, "endless-time", testweb.DefaultEndlessTime, "bound of the time one endless body streams (`DURATION`)")
}

func (g *genFlags) web() (*testweb.Web, error) {
	cfg := g.cfg
	cfg.Profile = testweb.Profile(g.profile)
	if cfg.ExternalLinks == 0 {
		cfg.NoExternal = true
	}
	if cfg.SlowDelay == 0 {
		cfg.SlowDelay = time.Nanosecond // 0 on the command line means "no wait"
	}
	web, err := testweb.New(cfg)
	if err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	return web, nil
}

func runTestwebHosts(env *Env, args []string) error {
	fs := newFlagSet(env, "testweb hosts", "", `
Print /etc/hosts lines mapping every host name of the synthetic web to a
127.x address, several names per address like virtual hosting. Serve with
'courtesy testweb --listen-hosts --listen 127.0.0.1:80' for clients that
cannot be told a port; *.wild.test names cannot be listed in /etc/hosts.`)
	var gen genFlags
	gen.register(fs)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	web, err := gen.web()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "# courtesy testweb: %d sites, seed %d\n", len(web.Sites()), web.Config().Seed)
	for _, l := range web.HostsLines() {
		fmt.Fprintln(env.Stdout, l)
	}
	if !web.Config().Plain {
		fmt.Fprintln(env.Stdout, "# every *.wild.test name also answers: use --resolve '*.test=ADDR' or the proxy form for those")
	}
	return nil
}

func runTestwebSites(env *Env, args []string) error {
	fs := newFlagSet(env, "testweb sites", "", "List the sites of the synthetic web with their kinds, trap, robots.txt status and delay, sitemaps and orphan pages.")
	var gen genFlags
	gen.register(fs)
	asJSON := fs.Bool("json", false, "print JSON lines, one site a line")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	web, err := gen.web()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.Stdout)
	for _, s := range web.Sites() {
		if *asJSON {
			if err := enc.Encode(siteJSON(s)); err != nil {
				return err
			}
			continue
		}
		kinds := make([]string, len(s.Kinds))
		for i, k := range s.Kinds {
			kinds[i] = string(k)
		}
		line := fmt.Sprintf("%-22s %-40s robots=%d delay=%v orphans=%d", s.Host, strings.Join(kinds, ","), s.RobotsStatus, s.Delay, len(s.Orphans))
		if s.Trap != "" {
			line += " trap=" + string(s.Trap)
		}
		if len(s.Aliases) > 0 {
			line += " aliases=" + strings.Join(s.Aliases, ",")
		}
		if len(s.NonCanonical) > 0 {
			line += " non-canonical=" + strings.Join(s.NonCanonical, ",")
		}
		if len(s.Mirrors) > 0 {
			line += " mirrors=" + strings.Join(s.Mirrors, ",")
		}
		if web.Config().Profile != testweb.ProfilePlain {
			if r := web.Reachable(s); r != nil {
				line += fmt.Sprintf(" reachable=%d", len(r))
			}
		}
		fmt.Fprintln(env.Stdout, line)
	}
	return nil
}

func siteJSON(s *testweb.Site) any {
	return struct {
		Host         string         `json:"host"`
		Aliases      []string       `json:"aliases,omitempty"`
		Kinds        []testweb.Kind `json:"kinds"`
		Trap         testweb.Trap   `json:"trap,omitempty"`
		Addr         string         `json:"addr"`
		RobotsStatus int            `json:"robots_status"`
		DelaySeconds float64        `json:"delay_seconds"`
		SeedPages    []string       `json:"seed_pages"`
		Sitemaps     []string       `json:"sitemaps,omitempty"`
		Orphans      []string       `json:"orphans,omitempty"`
		DupGroup     string         `json:"dup_group,omitempty"`
		NonCanonical []string       `json:"non_canonical,omitempty"` // names robots Host: sends crawlers away from
		Mirrors      []string       `json:"mirrors,omitempty"`       // REGP Mirror-site: targets
	}{s.Host, s.Aliases, s.Kinds, s.Trap, s.Addr.String(), s.RobotsStatus, s.Delay.Seconds(), s.SeedPages, s.Sitemaps, s.Orphans, s.DupGroup,
		s.NonCanonical, s.Mirrors}
}

func runTestwebReport(env *Env, args []string) error {
	fs := newFlagSet(env, "testweb report", "LOG", `
Judge the politeness of the crawl that made LOG (a 'courtesy testweb --log'
file; - for stdin). Give the same generation flags as the server had.`)
	var gen genFlags
	gen.register(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	agent := fs.String("agent", "", "robots.txt product `TOKEN` of the crawler (default: each request's User-Agent product token)")
	minDelay := fs.Duration("min-delay", 0, "the per-host `DURATION` the crawler was configured with; shorter gaps are counted (0: not checked)")
	tolerance := fs.Duration("tolerance", 0, "slack `DURATION` subtracted from every delay before comparing gaps")
	allHosts := fs.Bool("all-hosts", false, "list every host, not only those with a problem or a robots delay")
	cover := fs.Bool("coverage", false, "also compare the generic sites' pages fetched with those reachable by links")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one LOG argument")
	}
	if *minDelay < 0 || *tolerance < 0 {
		return usagef("--min-delay and --tolerance must not be negative")
	}
	web, err := gen.web()
	if err != nil {
		return err
	}
	var in io.Reader = env.Stdin
	if p := fs.Arg(0); p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("testweb report: %w", err)
		}
		defer f.Close()
		in = f
	}
	rep, err := report.Analyze(web, in, report.Options{Agent: *agent, MinDelay: *minDelay, Tolerance: *tolerance, Coverage: *cover})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(env.Stdout, *allHosts)
}
