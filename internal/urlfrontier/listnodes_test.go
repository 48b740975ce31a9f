package urlfrontier

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// TestListNodesOption checks that Options.ListNodes, when set, answers
// ListNodes (its error as INTERNAL), and that Nodes answers otherwise.
func TestListNodesOption(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name     string
		list     func(context.Context) ([]string, error)
		want     []string
		wantCode codes.Code
	}{
		{"static", nil, []string{"127.0.0.1:7071"}, codes.OK},
		{"listed", func(context.Context) ([]string, error) { return []string{"a:1", "b:2"}, nil }, []string{"a:1", "b:2"}, codes.OK},
		{"error", func(context.Context) ([]string, error) { return nil, errors.New("redis down") }, nil, codes.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewServer(Options{Frontier: fx.f, Nodes: []string{"127.0.0.1:7071"}, ListNodes: tc.list})
			if err != nil {
				t.Fatal(err)
			}
			got, err := srv.ListNodes(context.Background(), &pb.Empty{})
			if status.Code(err) != tc.wantCode || !slices.Equal(got.GetValues(), tc.want) {
				t.Errorf("ListNodes = %v, %v; want %v, %v", got.GetValues(), err, tc.want, tc.wantCode)
			}
		})
	}
}

// TestNilFrontier checks that a nil frontier, also a typed nil in the
// interface, is refused rather than used.
func TestNilFrontier(t *testing.T) {
	var typed *frontier.Frontier
	for _, f := range []frontier.API{nil, typed} {
		if _, err := NewServer(Options{Frontier: f}); err == nil {
			t.Errorf("NewServer(%#v) = nil error, want one", f)
		}
	}
}

// apiOnly hides every method of a frontier but frontier.API's (as the
// Redis Cluster frontier, which has no PendingQueues).
type apiOnly struct{ frontier.API }

// TestMetricsPendingGauge checks that the pending-queues gauge is exported
// for a frontier that counts pending queues and left out otherwise.
func TestMetricsPendingGauge(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name string
		f    frontier.API
		want bool
	}{
		{"embedded", fx.f, true},
		{"api only", apiOnly{fx.f}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			if _, err := NewMetrics(reg, tc.f); err != nil {
				t.Fatal(err)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, mf := range mfs {
				names = append(names, mf.GetName())
			}
			if !slices.Contains(names, "courtesy_frontier_active") {
				t.Errorf("metrics %v lack courtesy_frontier_active", names)
			}
			if got := slices.Contains(names, "courtesy_frontier_pending_queues"); got != tc.want {
				t.Errorf("pending-queues gauge exported = %v, want %v (metrics %v)", got, tc.want, names)
			}
		})
	}
}
