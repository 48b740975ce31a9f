package console

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/proxy"
)

func TestProxyTally(t *testing.T) {
	t.Parallel()
	trace := []proxy.TraceEntry{{Client: "10.0.0.1:5000", Method: "GET", URL: "http://a.test/", Status: 200, Outcome: "forwarded", WaitMs: 1500}}
	tally := &ProxyTally{Tunnels: func() int64 { return 2 }, Trace: func() []proxy.TraceEntry { return trace }}
	entries := []proxy.TraceEntry{
		{Client: "a", Status: 200, Cache: "MISS"},
		{Client: "a", Status: 200, Cache: "HIT"},
		{Client: "a", Status: 200, Cache: "REVALIDATED", WaitMs: 10},
		{Client: "b", Status: 403, Outcome: "robots"},
		{Client: "b", Status: 429, Outcome: "delay"},
	}
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Go(func() { tally.Observe(e) })
	}
	wg.Wait()
	st := tally.ProxyStats()
	want := ProxyStats{Requests: 5, Waits: 1, Forbidden: 1, TooMany: 1, CacheHits: 2, CacheMisses: 1, Tunnels: 2}
	if st.Requests != want.Requests || st.Waits != want.Waits || st.Forbidden != want.Forbidden || st.TooMany != want.TooMany ||
		st.CacheHits != want.CacheHits || st.CacheMisses != want.CacheMisses || st.Tunnels != want.Tunnels {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	if st.Clients["a"] != 3 || st.Clients["b"] != 2 {
		t.Errorf("clients = %v", st.Clients)
	}
	if len(st.Trace) != 1 || st.Trace[0].Wait != 1500*time.Millisecond || st.Trace[0].Outcome != "forwarded" {
		t.Errorf("trace = %+v", st.Trace)
	}
	// Past maxClients, new clients share one row.
	for i := range maxClients + 5 {
		tally.Observe(proxy.TraceEntry{Client: fmt.Sprint("c", i)})
	}
	st = tally.ProxyStats()
	if len(st.Clients) != maxClients+1 || st.Clients[OtherClients] != 7 {
		t.Errorf("%d clients, %d under %q", len(st.Clients), st.Clients[OtherClients], OtherClients)
	}
}
