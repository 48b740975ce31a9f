package console

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub fans the live updates out to at most max subscribers. Each has a
// one-slot buffer: a slow reader misses updates (the next one carries the
// whole state) rather than holding the others up.
type hub struct {
	max int
	mu  sync.Mutex
	// subs is guarded by mu; closed once close was called.
	subs   map[chan []byte]struct{}
	closed bool
}

var errTooMany = errors.New("console: too many live subscribers")

func newHub(max int) *hub { return &hub{max: max, subs: map[chan []byte]struct{}{}} }

func (h *hub) subscribe() (chan []byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("console: shutting down")
	}
	if len(h.subs) >= h.max {
		return nil, errTooMany
	}
	ch := make(chan []byte, 1)
	h.subs[ch] = struct{}{}
	return ch, nil
}

func (h *hub) unsubscribe(ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *hub) publish(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- msg:
		default: // the reader has not taken the last one: skip
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}

// events streams the overview as server-sent events ("event: overview"),
// one at once and then one per update interval.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "console: streaming unsupported")
		return
	}
	ch, err := s.hub.subscribe()
	if err != nil {
		w.Header().Set("Retry-After", "10")
		apiError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer s.hub.unsubscribe(ch)
	// A stream outlives a server's WriteTimeout: lift it for this
	// response (an error means there is none to lift).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// retry: the browser reconnects after 5 s if the stream breaks.
	fmt.Fprintf(w, "retry: 5000\n")
	writeEvent(w, s.overviewEvent())
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if writeEvent(w, msg) != nil {
				return
			}
			fl.Flush()
		}
	}
}

func writeEvent(w http.ResponseWriter, data []byte) error {
	_, err := fmt.Fprintf(w, "event: overview\ndata: %s\n\n", data)
	return err
}
