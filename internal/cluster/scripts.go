package cluster

import "github.com/redis/go-redis/v9"

// The queue scripts share this prelude. KEYS are one queue's six keys,
// all under one hash tag (one slot): m (meta hash), z (queued URLs, a
// sorted set), u (URL records, the seen-test), l (leases: URL hash →
// expiry), t (lease tokens: URL hash → fencing token) and d (URL hash →
// URL and metadata, while queued). ARGV[1] is the
// time in milliseconds, or -1 for Redis server time; ARGV[2] the crawl's
// default delay in milliseconds.
//
// A URL record (u) is 'q' .. sort8 .. due (8-byte double) .. created
// (4 bytes, unix seconds) for a queued URL, and 'c' .. created for a
// completed one. The URL and metadata live apart, in d, and only while
// queued: so a queue's records stay under Redis's 64-byte limit for the
// compact listpack encoding of small hashes, and a completed URL costs
// its 16-byte hash and 5 bytes. sort8 is the URL's order within a due time: 127 -
// priority (1 byte, so higher priorities first), depth (2 bytes,
// breadth-first), then the queue's insertion sequence (5 bytes). The
// member of z is sort8 .. the 16-byte URL hash, scored by the due time, so
// ZRANGEBYSCORE -inf now returns the due URLs in the embedded frontier's
// order. Leasing moves a member from z to l; an expired lease moves it
// back (reclaim), in Redis, whoever runs the next script of the queue.
const luaQueue = `
local m, z, u, l, t, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local now = tonumber(ARGV[1])
if now < 0 then
  local tt = redis.call('TIME')
  now = tonumber(tt[1]) * 1000 + math.floor(tonumber(tt[2]) / 1000)
end
local defDelay = tonumber(ARGV[2])
local function num(v, d) if v and v ~= '' then return tonumber(v) end return d end
-- reclaim returns how many leases it ended.
local function reclaim()
  local ex = redis.call('ZRANGEBYSCORE', l, '-inf', now, 'LIMIT', 0, 10000)
  for _, h in ipairs(ex) do
    redis.call('ZREM', l, h)
    redis.call('HDEL', t, h)
    local r = redis.call('HGET', u, h)
    if r and string.sub(r, 1, 1) == 'q' then
      redis.call('ZADD', z, struct.unpack('>d', r, 10), string.sub(r, 2, 9) .. h)
    end
  end
  return #ex
end
-- state bumps the queue's version and returns what the index needs:
-- version, ready time (-1: not servable), queued, in flight, completed,
-- retired (0/1). parked (the caller's in-flight bound was reached) makes
-- the queue ready only when its first lease expires (or an ack, which
-- calls state again). A queue with as many URLs in flight as the bound
-- of its last lease with one (the 'bound' field) is parked too, whatever
-- script runs: so a put to a queue whose URL is out does not make it
-- look ready to the callers that would find it full.
--
-- f is the meta hash's fields in the order of stateFields, as the caller
-- read and changed them (nil: state reads them), and w the caller's
-- changes to write (field, value pairs, or nil): state writes them with
-- the new version in one HSET. (Scripts are atomic: counting the version
-- here is the same as HINCRBY.) The head of z is read only for a queue
-- not parked, the first lease only when there is one.
local stateFields = {'queued', 'completed', 'limit', 'delay', 'blocked', 'last', 'retired', 'bound', 'ver'}
local function state(parked, f, w)
  if not f then f = redis.call('HMGET', m, unpack(stateFields)) end
  local ver = num(f[9], 0) + 1
  w = w or {}
  w[#w + 1] = 'ver'
  w[#w + 1] = ver
  redis.call('HSET', m, unpack(w))
  local queued, completed, limit = num(f[1], 0), num(f[2], 0), num(f[3], 0)
  local delay = num(f[4], -1)
  if delay < 0 then delay = defDelay end
  local blocked, last = num(f[5], 0), num(f[6], 0)
  local retired = f[7] and f[7] ~= ''
  local bound = num(f[8], 0)
  local inflight = redis.call('ZCARD', l)
  if bound > 0 and inflight >= bound then parked = true end
  local ready = -1
  if not retired and not (limit > 0 and completed >= limit) then
    local tm = nil
    if not parked then
      local head = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
      if #head > 0 then tm = tonumber(head[2]) end
    end
    if inflight > 0 then
      local lf = redis.call('ZRANGE', l, 0, 0, 'WITHSCORES')
      if #lf > 0 then
        local e = tonumber(lf[2])
        if not tm or e < tm then tm = e end
      end
    end
    if tm then
      if blocked > tm then tm = blocked end
      if last > 0 and last + delay > tm then tm = last + delay end
      ready = tm
    end
  end
  local r = 0
  if retired then r = 1 end
  local pk = 0
  if parked then pk = inflight end
  return {ver, ready, queued, inflight, completed, r, now, pk}
end
`

// putScript: ARGV[3] crawl, ARGV[4] key, ARGV[5] item count, then 8 per
// item: kind ('d' discovered, 'k' known, 'K' known keeping the data of a
// completed URL: Options.KeepCompletedURLs), hash, priority, depth, due (ms;
// -1 completed; for a discovered item 1 dates it now, frontier.Item.Dated,
// and 0 makes it due as soon as possible), fencing token (” none), data,
// hold (ms; known only; 0 none: the queue's block is raised to it,
// frontier.Item.Hold).
// Returns the state, then one status per item: 0 OK, 1 skipped (known), 2
// stale (a known item whose token is not the URL's live lease). A hold
// applies even to a stale acknowledgement: it says when the host may be
// asked again, whoever holds the URL now.
//
// The meta hash is read once (state's fields, the key and the insertion
// counter) and written once, by state.
var putScript = redis.NewScript(luaQueue + `
local f = redis.call('HMGET', m, 'queued', 'completed', 'limit', 'delay', 'blocked', 'last', 'retired', 'bound', 'ver', 'key', 'seq')
if not f[10] then
  -- The queue's first put: it exists from now on, and a block or delay
  -- set before it (adminScript) is kept.
  redis.call('HSETNX', m, 'crawl', ARGV[3])
  redis.call('HSET', m, 'key', ARGV[4])
  redis.call('PERSIST', m)
end
reclaim()
local queued, completed = num(f[1], 0), num(f[2], 0)
local seq0 = num(f[11], 0)
local seq = seq0
local created = math.floor(now / 1000)
local out = {}
local n = tonumber(ARGV[5])
local hold = 0
for i = 0, n - 1 do
  local b = 6 + i * 8
  local kind, h, prio, depth = ARGV[b], ARGV[b + 1], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local due, token, data = tonumber(ARGV[b + 4]), ARGV[b + 5], ARGV[b + 6]
  if kind ~= 'd' then hold = math.max(hold, tonumber(ARGV[b + 7])) end
  local status = 0
  local old = redis.call('HGET', u, h)
  if kind == 'd' then
    if old then status = 1 elseif due > 0 then due = now else due = 0 end
  elseif token ~= '' then
    local cur = redis.call('HGET', t, h)
    if cur and cur ~= token then status = 2 end
  end
  if status == 0 then
    local c = created
    if old then
      if string.sub(old, 1, 1) == 'q' then
        c = struct.unpack('>I4', old, 18)
        redis.call('ZREM', z, string.sub(old, 2, 9) .. h)
        queued = queued - 1
      else
        c = struct.unpack('>I4', old, 2)
        -- (a queue deleted by DeleteQueue keeps its completed records
        -- but restarts its counters at zero)
        if completed > 0 then completed = completed - 1 end
      end
      redis.call('ZREM', l, h)
      redis.call('HDEL', t, h)
    end
    if due < 0 then
      redis.call('HSET', u, h, 'c' .. struct.pack('>I4', c))
      if kind == 'K' then redis.call('HSET', d, h, data) else redis.call('HDEL', d, h) end
      completed = completed + 1
    else
      seq = seq + 1
      local s8 = string.char(127 - prio) .. struct.pack('>I2', depth) ..
        string.char(math.floor(seq / 4294967296) % 256) .. struct.pack('>I4', seq % 4294967296)
      redis.call('HSET', u, h, 'q' .. s8 .. struct.pack('>d', due) .. struct.pack('>I4', c))
      redis.call('HSET', d, h, data)
      redis.call('ZADD', z, due, s8 .. h)
      queued = queued + 1
    end
  end
  out[#out + 1] = status
end
local w = {'queued', queued, 'completed', completed}
f[1], f[2] = queued, completed
if seq ~= seq0 then w[#w + 1] = 'seq' w[#w + 1] = seq end
if hold > 0 and hold > num(f[5], 0) then
  w[#w + 1] = 'blocked'
  w[#w + 1] = hold
  f[5] = hold
end
local st = state(false, f, w)
for _, s in ipairs(out) do st[#st + 1] = s end
return st
`)

// leaseScript: ARGV[3] most URLs to lease, ARGV[4] the caller's bound on
// the queue's URLs in flight (0 none), ARGV[5] lease in ms, ARGV[6] a
// random nonce of the caller, ARGV[7] '1' to return the state even when
// the script changed nothing. Returns the state, then per URL leased:
// token, z member, data. A token is the queue's fencing counter and the
// nonce: after a failover that lost the last increments of the counter, a
// reissued number still makes a different token. {-1} for an unknown
// queue (a Get naming a key that was never put); {-2} when it leased
// nothing and changed nothing (no version either): the index already
// holds what the queue's last change told it, or will when that change's
// update lands, so the caller sends no index update.
//
// The meta hash is read once (state's fields, the key and the fencing
// counter) and written once, by state.
var leaseScript = redis.NewScript(luaQueue + `
local f = redis.call('HMGET', m, 'queued', 'completed', 'limit', 'delay', 'blocked', 'last', 'retired', 'bound', 'ver', 'key', 'fence')
if not f[10] then return {-1} end
local changed = reclaim() > 0
local n, maxInflight, lease = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local w = {}
if maxInflight > 0 and num(f[8], 0) ~= maxInflight then
  w[1], w[2] = 'bound', maxInflight
  f[8] = maxInflight
  changed = true
end
local completed, limit = num(f[2], 0), num(f[3], 0)
local delay = num(f[4], -1)
if delay < 0 then delay = defDelay end
local blocked, last = num(f[5], 0), num(f[6], 0)
local out = {}
local parked = false
if not (f[7] and f[7] ~= '') and not (limit > 0 and completed >= limit) and blocked <= now and
    not (last > 0 and last + delay > now) then
  local inflight = redis.call('ZCARD', l)
  if maxInflight > 0 then
    if maxInflight - inflight < n then n = maxInflight - inflight end
  end
  if n > 0 then
    local ms = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, n)
    local fence = num(f[11], 0)
    for _, mem in ipairs(ms) do
      local h = string.sub(mem, 9)
      local r = redis.call('HGET', u, h)
      redis.call('ZREM', z, mem)
      if r and string.sub(r, 1, 1) == 'q' then
        fence = fence + 1
        local tok = fence .. '-' .. ARGV[6]
        inflight = inflight + redis.call('ZADD', l, now + lease, h)
        redis.call('HSET', t, h, tok)
        out[#out + 1] = tok
        out[#out + 1] = mem
        out[#out + 1] = redis.call('HGET', d, h) or ''
      end
    end
    if #out > 0 then
      w[#w + 1] = 'last'
      w[#w + 1] = now
      w[#w + 1] = 'fence'
      w[#w + 1] = fence
      f[6] = now
    end
  end
  if maxInflight > 0 and inflight >= maxInflight then parked = true end
end
if #out == 0 and not changed and ARGV[7] ~= '1' then return {-2} end
local st = state(parked, f, w)
for _, v in ipairs(out) do st[#st + 1] = v end
return st
`)

// releaseScript: ARGV[3] URL hash, ARGV[4] token (” any). Ends the lease
// and queues the URL again at its due time.
var releaseScript = redis.NewScript(luaQueue + `
reclaim()
local h, tok = ARGV[3], ARGV[4]
local cur = redis.call('HGET', t, h)
if cur and (tok == '' or cur == tok) then
  redis.call('ZREM', l, h)
  redis.call('HDEL', t, h)
  local r = redis.call('HGET', u, h)
  if r and string.sub(r, 1, 1) == 'q' then
    redis.call('ZADD', z, struct.unpack('>d', r, 10), string.sub(r, 2, 9) .. h)
  end
end
return state(false)
`)

// adminScript: ARGV[3] field (blocked, delay, limit, retired, or ” to
// only refresh the state), ARGV[4] value (” deletes the field). Returns
// {-1} for an unknown queue. ARGV[5] '1' keeps the field for a queue that
// does not exist yet.
//
// A queue exists once a Put has named it (its meta hash has a key
// field). A block or delay set before (the URLFrontier server's SetDelay
// and BlockQueueUntil, as in the embedded frontier) is kept in a meta
// hash without that field, for pendingTTL seconds after the last such
// call, and applies when the queue appears (putScript makes it
// persistent).
var adminScript = redis.NewScript(luaQueue + `
if redis.call('HEXISTS', m, 'key') == 0 then
  local field, v = ARGV[3], ARGV[4]
  if ARGV[5] == '1' and field ~= '' then
    if v == '' then redis.call('HDEL', m, field) else redis.call('HSET', m, field, v) end
    if redis.call('EXISTS', m) == 1 then redis.call('EXPIRE', m, ` + pendingTTL + `) end
  end
  return {-1}
end
reclaim()
local field, v = ARGV[3], ARGV[4]
if field ~= '' then
  if v == '' then redis.call('HDEL', m, field) else redis.call('HSET', m, field, v) end
end
return state(false)
`)

// lookupScript: ARGV[3] URL hash. Returns the record (or ”), whether a
// live lease holds it, and the URL's data (while it is not completed, or
// with Options.KeepCompletedURLs).
var lookupScript = redis.NewScript(luaQueue + `
local h = ARGV[3]
local r = redis.call('HGET', u, h)
local leased = 0
local e = redis.call('ZSCORE', l, h)
if e and tonumber(e) > now then leased = 1 end
local data = ''
if r then data = redis.call('HGET', d, h) or '' end
return {r or '', leased, data}
`)

// pendingTTL is how long (seconds) a block or delay set on a queue that
// does not exist yet is kept: a day.
const pendingTTL = "86400"

// indexScript keeps one shard of a crawl's index (all keys under the
// shard's tag): KEYS r (queue key → ready time), q (queue key → "version
// queued inflight completed retired"), s (totals), p (parked queues:
// queue key → URLs in flight when Get left it at the caller's in-flight
// bound), and c (claims, claimScript) when the update follows the lease
// of a claimed queue: the claim has served and is dropped. ARGV queue key, version, ready, queued, inflight, completed,
// retired, parked (URLs in flight, 0: not parked), force ('1': apply
// whatever the version). An update older than the one stored is dropped,
// so updates may arrive in any order. Repair forces: after a failover
// that lost a queue's last version increments, its new versions may be
// lower than the index's until then.
var indexScript = redis.NewScript(`
local r, q, s, pz = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local key = ARGV[1]
if KEYS[5] then redis.call('ZREM', KEYS[5], key) end
local ver, ready = tonumber(ARGV[2]), tonumber(ARGV[3])
local nq, ni, nc, nr = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local old = redis.call('HGET', q, key)
local ov, oq, oi, oc, orr = -1, 0, 0, 0, 0
local existed = false
if old then
  existed = true
  local p = {}
  for x in string.gmatch(old, '[^ ]+') do p[#p + 1] = tonumber(x) end
  ov, oq, oi, oc, orr = p[1], p[2], p[3], p[4], p[5]
end
if ver <= ov and ARGV[9] ~= '1' then return 0 end
if ready < 0 then redis.call('ZREM', r, key) else redis.call('ZADD', r, ready, key) end
local parked = tonumber(ARGV[8])
if parked > 0 and ready >= 0 then redis.call('ZADD', pz, parked, key) else redis.call('ZREM', pz, key) end
redis.call('HSET', q, key, ver .. ' ' .. nq .. ' ' .. ni .. ' ' .. nc .. ' ' .. nr)
local function parts(qd, inf, rt)
  if rt == 1 then return 0, 0, qd, 0, 1 end
  local a = 0
  if qd > 0 then a = 1 end
  return qd, inf, 0, a, 0
end
local s1, i1, r1, a1, rq1 = parts(oq, oi, orr)
local s2, i2, r2, a2, rq2 = parts(nq, ni, nr)
local ex = 0
if not existed then ex = 1 end
if s2 ~= s1 then redis.call('HINCRBY', s, 'size', s2 - s1) end
if i2 ~= i1 then redis.call('HINCRBY', s, 'inflight', i2 - i1) end
if r2 ~= r1 then redis.call('HINCRBY', s, 'retired', r2 - r1) end
if a2 ~= a1 then redis.call('HINCRBY', s, 'active', a2 - a1) end
if rq2 ~= rq1 then redis.call('HINCRBY', s, 'retiredq', rq2 - rq1) end
if nc ~= oc then redis.call('HINCRBY', s, 'completed', nc - oc) end
if ex == 1 then redis.call('HINCRBY', s, 'queues', 1) end
return 1
`)

// parkedScript: KEYS p of one index shard; ARGV[1] most URLs in flight
// (a number or +inf), ARGV[2] most members. Returns the parked queues with
// at most that many URLs in flight.
var parkedScript = redis.NewScript(`
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
`)

// peekScript: KEYS r of one index shard; ARGV[1] now (ms, -1 server
// time), ARGV[2] most members. Returns queue keys and ready times of the
// queues ready now, earliest first, then the earliest ready time of all
// (or -1).
var peekScript = redis.NewScript(`
local now = tonumber(ARGV[1])
if now < 0 then
  local tt = redis.call('TIME')
  now = tonumber(tt[1]) * 1000 + math.floor(tonumber(tt[2]) / 1000)
end
local out = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first > 0 then out[#out + 1] = first[2] else out[#out + 1] = '-1' end
out[#out + 1] = tostring(now)
return out
`)

// claimScript reads the ready queues of one index shard for a Get that
// keeps what it reads (Options.ReadyCache), and claims them: KEYS r and c
// of the shard; ARGV[1] now (ms, -1 server time), ARGV[2] most queues,
// ARGV[3] how long the claims last (ms). A claimed queue (c: queue key →
// end of the claim) is skipped by the other claiming Gets until the
// claim ends, so that processes do not lease the same queues from their
// caches (one would lease nothing); its ready time in r, and so its
// place in line, is unchanged. Returns queue keys and ready times of the
// queues claimed, earliest first, then when the shard may next have a
// queue for the caller (now when ready queues were left unread; else the
// earliest of its next ready time and the end of a claim that hid a
// ready queue; -1: none), then now.
var claimScript = redis.NewScript(`
local r, c = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
if now < 0 then
  local tt = redis.call('TIME')
  now = tonumber(tt[1]) * 1000 + math.floor(tonumber(tt[2]) / 1000)
end
local k, hold = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', c, '-inf', now)
local claims = redis.call('ZRANGE', c, 0, -1)
local held = {}
for _, q in ipairs(claims) do held[q] = true end
local ready = redis.call('ZRANGEBYSCORE', r, '-inf', now, 'WITHSCORES', 'LIMIT', 0, k + #claims + 1)
local out, add = {}, {}
local n, hidden, left = 0, false, false
for i = 1, #ready, 2 do
  if n >= k then left = true break end
  if held[ready[i]] then
    hidden = true
  else
    add[#add + 1] = now + hold
    add[#add + 1] = ready[i]
    out[#out + 1] = ready[i]
    out[#out + 1] = ready[i + 1]
    n = n + 1
  end
end
if #add > 0 then redis.call('ZADD', c, unpack(add)) end
local nxt = -1
if left then
  nxt = now
else
  local a = redis.call('ZRANGEBYSCORE', r, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #a > 0 then nxt = tonumber(a[2]) end
  if hidden then
    local e = redis.call('ZRANGE', c, 0, 0, 'WITHSCORES')
    if #e > 0 and (nxt < 0 or tonumber(e[2]) < nxt) then nxt = tonumber(e[2]) end
  end
end
out[#out + 1] = tostring(nxt)
out[#out + 1] = tostring(now)
return out
`)
