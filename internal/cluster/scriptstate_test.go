package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestScriptStateMatchesRedis: the queue scripts read the meta hash once
// and keep the URLs in flight, the first lease's expiry and the next due
// time as they go, instead of reading them again from Redis before they
// return the state. After random puts (new, known and repeated URLs, the
// same URL twice in one call, acknowledgements with good, stale and no
// tokens, refetches, holds), leases (several URLs, in-flight bounds),
// releases, blocks, delays and expired leases, every state a script
// returns must be the one Redis's keys give, and the keys must agree with
// each other.
func TestScriptStateMatchesRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	f, err := New(ctx, c, Options{Prefix: "ss:", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const queues, urls = 3, 12
	key := func(q int) string { return fmt.Sprintf("q%d.example", q) }
	url := func(q, i int) string { return fmt.Sprintf("http://q%d.example/%d", q, i) }
	tokens := map[string]string{} // URL hash → last token leased
	run := func(what string, q int, s *redis.Script, args ...any) []any {
		t.Helper()
		cl := &call{s: s, keys: f.queueKeys(frontier.DefaultCrawl, key(q)), args: append([]any{f.nowArg(), 0}, args...)}
		if err := f.run(ctx, what, []*call{cl}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(cl.res) > 1 {
			st, err := parseState(cl.res)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkState(t, c, f, q, key(q), what, st)
		}
		return cl.res
	}
	for step := range 3000 {
		q := rng.IntN(queues)
		switch op := rng.IntN(10); {
		case op < 3: // put: discovered and known items, some twice
			var args []any
			n := 1 + rng.IntN(4)
			for range n {
				i := rng.IntN(urls)
				h := hashURL(url(q, i))
				kind, due, tok, hold := "d", int64(0), "", int64(0)
				if rng.IntN(3) == 0 {
					kind, due = "k", -1
					if rng.IntN(3) == 0 {
						due = clk.Now().UnixMilli() + int64(rng.IntN(3000))
					}
					switch rng.IntN(3) {
					case 0:
						tok = tokens[h]
					case 1:
						tok = "1-stale"
					}
					if rng.IntN(2) == 0 {
						hold = clk.Now().UnixMilli() + int64(rng.IntN(2000))
					}
				}
				args = append(args, kind, h, rng.IntN(3), rng.IntN(3), due, tok, encodeData(url(q, i), nil), hold)
			}
			run("put", q, putScript, append([]any{frontier.DefaultCrawl, key(q), n}, args...)...)
		case op < 6: // lease
			res := run("lease", q, leaseScript, 1+rng.IntN(3), rng.IntN(3), 500+rng.IntN(2000), "n"+strconv.Itoa(step), strconv.Itoa(rng.IntN(2)))
			if len(res) > 8 {
				for j := 8; j+2 < len(res); j += 3 {
					mem, _ := res[j+1].(string)
					tokens[mem[8:]], _ = res[j].(string)
				}
			}
		case op < 7: // release
			h := hashURL(url(q, rng.IntN(urls)))
			tok := ""
			if rng.IntN(2) == 0 {
				tok = tokens[h]
			}
			run("release", q, releaseScript, h, tok)
		case op < 8: // block, delay, or a refresh
			field, v := "", ""
			switch rng.IntN(3) {
			case 0:
				field = "blocked"
				if rng.IntN(2) == 0 {
					v = strconv.FormatInt(clk.Now().UnixMilli()+int64(rng.IntN(1500)), 10)
				}
			case 1:
				field = "delay"
				if rng.IntN(2) == 0 {
					v = strconv.Itoa(rng.IntN(800))
				}
			}
			run("admin", q, adminScript, field, v, "0")
		default:
			clk.Advance(time.Duration(rng.IntN(900)) * time.Millisecond)
		}
	}
}

// checkState compares a script's state with the queue's keys.
func checkState(t *testing.T, c *redis.Client, f *Frontier, q int, key, what string, st queueState) {
	t.Helper()
	ctx := context.Background()
	ks := f.queueKeys(frontier.DefaultCrawl, key)
	m, z, u, l, tk := ks[0], ks[1], ks[2], ks[3], ks[4]
	meta, err := c.HGetAll(ctx, m).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, fld := range []string{"ver", "seq", "fence", "queued", "completed", "last", "blocked"} {
		if v, ok := meta[fld]; ok {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				t.Fatalf("%s on queue %d: meta field %s = %q, not an integer", what, q, fld, v)
			}
		}
	}
	num := func(f string, d int64) int64 {
		if v, ok := meta[f]; ok && v != "" {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
		return d
	}
	if st.ver != num("ver", 0) {
		t.Fatalf("%s on queue %d: version %d, stored %d", what, q, st.ver, num("ver", 0))
	}
	inflight := c.ZCard(ctx, l).Val()
	if st.inflight != inflight {
		t.Fatalf("%s on queue %d: %d in flight, ZCARD l %d", what, q, st.inflight, inflight)
	}
	if n := c.HLen(ctx, tk).Val(); n != inflight {
		t.Fatalf("%s on queue %d: %d tokens, %d leases", what, q, n, inflight)
	}
	recs := c.HVals(ctx, u).Val()
	var queued, completed int64
	for _, r := range recs {
		if r[0] == 'q' {
			queued++
		} else {
			completed++
		}
	}
	if st.queued != queued || st.queued != num("queued", 0) || c.ZCard(ctx, z).Val()+inflight != queued {
		t.Fatalf("%s on queue %d: queued %d, stored %d, records %d, z %d + l %d", what, q, st.queued, num("queued", 0), queued, c.ZCard(ctx, z).Val(), inflight)
	}
	if st.completed != completed || st.completed != num("completed", 0) {
		t.Fatalf("%s on queue %d: completed %d, stored %d, records %d", what, q, st.completed, num("completed", 0), completed)
	}
	// The ready time, as state() computes it, from the keys.
	parked := st.parked > 0
	if b := num("bound", 0); b > 0 && inflight >= b {
		parked = true
	}
	if parked && st.parked != inflight {
		t.Fatalf("%s on queue %d: parked %d with %d in flight", what, q, st.parked, inflight)
	}
	ready := int64(-1)
	delay := num("delay", -1)
	if delay < 0 {
		delay = 0
	}
	var tm *float64
	if head := c.ZRangeWithScores(ctx, z, 0, 0).Val(); len(head) > 0 && !parked {
		tm = &head[0].Score
	}
	if first := c.ZRangeWithScores(ctx, l, 0, 0).Val(); len(first) > 0 && (tm == nil || first[0].Score < *tm) {
		tm = &first[0].Score
	}
	if tm != nil {
		r := int64(*tm)
		r = max(r, num("blocked", 0))
		if last := num("last", 0); last > 0 {
			r = max(r, last+delay)
		}
		ready = r
	}
	if st.ready != ready {
		t.Fatalf("%s on queue %d: ready %d, keys say %d (parked %v, meta %v)", what, q, st.ready, ready, parked, meta)
	}
}
