package proxy

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// outcomeCount reads the proxy's request counter for one outcome.
func outcomeCount(t *testing.T, p *Proxy, outcome string) float64 {
	t.Helper()
	var m dto.Metric
	if err := p.m.requests.WithLabelValues(outcome).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestCutBodyAbortsConnection: an unframed (chunked) body that passes
// max-response-bytes must not end with the last chunk, or the client
// takes the cut body for a complete 200. curl must report an error, and
// the trace and the metrics record the cut.
func TestCutBodyAbortsConnection(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		chunk := make([]byte, 32<<10)
		for i := 0; i < 64; i++ { // 2 MiB, unframed: flushed as it goes
			if _, err := w.Write(chunk); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
		}
	})
	e := newEnv(t, envOpts{cfg: Config{MaxResponseBytes: 1 << 20}})
	r := e.curl(o.URL + "/big")
	if r.exit == 0 {
		t.Errorf("curl exit 0 with %d bytes: a cut body looked complete", len(r.body))
	}
	if r.status != 200 || len(r.body) > 1<<20 {
		t.Errorf("status %d, %d bytes", r.status, len(r.body))
	}
	tr := e.proxy.Trace()
	if len(tr) == 0 || tr[0].Outcome != "response_too_large" || tr[0].Error == "" {
		t.Errorf("trace %+v", tr)
	}
	if n := outcomeCount(t, e.proxy, "response_too_large"); n != 1 {
		t.Errorf("courtesy_proxy_requests_total{outcome=response_too_large} = %v, want 1", n)
	}
	// A body within the limit still ends cleanly.
	small := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1000))
		http.NewResponseController(w).Flush()
		w.Write(make([]byte, 1000))
	})
	if r := e.curl(small.URL + "/ok"); r.exit != 0 || len(r.body) != 2000 {
		t.Errorf("small chunked body: exit %d, %d bytes, %s", r.exit, len(r.body), r.stderr)
	}
}
