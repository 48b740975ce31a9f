package redisbackend_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/politeness/statetest"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

var prefixN atomic.Int64

func client(t *testing.T) (redis.UniversalClient, redisbackend.Options) {
	t.Helper()
	s := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	return c, redisbackend.Options{Prefix: fmt.Sprintf("t%d:", prefixN.Add(1))}
}

func TestState(t *testing.T) {
	c, o := client(t)
	testState(t, c, o)
}

func testState(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	statetest.State(t, statetest.Options{}, func(t *testing.T) politeness.State {
		o.Prefix = fmt.Sprintf("t%d:", prefixN.Add(1))
		return redisbackend.NewState(c, o)
	})
}

func TestRobotsStore(t *testing.T) {
	c, o := client(t)
	testRobotsStore(t, c, o)
}

func testRobotsStore(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	statetest.RobotsStore(t, func(t *testing.T) politeness.RobotsStore {
		o.Prefix = fmt.Sprintf("t%d:", prefixN.Add(1))
		return redisbackend.NewRobotsStore(c, o)
	})
}

func TestDelayStore(t *testing.T) {
	c, o := client(t)
	testDelayStore(t, c, o)
}

func testDelayStore(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	statetest.DelayStore(t, func(t *testing.T) politeness.DelayStore {
		o.Prefix = fmt.Sprintf("t%d:", prefixN.Add(1))
		return redisbackend.NewDelayStore(c, o)
	})
}

// TestCluster runs the conformance suite and the two-gate tests on a real
// Redis Cluster (3 masters, 3 replicas): every script's keys must share a
// slot, whatever the politeness key holds.
func TestCluster(t *testing.T) {
	rc := redistest.StartCluster(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs})
	t.Cleanup(func() { c.Close() })
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, redis.UniversalClient, redisbackend.Options)
	}{
		{"State", testState}, {"RobotsStore", testRobotsStore}, {"DelayStore", testDelayStore},
		{"TwoGates", testTwoGates}, {"KeysExpire", testKeysExpire}, {"SharedDelays", testSharedDelays},
		{"OddKeys", testOddKeys},
	} {
		o := redisbackend.Options{Prefix: fmt.Sprintf("t%d:", prefixN.Add(1))}
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, c, o) })
	}
	// The keys spread over the three masters.
	masters := map[string]bool{}
	for _, k := range []string{"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"} {
		m, err := rc.MasterFor(context.Background(), "{"+k+"}")
		if err != nil {
			t.Fatal(err)
		}
		masters[m] = true
	}
	if len(masters) < 2 {
		t.Fatalf("six keys on %d master(s)", len(masters))
	}
}

func TestOddKeys(t *testing.T) {
	c, o := client(t)
	testOddKeys(t, c, o)
}

// testOddKeys: politeness keys with braces, or empty, still keep a
// script's keys in one slot (a cluster answers CROSSSLOT otherwise).
func testOddKeys(t *testing.T, c redis.UniversalClient, o redisbackend.Options) {
	s := redisbackend.NewState(c, o)
	ctx := context.Background()
	for _, key := range []string{"", "}", "{", "a}b", "{x}", "{}", "x{y}z"} {
		g, err := s.Acquire(ctx, key, politeness.AcquireRequest{LeaseID: "l", Limit: 1, Lease: time.Minute})
		if err != nil || !g.OK {
			t.Fatalf("Acquire(%q) = %+v, %v", key, g, err)
		}
		if err := s.Release(ctx, key, politeness.ReleaseRequest{LeaseID: "l", Used: true}); err != nil {
			t.Fatalf("Release(%q): %v", key, err)
		}
		g, err = s.Acquire(ctx, key, politeness.AcquireRequest{LeaseID: "m", Limit: 1, Delay: time.Hour, Lease: time.Minute})
		if err != nil || g.OK || g.Reason != politeness.ReasonDelay {
			t.Fatalf("Acquire(%q) after a fetch with a 1h delay = %+v, %v", key, g, err)
		}
	}
}

// allKeys lists the keys matching pattern on every master (KEYS on a
// cluster client asks one node).
func allKeys(ctx context.Context, c redis.UniversalClient, pattern string) ([]string, error) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return c.Keys(ctx, pattern).Result()
	}
	var mu sync.Mutex
	var out []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		keys, err := m.Keys(ctx, pattern).Result()
		mu.Lock()
		out = append(out, keys...)
		mu.Unlock()
		return err
	})
	return out, err
}
