package proxy

import (
	"context"
	"errors"
	"net/url"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

func TestQueuesFIFOAndBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueues()
		var order []int
		var mu sync.Mutex
		first, err := q.enter("h", 10, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := first.acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 5 {
			kq, err := q.enter("h", 10, 100)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer q.leave("h", kq)
				if err := kq.acquire(t.Context()); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				kq.pass()
			}()
			synctest.Wait() // each waiter is parked before the next arrives
		}
		first.pass()
		q.leave("h", first)
		wg.Wait()
		for i, v := range order {
			if v != i {
				t.Fatalf("served out of order: %v", order)
			}
		}
		if n, k := q.depth(); n != 0 || k != 0 {
			t.Errorf("depth %d %d after all left", n, k)
		}
	})
}

func TestQueuesLimits(t *testing.T) {
	q := newQueues()
	a, _ := q.enter("a", 2, 3)
	b, _ := q.enter("a", 2, 3)
	if _, err := q.enter("a", 2, 3); !errors.Is(err, errQueueFull) {
		t.Errorf("per-host bound: %v", err)
	}
	c, _ := q.enter("b", 2, 3)
	if _, err := q.enter("c", 2, 3); !errors.Is(err, errQueueFull) {
		t.Errorf("total bound: %v", err)
	}
	if _, k := q.depth(); k != 2 {
		t.Errorf("a refused key lingers: %d keys", k)
	}
	q.leave("a", a)
	q.leave("a", b)
	q.leave("b", c)
	if n, k := q.depth(); n != 0 || k != 0 {
		t.Errorf("depth %d %d", n, k)
	}
}

func TestQueueAcquireCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueues()
		holder, _ := q.enter("h", 5, 5)
		_ = holder.acquire(t.Context())
		w, _ := q.enter("h", 5, 5)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if err := w.acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("acquire = %v", err)
		}
		if time.Since(start) != time.Second {
			t.Errorf("gave up after %v", time.Since(start))
		}
		q.leave("h", w)
		// The turn is still the holder's; handing it on reaches nobody.
		holder.pass()
		q.leave("h", holder)
	})
}

func TestSequencer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSequencer()
		t1, _ := s.take("c", 3)
		t2, _ := s.take("c", 3)
		t3, _ := s.take("c", 3)
		if _, err := s.take("c", 3); !errors.Is(err, errQueueFull) {
			t.Errorf("bound: %v", err)
		}
		other, _ := s.take("d", 3)
		if !t1.ready() || t2.ready() || !other.ready() {
			t.Error("first tickets of each client must be ready, the second not")
		}
		var got []int
		var wg sync.WaitGroup
		for i, tk := range []*ticket{t3, t2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := tk.turn(t.Context()); err != nil {
					t.Error(err)
				}
				got = append(got, 3-i)
				time.Sleep(time.Millisecond)
				tk.finish()
			}()
		}
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("later tickets ran before the first finished")
		}
		t1.finish()
		wg.Wait()
		if len(got) != 2 || got[0] != 2 || got[1] != 3 {
			t.Errorf("order %v", got)
		}
		// A timed-out wait lets the ticket finish; the next still waits
		// for the earlier one.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		a, _ := s.take("e", 3)
		b, _ := s.take("e", 3)
		if err := b.turn(ctx); err == nil {
			t.Error("turn came before the predecessor finished")
		}
		b.finish()
		a.finish()
		other.finish()
		if s.size() != 0 {
			t.Errorf("%d clients left", s.size())
		}
	})
}

// TestTenThousandWaiters holds 10,000 requests for one host in the wait
// queue, then lets their clients go: memory stays bounded (one parked
// goroutine each, one gate poller in all) and nothing leaks.
func TestTenThousandWaiters(t *testing.T) {
	before := runtime.NumGoroutine()
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{cfg: Config{MaxQueuePerHost: 10_000, MaxQueue: 10_000}, pol: politeness.Config{DefaultDelay: time.Hour}})
	u, _ := url.Parse(o.URL + "/page")
	// The first fetch (robots.txt) closes the host for an hour.
	if p, _, err := e.gate.Try(context.Background(), u); err != nil || p != nil {
		t.Fatalf("warm-up Try: %v %v", p, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var refused sync.Map
	for i := range 10_000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := &exchange{}
			p, f := e.proxy.admit(ctx, ctx, u, ModeWait, time.Hour, e.proxy.cfg.Load(), x)
			if p != nil {
				t.Error("a waiter got through a closed host")
				_ = p.Release()
			}
			refused.Store(i, f.reason)
		}()
	}
	waitFor(t, "10,000 queued", func() bool { n, _ := e.proxy.queues.depth(); return n == 10_000 })
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > 512<<20 {
		t.Errorf("heap %d MiB with 10,000 waiters", ms.HeapInuse>>20)
	}
	// One more is refused with 503 at once.
	x := &exchange{}
	if p, f := e.proxy.admit(context.Background(), context.Background(), u, ModeWait, time.Hour, e.proxy.cfg.Load(), x); p != nil || f.status != 503 {
		t.Errorf("10,001st: %v %+v", p, f)
	}
	cancel()
	wg.Wait()
	if n, k := e.proxy.queues.depth(); n != 0 || k != 0 {
		t.Errorf("queue %d/%d after the clients left", n, k)
	}
	count := 0
	refused.Range(func(_, v any) bool {
		if v != "client-gone" {
			t.Errorf("refusal %v, want client-gone", v)
			return false
		}
		count++
		return true
	})
	if count != 10_000 {
		t.Errorf("%d refusals", count)
	}
	e.front.Close()
	e.proxy.Close()
	o.Close()
	checkGoroutines(t, before, 5)
}
