package proxy

import (
	"context"
	"sync"
)

// sequencer delivers the responses to one client in the order its requests
// arrived (the polite-proxy thesis §4.7.2). Each request takes a ticket on arrival; before
// writing its response it waits until the previous ticket of the same
// client is done (answered, failed or timed out).
type sequencer struct {
	// mu guards clients.
	mu      sync.Mutex
	clients map[string]*clientOrder
}

type clientOrder struct {
	last        chan struct{} // closed when the newest ticket is done
	outstanding int
}

// ticket is one request's place in its client's order.
type ticket struct {
	s      *sequencer
	client string
	prev   <-chan struct{} // closed when the previous request is done
	done   chan struct{}
	once   sync.Once
}

func newSequencer() *sequencer {
	return &sequencer{clients: map[string]*clientOrder{}}
}

// take gives the next ticket of client, or errQueueFull past limit
// outstanding requests.
func (s *sequencer) take(client string, limit int) (*ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[client]
	if c == nil {
		closed := make(chan struct{})
		close(closed)
		c = &clientOrder{last: closed}
		s.clients[client] = c
	}
	if c.outstanding >= limit {
		return nil, errQueueFull
	}
	t := &ticket{s: s, client: client, prev: c.last, done: make(chan struct{})}
	c.last = t.done
	c.outstanding++
	return t, nil
}

// turn waits until every earlier request of the client is done.
func (t *ticket) turn(ctx context.Context) error {
	select {
	case <-t.prev:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// ready reports whether the ticket's turn has come.
func (t *ticket) ready() bool {
	select {
	case <-t.prev:
		return true
	default:
		return false
	}
}

// finish marks the ticket done, letting the next request write. Safe to
// call more than once.
func (t *ticket) finish() {
	t.once.Do(func() {
		close(t.done)
		t.s.mu.Lock()
		defer t.s.mu.Unlock()
		c := t.s.clients[t.client]
		c.outstanding--
		if c.outstanding == 0 {
			delete(t.s.clients, t.client)
		}
	})
}

// size returns the number of clients with outstanding requests.
func (s *sequencer) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}
