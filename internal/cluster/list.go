// ListURLs, CountURLs and PurgeURLs (URLFrontier ListURLs, CountURLs,
// PurgeURLs) with the embedded frontier's filter semantics.

package cluster

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// listPage is how many URLs of a queue one list script returns.
const listPage = 256

// listURLsScript reads one page of a queue's URLs not completed: ARGV[3] 'z'
// (queued, in serving order) or 'l' (leased), ARGV[4] first rank, ARGV[5]
// last rank. Returns per URL its hash, record and data.
var listURLsScript = redis.NewScript(luaQueue + `
local src = z
if ARGV[3] == 'l' then src = l end
local ms = redis.call('ZRANGE', src, tonumber(ARGV[4]), tonumber(ARGV[5]))
local out = {}
for _, mem in ipairs(ms) do
  local h = mem
  if src == z then h = string.sub(mem, 9) end
  out[#out + 1] = h
  out[#out + 1] = redis.call('HGET', u, h) or ''
  out[#out + 1] = redis.call('HGET', d, h) or ''
end
return out
`)

// purgeScript deletes URLs of a queue whose record is still the one the
// caller read: ARGV[3] count, then per URL its hash and record. Returns
// the state (or {-1} for a queue without state), then the number
// deleted.
var purgeScript = redis.NewScript(luaQueue + `
local exists = redis.call('HEXISTS', m, 'key') == 1
if exists then reclaim() end
local f = redis.call('HMGET', m, 'queued', 'completed')
local queued, completed = num(f[1], 0), num(f[2], 0)
local n, del = tonumber(ARGV[3]), 0
for i = 0, n - 1 do
  local h, rec = ARGV[4 + 2 * i], ARGV[5 + 2 * i]
  if redis.call('HGET', u, h) == rec then
    if string.sub(rec, 1, 1) == 'q' then
      redis.call('ZREM', z, string.sub(rec, 2, 9) .. h)
      redis.call('ZREM', l, h)
      redis.call('HDEL', t, h)
      redis.call('HDEL', d, h)
      queued = queued - 1
    else
      redis.call('HDEL', d, h)
      completed = completed - 1
    end
    redis.call('HDEL', u, h)
    del = del + 1
  end
end
if not exists then return {-1, del} end
redis.call('HSET', m, 'queued', math.max(queued, 0), 'completed', math.max(completed, 0))
local st = state(false)
st[#st + 1] = del
return st
`)

// listKeys returns the queue keys p selects, in key order: p.Key, or
// every queue of the crawl's index.
func (f *Frontier) listKeys(ctx context.Context, p frontier.ListParams) ([]string, error) {
	if p.Key != "" {
		return []string{p.Key}, nil
	}
	es, err := f.indexEntries(ctx, normCrawl(p.CrawlID))
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.key
	}
	return keys, nil
}

// ListURLs calls fn for the URLs p selects, queue by queue in key order:
// a queue's queued URLs in serving order, then its leased ones, then its
// completed ones. Completed URLs are listed only with
// Options.KeepCompletedURLs: otherwise the frontier keeps only their hash
// (so CountURLs without a filter counts them, with a filter it does not).
// Pages of a queue are read one script each, so a listing is not a
// snapshot: URLs put or served meanwhile may be missed or listed twice.
func (f *Frontier) ListURLs(ctx context.Context, p frontier.ListParams, fn func(frontier.URLEntry) error) error {
	crawl := normCrawl(p.CrawlID)
	keys, err := f.listKeys(ctx, p)
	if err != nil {
		return err
	}
	skip, listed := p.Start, 0
	for _, key := range keys {
		for _, src := range []string{"z", "l"} {
			for lo := 0; ; lo += listPage {
				if err := ctx.Err(); err != nil {
					return err
				}
				c := &call{s: listURLsScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), 0, src, lo, lo + listPage - 1}}
				if err := f.run(ctx, "list urls", []*call{c}); err != nil {
					return err
				}
				for i := 0; i+2 < len(c.res); i += 3 {
					rec, _ := c.res[i+1].(string)
					data, _ := c.res[i+2].(string)
					e, ok := listEntry(crawl, key, rec, data)
					if !ok || !listMatch(&p, e.URL) {
						continue
					}
					if skip > 0 {
						skip--
						continue
					}
					if err := fn(e); err != nil {
						return err
					}
					if listed++; p.Size > 0 && listed >= p.Size {
						return nil
					}
				}
				if len(c.res) < 3*listPage {
					break
				}
			}
		}
		if !f.o.KeepCompletedURLs {
			continue
		}
		stop, err := f.listCompleted(ctx, &p, crawl, key, func(e frontier.URLEntry) (bool, error) {
			if skip > 0 {
				skip--
				return false, nil
			}
			if err := fn(e); err != nil {
				return true, err
			}
			listed++
			return p.Size > 0 && listed >= p.Size, nil
		})
		if stop || err != nil {
			return err
		}
	}
	return nil
}

// listCompleted calls emit for the completed URLs of a queue that match p
// and whose data is kept (Options.KeepCompletedURLs), reading the
// seen-test with HSCAN, a batch at a time. emit reports whether to stop.
func (f *Frontier) listCompleted(ctx context.Context, p *frontier.ListParams, crawl, key string, emit func(frontier.URLEntry) (bool, error)) (bool, error) {
	qk := f.queueKeys(crawl, key)
	var cursor uint64
	for {
		var kv []string
		err := f.retry(ctx, "list urls", func(ctx context.Context) error {
			var err error
			kv, cursor, err = f.c.HScan(ctx, qk[2], cursor, "", scanBatch).Result()
			return err
		})
		if err != nil {
			return true, err
		}
		var hs []string
		var created []int64
		for i := 0; i+1 < len(kv); i += 2 {
			if rec := kv[i+1]; len(rec) >= 5 && rec[0] == 'c' {
				hs = append(hs, kv[i])
				created = append(created, int64(be32(rec[1:5])))
			}
		}
		if len(hs) > 0 {
			var data []any
			err := f.retry(ctx, "list urls", func(ctx context.Context) error {
				var err error
				data, err = f.c.HMGet(ctx, qk[5], hs...).Result()
				return err
			})
			if err != nil {
				return true, err
			}
			for i, v := range data {
				s, _ := v.(string)
				url, md, err := decodeData([]byte(s))
				if s == "" || err != nil || url == "" || !listMatch(p, url) {
					continue
				}
				e := frontier.URLEntry{URLInfo: frontier.URLInfo{URL: url, Key: key, CrawlID: crawl, Metadata: md},
					Completed: true, Created: time.Unix(created[i], 0)}
				if stop, err := emit(e); stop || err != nil {
					return true, err
				}
			}
		}
		if cursor == 0 {
			return false, nil
		}
	}
}

// listEntry decodes a queued URL's record and data.
func listEntry(crawl, key, rec, data string) (frontier.URLEntry, bool) {
	if len(rec) < 21 || rec[0] != 'q' {
		return frontier.URLEntry{}, false
	}
	url, md, err := decodeData([]byte(data))
	if err != nil || url == "" {
		return frontier.URLEntry{}, false
	}
	e := frontier.URLEntry{URLInfo: frontier.URLInfo{URL: url, Key: key, CrawlID: crawl, Metadata: md,
		Priority: int8(127 - int(rec[1])), Depth: int(rec[2])<<8 | int(rec[3])}}
	if due := math.Float64frombits(be64(rec[9:17])); due > 0 {
		e.RefetchFrom = time.UnixMilli(int64(due))
	}
	e.Created = time.Unix(int64(be32(rec[17:21])), 0)
	return e, true
}

// listMatch is the embedded frontier's filter (frontier.ListParams).
func listMatch(p *frontier.ListParams, url string) bool {
	if p.Filter == "" {
		return true
	}
	if p.IgnoreCase {
		return strings.Contains(strings.ToLower(url), strings.ToLower(p.Filter))
	}
	return strings.Contains(url, p.Filter)
}

// CountURLs counts the URLs p selects (Start and Size ignored). Without a
// filter it adds the queues' counters (queued and completed); with one it
// lists them, so it counts completed URLs only with
// Options.KeepCompletedURLs (see ListURLs).
func (f *Frontier) CountURLs(ctx context.Context, p frontier.ListParams) (uint64, error) {
	p.Start, p.Size = 0, 0
	if p.Filter == "" {
		s, err := f.StatsContext(ctx, p.CrawlID, p.Key)
		if err != nil {
			return 0, err
		}
		return s.Size + s.Retired + s.Completed, nil
	}
	var n uint64
	err := f.ListURLs(ctx, p, func(frontier.URLEntry) error { n++; return nil })
	return n, err
}

// PurgeURLs deletes the URLs p selects (Filter applies; Start and Size
// are ignored) created at or before createdBefore (whole seconds),
// queued or completed, with any lease on them, and returns how many it
// deleted (URLFrontier PurgeURLs). Deleted URLs may be discovered again.
// Without Options.KeepCompletedURLs a completed URL has no stored URL to
// filter on: with a filter only URLs not completed are purged. Each queue is read with HSCAN, a batch at a
// time, and a script deletes the batch's URLs whose record is unchanged.
func (f *Frontier) PurgeURLs(ctx context.Context, p frontier.ListParams, createdBefore time.Time) (uint64, error) {
	defer f.forgetKnown() // once done, so a Put meanwhile cannot keep a deleted URL
	crawl := normCrawl(p.CrawlID)
	limit := createdBefore.Unix()
	keys, err := f.listKeys(ctx, p)
	if err != nil {
		return 0, err
	}
	var removed uint64
	for _, key := range keys {
		qk := f.queueKeys(crawl, key)
		var cursor uint64
		for {
			var kv []string
			err := f.retry(ctx, "purge", func(ctx context.Context) error {
				var err error
				kv, cursor, err = f.c.HScan(ctx, qk[2], cursor, "", scanBatch).Result()
				return err
			})
			if err != nil {
				return removed, err
			}
			n, err := f.purgeBatch(ctx, &p, crawl, key, kv, limit)
			removed += n
			if err != nil {
				return removed, err
			}
			if cursor == 0 {
				break
			}
		}
	}
	return removed, nil
}

// purgeBatch deletes the URLs of one HSCAN batch (hash, record pairs)
// that PurgeURLs selects.
func (f *Frontier) purgeBatch(ctx context.Context, p *frontier.ListParams, crawl, key string, kv []string, limit int64) (uint64, error) {
	qk := f.queueKeys(crawl, key)
	var hs []string
	var recs []string
	for i := 0; i+1 < len(kv); i += 2 {
		h, rec := kv[i], kv[i+1]
		switch {
		case len(rec) >= 21 && rec[0] == 'q':
			if int64(be32(rec[17:21])) > limit {
				continue
			}
		case len(rec) >= 5 && rec[0] == 'c':
			if int64(be32(rec[1:5])) > limit || (p.Filter != "" && !f.o.KeepCompletedURLs) {
				continue
			}
		default:
			continue
		}
		hs = append(hs, h)
		recs = append(recs, rec)
	}
	if len(hs) == 0 {
		return 0, nil
	}
	if p.Filter != "" {
		var data []any
		err := f.retry(ctx, "purge", func(ctx context.Context) error {
			var err error
			data, err = f.c.HMGet(ctx, qk[5], hs...).Result()
			return err
		})
		if err != nil {
			return 0, err
		}
		var keepH, keepR []string
		for i, v := range data {
			s, _ := v.(string)
			url, _, err := decodeData([]byte(s))
			if err == nil && url != "" && listMatch(p, url) {
				keepH = append(keepH, hs[i])
				keepR = append(keepR, recs[i])
			}
		}
		hs, recs = keepH, keepR
		if len(hs) == 0 {
			return 0, nil
		}
	}
	dd, err := f.defaultDelay(ctx, crawl)
	if err != nil {
		return 0, err
	}
	args := []any{f.nowArg(), dd, len(hs)}
	for i := range hs {
		args = append(args, hs[i], recs[i])
	}
	c := &call{s: purgeScript, keys: qk, args: args}
	if err := f.run(ctx, "purge", []*call{c}); err != nil {
		return 0, err
	}
	if len(c.res) == 2 {
		n, _ := asInt(c.res[1])
		return uint64(max(n, 0)), nil
	}
	st, err := parseState(c.res)
	if err != nil {
		return 0, err
	}
	if len(st.rest) != 1 {
		return 0, fmt.Errorf("cluster: purge returned %d values", len(c.res))
	}
	n, _ := asInt(st.rest[0])
	for _, h := range hs {
		f.mu.Lock()
		delete(f.mu.leases, leaseKey(crawl, key, h))
		f.mu.Unlock()
	}
	return uint64(max(n, 0)), f.run(ctx, "purge index", []*call{f.indexCall(crawl, key, st)})
}
