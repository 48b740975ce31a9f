package cluster

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Repair rewrites the index entry of every queue from the queue's own
// state, and returns how many queues it visited. The index is updated
// after each queue script by a second call; a process that dies between
// the two, or a master failover that loses the index write (asynchronous
// replication), leaves a queue indexed late or not at all, and Repair
// brings it back. It scans every master's keys (SCAN, in batches), so it
// costs about one round trip per 256 queues: run it after a failover and
// before deciding that a crawl is finished (crawl nodes run it before they
// call the crawl drained).
//
// Each batch is written twice. The first pass forces the queue's state
// into the index whatever the versions (a failover can leave the index
// ahead of the queue); the second re-reads the queues and writes again
// with the usual version check. A process that updated a queue between
// the first pass's read and write had its newer entry overwritten by the
// forced one; the second pass reads that newer state and puts it back. So
// Repair is safe to run while other processes crawl.
func (f *Frontier) Repair(ctx context.Context) (int, error) {
	pattern := globEscape(f.o.Prefix) + "{q\x1f*}:m"
	var mu sync.Mutex
	total := 0
	err := f.scanKeys(ctx, "repair", pattern, func(ctx context.Context, keys []string) error {
		n, err := f.repairMetas(ctx, keys, true)
		if err != nil {
			return err
		}
		if _, err := f.repairMetas(ctx, keys, false); err != nil {
			return err
		}
		mu.Lock()
		total += n
		mu.Unlock()
		return nil
	}, func() {
		mu.Lock()
		total = 0
		mu.Unlock()
	})
	return total, err
}

// repairMetas reindexes the queues whose meta keys are given, forcing
// their state into the index when force is set.
func (f *Frontier) repairMetas(ctx context.Context, metas []string, force bool) (int, error) {
	pipe := f.c.Pipeline()
	cmds := make([]*redis.SliceCmd, len(metas))
	for i, k := range metas {
		cmds[i] = pipe.HMGet(ctx, k, "crawl", "key")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	type q struct{ crawl, key string }
	var qs []q
	var calls []*call
	for _, c := range cmds {
		v := c.Val()
		crawl, _ := v[0].(string)
		key, _ := v[1].(string)
		if crawl == "" || key == "" {
			continue
		}
		dd, err := f.defaultDelay(ctx, crawl)
		if err != nil {
			return 0, err
		}
		qs = append(qs, q{crawl, key})
		calls = append(calls, &call{s: adminScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), dd, "", "", "0"}})
	}
	if err := f.runOnce(ctx, "repair", f.c, calls); err != nil {
		return 0, err
	}
	var index []*call
	for i, c := range calls {
		if len(c.res) == 1 {
			continue // deleted meanwhile
		}
		st, err := parseState(c.res)
		if err != nil {
			return 0, err
		}
		ic := f.indexCall(qs[i].crawl, qs[i].key, st)
		if force {
			ic.args[len(ic.args)-1] = "1" // the queue's state is the truth
		}
		index = append(index, ic)
	}
	if force && f.repairRead != nil {
		f.repairRead()
	}
	if err := f.runOnce(ctx, "repair index", f.c, index); err != nil {
		return 0, err
	}
	return len(index), nil
}

func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
