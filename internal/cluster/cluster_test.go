package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// twoNodes returns two frontiers (two crawl processes) on one Redis and
// one fake clock.
func twoNodes(t *testing.T) (a, b *cluster.Frontier, clk *frontiertest.Clock, c *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	c = redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	clk = frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	o := cluster.Options{Prefix: prefix(), Now: clk.Now}
	return newClusterFrontier(t, c, o), newClusterFrontier(t, c, o), clk, c
}

// TestFencing: node A's lease expires and node B gets the URL; A's late
// ack is refused and changes no counter; B's ack counts once.
func TestFencing(t *testing.T) {
	a, b, clk, _ := twoNodes(t)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/1"}}}); err != nil {
		t.Fatal(err)
	}
	la, err := a.Get(ctx, frontier.GetParams{Lease: time.Second})
	if err != nil || len(la) != 1 {
		t.Fatalf("A Get: %v, %v", la, err)
	}
	clk.Advance(2 * time.Second)
	lb, err := b.Get(ctx, frontier.GetParams{Lease: time.Minute})
	if err != nil || len(lb) != 1 {
		t.Fatalf("B Get after A's lease expired: %v, %v", lb, err)
	}
	err = a.Ack(ctx, la[0].URLInfo, time.Time{})
	if !errors.Is(err, cluster.ErrStaleLease) {
		t.Fatalf("A's late ack: %v, want ErrStaleLease", err)
	}
	if s := b.Stats("", ""); s.Completed != 0 || s.InProcess != 1 || s.Size != 1 {
		t.Fatalf("after the stale ack %+v, want B's lease intact", s)
	}
	if a.Counters().StaleAcks != 1 {
		t.Fatalf("A counters %+v", a.Counters())
	}
	if err := b.Ack(ctx, lb[0].URLInfo, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats("", ""); s.Completed != 1 || s.InProcess != 0 || s.Size != 0 {
		t.Fatalf("after B's ack %+v, want 1 completed", s)
	}
	// A URLFrontier-style ack (no lease held here) always applies.
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/1"}, Known: true, RefetchFrom: clk.Now()}}); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats("", ""); s.Completed != 0 || s.Size != 1 {
		t.Fatalf("after a known put %+v", s)
	}
}

// TestDeadNodeURLsServedAgain: node A leases URLs and dies (it never acks
// nor releases); once the leases expire, in Redis, node B gets every one.
func TestDeadNodeURLsServedAgain(t *testing.T) {
	a, b, clk, _ := twoNodes(t)
	ctx := context.Background()
	const hosts, perHost = 20, 5
	var items []frontier.Item
	for h := range hosts {
		for i := range perHost {
			items = append(items, frontier.Item{Info: frontier.URLInfo{URL: fmt.Sprintf("http://h%d.example/%d", h, i)}})
		}
	}
	if _, err := a.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	la, err := a.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1, Lease: 30 * time.Second})
	if err != nil || len(la) != hosts {
		t.Fatalf("A Get: %d leases, %v", len(la), err)
	}
	done := map[string]bool{}
	drain := func() {
		for range 100 {
			ls, err := b.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(ls) == 0 {
				return
			}
			for _, l := range ls {
				if done[l.URL] {
					t.Fatalf("%s served twice to B", l.URL)
				}
				done[l.URL] = true
				if err := b.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	drain()
	// One URL in flight per host (the crawler's bound): while A's leases
	// hold, no host has room for B.
	if len(done) != 0 {
		t.Fatalf("B got %d URLs while A's leases held, want 0", len(done))
	}
	clk.Advance(30*time.Second - time.Millisecond)
	drain()
	if len(done) != 0 {
		t.Fatalf("B got %d URLs 1 ms before A's leases expire", len(done))
	}
	clk.Advance(time.Millisecond)
	drain()
	if len(done) != hosts*perHost {
		t.Fatalf("B got %d URLs in all, want %d", len(done), hosts*perHost)
	}
	if s := b.Stats("", ""); s.Completed != hosts*perHost || s.Size != 0 || s.InProcess != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRepair: an index entry lost (deleted here, as a dead process or a
// failover would leave it) hides the queue until Repair.
func TestRepair(t *testing.T) {
	a, _, _, c := twoNodes(t)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/1"}}, {Info: frontier.URLInfo{URL: "http://y.example/1"}}}); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, "*{i\x1f*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("index keys %q, %v", keys, err)
	}
	if err := c.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	if ls, err := a.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 0 {
		t.Fatalf("Get without an index: %v, %v", ls, err)
	}
	n, err := a.Repair(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Repair = %d, %v; want 2 queues", n, err)
	}
	if ls, err := a.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 2 {
		t.Fatalf("Get after Repair: %v, %v", ls, err)
	}
	if s := a.Stats("", ""); s.Queues != 2 || s.Size != 2 || s.InProcess != 2 {
		t.Fatalf("stats after Repair %+v", s)
	}
}

// TestRepairConcurrentUpdate: another process updates a queue between
// Repair's read of its state and its forced index write. The forced write
// puts the older state into the index; the second pass must put the newer
// one back, so Repair is safe while other nodes crawl.
func TestRepairConcurrentUpdate(t *testing.T) {
	a, b, _, _ := twoNodes(t)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/1"}}}); err != nil {
		t.Fatal(err)
	}
	done := false
	cluster.SetRepairRead(a, func() {
		if done {
			return
		}
		done = true
		if _, err := b.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/2"}}, {Info: frontier.URLInfo{URL: "http://x.example/3"}}}); err != nil {
			t.Error(err)
		}
	})
	if _, err := a.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if !done {
		t.Fatal("the hook did not run")
	}
	if s := a.Stats("", ""); s.Size != 3 || s.Queues != 1 {
		t.Fatalf("stats after Repair with a concurrent Put: %+v, want 3 queued in 1 queue", s)
	}
}

// TestRepairVersionRegression: a failover can lose a queue's last
// version increments while its index shard (another master) kept them;
// the queue's next updates then look old to the index. Repair forces the
// queue's state in.
func TestRepairVersionRegression(t *testing.T) {
	a, _, _, c := twoNodes(t)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/1"}}}); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, "*{i\x1f*}:q").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("index keys %q, %v", keys, err)
	}
	// The index holds a version from the future, saying "not servable".
	if err := c.HSet(ctx, keys[0], "x.example", "1000000 0 0 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	rkey := keys[0][:len(keys[0])-1] + "r"
	if err := c.ZRem(ctx, rkey, "x.example").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/2"}}}); err != nil {
		t.Fatal(err)
	}
	if ls, err := a.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 0 {
		t.Fatalf("Get with the index ahead of the queue: %v, %v", ls, err)
	}
	if _, err := a.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if ls, err := a.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 2 {
		t.Fatalf("Get after Repair: %v, %v", ls, err)
	}
	// Later updates apply again.
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://x.example/3"}}}); err != nil {
		t.Fatal(err)
	}
	if ls, err := a.Get(ctx, frontier.GetParams{}); err != nil || len(ls) != 1 {
		t.Fatalf("Get after a later Put: %v, %v", ls, err)
	}
}

// TestGetUnknownKey: a Get naming a queue that does not exist creates
// nothing (no phantom queue in the totals).
func TestGetUnknownKey(t *testing.T) {
	a, _, _, _ := twoNodes(t)
	ctx := context.Background()
	if ls, err := a.Get(ctx, frontier.GetParams{Key: "nowhere.example"}); err != nil || len(ls) != 0 {
		t.Fatalf("Get: %v, %v", ls, err)
	}
	if s := a.Stats("", ""); s.Queues != 0 {
		t.Fatalf("stats %+v after a Get of an unknown queue", s)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []cluster.Options{{Prefix: "a{b"}, {Prefix: "}"}, {IndexShards: -1}, {IndexShards: 20000}} {
		if err := o.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", o)
		}
	}
	if err := (cluster.Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}

// TestShardsStored: a process started with another IndexShards uses the
// deployment's stored value, so every process indexes alike.
func TestShardsStored(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	p := prefix()
	clk := frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	a := newClusterFrontier(t, c, cluster.Options{Prefix: p, IndexShards: 4, Now: clk.Now})
	b := newClusterFrontier(t, c, cluster.Options{Prefix: p, IndexShards: 64, Now: clk.Now})
	ctx := context.Background()
	for i := range 50 {
		if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: fmt.Sprintf("http://h%d.example/", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := b.Get(ctx, frontier.GetParams{})
	if err != nil || len(ls) != 50 {
		t.Fatalf("B Get: %d, %v", len(ls), err)
	}
}
