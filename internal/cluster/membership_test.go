package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/cluster/frontiertest"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestMembership: nodes that stop publishing are listed as dead after 5 s
// of the membership clock, and forgotten after an hour.
func TestMembership(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	clk := frontiertest.NewClock(time.Unix(1_800_000_000, 0))
	m, err := cluster.NewMembership(c, cluster.MembershipOptions{Prefix: prefix(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := cluster.NodeInfo{ID: "a", Role: "crawl", Version: "v1", CrawlID: "c1", PagesPerSec: 12.5, InFlight: 3, LastError: "timeout"}
	cluster.FillProcess(&a)
	b := cluster.NodeInfo{ID: "b", Role: "serve"}
	for _, n := range []cluster.NodeInfo{a, b} {
		if err := m.Publish(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if a.PID == 0 || a.Host == "" || a.Goroutines == 0 || a.RSSBytes == 0 {
		t.Fatalf("FillProcess left %+v", a)
	}
	check := func(want map[string]bool) []cluster.NodeStatus {
		t.Helper()
		nodes, err := m.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, n := range nodes {
			got[n.ID] = n.Dead
		}
		if len(got) != len(want) {
			t.Fatalf("nodes %v, want %v", got, want)
		}
		for id, dead := range want {
			if d, ok := got[id]; !ok || d != dead {
				t.Fatalf("nodes (id: dead) %v, want %v", got, want)
			}
		}
		return nodes
	}
	nodes := check(map[string]bool{"a": false, "b": false})
	if n := nodes[0]; n.ID != "a" || n.PagesPerSec != 12.5 || n.InFlight != 3 || n.LastError != "timeout" || n.PID != a.PID || n.CrawlID != "c1" {
		t.Fatalf("node a %+v", n)
	}
	clk.Advance(3 * time.Second)
	if err := m.Publish(ctx, b); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	check(map[string]bool{"a": false, "b": false}) // a last seen exactly 5 s ago
	clk.Advance(time.Millisecond)
	nodes = check(map[string]bool{"a": true, "b": false})
	if nodes[0].ID != "b" {
		t.Fatalf("live nodes are not listed first: %+v", nodes)
	}
	// a comes back.
	if err := m.Publish(ctx, a); err != nil {
		t.Fatal(err)
	}
	check(map[string]bool{"a": false, "b": false})
	if err := m.Leave(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	check(map[string]bool{"a": false})
	// A dead node is forgotten after an hour (at the next heartbeat).
	clk.Advance(time.Hour + time.Second)
	if err := m.Publish(ctx, cluster.NodeInfo{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	check(map[string]bool{"c": false})
	if err := m.Publish(ctx, cluster.NodeInfo{LastError: "x"}); err == nil {
		t.Fatal("heartbeat without an ID accepted")
	}
	if err := m.Publish(ctx, cluster.NodeInfo{ID: "d", Version: strings.Repeat("v", 10000)}); err == nil {
		t.Fatal("oversized heartbeat accepted")
	}
}

// TestMembershipRun: Run publishes at once and each Interval, and removes
// the node when its context ends.
func TestMembershipRun(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	m, err := cluster.NewMembership(c, cluster.MembershipOptions{Prefix: prefix(), Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	published := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, func() cluster.NodeInfo {
			select {
			case published <- struct{}{}:
			default:
			}
			return cluster.NodeInfo{ID: "runner", Role: "crawl"}
		})
	}()
	for range 3 {
		<-published
	}
	nodes, err := m.Nodes(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].ID != "runner" || nodes[0].Dead || nodes[0].PID == 0 {
		t.Fatalf("nodes while running: %+v, %v", nodes, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	nodes, err = m.Nodes(context.Background())
	if err != nil || len(nodes) != 0 {
		t.Fatalf("nodes after Run ended: %+v, %v", nodes, err)
	}
}

// TestDial: one plain server gives a plain client, cluster seeds a
// cluster client.
func TestDial(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c, err := cluster.Dial(ctx, []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*redis.Client); !ok {
		t.Fatalf("plain server: %T", c)
	}
	c.Close()
	if _, err := cluster.Dial(ctx, []string{" , "}); err == nil {
		t.Fatal("no address accepted")
	}
}
