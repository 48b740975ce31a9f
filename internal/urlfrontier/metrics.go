package urlfrontier

import (
	"context"
	"path"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// Metrics are the service's Prometheus metrics: per RPC, the calls by
// status code, their latency and the URLs in and out; and, read from the
// frontier at each scrape, the courtesy_frontier_* gauges per crawl.
type Metrics struct {
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
	in      *prometheus.CounterVec
	out     *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg; f, when not nil, feeds the
// frontier gauges (the pending-queues gauge only when f reports it, as the
// embedded frontier does).
func NewMetrics(reg prometheus.Registerer, f frontier.API) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courtesy_urlfrontier_requests_total", Help: "URLFrontier RPCs by method and gRPC status code.",
		}, []string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "courtesy_urlfrontier_request_seconds", Help: "URLFrontier RPC latency (whole stream for streaming RPCs).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"method"}),
		in: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courtesy_urlfrontier_urls_in_total", Help: "URLs received, by method.",
		}, []string{"method"}),
		out: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courtesy_urlfrontier_urls_out_total", Help: "URLs sent, by method.",
		}, []string{"method"}),
	}
	cs := []prometheus.Collector{m.calls, m.latency, m.in, m.out}
	if !isNil(f) {
		c := &frontierCollector{f: f}
		c.pending, _ = f.(pendingQueuer)
		cs = append(cs, c)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) urlsIn(method string, n int) {
	if m != nil && n > 0 {
		m.in.WithLabelValues(method).Add(float64(n))
	}
}

func (m *Metrics) urlsOut(method string, n int) {
	if m != nil && n > 0 {
		m.out.WithLabelValues(method).Add(float64(n))
	}
}

func (m *Metrics) observe(fullMethod string, start time.Time, err error) {
	if m == nil {
		return
	}
	method := path.Base(fullMethod)
	m.calls.WithLabelValues(method, status.Code(err).String()).Inc()
	m.latency.WithLabelValues(method).Observe(time.Since(start).Seconds())
}

// UnaryInterceptor records unary RPCs.
func (m *Metrics) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		m.observe(info.FullMethod, start, err)
		return resp, err
	}
}

// StreamInterceptor records streaming RPCs.
func (m *Metrics) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		m.observe(info.FullMethod, start, err)
		return err
	}
}

// pendingQueuer is a frontier that counts its pending queues (the
// embedded one).
type pendingQueuer interface{ PendingQueues() int }

// frontierCollector reads the frontier's statistics at each scrape.
type frontierCollector struct {
	f       frontier.API
	pending pendingQueuer // nil: no pending-queues gauge
}

var (
	descURLs = prometheus.NewDesc("courtesy_frontier_urls",
		"URLs in the frontier by crawl and state (queued: not completed, in_process: leased now, completed, retired).",
		[]string{"crawl", "state"}, nil)
	descQueues = prometheus.NewDesc("courtesy_frontier_queues",
		"Queues by crawl and state (all, active: with URLs not completed, retired).",
		[]string{"crawl", "state"}, nil)
	descCrawls  = prometheus.NewDesc("courtesy_frontier_crawls", "Crawls in the frontier.", nil, nil)
	descActive  = prometheus.NewDesc("courtesy_frontier_active", "1 while the frontier serves URLs (SetActive).", nil, nil)
	descPending = prometheus.NewDesc("courtesy_frontier_pending_queues",
		"Queues not yet created with a delay or block waiting for them.", nil, nil)
)

func (c *frontierCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descURLs, descQueues, descCrawls, descActive} {
		ch <- d
	}
	if c.pending != nil {
		ch <- descPending
	}
}

func (c *frontierCollector) Collect(ch chan<- prometheus.Metric) {
	crawls := c.f.ListCrawls()
	ch <- prometheus.MustNewConstMetric(descCrawls, prometheus.GaugeValue, float64(len(crawls)))
	active := 0.0
	if c.f.Active() {
		active = 1
	}
	ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, active)
	if c.pending != nil {
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(c.pending.PendingQueues()))
	}
	for _, name := range crawls {
		s := c.f.Stats(name, "")
		for state, v := range map[string]uint64{"queued": s.Size, "in_process": s.InProcess, "completed": s.Completed, "retired": s.Retired} {
			ch <- prometheus.MustNewConstMetric(descURLs, prometheus.GaugeValue, float64(v), name, state)
		}
		for state, v := range map[string]uint64{"all": s.Queues, "active": s.ActiveQueues, "retired": s.RetiredQueues} {
			ch <- prometheus.MustNewConstMetric(descQueues, prometheus.GaugeValue, float64(v), name, state)
		}
	}
}
