// Command colly-bench crawls the synthetic web (internal/testweb) with
// gocolly/colly, configured as politely as `courtesy crawl` in the crawl
// benchmark (bench/crawl/run.sh, docs/performance.md): robots.txt obeyed,
// at most one request in flight per host and a fixed delay per host, seed
// hosts only.
//
//	colly-bench -seeds FILE -addr 127.0.0.1:PORT [-delay 200ms] [-max-pages N] [-max-duration D] [-o FILE]
//
// It lives in its own Go module so that Courtesy's module does not depend
// on colly.
//
// Politeness in colly comes from LimitRules. A rule whose glob matches many
// hosts ("*") has ONE slot shared by all of them, which would serialise the
// whole crawl; per-host politeness therefore needs one rule per host, with
// Parallelism 1 and the delay (colly sleeps the delay after each response
// while still holding the host's slot, so consecutive requests to a host
// start at least the delay apart). Hosts come from the seeds file; links to
// other hosts are not followed. colly's Async mode starts one goroutine per
// discovered URL, which wait for their host's slot.
//
// Every connection is dialled to -addr (the testweb listener), requests go
// in origin form with the site's Host header, as to a real web server.
//
// Two set-ups, so that the benchmark shows colly both as a user gets it and
// at its best:
//
//   - tuned (the default): the Transport keeps idle connections for every
//     host (Go's default of 100 idle connections in all reopens connections
//     all the time across 2,000 hosts), and each URL is claimed before
//     Visit, because colly's own visited check is not atomic (two callbacks
//     finding one link both fetch it: about 30 % extra requests).
//   - -stock: colly as shipped, with only the politeness set up (one limit
//     rule per host, robots.txt on): its default client (Go's default
//     Transport, with the dial redirected to -addr) and its own visited
//     check.
//
// At the end it writes one JSON object (pages, requests, errors, seconds)
// to -o or standard output.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// Summary is what the runner reports.
type Summary struct {
	Crawler string  `json:"crawler"`
	Hosts   int     `json:"hosts"`
	Pages   int64   `json:"pages"`   // 2xx responses handed to the collector
	Errors  int64   `json:"errors"`  // failed requests and non-2xx answers
	Blocked int64   `json:"blocked"` // links refused by robots.txt
	Seconds float64 `json:"seconds"` // first Visit to the end of the crawl
	Stopped string  `json:"stopped"` // "done", "max-pages" or "max-duration"
	Delay   string  `json:"delay"`   // per-host delay used
	Agent   string  `json:"user_agent"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "colly-bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("colly-bench", flag.ContinueOnError)
	seeds := fs.String("seeds", "", "`FILE` of seed URLs, one a line (each host gets its own politeness rule)")
	addr := fs.String("addr", "", "dial every connection to `HOST:PORT` (the testweb listener)")
	delay := fs.Duration("delay", 200*time.Millisecond, "per-host delay between requests")
	maxPages := fs.Int64("max-pages", 0, "stop after N pages (0: no cap)")
	maxDur := fs.Duration("max-duration", 0, "stop after this long (0: no cap)")
	agent := fs.String("user-agent", "colly-bench/1.0 (+https://github.com/gocolly/colly)", "User-Agent")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	out := fs.String("o", "", "write the JSON summary to `FILE` (default standard output)")
	stock := fs.Bool("stock", false, "colly as shipped: Go's default Transport and colly's own visited check (see the package comment)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *seeds == "" || *addr == "" {
		return errors.New("-seeds and -addr are required")
	}
	urls, hosts, err := readSeeds(*seeds)
	if err != nil {
		return err
	}

	c := colly.NewCollector(colly.Async(true), colly.UserAgent(*agent))
	c.IgnoreRobotsTxt = false
	c.SetRequestTimeout(*timeout)
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	target := *addr
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, target)
	}
	if *stock {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = dial
		c.WithTransport(t)
	} else {
		c.WithTransport(&http.Transport{
			DialContext:         dial,
			MaxIdleConns:        0, // no limit in total
			MaxIdleConnsPerHost: 2, // one request in flight per host
			IdleConnTimeout:     90 * time.Second,
		})
	}
	for h := range hosts {
		if err := c.Limit(&colly.LimitRule{DomainGlob: h, Parallelism: 1, Delay: *delay}); err != nil {
			return fmt.Errorf("limit rule for %s: %w", h, err)
		}
	}

	var pages, errs, blocked atomic.Int64
	var claimed sync.Map // URLs handed to Visit
	claim := func(u string) bool {
		if *stock {
			return true // colly's own visited check decides
		}
		_, dup := claimed.LoadOrStore(u, struct{}{})
		return !dup
	}
	done := make(chan string, 1)
	stop := func(why string) {
		select {
		case done <- why:
		default:
		}
	}
	c.OnResponse(func(r *colly.Response) {
		if n := pages.Add(1); *maxPages > 0 && n >= *maxPages {
			stop("max-pages")
		}
	})
	c.OnError(func(r *colly.Response, err error) { errs.Add(1) })
	c.OnHTML("a[href], area[href], link[href], frame[src], iframe[src]", func(e *colly.HTMLElement) {
		ref := e.Attr("href")
		if ref == "" {
			ref = e.Attr("src")
		}
		abs := e.Request.AbsoluteURL(ref)
		if abs == "" {
			return
		}
		// colly keeps fragments, so page#a and page#b would be fetched
		// twice; a careful colly user cuts them.
		if i := strings.IndexByte(abs, '#'); i >= 0 {
			abs = abs[:i]
		}
		u, err := url.Parse(abs)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !hosts[strings.ToLower(u.Hostname())] {
			return // seed hosts only, like courtesy crawl's default scope
		}
		// colly's own visited check (IsVisited, then Visited) is not
		// atomic: under load two callbacks finding the same link both
		// fetch it (about 30% extra requests on the full web). A careful
		// user claims the URL first.
		if !claim(abs) {
			return
		}
		if err := e.Request.Visit(abs); errors.Is(err, colly.ErrRobotsTxtBlocked) {
			blocked.Add(1)
		}
	})

	start := time.Now()
	// Visit checks robots.txt synchronously (fetching it on first sight of
	// a host), so the seeds are handed over from a few goroutines at once,
	// while the time cap already runs.
	go func() {
		var seeders sync.WaitGroup
		next := atomic.Int64{}
		for range 8 {
			seeders.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(len(urls)) {
						return
					}
					if !claim(urls[i]) {
						continue
					}
					err := c.Visit(urls[i])
					var av *colly.AlreadyVisitedError
					if err != nil && !errors.Is(err, colly.ErrRobotsTxtBlocked) && !errors.As(err, &av) {
						fmt.Fprintf(os.Stderr, "colly-bench: seed %s: %v\n", urls[i], err)
					}
				}
			})
		}
		seeders.Wait()
		c.Wait()
		stop("done")
	}()
	var timeCap <-chan time.Time
	if *maxDur > 0 {
		timeCap = time.After(*maxDur)
	}
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	var why string
loop:
	for {
		select {
		case why = <-done:
			break loop
		case <-timeCap:
			why = "max-duration"
			break loop
		case <-tick.C:
			fmt.Fprintf(os.Stderr, "colly-bench: %.0fs %d pages %d errors\n", time.Since(start).Seconds(), pages.Load(), errs.Load())
		}
	}
	s := Summary{
		Crawler: crawlerName(*stock), Hosts: len(hosts),
		Pages: pages.Load(), Errors: errs.Load(), Blocked: blocked.Load(),
		Seconds: time.Since(start).Seconds(), Stopped: why,
		Delay: delay.String(), Agent: *agent,
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	// Capped crawls end with goroutines still waiting; the process exit
	// ends them.
	return os.WriteFile(*out, b, 0o644)
}

func crawlerName(stock bool) string {
	if stock {
		return "colly-stock"
	}
	return "colly"
}

// readSeeds reads one URL a line (blank lines and # comments skipped) and
// returns them with the set of their lower-case host names.
func readSeeds(name string) ([]string, map[string]bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var urls []string
	hosts := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := url.Parse(line)
		if err != nil || u.Host == "" {
			return nil, nil, fmt.Errorf("seed %q: not an absolute URL", line)
		}
		urls = append(urls, line)
		hosts[strings.ToLower(u.Hostname())] = true
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(urls) == 0 {
		return nil, nil, fmt.Errorf("%s: no seeds", name)
	}
	return urls, hosts, nil
}
