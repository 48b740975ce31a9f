package crawl

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the crawl's Prometheus series (courtesy_crawl_*, and
// courtesy_fetch_duration_seconds as DESIGN.md names it).
type metrics struct {
	reg           *prometheus.Registry
	pages         *prometheus.CounterVec
	bytes         prometheus.Counter
	completed     prometheus.Counter
	discovered    prometheus.Counter
	errors        *prometheus.CounterVec
	robotsDenied  prometheus.Counter
	robotsFetches *prometheus.CounterVec
	// robotsArchived counts robots.txt responses written to the WARC
	// files (robotsarchive.go).
	robotsArchived prometheus.Counter
	trapCuts       *prometheus.CounterVec
	trapSites      *prometheus.CounterVec
	trapStopped    *prometheus.GaugeVec
	outOfScope     prometheus.Counter
	retired        prometheus.Counter
	returned       *prometheus.CounterVec
	fetchDuration  prometheus.Histogram
	queued         prometheus.Gauge
	inFlight       prometheus.Gauge
	activeHosts    prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_pages_total",
			Help: "Responses received, by status class."}, []string{"status"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_bytes_total",
			Help: "Body bytes received, as transferred."}),
		completed: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_urls_completed_total",
			Help: "URLs completed (fetched, refused by robots.txt, or given up)."}),
		discovered: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_urls_discovered_total",
			Help: "New URLs added to the frontier."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_fetch_errors_total",
			Help: "Failed fetches, by kind."}, []string{"kind"}),
		robotsDenied: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_robots_denied_total",
			Help: "URLs not fetched because robots.txt disallows them."}),
		robotsFetches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_robots_fetches_total",
			Help: "robots.txt fetches, by result."}, []string{"result"}),
		robotsArchived: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_robots_archived_total",
			Help: "robots.txt responses (redirect hops included) written to the WARC files."}),
		trapCuts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_trap_cuts_total",
			Help: "Links not queued because of a trap limit, by limit."}, []string{"limit"}),
		trapSites: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_trap_sites_total",
			Help: "Sites stopped by a site-level trap limit, by limit."}, []string{"limit"}),
		trapStopped: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "courtesy_crawl_trap_stopped_site",
			Help: "1 for each site a site-level trap limit stopped this run (the first 1000), by site and limit; DATA/reports/ has each one's report."}, []string{"site", "limit"}),
		outOfScope: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_out_of_scope_total",
			Help: "Links dropped as out of scope."}),
		retired: prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_crawl_hosts_retired_total",
			Help: "Hosts retired after repeated failures."}),
		returned: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "courtesy_crawl_urls_returned_total",
			Help: "Leased URLs given back to the frontier unchanged, by reason."}, []string{"reason"}),
		fetchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "courtesy_fetch_duration_seconds",
			Help: "Fetch duration, request start to last body byte.", Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12)}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "courtesy_crawl_queued_urls",
			Help: "URLs in the frontier not yet completed."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "courtesy_crawl_in_flight",
			Help: "URLs being fetched now."}),
		activeHosts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "courtesy_crawl_active_hosts",
			Help: "Hosts with URLs left to crawl."}),
	}
	m.reg.MustRegister(m.pages, m.bytes, m.completed, m.discovered, m.errors, m.robotsDenied, m.robotsFetches, m.robotsArchived,
		m.trapCuts, m.trapSites, m.trapStopped, m.outOfScope, m.retired, m.returned, m.fetchDuration, m.queued, m.inFlight, m.activeHosts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// robotsObserver feeds the gate's robots.txt events into the metrics.
type robotsObserver struct {
	m *metrics
}

func (o robotsObserver) RobotsFetched(_ string, r politeness.RobotsResult, _ bool, _ time.Duration) {
	o.m.robotsFetches.WithLabelValues(string(r)).Inc()
}
func (o robotsObserver) Decided(politeness.Decision) {}

// progress updates the gauges every second and shows progress: one live
// line on a terminal, a log line every ProgressInterval otherwise.
func (c *Crawler) progress(ctx context.Context, start time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	lastLog := c.now()
	lastAt, lastPages := lastLog, int64(0)
	// The process's CPU over the last interval, in cores: a crawl that
	// is neither politeness- nor CPU-bound shows it here.
	lastCPU, lastWall := cpuclock.Process(), time.Now()
	tickPages := int64(0) // pages at the previous tick
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := c.fr.Stats(c.cfg.CrawlID, "")
		c.metrics.queued.Set(float64(st.Size))
		c.metrics.inFlight.Set(float64(c.inFlight.Load()))
		c.metrics.activeHosts.Set(float64(st.ActiveQueues))
		el := c.now().Sub(start)
		pages := c.stats.pages.Load()
		rate := float64(pages) / max(el.Seconds(), 0.001)
		// The log's rate is over the last interval: an average since the
		// start hides a crawl that has stopped fetching.
		recent := float64(pages-lastPages) / max(c.now().Sub(lastAt).Seconds(), 0.001)
		eta := ""
		switch {
		case c.cfg.MaxPages > 0 && rate > 0:
			left := float64(c.cfg.MaxPages - c.completed.Load())
			eta = " eta " + (time.Duration(left/rate) * time.Second).String()
		case c.cfg.MaxDuration > 0:
			eta = " eta " + (c.cfg.MaxDuration - el).Round(time.Second).String()
		}
		// Nothing in flight but work queued, and no page fetched since the
		// line before: everything left waits on a host's delay, backoff or
		// retry time. Say so, and until when, so that a waiting crawl
		// never looks like a hung one (and one host fetching between its
		// delays, idle at the instant of the sample, still shows its rate).
		now := c.now()
		idle := c.inFlight.Load() == 0 && st.Size > 0
		// Or nothing due for a second or more: the pages still coming
		// in are fetches already in flight (slow pages), and the rest
		// waits, as at the end of a crawl whose last URLs wait for their
		// retry time. (Only the embedded frontier counts its queues so.)
		stalled := stalledAt(st, now)
		waitTerm := idle && pages == tickPages || stalled
		waitLog := idle && pages == lastPages || stalled
		tickPages = pages
		waitHosts, nextAt := 0, time.Time{}
		if waitTerm || waitLog {
			waitHosts, nextAt = c.waiting(now)
			// The frontier knows best when its next URL is due: a retry's
			// due time is the URL's, not its host's, and a later fetch
			// from the same host replaces the host's hold. When stalled
			// it has counted the queues that wait, too.
			if stalled {
				waitHosts, nextAt = max(waitHosts, int(st.WaitingQueues)), st.NextDue
			} else if at, ok := c.nextReady(); ok && at.After(now) && (nextAt.IsZero() || at.Before(nextAt)) {
				nextAt, waitHosts = at, max(waitHosts, 1)
			}
		}
		stopped := c.stoppedLine()
		if c.opts.Progress != nil && c.opts.Terminal {
			note := ""
			if stopped != "" {
				note = "  " + stopped
			}
			if waitTerm && waitHosts > 0 {
				fmt.Fprintf(c.opts.Progress, "\r%d pages  waiting: %d hosts in backoff, next at %s  %d queued%s%s   ",
					pages, waitHosts, nextAt.Format(time.TimeOnly), st.Size, eta, note)
				continue
			}
			fmt.Fprintf(c.opts.Progress, "\r%d pages  %.0f pages/s  %s  %d queued  %d active hosts  %d errors%s%s   ",
				pages, rate, FormatBytes(c.stats.bytes.Load()), st.Size, st.ActiveQueues, c.stats.errors.Load(), eta, note)
			continue
		}
		if now.Sub(lastLog) >= c.cfg.ProgressInterval {
			lastLog = now
			lastAt, lastPages = now, pages
			cpu, wall := cpuclock.Process(), time.Now()
			cores := float64(cpu-lastCPU) / float64(max(wall.Sub(lastWall), time.Millisecond))
			lastCPU, lastWall = cpu, wall
			var extra []any
			if cpuclock.Supported {
				extra = append(extra, "cpu_cores", math.Round(cores*100)/100)
			}
			if stopped != "" {
				extra = append(extra, "trap_stopped", stopped)
			}
			if waitLog && waitHosts > 0 {
				c.log.Info(fmt.Sprintf("waiting: %d hosts in backoff, next at %s", waitHosts, nextAt.Format(time.TimeOnly)),
					append([]any{"pages", pages, "pages_per_s", int(recent), "queued", st.Size, "waiting_hosts", waitHosts, "next_at", nextAt,
						"in_flight", c.inFlight.Load(), "completed", st.Completed}, extra...)...)
				continue
			}
			c.log.Info("progress", append([]any{"pages", pages, "pages_per_s", int(recent), "bytes", c.stats.bytes.Load(),
				"queued", st.Size, "active_hosts", st.ActiveQueues, "errors", c.stats.errors.Load(), "completed", st.Completed}, extra...)...)
		}
	}
}

// stalledAt reports whether nothing of the crawl is due at now or within
// the next second although URLs are queued: every queue with URLs to
// serve waits on its delay, a block (backoff, Retry-After) or the due
// time of its URLs (retries).
func stalledAt(st frontier.Stats, now time.Time) bool {
	return st.Size > 0 && st.ReadyQueues == 0 && st.WaitingQueues > 0 && st.NextDue.After(now.Add(time.Second))
}

// FormatBytes writes a byte count for people: "12.3 MiB", "512 B".
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// nextReady is when the embedded frontier's next URL is due; a remote
// frontier does not say (ok false).
func (c *Crawler) nextReady() (time.Time, bool) {
	if c.ownFr == nil {
		return time.Time{}, false
	}
	return c.ownFr.NextReady()
}
