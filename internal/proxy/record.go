// The record of a request: the active-key count, the trace entry, the
// metrics and the log line.

package proxy

import (
	"log/slog"
	"net/http"
)

func (p *Proxy) trackActive(key string, d int) {
	p.active.Lock()
	defer p.active.Unlock()
	if p.active.keys[key] += d; p.active.keys[key] <= 0 {
		delete(p.active.keys, key)
	}
}

// activeHosts counts keys with requests in flight or queued.
func (p *Proxy) activeHosts() int {
	p.active.Lock()
	n := len(p.active.keys)
	p.active.Unlock()
	_, queued := p.queues.depth()
	return max(n, queued)
}

// record adds a finished request to the trace and counts it, once. A
// response sent before its handler returns is recorded just before it is
// flushed, so that a client that has its response finds its request in
// GET /trace and /metrics; both cost a lock and a counter, unlike the
// log line, which finish writes after.
func (p *Proxy) record(x *exchange) {
	if x.recorded {
		return
	}
	x.recorded = true
	if x.outcome == "" {
		x.outcome = "unknown"
	}
	x.Status, x.Outcome = x.status, x.outcome
	p.trace.Load().add(x.TraceEntry)
	p.m.request(x.outcome)
	if p.observe != nil {
		p.observe(x.TraceEntry)
	}
}

// finish logs, traces and counts a finished request.
func (p *Proxy) finish(r *http.Request, x *exchange) {
	p.record(x)
	if !p.log.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{
		slog.String("client", x.Client),
		slog.String("method", x.Method),
		slog.String("url", x.URL),
		slog.String("mode", string(x.Mode)),
		slog.Int("status", x.status),
		slog.String("outcome", x.outcome),
		slog.Int64("wait_ms", x.WaitMs),
		slog.Int64("upstream_ms", x.UpstreamMs),
		slog.Int64("bytes", x.Bytes),
		slog.Duration("took", p.now().Sub(x.start)),
	}
	if x.Cache != "" {
		attrs = append(attrs, slog.String("cache", x.Cache))
	}
	if x.Error != "" {
		attrs = append(attrs, slog.String("error", x.Error))
	}
	p.log.LogAttrs(r.Context(), slog.LevelInfo, "proxy request", attrs...)
}
