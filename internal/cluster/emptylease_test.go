package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// indexEntry is a queue's entry in its index shard: the ready score and
// the version record.
type indexEntry struct {
	rkey, qkey string
	score      float64
	ready      bool // in the ready set at all
	rec        string
}

func readIndexEntry(t *testing.T, c *redis.Client, key string) indexEntry {
	t.Helper()
	ctx := context.Background()
	qkeys, err := c.Keys(ctx, "*{i\x1f*}:q").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, qk := range qkeys {
		rec, err := c.HGet(ctx, qk, key).Result()
		if err != nil {
			continue
		}
		e := indexEntry{rkey: qk[:len(qk)-1] + "r", qkey: qk, rec: rec}
		if s, err := c.ZScore(ctx, e.rkey, key).Result(); err == nil {
			e.score, e.ready = s, true
		}
		return e
	}
	t.Fatalf("no index entry for %s", key)
	return indexEntry{}
}

func writeIndexEntry(t *testing.T, c *redis.Client, key string, e indexEntry) {
	t.Helper()
	ctx := context.Background()
	if err := c.HSet(ctx, e.qkey, key, e.rec).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ZAdd(ctx, e.rkey, redis.Z{Score: e.score, Member: key}).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyLeaseNoIndexUpdate: a lease that finds its queue taken by
// another node (whose index update is lost here, as if that node died
// before sending it) changes nothing and sends no index update; the next
// time this node tries the queue its lease rewrites the index entry, so a
// lost update costs one more try, not one per Get for good.
func TestEmptyLeaseNoIndexUpdate(t *testing.T) {
	a, b, _, c := twoNodes(t)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{disc("http://x.example/1"), disc("http://x.example/2")}); err != nil {
		t.Fatal(err)
	}
	before := readIndexEntry(t, c, "x.example")
	if ls, err := b.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1, Lease: time.Hour}); err != nil || len(ls) != 1 {
		t.Fatalf("B Get: %v %v", ls, err)
	}
	leased := readIndexEntry(t, c, "x.example")
	writeIndexEntry(t, c, "x.example", before) // B's index update lost
	get := func() int {
		t.Helper()
		ls, err := a.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1})
		if err != nil {
			t.Fatal(err)
		}
		return len(ls)
	}
	ops := func(op string) uint64 { return opsOf(a)[op].Commands }
	if n := get(); n != 0 {
		t.Fatalf("A leased %d URLs of a queue at its bound", n)
	}
	if ops("lease") != 1 || ops("lease index") != 0 || a.Counters().EmptyLeases != 1 {
		t.Errorf("first try: %d leases, %d index updates, %d empty; want 1, 0, 1", ops("lease"), ops("lease index"), a.Counters().EmptyLeases)
	}
	if e := readIndexEntry(t, c, "x.example"); e != before {
		t.Errorf("index entry %+v after an empty lease, want it unchanged %+v", e, before)
	}
	if n := get(); n != 0 {
		t.Fatalf("A leased %d URLs of a queue at its bound", n)
	}
	if ops("lease") != 2 || ops("lease index") != 1 {
		t.Errorf("second try: %d leases, %d index updates; want 2, 1", ops("lease"), ops("lease index"))
	}
	if e := readIndexEntry(t, c, "x.example"); e.score != leased.score || e.ready != leased.ready {
		t.Errorf("index entry %+v after the second try, want the lease's %+v", e, leased)
	}
	if n := get(); n != 0 || ops("lease") != 2 {
		t.Errorf("third Get: %d URLs, %d leases in all; want none tried", n, ops("lease"))
	}
}

// TestPutToFullQueueStaysParked: a URL put to a queue whose only
// allowed URL in flight is out (the in-flight bound of its last lease)
// leaves the queue parked in the index: a Get with that bound does not
// try it; one with a higher bound gets the new URL.
func TestPutToFullQueueStaysParked(t *testing.T) {
	a, b, _, _ := twoNodes(t)
	ctx := context.Background()
	if _, err := a.Put(ctx, []frontier.Item{disc("http://x.example/1")}); err != nil {
		t.Fatal(err)
	}
	if ls, err := b.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1, Lease: time.Hour}); err != nil || len(ls) != 1 {
		t.Fatalf("B Get: %v %v", ls, err)
	}
	if _, err := a.Put(ctx, []frontier.Item{disc("http://x.example/2")}); err != nil {
		t.Fatal(err)
	}
	if ls, err := a.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 1}); err != nil || len(ls) != 0 {
		t.Fatalf("bound 1: %v %v", ls, err)
	}
	if n := opsOf(a)["lease"].Commands; n != 0 {
		t.Errorf("a Get with bound 1 tried %d leases of the full queue", n)
	}
	ls, err := a.Get(ctx, frontier.GetParams{MaxURLsPerQueue: 2})
	if err != nil || len(ls) != 1 || ls[0].URL != "http://x.example/2" {
		t.Fatalf("bound 2: %v %v", ls, err)
	}
}
