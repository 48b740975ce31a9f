// Per-operation counts of the Redis work this client asks for.

package cluster

import (
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/redis/go-redis/v9"
)

// OpCount is the Redis work of one kind of operation since New.
type OpCount struct {
	// Op names the operation: "peek" (Get's read of the index shards,
	// and WaitReady's with Options.ReadyCache), "lease", "put", "block",
	// "release", "next ready" (WaitReady's read of the ready times), and
	// each followed by " index" for the index updates it made; "delay",
	// "register", "active", "stats", "list crawls" for plain commands;
	// others for the administration calls.
	Op string
	// Commands counts what was sent: scripts and plain commands (the
	// commands a script runs inside Redis are not counted), attempts
	// repeated after a failure included.
	Commands uint64
	// RoundTrips counts each sending of a pipeline or command once per
	// master it reached: the parts go to the masters in parallel, so a
	// pipeline over three masters costs three reads on the servers (the
	// benchmark's round trips) for one wait of the caller.
	RoundTrips uint64
}

// ops counts the work by operation.
type ops struct {
	mu sync.Mutex
	m  map[string]*OpCount // guarded by mu
}

func (o *ops) add(op string, commands, roundTrips int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*OpCount{}
	}
	c := o.m[op]
	if c == nil {
		c = &OpCount{Op: op}
		o.m[op] = c
	}
	c.Commands += uint64(commands)
	c.RoundTrips += uint64(roundTrips)
}

// Ops returns the Redis work by operation since New, sorted by operation.
func (f *Frontier) Ops() []OpCount {
	f.ops.mu.Lock()
	defer f.ops.mu.Unlock()
	out := make([]OpCount, 0, len(f.ops.m))
	for _, c := range f.ops.m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op < out[j].Op })
	return out
}

// countCalls counts one sending of calls as a pipeline: one command per
// call, one round trip per master reached.
func (f *Frontier) countCalls(ctx context.Context, op string, c redis.Cmdable, calls []*call) {
	f.ops.add(op, len(calls), masters(ctx, c, len(calls), func(i int) string { return calls[i].keys[0] }))
}

// masters is the number of masters that n commands, the i-th on key(i),
// reach: 1 on a single server, or when the slot map is not known.
func masters(ctx context.Context, c redis.Cmdable, n int, key func(i int) string) int {
	cc, ok := c.(*redis.ClusterClient)
	if !ok || n < 2 {
		return min(n, 1)
	}
	var seen []*redis.Client
	for i := range n {
		m, err := cc.MasterForKey(ctx, key(i))
		if err != nil {
			return 1
		}
		if !slices.Contains(seen, m) {
			seen = append(seen, m)
		}
	}
	return len(seen)
}
