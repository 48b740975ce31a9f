// Package redisbackend keeps the politeness state in Redis (or Redis
// Cluster), so every process that points at the same Redis enforces one
// set of rules: the same leases, gaps, backoff and adaptive delays, the
// same robots.txt cache and the same delay configuration.
//
//	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	g, err := politeness.New(cfg, redisbackend.Backend(c, redisbackend.Options{}))
//
// State.Acquire and State.Release are each one Lua script, one round trip,
// atomic in Redis. Times inside them are Redis server time (the TIME
// command, allowed in scripts since Redis 5 replicates script effects), so
// the clocks of the machines running Courtesy never have to agree; only
// durations cross the wire. Each politeness key uses two Redis keys with a
// common hash tag ({key}), so a script touches one cluster slot. Idle keys
// expire on their own.
package redisbackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// Options tunes the Redis backend. The zero value is ready to use.
type Options struct {
	// Prefix starts every Redis key, so several deployments can share a
	// Redis. Default "courtesy:politeness:".
	Prefix string
	// IdleRetain is how long a key's state outlives its last gap, lease
	// or backoff (keeping the adaptive delay and backoff level). Default
	// 10m.
	IdleRetain time.Duration
	// RobotsRetention is how long a robots.txt entry is kept after both
	// its expiry and its good copy's fetch (RFC 9309 allows a good copy up
	// to 30 days). Default 31 days.
	RobotsRetention time.Duration
}

func (o Options) withDefaults() Options {
	if o.Prefix == "" {
		o.Prefix = "courtesy:politeness:"
	}
	if o.IdleRetain <= 0 {
		o.IdleRetain = 10 * time.Minute
	}
	if o.RobotsRetention <= 0 {
		o.RobotsRetention = 31 * 24 * time.Hour
	}
	return o
}

// Backend returns the State, RobotsStore and DelayStore on c, for
// politeness.New (the caller may still set HTTPClient, Observer, Now).
func Backend(c redis.UniversalClient, o Options) politeness.Backend {
	return politeness.Backend{State: NewState(c, o), Robots: NewRobotsStore(c, o), Delays: NewDelayStore(c, o)}
}

// State is the Redis politeness.State.
type State struct {
	c redis.UniversalClient
	o Options
}

// NewState returns a State on c.
func NewState(c redis.UniversalClient, o Options) *State {
	return &State{c: c, o: o.withDefaults()}
}

func (s *State) keys(key string) []string {
	if key == "" || key[0] == '}' {
		// "{}" is no hash tag: Redis Cluster would hash the two whole
		// keys, to different slots. A leading NUL (in no host name)
		// makes the tag non-empty.
		key = "\x00" + key
	}
	base := s.o.Prefix + "{" + key + "}:"
	return []string{base + "leases", base + "state"}
}

// Times in the scripts are integer microseconds of Redis server time;
// Lua numbers are doubles, exact to 2^53 µs (285 years).
const luaClock = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function num(v, d) if v then return tonumber(v) end return d end
-- extend makes k live at least ttl µs more; fresh says the script has
-- just made k (so it has no expiry yet: no PTTL needed to know it).
local function extend(k, ttl, fresh)
  ttl = math.ceil(ttl / 1000)
  if ttl < 1 then ttl = 1 end
  if fresh or redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
end
`

// acquireScript: KEYS leases (zset id→expiry), state (hash end, ad, lvl,
// bu, gap). ARGV id, limit, delay, override, lease, dry, retain. The gap
// is written only when it changed, and a leases set the script creates
// (no lease in flight before) gets its expiry without a PTTL first.
var acquireScript = redis.NewScript(luaClock + `
local leases, st = KEYS[1], KEYS[2]
local id, limit, delay = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local override, lease, dry, retain = ARGV[4] == '1', tonumber(ARGV[5]), ARGV[6] == '1', tonumber(ARGV[7])
local h = redis.call('HMGET', st, 'end', 'ad', 'lvl', 'bu', 'gap')
local lastEnd, adaptive, level, bu = num(h[1], nil), num(h[2], 0), num(h[3], 0), num(h[4], 0)
-- Expired leases: their expiry counts as the end of a fetch.
local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'WITHSCORES')
if #expired > 0 then
  local last = tonumber(expired[#expired])
  if not lastEnd or last > lastEnd then
    lastEnd = last
    redis.call('HSET', st, 'end', lastEnd)
    extend(st, retain)
  end
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
end
local gap = delay
if not override and adaptive > gap then gap = adaptive end
local inflight = redis.call('ZCARD', leases)
local sinceEnd, delayLeft = -1, 0
if lastEnd then
  sinceEnd = now - lastEnd
  delayLeft = math.max(lastEnd + gap - now, 0)
end
local backoff = 0
if bu > now then backoff = bu - now end
local ok, reason, wait = 0, '', 0
if backoff > 0 then
  reason, wait = 'backoff', math.max(backoff, delayLeft)
elseif inflight >= limit then
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  reason, wait = 'concurrency', tonumber(first[2]) - now + gap
elseif delayLeft > 0 then
  reason, wait = 'delay', delayLeft
else
  ok = 1
  if not dry then
    redis.call('ZADD', leases, now + lease, id)
    extend(leases, lease + retain, inflight == 0)
    inflight = inflight + 1
    if num(h[5], nil) ~= gap then redis.call('HSET', st, 'gap', gap) end
    extend(st, math.max(lease, gap) + retain)
  end
end
return {ok, reason, wait, inflight, adaptive, backoff, level, sinceEnd}
`)

// releaseScript: KEYS leases, state. ARGV id, used, adaptive, op,
// retryAfter, base, max, retain. The state's fields are written in one
// HSET.
var releaseScript = redis.NewScript(luaClock + `
local leases, st = KEYS[1], KEYS[2]
redis.call('ZREM', leases, ARGV[1])
if ARGV[2] ~= '1' then return 0 end
local adaptive, op, retryAfter = tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local base, maxb, retain = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local h = redis.call('HMGET', st, 'end', 'lvl', 'bu', 'gap')
local lastEnd, level, bu, gap = num(h[1], nil), num(h[2], 0), num(h[3], 0), num(h[4], 0)
local w = {}
if not lastEnd or now > lastEnd then w[#w + 1] = 'end' w[#w + 1] = now end
if adaptive < 0 then adaptive = 0 end
w[#w + 1] = 'ad' w[#w + 1] = adaptive
if op == 'reset' then
  level, bu = 0, 0
  w[#w + 1] = 'lvl' w[#w + 1] = 0 w[#w + 1] = 'bu' w[#w + 1] = 0
elseif op == 'grow' then
  level = level + 1
  local d = retryAfter
  if d <= 0 then
    d = 0
    if base > 0 then
      d = base
      for i = 2, level do
        if d >= maxb / 2 then d = maxb break end
        d = d * 2
      end
      if d > maxb then d = maxb end
    end
  end
  if now + d > bu then bu = now + d end
  w[#w + 1] = 'lvl' w[#w + 1] = level w[#w + 1] = 'bu' w[#w + 1] = bu
end
redis.call('HSET', st, unpack(w))
extend(st, math.max(gap, adaptive, bu - now, 0) + retain)
return 1
`)

func us(d time.Duration) int64 { return d.Microseconds() }

func fromUS(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

func bool01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Acquire implements politeness.State.
func (s *State) Acquire(ctx context.Context, key string, req politeness.AcquireRequest) (politeness.Grant, error) {
	res, err := acquireScript.Run(ctx, s.c, s.keys(key),
		req.LeaseID, max(req.Limit, 1), us(max(req.Delay, 0)), bool01(req.Override),
		us(max(req.Lease, time.Millisecond)), bool01(req.DryRun), us(s.o.IdleRetain)).Slice()
	if err != nil {
		return politeness.Grant{}, fmt.Errorf("redisbackend: acquire %s: %w", key, err)
	}
	if len(res) != 8 {
		return politeness.Grant{}, fmt.Errorf("redisbackend: acquire %s: script returned %d values", key, len(res))
	}
	n := make([]int64, len(res))
	for i, v := range res {
		if i == 1 {
			continue
		}
		x, ok := v.(int64)
		if !ok {
			return politeness.Grant{}, fmt.Errorf("redisbackend: acquire %s: value %d is %T", key, i, v)
		}
		n[i] = x
	}
	reason, _ := res[1].(string)
	g := politeness.Grant{
		OK:           n[0] == 1,
		Reason:       politeness.Reason(reason),
		Wait:         fromUS(n[2]),
		InFlight:     int(n[3]),
		Adaptive:     fromUS(n[4]),
		Backoff:      fromUS(n[5]),
		BackoffLevel: int(n[6]),
		SinceEnd:     fromUS(n[7]),
	}
	if n[7] < 0 {
		g.SinceEnd = -1
	}
	return g, nil
}

// Release implements politeness.State.
func (s *State) Release(ctx context.Context, key string, req politeness.ReleaseRequest) error {
	op := "keep"
	switch req.Backoff {
	case politeness.BackoffReset:
		op = "reset"
	case politeness.BackoffGrow:
		op = "grow"
	}
	err := releaseScript.Run(ctx, s.c, s.keys(key),
		req.LeaseID, bool01(req.Used), us(req.Adaptive), op, us(req.RetryAfter),
		us(req.BackoffBase), us(req.BackoffMax), us(s.o.IdleRetain)).Err()
	if err != nil {
		return fmt.Errorf("redisbackend: release %s: %w", key, err)
	}
	return nil
}

// RobotsStore is the Redis politeness.RobotsStore: one string per origin,
// expiring RobotsRetention after it stops being useful.
type RobotsStore struct {
	c   redis.UniversalClient
	o   Options
	now func() time.Time
}

// NewRobotsStore returns a RobotsStore on c.
func NewRobotsStore(c redis.UniversalClient, o Options) *RobotsStore {
	return &RobotsStore{c: c, o: o.withDefaults(), now: time.Now}
}

func (s *RobotsStore) key(origin string) string { return s.o.Prefix + "robots:" + origin }

// GetRobots implements politeness.RobotsStore.
func (s *RobotsStore) GetRobots(ctx context.Context, origin string) (politeness.RobotsEntry, error) {
	v, err := s.c.Get(ctx, s.key(origin)).Bytes()
	if errors.Is(err, redis.Nil) {
		return politeness.RobotsEntry{}, politeness.ErrNotFound
	}
	if err != nil {
		return politeness.RobotsEntry{}, fmt.Errorf("redisbackend: robots %s: %w", origin, err)
	}
	return politeness.DecodeRobotsEntry(v)
}

// PutRobots implements politeness.RobotsStore.
func (s *RobotsStore) PutRobots(ctx context.Context, e politeness.RobotsEntry) error {
	v, err := politeness.EncodeRobotsEntry(e)
	if err != nil {
		return err
	}
	until := e.Expires
	if g := e.GoodFetched; !g.IsZero() && g.After(until) {
		until = g
	}
	ttl := max(until.Sub(s.now()), 0) + s.o.RobotsRetention
	if err := s.c.Set(ctx, s.key(e.Origin), v, ttl).Err(); err != nil {
		return fmt.Errorf("redisbackend: robots %s: %w", e.Origin, err)
	}
	return nil
}

// DeleteRobots implements politeness.RobotsStore.
func (s *RobotsStore) DeleteRobots(ctx context.Context, origin string) error {
	if err := s.c.Del(ctx, s.key(origin)).Err(); err != nil {
		return fmt.Errorf("redisbackend: robots %s: %w", origin, err)
	}
	return nil
}

// DelayStore is the Redis politeness.DelayStore: a hash of entries and a
// sorted set of keys (all scores 0, so ordered by key for paging), under
// one hash tag so a cluster keeps them on one slot.
type DelayStore struct {
	c redis.UniversalClient
	o Options
}

// NewDelayStore returns a DelayStore on c.
func NewDelayStore(c redis.UniversalClient, o Options) *DelayStore {
	return &DelayStore{c: c, o: o.withDefaults()}
}

func (s *DelayStore) keys() (hash, index string) {
	base := s.o.Prefix + "{delays}:"
	return base + "entries", base + "index"
}

// GetDelay implements politeness.DelayStore.
func (s *DelayStore) GetDelay(ctx context.Context, key string) (politeness.DelayEntry, error) {
	h, _ := s.keys()
	v, err := s.c.HGet(ctx, h, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return politeness.DelayEntry{}, politeness.ErrNotFound
	}
	if err != nil {
		return politeness.DelayEntry{}, fmt.Errorf("redisbackend: delay %s: %w", key, err)
	}
	return politeness.DecodeDelayEntry(v)
}

// PutDelay implements politeness.DelayStore.
func (s *DelayStore) PutDelay(ctx context.Context, e politeness.DelayEntry) error {
	v, err := politeness.EncodeDelayEntry(e)
	if err != nil {
		return err
	}
	h, idx := s.keys()
	_, err = s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, h, e.Key, v)
		p.ZAdd(ctx, idx, redis.Z{Score: 0, Member: e.Key})
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisbackend: delay %s: %w", e.Key, err)
	}
	return nil
}

// DeleteDelay implements politeness.DelayStore.
func (s *DelayStore) DeleteDelay(ctx context.Context, key string) error {
	h, idx := s.keys()
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, h, key)
		p.ZRem(ctx, idx, key)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisbackend: delay %s: %w", key, err)
	}
	return nil
}

// ListDelays implements politeness.DelayStore.
func (s *DelayStore) ListDelays(ctx context.Context, after string, limit int) ([]politeness.DelayEntry, error) {
	limit = politeness.ListLimit(limit)
	h, idx := s.keys()
	start := "-"
	if after != "" {
		start = "(" + after
	}
	keys, err := s.c.ZRangeByLex(ctx, idx, &redis.ZRangeBy{Min: start, Max: "+", Count: int64(limit)}).Result()
	if err != nil {
		return nil, fmt.Errorf("redisbackend: list delays: %w", err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	vals, err := s.c.HMGet(ctx, h, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("redisbackend: list delays: %w", err)
	}
	out := make([]politeness.DelayEntry, 0, len(vals))
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // deleted between the two reads
		}
		e, err := politeness.DecodeDelayEntry([]byte(str))
		if err != nil {
			return nil, fmt.Errorf("redisbackend: list delays: %s: %w", keys[i], err)
		}
		out = append(out, e)
	}
	return out, nil
}
