package console

import (
	"sync"
	"time"
)

// history keeps one point per second of two growing counters (pages and
// bytes, or proxy requests), for the rate charts: a ring of the last size
// points.
type history struct {
	mu    sync.Mutex
	pts   []point
	next  int
	full  bool
	limit int
}

type point struct {
	t    time.Time
	a, b int64
}

func newHistory(size int) *history { return &history{pts: make([]point, size), limit: size} }

func (h *history) add(t time.Time, a, b int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pts[h.next] = point{t, a, b}
	h.next++
	if h.next == h.limit {
		h.next, h.full = 0, true
	}
}

// points returns the points, oldest first.
func (h *history) points() []point {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.full {
		return append([]point(nil), h.pts[:h.next]...)
	}
	out := make([]point, 0, h.limit)
	out = append(out, h.pts[h.next:]...)
	return append(out, h.pts[:h.next]...)
}

// rates returns the rates of a and b per second over the last window
// (from the newest point back to the oldest within window), 0 when fewer
// than two points.
func (h *history) rates(window time.Duration) (float64, float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.next
	if h.full {
		n = h.limit
	}
	if n < 2 {
		return 0, 0
	}
	at := func(i int) point { // i-th newest, 0 = newest
		return h.pts[((h.next-1-i)%h.limit+h.limit)%h.limit]
	}
	last := at(0)
	first := at(1)
	for i := 2; i < n; i++ {
		p := at(i)
		if last.t.Sub(p.t) > window {
			break
		}
		first = p
	}
	dt := last.t.Sub(first.t).Seconds()
	if dt <= 0 {
		return 0, 0
	}
	return max(float64(last.a-first.a), 0) / dt, max(float64(last.b-first.b), 0) / dt
}

// series returns per-second rates between successive points: unix
// seconds and the two rates, for the charts.
func (h *history) series() (ts []int64, ra, rb []float64) {
	pts := h.points()
	for i := 1; i < len(pts); i++ {
		dt := pts[i].t.Sub(pts[i-1].t).Seconds()
		if dt <= 0 {
			continue
		}
		ts = append(ts, pts[i].t.Unix())
		ra = append(ra, max(float64(pts[i].a-pts[i-1].a), 0)/dt)
		rb = append(rb, max(float64(pts[i].b-pts[i-1].b), 0)/dt)
	}
	return ts, ra, rb
}
