package cluster_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// readyCacheNodes returns three frontiers (crawl nodes) on one Redis and
// one fake clock: a and b with Get's ready cache, plain without; the
// server's scripts loaded (a script's first call is counted twice:
// NOSCRIPT, then EVAL).
func readyCacheNodes(t *testing.T, cache time.Duration) (a, b, plain *cluster.Frontier, clk *frontiertest.Clock) {
	t.Helper()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	clk = frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	for _, o := range []cluster.Options{{Now: clk.Now}, {Now: clk.Now, ReadyCache: cache}} {
		warm := newClusterFrontier(t, c, o)
		warm.WaitReady(context.Background(), time.Millisecond)
		if _, err := warm.Get(context.Background(), frontier.GetParams{}); err != nil {
			t.Fatal(err)
		}
	}
	o := cluster.Options{Prefix: prefix(), Now: clk.Now, ReadyCache: cache}
	a, b = newClusterFrontier(t, c, o), newClusterFrontier(t, c, o)
	o.ReadyCache = 0
	return a, b, newClusterFrontier(t, c, o), clk
}

// getURLs leases from up to maxQueues queues, one URL each, for an hour.
func getURLs(t *testing.T, f *cluster.Frontier, maxQueues int) []string {
	t.Helper()
	ls, err := f.Get(context.Background(), frontier.GetParams{MaxQueues: maxQueues, MaxURLsPerQueue: 1, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.URL)
	}
	return out
}

func putHosts(t *testing.T, f *cluster.Frontier, hosts, perHost int) {
	t.Helper()
	var items []frontier.Item
	for h := range hosts {
		for i := range perHost {
			items = append(items, disc(fmt.Sprintf("http://h%02d.example/%d", h, i)))
		}
	}
	if _, err := f.Put(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

// TestReadyCacheStale: node A keeps queues from its read; a process
// without the cache (so blind to A's claims) leases some of them, and of
// the others one is blocked, one emptied, one held by an
// acknowledgement; A's next Gets, served from its stale cache, lease
// none of them again and none early, then read the index afresh.
func TestReadyCacheStale(t *testing.T) {
	a, _, b, clk := readyCacheNodes(t, time.Second)
	ctx := context.Background()
	putHosts(t, a, 12, 1)
	first := getURLs(t, a, 1) // reads all 12, keeps 11
	if len(first) != 1 {
		t.Fatalf("A's first Get: %q", first)
	}
	taken := map[string]string{first[0]: "A"}
	// B takes 8 of them; of the 3 left, one is blocked, one emptied (its
	// URL leased and acknowledged), one held by an acknowledgement.
	for _, u := range getURLs(t, b, 8) {
		taken[u] = "B"
	}
	var rest []string
	for h := range 12 {
		if u := fmt.Sprintf("http://h%02d.example/0", h); taken[u] == "" {
			rest = append(rest, u)
		}
	}
	if len(rest) != 3 {
		t.Fatalf("left %q, want 3", rest)
	}
	if err := b.BlockQueueUntil(ctx, "", frontier.DefaultKey(rest[0]), clk.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, u := range rest[1:] {
		ls, err := b.Get(ctx, frontier.GetParams{Key: frontier.DefaultKey(u), MaxURLsPerQueue: 1, Lease: time.Hour})
		if err != nil || len(ls) != 1 {
			t.Fatalf("B Get %s: %v %v", u, ls, err)
		}
	}
	if _, err := b.Put(ctx, []frontier.Item{
		{Info: frontier.URLInfo{URL: rest[1]}, Known: true},
		{Info: frontier.URLInfo{URL: rest[2]}, Known: true, RefetchFrom: clk.Now(), Hold: clk.Now().Add(time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	if got := getURLs(t, a, 11); len(got) != 0 {
		t.Fatalf("A served %q from its stale cache", got)
	}
	if c := a.Counters(); c.EmptyLeases != 11 {
		t.Errorf("%d empty leases, want the 11 kept queues tried once each", c.EmptyLeases)
	}
	// Once the cache is old, a read: the blocked and held queues come
	// back when their block and hold end, not before.
	clk.Advance(time.Minute - time.Millisecond)
	if got := getURLs(t, a, 3); len(got) != 0 {
		t.Fatalf("A served %q early", got)
	}
	clk.Advance(time.Millisecond)
	got := getURLs(t, a, 3)
	sort.Strings(got)
	if want := []string{rest[0], rest[2]}; !slices.Equal(got, want) {
		t.Fatalf("when the block and hold end: %q, want %q", got, want)
	}
}

// TestReadyCacheReads: Gets within the cache's life lease from it without
// reading the index; once it is older than ReadyCache a Get reads again;
// WaitReady after a Get waits on that Get's read.
func TestReadyCacheReads(t *testing.T) {
	a, _, _, clk := readyCacheNodes(t, 50*time.Millisecond)
	putHosts(t, a, 30, 2)
	peeks := func() uint64 { return opsOf(a)["peek"].Commands }
	var served []string
	served = append(served, getURLs(t, a, 1)...)
	if n := peeks(); n != 16 {
		t.Fatalf("first Get read %d shards, want 16", n)
	}
	for range 9 {
		served = append(served, getURLs(t, a, 1)...)
	}
	if n := peeks(); n != 16 {
		t.Errorf("10 Gets within the cache's life read %d shards, want 16", n)
	}
	if len(served) != 10 {
		t.Fatalf("served %q", served)
	}
	clk.Advance(50 * time.Millisecond)
	getURLs(t, a, 1)
	if n := peeks(); n != 32 {
		t.Errorf("a Get after the cache's life read %d shards in all, want 32", n)
	}
	start := time.Now()
	a.WaitReady(context.Background(), 100*time.Millisecond)
	if n := opsOf(a)["next ready"].Commands + peeks(); n != 32 {
		t.Errorf("WaitReady after a Get's fresh read read %d shards in all, want none more (32)", n)
	}
	// Kept queues are ready now: no wait.
	if el := time.Since(start); el > 50*time.Millisecond {
		t.Errorf("WaitReady waited %v with ready queues kept", el)
	}
	// With the cache old, WaitReady reads as a Get would, and the Get
	// that follows leases from that read.
	clk.Advance(50 * time.Millisecond)
	a.WaitReady(context.Background(), 100*time.Millisecond)
	if n, p := opsOf(a)["next ready"].Commands, peeks(); n != 0 || p != 48 {
		t.Errorf("WaitReady with an old cache: %d next-ready reads, %d shard reads in all; want 0 and 48", n, p)
	}
	if got := getURLs(t, a, 1); len(got) != 1 || peeks() != 48 {
		t.Errorf("Get after WaitReady's read: %q after %d shard reads, want a URL and no read", got, peeks())
	}
}

// hostsInShards returns n hosts whose queues are in n different index
// shards (of 16; FNV-1a of the key, as the frontier places them).
func hostsInShards(n int) []string {
	var out []string
	used := map[uint32]bool{}
	for i := 0; len(out) < n; i++ {
		h := fmt.Sprintf("s%03d.example", i)
		f := fnv.New32a()
		f.Write([]byte(h))
		if s := f.Sum32() % 16; !used[s] {
			used[s] = true
			out = append(out, h)
		}
	}
	return out
}

// TestReadyCacheClaims: the queues one node's cached read returns are
// claimed: another node's cached read skips them (it leases nothing in
// vain) until the claims lapse, ReadyCache later, or the claimer leases
// them.
func TestReadyCacheClaims(t *testing.T) {
	a, b, _, clk := readyCacheNodes(t, 50*time.Millisecond)
	ctx := context.Background()
	hosts := hostsInShards(9)
	put := func(hs []string) {
		t.Helper()
		var items []frontier.Item
		for _, h := range hs {
			items = append(items, disc("http://"+h+"/"))
		}
		if _, err := a.Put(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	put(hosts[:6])
	if got := getURLs(t, a, 1); len(got) != 1 {
		t.Fatalf("A: %q", got)
	}
	if got := getURLs(t, b, 5); len(got) != 0 {
		t.Fatalf("B leased %q, claimed by A", got)
	}
	if got := getURLs(t, a, 5); len(got) != 5 {
		t.Fatalf("A from its cache: %q", got)
	}
	put(hosts[6:])
	if got := getURLs(t, a, 1); len(got) != 1 {
		t.Fatalf("A: %q", got)
	}
	if got := getURLs(t, b, 2); len(got) != 0 {
		t.Fatalf("B leased %q, claimed by A", got)
	}
	clk.Advance(50 * time.Millisecond)
	if got := getURLs(t, b, 2); len(got) != 2 {
		t.Fatalf("B after A's claims lapsed: %q", got)
	}
	if n := b.Counters().EmptyLeases + a.Counters().EmptyLeases; n != 0 {
		t.Errorf("%d empty leases", n)
	}
}

// TestReadyCacheOrder: queues ready at times further apart than
// ReadyCache, one per index shard, are served in ascending ready time
// from one read.
func TestReadyCacheOrder(t *testing.T) {
	a, _, _, clk := readyCacheNodes(t, 50*time.Millisecond)
	ctx := context.Background()
	now := clk.Now()
	hosts := hostsInShards(10)
	var items []frontier.Item
	for i, h := range hosts {
		// The last host is ready first.
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: "http://" + h + "/"}, Known: true,
			RefetchFrom: now.Add(time.Duration(len(hosts)-i) * time.Second)})
	}
	if _, err := a.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	var got []string
	for range 10 {
		got = append(got, getURLs(t, a, 1)...)
	}
	if opsOf(a)["peek"].Commands != 16 {
		t.Errorf("read the index %d times", opsOf(a)["peek"].Commands/16)
	}
	want := make([]string, 10)
	for i, h := range hosts {
		want[len(hosts)-1-i] = "http://" + h + "/"
	}
	if !slices.Equal(got, want) {
		t.Errorf("served %q, want %q", got, want)
	}
}

// TestReadyCachePartialReads: within the cache's life, a Get that finds
// it empty reads only the shards where the last read saw a queue coming
// ready by now, or where this process's own write made one ready (an
// acknowledgement's hold): not every shard.
func TestReadyCachePartialReads(t *testing.T) {
	a, _, _, clk := readyCacheNodes(t, 100*time.Millisecond)
	ctx := context.Background()
	hosts := hostsInShards(3)
	now := clk.Now()
	var items []frontier.Item
	for i, h := range hosts[:2] {
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: "http://" + h + "/1"}, Known: true,
			RefetchFrom: now.Add(time.Duration(10*(i+1)) * time.Millisecond)})
	}
	items = append(items, disc("http://"+hosts[2]+"/1"), disc("http://"+hosts[2]+"/2"))
	if _, err := a.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	peeks := func() uint64 { return opsOf(a)["peek"].Commands }
	got := getURLs(t, a, 5)
	if len(got) != 1 || peeks() != 16 {
		t.Fatalf("first Get %q after %d shard reads, want host 3's first URL after 16", got, peeks())
	}
	if got := getURLs(t, a, 5); len(got) != 0 || peeks() != 16 {
		t.Fatalf("Get before anything is due: %q after %d shard reads, want none and no read", got, peeks())
	}
	clk.Advance(10 * time.Millisecond)
	if got := getURLs(t, a, 5); len(got) != 1 || got[0] != "http://"+hosts[0]+"/1" || peeks() != 17 {
		t.Fatalf("Get when host 1 is due: %q after %d shard reads, want its URL after one more", got, peeks())
	}
	// Host 3's URL acknowledged with a hold: its queue's shard is read
	// when the hold ends, and host 2's when it is due.
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: got[0]}, Known: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://" + hosts[2] + "/1"}, Known: true, Hold: clk.Now().Add(5 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Millisecond)
	if got := getURLs(t, a, 5); len(got) != 1 || got[0] != "http://"+hosts[2]+"/2" || peeks() != 18 {
		t.Fatalf("Get when the hold ends: %q after %d shard reads, want host 3's second URL after one more", got, peeks())
	}
	clk.Advance(5 * time.Millisecond)
	if got := getURLs(t, a, 5); len(got) != 1 || got[0] != "http://"+hosts[1]+"/1" || peeks() != 19 {
		t.Fatalf("Get when host 2 is due: %q after %d shard reads, want its URL after one more", got, peeks())
	}
	// Once the cache is old, every shard again.
	clk.Advance(100 * time.Millisecond)
	getURLs(t, a, 5)
	if peeks() != 35 {
		t.Errorf("%d shard reads after the cache got old, want 35", peeks())
	}
}
