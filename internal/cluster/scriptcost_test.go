package cluster

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// BenchmarkScriptCost measures what the crawl node's Redis scripts cost
// Redis, per script and per page, from Redis's own accounting (INFO
// commandstats and SLOWLOG durations: the time the server spent in the
// command, nested commands included), not from the wall clock, which a
// shared machine makes noisy.
//
// The server has a replica, as in a deployment. The state is the
// cluster benchmark's: 200 hosts (queues) of 60 queued
// URLs, put by another process (so this one's known-URL cache does not
// know them). One iteration is one page of every host, as a crawl node
// does it: Get (two queues at a time, one URL a queue, with the ready
// cache), the politeness gate's Acquire and Release, and acknowledgements
// in groups of four, each with its hold and two links to its host, one
// new and one already stored. So every queue keeps about 60 URLs queued,
// and its seen-test grows by one a page. Run it with a fixed count:
//
//	go test -run '^$' -bench ScriptCost -benchtime 20x -count 5 ./internal/cluster
//
// It reports Redis µs per page by script (and in all), and µs per call.
// The slow log it reads logs the commands a script runs too, which adds
// about 1 µs per command to the script's time: compare its figures with
// each other (old and new builds alternating), not with a server
// without it.
func BenchmarkScriptCost(b *testing.B) {
	const hosts, perHost, group = 200, 60, 4
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	// A replica, as every master of a deployment has: the master's
	// scripts then also feed their writes to the replication stream.
	rep := redistest.Start(b)
	rc := redis.NewClient(&redis.Options{Addr: rep.Addr})
	b.Cleanup(func() { rc.Close() })
	host, port, _ := strings.Cut(srv.Addr, ":")
	if err := rc.ReplicaOf(ctx, host, port).Err(); err != nil {
		b.Fatal(err)
	}
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	o := Options{Prefix: "sc:", Now: clk.Now}
	seeder, err := New(ctx, c, o)
	if err != nil {
		b.Fatal(err)
	}
	o.KnownCache, o.ReadyCache = 1<<16, 50*time.Millisecond
	f, err := New(ctx, c, o)
	if err != nil {
		b.Fatal(err)
	}
	gate := redisbackend.NewState(c, redisbackend.Options{Prefix: "scg:"})
	url := func(h, i int) string { return fmt.Sprintf("http://www.host%04d.test/section/page-%06d.html", h, i) }
	for h := range hosts {
		items := make([]frontier.Item, perHost)
		for i := range items {
			items[i] = frontier.Item{Info: frontier.URLInfo{URL: url(h, i), Depth: 1 + i%3}}
		}
		if _, err := seeder.Put(ctx, items); err != nil {
			b.Fatal(err)
		}
	}
	names := map[string]string{}
	for name, s := range map[string]*redis.Script{"put": putScript, "lease": leaseScript, "release": releaseScript,
		"admin": adminScript, "index": indexScript, "claim": claimScript, "peek": peekScript, "parked": parkedScript} {
		names[s.Hash()] = name
	}
	for _, kv := range [][2]string{{"slowlog-log-slower-than", "0"}, {"slowlog-max-len", "100000"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	c.SlowLogReset(ctx)
	us := map[string]float64{}  // by script: µs
	calls := map[string]int64{} // by script: calls
	var pages, commands int64
	var evalUS float64
	cpu0 := redisCPU(b, c)
	round := 0
	for b.Loop() {
		round++
		clk.Advance(time.Second)
		var acks []frontier.Item
		flush := func() {
			if _, err := f.Put(ctx, acks); err != nil {
				b.Fatal(err)
			}
			acks = acks[:0]
		}
		got, empty := 0, 0
		for got < hosts && empty < 3 {
			ls, err := f.Get(ctx, frontier.GetParams{MaxQueues: 2, MaxURLsPerQueue: 1, Lease: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if len(ls) == 0 {
				empty++
				clk.Advance(60 * time.Millisecond) // the ready cache's age
				continue
			}
			for _, l := range ls {
				got++
				id := strconv.Itoa(round) + "-" + l.URL
				g, err := gate.Acquire(ctx, l.Key, politeness.AcquireRequest{LeaseID: id, Limit: 1, Delay: time.Millisecond, Lease: time.Minute})
				if err != nil || !g.OK {
					b.Fatalf("gate: %+v, %v", g, err)
				}
				if err := gate.Release(ctx, l.Key, politeness.ReleaseRequest{LeaseID: id, Used: true, Backoff: politeness.BackoffReset}); err != nil {
					b.Fatal(err)
				}
				var h int
				fmt.Sscanf(l.Key, "www.host%04d.test", &h)
				acks = append(acks,
					frontier.Item{Info: frontier.URLInfo{URL: url(h, perHost+round), Depth: 2}},
					frontier.Item{Info: frontier.URLInfo{URL: url(h, (round*7)%perHost), Depth: 2}},
					frontier.Item{Info: l.URLInfo, Known: true, Hold: clk.Now().Add(200 * time.Millisecond)})
				if len(acks) >= 3*group {
					flush()
				}
			}
		}
		if len(acks) > 0 {
			flush()
		}
		pages += int64(got)
		// Drain the slow log: script durations by SHA.
		entries, err := c.Do(ctx, "SLOWLOG", "GET", "-1").Slice()
		if err != nil {
			b.Fatal(err)
		}
		c.SlowLogReset(ctx)
		for _, e := range entries {
			ev, _ := e.([]any)
			if len(ev) < 4 {
				continue
			}
			d, _ := ev[2].(int64)
			args, _ := ev[3].([]any)
			if len(args) < 2 {
				continue
			}
			cmd := strings.ToUpper(fmt.Sprint(args[0]))
			if cmd != "EVALSHA" { // (EVAL: a script's first run, once)
				continue
			}
			name := names[fmt.Sprint(args[1])]
			if name == "" {
				// The gate's scripts: acquire has 7 arguments, release 8.
				name = fmt.Sprintf("gate-%d", len(args)-5)
				switch len(args) - 5 {
				case 7:
					name = "acquire"
				case 8:
					name = "release-gate"
				}
			}
			us[name] += float64(d)
			calls[name]++
		}
	}
	cpu := redisCPU(b, c) - cpu0
	st, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(st, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		n, u := statField(rest, "calls"), statField(rest, "usec")
		switch name {
		case "cmdstat_evalsha", "cmdstat_eval":
			evalUS += u
		case "cmdstat_slowlog", "cmdstat_info", "cmdstat_config":
			continue
		}
		commands += int64(n)
	}
	if pages == 0 {
		b.Fatal("no pages")
	}
	p := float64(pages)
	var keys []string
	for k := range us {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.ReportMetric(us[k]/p, k+"-µs/page")
		b.ReportMetric(us[k]/float64(calls[k]), k+"-µs/call")
	}
	b.ReportMetric(evalUS/p, "scripts-µs/page")
	b.ReportMetric(float64(commands)/p, "commands/page")
	b.ReportMetric(cpu*1e6/p, "cpu-µs/page")
	b.ReportMetric(0, "ns/op")
}

func statField(s, name string) float64 {
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			x, _ := strconv.ParseFloat(v, 64)
			return x
		}
	}
	return 0
}

// redisCPU is the server's used_cpu_user + used_cpu_sys, in seconds.
func redisCPU(b *testing.B, c *redis.Client) float64 {
	b.Helper()
	s, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var t float64
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			x, _ := strconv.ParseFloat(v, 64)
			t += x
		}
	}
	return t
}
