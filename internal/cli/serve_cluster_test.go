package cli

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/redistest"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// TestServeRedisCluster runs two `courtesy serve --redis-cluster` processes
// on one Redis deployment (a Redis Cluster, and one plain Redis server):
// they share one frontier (URLs put through A are served and acknowledged
// through B, and A's stats show them completed), ListNodes on either lists
// both, and a node that stops leaves the list.
func TestServeRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis and child processes")
	}
	tests := []struct {
		name  string
		redis func(t *testing.T) string
	}{
		{"cluster", func(t *testing.T) string {
			c := redistest.StartCluster(t)
			return c.Addrs[0] + "," + c.Addrs[1]
		}},
		{"plain", func(t *testing.T) string { return redistest.Start(t).Addr }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addrs := tc.redis(t)
			cmdA, addrA := serveProcess(t, t.TempDir(), "--redis-cluster", addrs)
			cmdB, addrB := serveProcess(t, t.TempDir(), "--redis-cluster", addrs)
			a, b := dialFrontier(t, addrA), dialFrontier(t, addrB)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			want := []string{addrA, addrB}
			slices.Sort(want)
			for name, c := range map[string]pb.URLFrontierClient{"A": a, "B": b} {
				nodes, err := c.ListNodes(ctx, &pb.Empty{})
				if err != nil || !slices.Equal(nodes.GetValues(), want) {
					t.Errorf("ListNodes on %s = %v, %v; want %v", name, nodes.GetValues(), err, want)
				}
			}

			if ok := putAll(t, a, testItems(50, 0)); ok != 50 {
				t.Fatalf("put through A: %d OK, want 50", ok)
			}
			got := getAll(t, b, &pb.GetParams{DelayRequestable: 3600, Item: &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}})
			if len(got) != 50 {
				t.Fatalf("got through B %d URLs, want the 50 put through A", len(got))
			}
			st, err := a.GetStats(ctx, &pb.QueueWithinCrawlParams{})
			if err != nil || st.GetInProcess() != 50 {
				t.Errorf("stats on A after the get on B: %v, %v; want 50 in process", st, err)
			}
			if ok := putAll(t, b, testItems(50, 50)); ok != 50 {
				t.Fatalf("ack through B: %d OK, want 50", ok)
			}
			st, err = a.GetStats(ctx, &pb.QueueWithinCrawlParams{})
			if err != nil {
				t.Fatal(err)
			}
			if st.GetCounts()["completed"] != 50 || st.GetSize() != 0 || st.GetInProcess() != 0 || st.GetNumberOfQueues() != 50 {
				t.Errorf("stats on A after the acks on B: %v; want 50 completed, none queued or in process", st)
			}
			item, err := a.GetURLStatus(ctx, &pb.URLStatusRequest{Url: "http://host07.test/page/7"})
			if err != nil || item.GetKnown() == nil || item.GetKnown().GetRefetchableFromDate() != 0 {
				t.Errorf("status on A of a URL acked on B = %v, %v; want known, completed", item, err)
			}

			// B stops: it leaves the membership, A lists itself only.
			cmdB.Process.Signal(syscall.SIGTERM)
			if err := cmdB.Wait(); err != nil {
				t.Errorf("B after SIGTERM: %v", err)
			}
			nodes, err := a.ListNodes(ctx, &pb.Empty{})
			if err != nil || !slices.Equal(nodes.GetValues(), []string{addrA}) {
				t.Errorf("ListNodes on A after B stopped = %v, %v; want [%s]", nodes.GetValues(), err, addrA)
			}
			cmdA.Process.Signal(syscall.SIGTERM)
			if err := cmdA.Wait(); err != nil {
				t.Errorf("A after SIGTERM: %v", err)
			}
		})
	}
}
