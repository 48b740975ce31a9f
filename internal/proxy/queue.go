package proxy

import (
	"context"
	"errors"
	"sync"
)

// errQueueFull is returned by queues.enter when a bound is reached.
var errQueueFull = errors.New("proxy: queue full")

// queues holds the requests waiting for their politeness key in wait and
// sequential modes. Per key they are served in arrival order: only the
// request holding the key's turn asks the gate, the others wait on a
// channel whose receivers Go serves first-come first-served, so a busy
// host costs one gate poller, not thousands.
type queues struct {
	// mu guards keys and total.
	mu    sync.Mutex
	keys  map[string]*keyQueue
	total int
}

type keyQueue struct {
	turn    chan struct{} // holds one token: whoever takes it asks the gate
	waiting int           // requests entered and not yet left
}

func newQueues() *queues {
	return &queues{keys: map[string]*keyQueue{}}
}

// enter registers a request for key, refusing it when the key already has
// perKey requests or all keys have total requests waiting.
func (q *queues) enter(key string, perKey, total int) (*keyQueue, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.keys[key]
	if kq == nil {
		kq = &keyQueue{turn: make(chan struct{}, 1)}
		kq.turn <- struct{}{}
		q.keys[key] = kq
	}
	if kq.waiting >= perKey {
		return nil, errQueueFull
	}
	if q.total >= total {
		if kq.waiting == 0 {
			delete(q.keys, key)
		}
		return nil, errQueueFull
	}
	kq.waiting++
	q.total++
	return kq, nil
}

// idle reports whether no request is held for key.
func (q *queues) idle(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.keys[key] == nil
}

// acquire waits for the key's turn, in arrival order, until ctx ends.
func (kq *keyQueue) acquire(ctx context.Context) error {
	select {
	case <-kq.turn:
		return nil
	default:
	}
	select {
	case <-kq.turn:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// pass hands the turn to the next request of the key.
func (kq *keyQueue) pass() { kq.turn <- struct{}{} }

// leave unregisters a request that entered (whether or not it got a turn).
func (q *queues) leave(key string, kq *keyQueue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq.waiting--
	q.total--
	if kq.waiting == 0 && q.keys[key] == kq {
		delete(q.keys, key)
	}
}

// depth returns the number of waiting requests and of keys with any.
func (q *queues) depth() (requests, keys int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.total, len(q.keys)
}
