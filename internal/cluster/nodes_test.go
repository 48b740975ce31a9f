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

// TestNodesShareOneCrawl: three nodes (three Frontier clients, four
// workers each) crawl one frontier on a 6-node Redis Cluster. One node
// dies mid-crawl without acknowledging what it holds. Across the nodes no
// host ever has two URLs in flight, every URL is acknowledged, the
// counters count each once, and only the dead node's URLs are served
// twice.
func TestNodesShareOneCrawl(t *testing.T) {
	rc := redistest.StartCluster(t)
	p := prefix()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const hosts, perHost, lease = 40, 6, 2 * time.Second
	nodes := make([]*cluster.Frontier, 3)
	for i := range nodes {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs})
		t.Cleanup(func() { c.Close() })
		nodes[i] = newClusterFrontier(t, c, cluster.Options{Prefix: p})
	}
	var items []frontier.Item
	for h := range hosts {
		for i := range perHost {
			items = append(items, frontier.Item{Info: frontier.URLInfo{URL: fmt.Sprintf("http://h%d.example/%d", h, i), CrawlID: "shared"}})
		}
	}
	// Seeds added by every node: idempotent.
	for _, n := range nodes {
		if _, err := n.Put(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := nodes[0].StatsContext(ctx, "shared", ""); err != nil || s.Size != hosts*perHost || s.Queues != hosts {
		t.Fatalf("after three nodes put the seeds: %+v, %v", s, err)
	}

	var mu sync.Mutex
	inFlight := map[string]int{}
	acked := map[string]int{}
	deadHeld := map[string]bool{}
	deadExp := map[string]time.Time{}
	var violations []string
	dead := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for ni, n := range nodes {
		for range 4 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if ni == 0 {
						select {
						case <-dead:
							return
						default:
						}
					}
					ls, err := n.Get(ctx, frontier.GetParams{CrawlID: "shared", MaxQueues: 4, MaxURLsPerQueue: 1, Lease: lease})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					finished := len(acked) == hosts*perHost
					mu.Unlock()
					if finished {
						return
					}
					if len(ls) == 0 {
						n.WaitReady(ctx, 50*time.Millisecond)
						continue
					}
					now := time.Now()
					mu.Lock()
					for _, l := range ls {
						// A lease of the dead node ends at its expiry
						// (Redis time; the same machine's clock here).
						if e, ok := deadExp[l.Key]; ok && !now.Before(e) {
							delete(deadExp, l.Key)
							inFlight[l.Key]--
						}
						inFlight[l.Key]++
						if inFlight[l.Key] > 1 {
							violations = append(violations, fmt.Sprintf("%s (node %d)", l.URL, ni))
						}
					}
					mu.Unlock()
					if ni == 0 {
						select {
						case <-dead:
							// Killed while holding these: no ack, no release.
							mu.Lock()
							for _, l := range ls {
								deadHeld[l.URL] = true
								deadExp[l.Key] = l.Expires
							}
							mu.Unlock()
							return
						default:
						}
					}
					for _, l := range ls {
						mu.Lock()
						inFlight[l.Key]--
						mu.Unlock()
						if err := n.Ack(ctx, l.URLInfo, time.Time{}); err != nil {
							errs <- err
							return
						}
						mu.Lock()
						acked[l.URL]++
						mu.Unlock()
					}
				}
			})
		}
	}
	// Node 0 dies once a quarter of the crawl is done.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= hosts*perHost/4 || ctx.Err() != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(dead)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if ctx.Err() != nil {
		t.Fatalf("crawl did not finish: %d of %d acked", len(acked), hosts*perHost)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatalf("hosts with two URLs in flight at once: %q", violations)
	}
	twice := 0
	for u, n := range acked {
		if n > 1 {
			twice++
			if !deadHeld[u] {
				t.Errorf("%s acked %d times, not held by the dead node", u, n)
			}
		}
	}
	s, err := nodes[1].StatsContext(context.Background(), "shared", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(acked) != hosts*perHost || s.Completed != hosts*perHost || s.Size != 0 || s.InProcess != 0 {
		t.Fatalf("%d URLs acked; stats %+v", len(acked), s)
	}
	t.Logf("dead node held %d URLs; %d URLs acked twice", len(deadHeld), twice)
}
