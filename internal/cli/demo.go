package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/courtesy-crawler/courtesy/internal/config"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawl"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

const demoDescription = `
An offline demonstration: starts the synthetic web (internal/testweb: generic
sites plus spider traps, robots.txt variants, sitemaps, slow and broken
hosts) on a loopback port, crawls it politely with the default settings for
about 30 seconds, then prints what happened and where the WARC files and the
crawl log are. Nothing leaves 127.0.0.1.`

// runDemo is `courtesy demo`.
func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "demo", "", demoDescription)
	var fl commonFlags
	fl.register(fs)
	_ = fs.Set("log-level", "error")
	data := fs.String("data", "", "state and output `DIR` (default: a new directory under the system temp dir)")
	duration := fs.Duration("duration", 30*time.Second, "how long to crawl (`DURATION`)")
	sites := fs.Int("sites", testweb.DefaultSites, "generic sites in the synthetic web (`N`)")
	seed := fs.Int64("seed", 1, "synthetic web `SEED`")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *duration <= 0 || *sites < 1 || *sites > 10000 {
		return usagef("--duration must be positive and --sites in 1..10000")
	}
	log, err := fl.logger(env.Stderr)
	if err != nil {
		return err
	}
	// The configuration file, when given, is read as `courtesy crawl`
	// reads it (its politeness and crawl sections apply); a missing or
	// invalid file is an error, not ignored.
	var file crawlFile
	if fl.config != "" || hasConfigEnv() {
		if err := config.Load(fl.config, &file); err != nil {
			return err
		}
	}
	web, err := testweb.New(testweb.Config{Seed: *seed, Sites: *sites})
	if err != nil {
		return err
	}
	dir := *data
	if dir == "" {
		dir, err = os.MkdirTemp("", "courtesy-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		// Without --data nothing is kept: a demo must not leave its WARC
		// files (about 100 MB) behind in the temp directory.
		defer func() {
			if err := os.RemoveAll(dir); err != nil {
				log.Warn("demo directory not removed", "dir", dir, "err", err)
			}
		}()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	mem := &testweb.Memory{}
	srv := &http.Server{Handler: web.LoggedHandler(mem), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("synthetic web stopped", "err", err)
		}
	}()
	addr := ln.Addr().String()
	res, err := resolve.New(append([]string{"*.test=" + addr}, fl.resolve...))
	if err != nil {
		return err
	}
	var seeds []string
	for _, s := range web.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	fmt.Fprintf(env.Stdout, "Synthetic web: %d sites on http://%s (as *.test), crawling for %s...\n", len(web.Sites()), addr, *duration)
	cfg := file.Crawl
	cfg.DataDir, cfg.WARCDir, cfg.MaxDuration = dir, "", *duration
	cfg.Politeness = file.Politeness.GateConfig()
	c, err := crawl.New(cfg, crawl.Options{
		Logger: log, Progress: env.Stdout, Terminal: env.IsTerminal, Resolver: res,
	})
	if err != nil {
		return err
	}
	sum, err := c.Run(ctx, seeds)
	if err != nil {
		return err
	}
	rep := report.AnalyzeEntries(web, mem.Entries(), report.Options{})
	printDemo(env, sum, rep, dir, *data != "")
	return nil
}

// commandName is how the user ran us, for a hint they can paste: "go run
// ./cmd/courtesy" when the binary is go run's temporary build, else the
// binary's name.
func commandName() string {
	exe := os.Args[0]
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/courtesy"
	}
	return filepath.Base(exe)
}

func printDemo(env *Env, s *crawl.Summary, rep *report.Report, dir string, kept bool) {
	w := env.Stdout
	fmt.Fprintf(w, "\nCrawled %d pages (%s) from %d hosts in %s; %d URLs still queued.\n",
		s.Pages, crawl.FormatBytes(s.Bytes), s.Hosts, s.Duration.Round(time.Second), s.Queued)
	fmt.Fprintf(w, "Robots.txt refusals: %d URLs not fetched; %d hosts left alone because robots.txt was unavailable or forbidden.\n",
		s.RobotsDenied, len(s.Retired))
	fmt.Fprintf(w, "Politeness (as the synthetic web saw it): %d requests, %d overlapping, %d closer than robots.txt asks, %d to disallowed paths, %d before robots.txt.\n",
		rep.Requests, rep.Overlaps, rep.DelayViolations, rep.Disallowed, rep.BeforeRobots)
	fmt.Fprintln(w, "Traps avoided:")
	for _, k := range traps.Kinds {
		if n := s.Traps.Hits[k]; n > 0 {
			fmt.Fprintf(w, "  %-18s %d URLs cut or sites stopped\n", k, n)
		}
	}
	var kinds []string
	for k, sites := range s.Traps.StoppedSites {
		for _, site := range sites {
			kinds = append(kinds, fmt.Sprintf("  %s stopped at its %s limit", site, k))
		}
	}
	sort.Strings(kinds)
	for _, line := range kinds {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  duplicates: %d pages (%d stored as WARC revisit records)\n", s.Duplicates, s.Revisits)
	fmt.Fprintf(w, "Sitemaps: %d of %d orphan pages (listed only in sitemaps) found.\n", rep.OrphansFound, rep.OrphansTotal)
	if !kept {
		fmt.Fprintf(w, "\nWARC files (%d) and crawl log written to %s, now removed: give --data DIR to keep them (and to resume).\n", len(s.WARCFiles), dir)
		return
	}
	fmt.Fprintf(w, "\nWARC files (%d): %s\n", len(s.WARCFiles), s.WARCDir)
	fmt.Fprintf(w, "Crawl log:      %s\n", s.CrawlLog)
	fmt.Fprintf(w, "State:          %s (run '%s demo --data %s' to resume)\n", filepath.Join(dir, "state"), commandName(), dir)
}
