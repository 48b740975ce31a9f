package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestMasterFailover: four workers crawl a frontier on a 6-node Redis
// Cluster (Get, then Ack); a master is killed with SIGKILL mid-crawl and
// its replica takes over. Puts and acks wait for a replica (WAIT 1), so
// every acknowledged write survives; the workers retry through the
// failover with backoff; Repair puts back index entries the dead master
// took with it. Every URL must be acknowledged, and counted, exactly as
// if nothing had happened.
func TestMasterFailover(t *testing.T) {
	rc := redistest.StartCluster(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	f := newClusterFrontier(t, c, cluster.Options{WaitReplicas: 1, WaitTimeout: 2 * time.Second, RetryFor: 60 * time.Second})

	const hosts, perHost = 100, 10
	all := map[string]bool{}
	var items []frontier.Item
	for h := range hosts {
		for i := range perHost {
			u := fmt.Sprintf("http://h%d.example/%d", h, i)
			all[u] = true
			items = append(items, frontier.Item{Info: frontier.URLInfo{URL: u}})
		}
	}
	if _, err := f.Put(ctx, items); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	acked := map[string]int{}
	var killedAt, firstAckAfter time.Time
	workErr := make(chan error, 4)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ls, err := f.Get(ctx, frontier.GetParams{MaxQueues: 8, MaxURLsPerQueue: 1, Lease: 20 * time.Second})
				if err != nil {
					workErr <- fmt.Errorf("get: %w", err)
					return
				}
				if len(ls) == 0 {
					f.WaitReady(ctx, 20*time.Millisecond)
					continue
				}
				for _, l := range ls {
					if err := f.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
						workErr <- fmt.Errorf("ack %s: %w", l.URL, err)
						return
					}
					mu.Lock()
					acked[l.URL]++
					if !killedAt.IsZero() && firstAckAfter.IsZero() {
						firstAckAfter = time.Now()
					}
					mu.Unlock()
				}
			}
		})
	}
	// Kill the master of a busy queue's slot once a third is done.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= len(all)/3 {
			break
		}
		select {
		case err := <-workErr:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	victim, err := rc.MasterFor(ctx, "{q\x1fDEFAULT\x1fh99.example}")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	if err := rc.Kill(victim); err != nil {
		t.Fatal(err)
	}
	// A call to the dead master's slot, made at once, retries until the
	// replica serves it: the client's recovery time.
	recovered := make(chan time.Duration, 1)
	go func() {
		if _, err := f.StatsContext(ctx, "", "h99.example"); err != nil {
			workErr <- fmt.Errorf("stats on the dead master's slot: %w", err)
		}
		recovered <- time.Since(killedAt)
	}()
	newMaster, err := rc.WaitFailover(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	failoverTook := time.Since(killedAt)
	// Index writes the dead master had not replicated are lost: rebuild.
	nq, err := f.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		s, err := f.StatsContext(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n == len(all) && s.Size == 0 {
			break
		}
		select {
		case err := <-workErr:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("%d of %d URLs acked; stats %+v", n, len(all), s)
		case <-time.After(50 * time.Millisecond):
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-workErr:
		t.Fatal(err)
	default:
	}
	for u := range all {
		if acked[u] == 0 {
			t.Errorf("%s lost", u)
		}
	}
	refetched := 0
	for _, n := range acked {
		refetched += n - 1
	}
	s, err := f.StatsContext(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Completed != uint64(len(all)) || s.Size != 0 || s.InProcess != 0 {
		t.Fatalf("stats after the crawl %+v, want %d completed", s, len(all))
	}
	t.Logf("killed master %s; %s took over in %v; a call to its slot made at the kill returned after %v; first ack (any slot) %v after the kill; Repair visited %d queues; %d retried calls; %d URLs served twice",
		victim, newMaster, failoverTook.Round(time.Millisecond), (<-recovered).Round(time.Millisecond), firstAckAfter.Sub(killedAt).Round(time.Millisecond), nq, f.Counters().Retries, refetched)
}
