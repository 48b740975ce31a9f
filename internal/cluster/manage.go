// Queue and crawl management for the URLFrontier service: deleting
// queues and crawls, listing queues, and pausing the whole frontier.

package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxListQueues bounds the queue keys ListQueues reads from a crawl's
// index; a crawl with more lists the first ones found and says so in
// LastError.
const maxListQueues = 1 << 20

// scanBatch is the COUNT of every SCAN/HSCAN step and the size of the
// pipelines that follow one.
const scanBatch = 500

// deleteQueueScript removes a queue's URLs not completed and its state;
// the completed URLs' records stay in the seen-test hash (u), as in the
// embedded frontier, so they are not fetched again. ARGV[3] '1' removes
// the seen-test too (DeleteCrawl). Returns {queued removed}, or {-1} for
// an unknown queue.
var deleteQueueScript = redis.NewScript(luaQueue + `
if redis.call('EXISTS', m) == 0 then
  if ARGV[3] == '1' then redis.call('DEL', u) end
  return {-1}
end
local queued = num(redis.call('HGET', m, 'queued'), 0)
if ARGV[3] == '1' then
  redis.call('DEL', u)
else
  local cur = '0'
  repeat
    local r = redis.call('HSCAN', u, cur, 'COUNT', 1000)
    cur = r[1]
    local kv = r[2]
    for i = 1, #kv, 2 do
      if string.sub(kv[i + 1], 1, 1) == 'q' then redis.call('HDEL', u, kv[i]) end
    end
  until cur == '0'
end
redis.call('DEL', m, z, l, t, d)
return {queued}
`)

// indexDropScript removes a queue from one shard of a crawl's index
// (KEYS r, q, s, p as indexScript; ARGV queue key) and takes its counts out
// of the shard's totals.
var indexDropScript = redis.NewScript(`
local r, q, s = KEYS[1], KEYS[2], KEYS[3]
local key = ARGV[1]
redis.call('ZREM', r, key)
redis.call('ZREM', KEYS[4], key)
local old = redis.call('HGET', q, key)
if not old then return 0 end
local p = {}
for x in string.gmatch(old, '[^ ]+') do p[#p + 1] = tonumber(x) end
local oq, oi, oc, orr = p[2], p[3], p[4], p[5]
-- (a unary minus of 0 is -0, which HINCRBY refuses)
local function dec(f, v) if v ~= 0 then redis.call('HINCRBY', s, f, 0 - v) end end
if orr == 1 then
  dec('retired', oq)
  dec('retiredq', 1)
else
  dec('size', oq)
  dec('inflight', oi)
  if oq > 0 then dec('active', 1) end
end
dec('completed', oc)
dec('queues', 1)
redis.call('HDEL', q, key)
return 1
`)

// DeleteQueue removes a queue and its URLs not completed, returning how
// many were removed (URLFrontier DeleteQueue). Completed URLs stay known
// to the seen-test. An unknown queue removes nothing. Leases on the
// removed URLs end: their acknowledgements store them again, as known
// URLs.
func (f *Frontier) DeleteQueue(ctx context.Context, crawlID, key string) (uint64, error) {
	defer f.forgetKnown() // once done, so a Put meanwhile cannot keep a deleted URL
	crawl := normCrawl(crawlID)
	c := &call{s: deleteQueueScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), 0, "0"}}
	if err := f.run(ctx, "delete queue", []*call{c}); err != nil {
		return 0, err
	}
	n, _ := asInt(firstOf(c.res))
	drop := &call{s: indexDropScript, keys: f.indexKeys(crawl, f.shardOf(key))[:4], args: []any{key}}
	if err := f.run(ctx, "delete queue index", []*call{drop}); err != nil {
		return 0, err
	}
	f.forgetLeases(crawl, key)
	return uint64(max(n, 0)), nil
}

func firstOf(res []any) any {
	if len(res) == 0 {
		return nil
	}
	return res[0]
}

// forgetLeases drops this process's fencing tokens of a queue (key "":
// of the whole crawl).
func (f *Frontier) forgetLeases(crawl, key string) {
	p := crawl + "\x00"
	if key != "" {
		p += key + "\x00"
	}
	f.mu.Lock()
	for k := range f.mu.leases {
		if strings.HasPrefix(k, p) {
			delete(f.mu.leases, k)
		}
	}
	f.mu.Unlock()
}

// DeleteCrawl removes a whole crawl (its queues, seen-test, index, default
// delay), returning the number of URLs not completed that it held. It
// SCANs every master for the crawl's keys, so it also finds queues the
// index lost. A Put of the crawl running meanwhile on another process may
// leave some of its queues behind, and that process lists the crawl again
// only after its next Put a few seconds later.
func (f *Frontier) DeleteCrawl(ctx context.Context, crawlID string) (uint64, error) {
	defer f.forgetKnown() // once done, so a Put meanwhile cannot keep a deleted URL
	crawl := normCrawl(crawlID)
	pattern := globEscape(f.o.Prefix) + "{q\x1f" + globEscape(tagEscape(crawl)) + "\x1f*"
	var mu sync.Mutex
	var removed uint64
	err := f.scanKeys(ctx, "delete crawl", pattern, func(ctx context.Context, keys []string) error {
		var calls []*call
		var other []string
		for _, k := range keys {
			tag, ok := strings.CutSuffix(k, ":m")
			if !ok {
				other = append(other, k)
				continue
			}
			base := tag + ":"
			ks := []string{base + "m", base + "z", base + "u", base + "l", base + "t", base + "d"}
			calls = append(calls, &call{s: deleteQueueScript, keys: ks, args: []any{f.nowArg(), 0, "1"}})
		}
		if err := f.runOnce(ctx, "delete crawl", f.c, calls); err != nil {
			return err
		}
		var n uint64
		for _, c := range calls {
			v, _ := asInt(firstOf(c.res))
			n += uint64(max(v, 0))
		}
		if len(other) > 0 {
			pipe := f.c.Pipeline()
			for _, k := range other {
				pipe.Unlink(ctx, k)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
		mu.Lock()
		removed += n
		mu.Unlock()
		return nil
	}, func() { removed = 0 })
	if err != nil {
		return 0, err
	}
	err = f.retry(ctx, "delete crawl", func(ctx context.Context) error {
		pipe := f.c.Pipeline()
		for s := range f.shards {
			ks := f.indexKeys(crawl, s)
			pipe.Del(ctx, ks...)
		}
		pipe.SRem(ctx, f.crawlsKey(), crawl)
		pipe.HDel(ctx, f.delaysKey(), crawl)
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	delete(f.mu.registered, crawl)
	delete(f.mu.delays, crawl)
	f.mu.Unlock()
	f.forgetLeases(crawl, "")
	return removed, nil
}

// scanKeys calls fn with the keys matching pattern, a batch at a time,
// on every master (in parallel on a cluster), with retries: after a
// failure the whole scan starts again, once reset has cleared what fn
// counted.
func (f *Frontier) scanKeys(ctx context.Context, what, pattern string, fn func(ctx context.Context, keys []string) error, reset func()) error {
	scan := func(ctx context.Context, node redis.Cmdable) error {
		var cursor uint64
		for {
			var keys []string
			var err error
			keys, cursor, err = node.Scan(ctx, cursor, pattern, scanBatch).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				if err := fn(ctx, keys); err != nil {
					return err
				}
			}
			if cursor == 0 {
				return nil
			}
		}
	}
	return f.retry(ctx, what, func(ctx context.Context) error {
		if reset != nil {
			reset()
		}
		if cc, ok := f.c.(*redis.ClusterClient); ok {
			return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return scan(ctx, m) })
		}
		return scan(ctx, f.c)
	})
}

// indexEntry is a queue as a crawl's index knows it.
type indexEntry struct {
	key                         string
	queued, inflight, completed int64
	retired                     bool
}

// indexEntries reads every queue of a crawl from its index (HSCAN of
// each shard), at most maxListQueues, sorted by key.
func (f *Frontier) indexEntries(ctx context.Context, crawl string) ([]indexEntry, error) {
	var out []indexEntry
	err := f.retry(ctx, "list queues", func(ctx context.Context) error {
		out = out[:0]
		for s := range f.shards {
			q := f.indexKeys(crawl, s)[1]
			var cursor uint64
			for {
				kv, next, err := f.c.HScan(ctx, q, cursor, "", scanBatch).Result()
				if err != nil {
					return err
				}
				for i := 0; i+1 < len(kv); i += 2 {
					e := indexEntry{key: kv[i]}
					p := strings.Fields(kv[i+1])
					if len(p) != 5 {
						continue
					}
					e.queued, _ = strconv.ParseInt(p[1], 10, 64)
					e.inflight, _ = strconv.ParseInt(p[2], 10, 64)
					e.completed, _ = strconv.ParseInt(p[3], 10, 64)
					e.retired = p[4] == "1"
					out = append(out, e)
				}
				if len(out) >= maxListQueues {
					return errTooManyQueues
				}
				if cursor = next; cursor == 0 {
					break
				}
			}
		}
		return nil
	})
	if errors.Is(err, errTooManyQueues) {
		f.noteErr(err)
		err = nil
	}
	// HSCAN may return a field twice.
	slices.SortFunc(out, func(a, b indexEntry) int { return strings.Compare(a.key, b.key) })
	out = slices.CompactFunc(out, func(a, b indexEntry) bool { return a.key == b.key })
	return out, err
}

var errTooManyQueues = fmt.Errorf("cluster: list queues: more than %d queues, listing the first", maxListQueues)

// ListQueues implements the URLFrontier ListQueues like the embedded
// frontier: up to size (0 = 100) queue keys of a crawl in key order, from
// start, and the number of matching queues. Without includeInactive,
// queues that are blocked, retired or hold no URLs to fetch are left out.
// Queues come from the crawl's index (see Repair); on a Redis error it
// returns nothing (see LastError).
func (f *Frontier) ListQueues(crawlID string, start, size int, includeInactive bool) ([]string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.RetryFor)
	defer cancel()
	keys, total, err := f.ListQueuesContext(ctx, crawlID, start, size, includeInactive)
	if err != nil {
		f.noteErr(err)
	}
	return keys, total
}

// ListQueuesContext is ListQueues with a context and an error.
func (f *Frontier) ListQueuesContext(ctx context.Context, crawlID string, start, size int, includeInactive bool) ([]string, int, error) {
	if size <= 0 {
		size = 100
	}
	crawl := normCrawl(crawlID)
	es, err := f.indexEntries(ctx, crawl)
	if err != nil {
		return nil, 0, err
	}
	keys := make([]string, 0, len(es))
	if includeInactive {
		for _, e := range es {
			keys = append(keys, e.key)
		}
	} else {
		var cand []string
		for _, e := range es {
			if !e.retired && e.queued > 0 {
				cand = append(cand, e.key)
			}
		}
		now, err := f.serverNow(ctx)
		if err != nil {
			return nil, 0, err
		}
		for lo := 0; lo < len(cand); lo += scanBatch {
			part := cand[lo:min(lo+scanBatch, len(cand))]
			cmds := make([]*redis.StringCmd, len(part))
			err := f.retry(ctx, "list queues", func(ctx context.Context) error {
				pipe := f.c.Pipeline()
				for i, k := range part {
					cmds[i] = pipe.HGet(ctx, f.queueKeys(crawl, k)[0], "blocked")
				}
				_, err := pipe.Exec(ctx)
				if errors.Is(err, redis.Nil) {
					err = nil
				}
				return err
			})
			if err != nil {
				return nil, 0, err
			}
			for i, k := range part {
				b, _ := strconv.ParseInt(cmds[i].Val(), 10, 64)
				if b <= now {
					keys = append(keys, k)
				}
			}
		}
	}
	total := len(keys)
	if start < 0 || start >= total {
		return nil, total, nil
	}
	return keys[start:min(total, start+size)], total, nil
}

// serverNow is the scripts' clock in ms: the injected one, or Redis time.
func (f *Frontier) serverNow(ctx context.Context) (int64, error) {
	if f.o.Now != nil {
		return f.o.Now().UnixMilli(), nil
	}
	var t time.Time
	err := f.retry(ctx, "time", func(ctx context.Context) error {
		var err error
		t, err = f.c.Time(ctx).Result()
		return err
	})
	return t.UnixMilli(), err
}

// configKey holds the index shard count and the paused flag.
func (f *Frontier) configKey() string { return f.o.Prefix + "{crawls}:config" }

// SetActive pauses (false) or resumes (true) serving for every process
// sharing the frontier (URLFrontier SetActive): while paused Get returns
// nothing, Put still stores. Other processes see the change within a
// second. On a Redis error the change is local (see LastError).
func (f *Frontier) SetActive(active bool) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.RetryFor)
	defer cancel()
	if err := f.SetActiveContext(ctx, active); err != nil {
		f.noteErr(err)
	}
}

// SetActiveContext is SetActive with a context and an error.
func (f *Frontier) SetActiveContext(ctx context.Context, active bool) error {
	f.mu.Lock()
	f.mu.paused = cachedFlag{on: !active, fetched: time.Now()}
	f.mu.Unlock()
	return f.retry(ctx, "set active", func(ctx context.Context) error {
		if active {
			return f.c.HDel(ctx, f.configKey(), "paused").Err()
		}
		return f.c.HSet(ctx, f.configKey(), "paused", "1").Err()
	})
}

// Active reports whether Get serves URLs (the shared flag, read at most
// once a second; on a Redis error, the last value read).
func (f *Frontier) Active() bool {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.RetryFor)
	defer cancel()
	return f.active(ctx)
}

func (f *Frontier) active(ctx context.Context) bool {
	f.mu.Lock()
	p := f.mu.paused
	f.mu.Unlock()
	if !p.fetched.IsZero() && time.Since(p.fetched) < time.Second {
		return !p.on
	}
	var on bool
	err := f.retry(ctx, "active", func(ctx context.Context) error {
		f.ops.add("active", 1, 1)
		v, err := f.c.HGet(ctx, f.configKey(), "paused").Result()
		if errors.Is(err, redis.Nil) {
			on = false
			return nil
		}
		on = v == "1"
		return err
	})
	if err != nil {
		return !p.on
	}
	f.mu.Lock()
	f.mu.paused = cachedFlag{on: on, fetched: time.Now()}
	f.mu.Unlock()
	return !on
}

type cachedFlag struct {
	on      bool
	fetched time.Time
}
