package proxy

import (
	"sync"
	"time"
)

// TraceEntry is one request as GET /trace shows it (the polite-proxy thesis §5.10).
type TraceEntry struct {
	Time       time.Time `json:"time"`
	Client     string    `json:"client"`
	Method     string    `json:"method"`
	URL        string    `json:"url"`
	Mode       Mode      `json:"mode"`
	Status     int       `json:"status"`
	Outcome    string    `json:"outcome"`
	Cache      string    `json:"cache,omitempty"`
	WaitMs     int64     `json:"waitMs"`
	UpstreamMs int64     `json:"upstreamMs"`
	Bytes      int64     `json:"bytes"`
	Error      string    `json:"error,omitempty"`
}

// ring keeps the last n trace entries.
type ring struct {
	// mu guards buf, next and full.
	mu   sync.Mutex
	buf  []TraceEntry
	next int
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]TraceEntry, n)} }

func (r *ring) add(e TraceEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == 0 {
		return
	}
	r.buf[r.next] = e
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

// entries returns the kept entries, newest first.
func (r *ring) entries() []TraceEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	out := make([]TraceEntry, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}
