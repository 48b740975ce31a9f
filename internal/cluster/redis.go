package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// call is one script run, batched with others in a pipeline.
type call struct {
	s    *redis.Script
	keys []string
	args []any
	res  []any
}

// retryable reports whether err is one a Redis failover or a network
// failure causes, after which the same call may succeed: every call the
// frontier makes is safe to repeat (see doc.go).
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.Nil) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"CLUSTERDOWN", "TRYAGAIN", "LOADING", "READONLY", "MASTERDOWN", "MOVED", "ASK", "NOREPLICAS"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	return strings.Contains(msg, "connection pool") || strings.Contains(msg, "dial tcp") || strings.Contains(msg, "use of closed network connection")
}

// retry runs fn until it succeeds, fails for good, or Options.RetryFor
// passes, with exponential backoff (10 ms doubling to 1 s, with jitter).
// After each failure it has a cluster client reload its slot map: go-redis
// follows MOVED by itself, but not a refused connection to a dead master.
func (f *Frontier) retry(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	deadline := time.Now().Add(f.o.RetryFor)
	backoff := 10 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		f.noteErr(err)
		if !retryable(err) {
			return fmt.Errorf("cluster: %s: %w", what, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster: %s: giving up after %v: %w", what, f.o.RetryFor, err)
		}
		f.retries.Add(1)
		if cc, ok := f.c.(*redis.ClusterClient); ok {
			cc.ReloadState(ctx)
		}
		d := backoff/2 + rand.N(backoff/2+1)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("cluster: %s: %w (last error: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// run runs calls in one pipeline (go-redis splits it per master and sends
// the parts in parallel), with retries; each call's result is in res.
// Scripts go by SHA, and by their text where a master does not know them
// yet (a new master after a failover).
func (f *Frontier) run(ctx context.Context, what string, calls []*call) error {
	if len(calls) == 0 {
		return nil
	}
	return f.retry(ctx, what, func(ctx context.Context) error {
		return f.runOnce(ctx, what, f.c, calls)
	})
}

func (f *Frontier) runOnce(ctx context.Context, what string, c redis.Cmdable, calls []*call) error {
	f.countCalls(ctx, what, c, calls)
	pipe := c.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, cl := range calls {
		cmds[i] = cl.s.EvalSha(ctx, pipe, cl.keys, cl.args...)
	}
	_, _ = pipe.Exec(ctx)
	var missing []int
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			if strings.HasPrefix(err.Error(), "NOSCRIPT") {
				missing = append(missing, i)
				continue
			}
			return err
		}
		calls[i].res, _ = cmd.Val().([]any)
	}
	if len(missing) == 0 {
		return nil
	}
	f.ops.add(what, len(missing), 1)
	pipe = c.Pipeline()
	cmds = cmds[:0]
	for _, i := range missing {
		cl := calls[i]
		cmds = append(cmds, cl.s.Eval(ctx, pipe, cl.keys, cl.args...))
	}
	_, _ = pipe.Exec(ctx)
	for j, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return err
		}
		calls[missing[j]].res, _ = cmd.Val().([]any)
	}
	return nil
}

// runWait runs each call on the master of its keys followed by WAIT, so
// that it returns once Options.WaitReplicas replicas have the write (or
// Options.WaitTimeout passed: then the error says how many did).
func (f *Frontier) runWait(ctx context.Context, what string, calls []*call) error {
	return f.retry(ctx, what, func(ctx context.Context) error {
		for _, cl := range calls {
			var node redis.Cmdable = f.c
			addr := ""
			if cc, ok := f.c.(*redis.ClusterClient); ok {
				m, err := cc.MasterForKey(ctx, cl.keys[0])
				if err != nil {
					return err
				}
				node, addr = m, m.Options().Addr
			}
			want := f.o.WaitReplicas
			n, ok := f.knownReplicas(addr)
			if !ok {
				// Asked once a second per master: WAIT for more
				// replicas than are connected would only time out.
				info, err := node.Info(ctx, "replication").Result()
				if err != nil {
					return err
				}
				n = connectedReplicas(info)
				f.setReplicas(addr, n)
			}
			want = min(want, n)
			if want == 0 {
				// A master known to have no replica: WAIT would only
				// time out.
				if err := f.runOnce(ctx, what, node, []*call{cl}); err != nil {
					return err
				}
				f.waitShort.Add(1)
				continue
			}
			// One pipeline is one connection: WAIT counts the replicas
			// that have this connection's writes.
			f.ops.add(what, 2, 1)
			pipe := node.Pipeline()
			ev := cl.s.EvalSha(ctx, pipe, cl.keys, cl.args...)
			w := pipe.Do(ctx, "WAIT", want, f.o.WaitTimeout.Milliseconds())
			_, _ = pipe.Exec(ctx)
			if err := ev.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				if err := cl.s.Load(ctx, node).Err(); err != nil {
					return err
				}
				pipe = node.Pipeline()
				ev = cl.s.EvalSha(ctx, pipe, cl.keys, cl.args...)
				w = pipe.Do(ctx, "WAIT", want, f.o.WaitTimeout.Milliseconds())
				_, _ = pipe.Exec(ctx)
			}
			if err := ev.Err(); err != nil {
				return err
			}
			cl.res, _ = ev.Val().([]any)
			n, err := w.Int()
			if err != nil {
				return err
			}
			if n < want {
				// A master left without replicas (its replica was
				// promoted when it died, or is resyncing) cannot do
				// better: the write is taken, and counted, rather than
				// the crawl stopped. Otherwise a slow replica is retried.
				info, err := node.Info(ctx, "replication").Result()
				if err != nil {
					return err
				}
				connected := connectedReplicas(info)
				f.setReplicas(addr, connected)
				if connected >= want {
					return fmt.Errorf("NOREPLICAS %d of %d replicas acknowledged within %v", n, want, f.o.WaitTimeout)
				}
				f.waitShort.Add(1)
			}
		}
		return nil
	})
}

func (f *Frontier) noteErr(err error) {
	s := err.Error()
	f.lastErr.Store(&s)
}

// asInt reads an integer reply element.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case string:
		var n int64
		_, err := fmt.Sscan(x, &n)
		return n, err == nil
	}
	return 0, false
}

// connectedReplicas reads connected_slaves from INFO replication.
func connectedReplicas(info string) int {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// knownReplicas returns the replicas a master had connected when last
// checked, if that was less than a second ago.
func (f *Frontier) knownReplicas(addr string) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.mu.replicas[addr]
	if !ok || time.Since(r.checked) > time.Second {
		return 0, false
	}
	return r.n, true
}

func (f *Frontier) setReplicas(addr string, n int) {
	f.mu.Lock()
	f.mu.replicas[addr] = replicaCount{n: n, checked: time.Now()}
	f.mu.Unlock()
}

type replicaCount struct {
	n       int
	checked time.Time
}
