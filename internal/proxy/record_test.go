package proxy

import (
	"fmt"
	"net/http"
	"testing"
)

// A client that has its response finds its request in the trace and the
// request count, though the response is sent before the handler ends
// (record before the flush), for a miss and for a hit alike.
func TestTraceBeforeResponse(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		hello(w, r)
	})
	e := newEnv(t, envOpts{cache: true})
	for i := range 20 {
		for _, want := range []string{"MISS", "HIT"} {
			u := fmt.Sprintf("%s/p%d", o.URL, i)
			resp, _ := e.get(u)
			if resp.StatusCode != 200 || resp.Header.Get(HeaderCache) != want {
				t.Fatalf("%s: %d %s, want 200 %s", u, resp.StatusCode, resp.Header.Get(HeaderCache), want)
			}
			tr := e.proxy.Trace()
			if len(tr) == 0 || tr[0].URL != u || tr[0].Cache != want || tr[0].Status != 200 {
				t.Fatalf("request %d (%s): trace head %+v", i, want, tr[:min(len(tr), 1)])
			}
		}
	}
}
