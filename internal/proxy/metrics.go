package proxy

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// metrics are the proxy's Prometheus series (DESIGN.md naming:
// courtesy_<component>_<name>_<unit>).
type metrics struct {
	requests *prometheus.CounterVec
	wait     prometheus.Histogram
	upstream prometheus.Histogram

	// outcomes caches requests' children by outcome (string ->
	// prometheus.Counter), so that counting a request does not hash its
	// label values every time. Outcomes are a small fixed set of names, so
	// the map stays small.
	outcomes sync.Map
}

// request counts one finished request with its outcome.
func (m *metrics) request(outcome string) {
	if c, ok := m.outcomes.Load(outcome); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	c := m.requests.WithLabelValues(outcome)
	m.outcomes.Store(outcome, c)
	c.Inc()
}

func newMetrics(p *Proxy, reg prometheus.Registerer, counters *politeness.Counters) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courtesy_proxy_requests_total",
			Help: "Requests handled by the proxy, by outcome (forwarded, cache_hit, revalidated, robots, delay, wait_timeout, queue_full, ...).",
		}, []string{"outcome"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "courtesy_proxy_wait_seconds",
			Help:    "Time requests were held for their host's turn (wait and sequential modes).",
			Buckets: []float64{.001, .01, .05, .1, .25, .5, 1, 2, 5, 10, 30, 60, 120},
		}),
		upstream: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "courtesy_proxy_upstream_duration_seconds",
			Help:    "Time from sending a request to the origin to receiving its response header.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
	if reg == nil {
		return m
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	cs := []prometheus.Collector{
		m.requests, m.wait, m.upstream,
		gauge("courtesy_proxy_queue_depth", "Requests currently held for their host's turn.", func() float64 {
			n, _ := p.queues.depth()
			return float64(n)
		}),
		gauge("courtesy_proxy_active_hosts", "Politeness keys with requests queued or in flight.", func() float64 {
			return float64(p.activeHosts())
		}),
		gauge("courtesy_proxy_sequential_clients", "Sequential clients with outstanding requests.", func() float64 {
			return float64(p.seq.size())
		}),
		gauge("courtesy_proxy_request_bodies_reading", "Request bodies being read from clients, before their requests take a host's slot.", func() float64 {
			return float64(p.bodiesReading.Load())
		}),
		gauge("courtesy_proxy_tunnels_active", "Open CONNECT tunnels.", func() float64 {
			return float64(p.tunnelsActive.Load())
		}),
		gauge("courtesy_proxy_websockets_open", "Open WebSocket connections relayed.", func() float64 {
			return float64(p.WebSockets())
		}),
	}
	if g := p.gov; g != nil {
		cs = append(cs,
			gauge("courtesy_proxy_low_load_mode", "1 while the proxy runs on one core with polling reads (low load), 0 otherwise.", func() float64 {
				if g.low.Load() {
					return 1
				}
				return 0
			}),
			counter("courtesy_proxy_low_load_switches_total", "Switches into low-load mode.", func() float64 { return float64(g.switches.Load()) }),
			counter("courtesy_proxy_low_load_polls_total", "Reads that polled their socket in low-load mode.", func() float64 { return float64(g.polls.Load()) }),
			counter("courtesy_proxy_low_load_poll_hits_total", "Polling reads whose socket became readable within the budget.", func() float64 { return float64(g.pollHits.Load()) }),
		)
	}
	if p.cache != nil {
		c := p.cache
		cs = append(cs,
			counter("courtesy_proxy_cache_hits_total", "Cache lookups answered from the cache without the origin.", func() float64 { return float64(c.Stats().Hits) }),
			counter("courtesy_proxy_cache_misses_total", "Cache lookups with nothing usable stored.", func() float64 { return float64(c.Stats().Misses) }),
			counter("courtesy_proxy_cache_stale_total", "Cache lookups that needed revalidation.", func() float64 { return float64(c.Stats().Stale) }),
			counter("courtesy_proxy_cache_revalidated_total", "Revalidations answered 304 Not Modified.", func() float64 { return float64(c.Stats().Revalidated) }),
			counter("courtesy_proxy_cache_evictions_total", "Cache entries evicted for space.", func() float64 { return float64(c.Stats().Evictions) }),
			gauge("courtesy_proxy_cache_entries", "Stored cache entries (variants).", func() float64 { return float64(c.Stats().Entries) }),
			gauge("courtesy_proxy_cache_size_bytes", "Encoded size of the stored cache entries.", func() float64 { return float64(c.Stats().Bytes) }),
			gauge("courtesy_proxy_cache_memory_bytes", "Size of the in-memory tier of hot entries.", func() float64 { return float64(c.Stats().HotBytes) }),
			gauge("courtesy_proxy_cache_hit_ratio", "Hits / lookups since start.", func() float64 { return c.Stats().HitRatio }),
		)
	}
	if counters != nil {
		cs = append(cs, robotsCollector{counters})
	}
	for _, c := range cs {
		reg.MustRegister(c)
	}
	return m
}

// robotsCollector exports the gate's robots.txt fetch counters.
type robotsCollector struct{ c *politeness.Counters }

var robotsDesc = prometheus.NewDesc("courtesy_politeness_robots_fetches_total",
	"robots.txt fetches by result.", []string{"result"}, nil)

func (rc robotsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- robotsDesc }

func (rc robotsCollector) Collect(ch chan<- prometheus.Metric) {
	by, _ := rc.c.RobotsFetches()
	for r, n := range by {
		ch <- prometheus.MustNewConstMetric(robotsDesc, prometheus.CounterValue, float64(n), string(r))
	}
}
