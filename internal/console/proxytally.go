package console

import (
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/proxy"
)

// maxClients bounds the clients a ProxyTally counts one by one; later
// ones are counted together under OtherClients.
const maxClients = 10_000

// OtherClients is the client name a ProxyTally counts clients under once
// it counts maxClients.
const OtherClients = "(other clients)"

// maxTrace bounds the trace entries a ProxyStats carries.
const maxTrace = 100

// ProxyTally counts a polite proxy's requests for the console. The proxy
// calls Observe with each finished request as it records it in its trace
// (proxy.TraceEntry, one per request); Tunnels and Trace, when set, give
// the open tunnels and the proxy's recent trace. It is safe for
// concurrent use; Observe takes one short lock.
type ProxyTally struct {
	Tunnels func() int64
	Trace   func() []proxy.TraceEntry

	mu struct {
		sync.Mutex
		st      ProxyStats // counters only
		clients map[string]int64
	}
}

// Observe counts one finished request: a wait when it was held for its
// host's turn, a 403 or 429 answer, a cache hit (HIT, REVALIDATED) or miss
// (MISS), and one more request of its client.
func (t *ProxyTally) Observe(e proxy.TraceEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := &t.mu.st
	st.Requests++
	if e.WaitMs > 0 {
		st.Waits++
	}
	switch e.Status {
	case 403:
		st.Forbidden++
	case 429:
		st.TooMany++
	}
	switch e.Cache {
	case "HIT", "REVALIDATED":
		st.CacheHits++
	case "MISS":
		st.CacheMisses++
	}
	if t.mu.clients == nil {
		t.mu.clients = map[string]int64{}
	}
	c := e.Client
	if _, ok := t.mu.clients[c]; !ok && len(t.mu.clients) >= maxClients {
		c = OtherClients
	}
	t.mu.clients[c]++
}

// ProxyStats implements Proxy.
func (t *ProxyTally) ProxyStats() ProxyStats {
	t.mu.Lock()
	st := t.mu.st
	st.Clients = make(map[string]int64, len(t.mu.clients))
	for k, v := range t.mu.clients {
		st.Clients[k] = v
	}
	t.mu.Unlock()
	if t.Tunnels != nil {
		st.Tunnels = t.Tunnels()
	}
	if t.Trace != nil {
		tr := t.Trace()
		st.Trace = make([]TraceEntry, 0, min(len(tr), maxTrace))
		for _, e := range tr[:min(len(tr), maxTrace)] {
			st.Trace = append(st.Trace, TraceEntry{Time: e.Time, Client: e.Client, Method: e.Method, URL: e.URL,
				Outcome: e.Outcome, Status: e.Status, Wait: time.Duration(e.WaitMs) * time.Millisecond})
		}
	}
	return st
}
