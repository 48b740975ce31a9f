package politeness_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/statetest"
)

func TestMemoryState(t *testing.T) {
	statetest.State(t, statetest.Options{Run: synctest.Test}, func(t *testing.T) politeness.State {
		return politeness.NewMemoryState(nil)
	})
}

func TestMemoryRobotsStore(t *testing.T) {
	statetest.RobotsStore(t, func(t *testing.T) politeness.RobotsStore { return politeness.NewMemoryRobotsStore() })
}

func TestMemoryDelayStore(t *testing.T) {
	statetest.DelayStore(t, func(t *testing.T) politeness.DelayStore { return politeness.NewMemoryDelayStore() })
}

// TestMemoryStateSweeps: idle keys are dropped, busy ones kept.
func TestMemoryStateSweeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := politeness.NewMemoryState(nil)
		ctx := context.Background()
		req := politeness.AcquireRequest{Limit: 1, Delay: time.Second, Lease: time.Hour}
		for i := range 5000 {
			req.LeaseID = fmt.Sprint(i)
			key := fmt.Sprintf("k%d.example", i)
			if _, err := s.Acquire(ctx, key, req); err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 { // half end their fetch; half stay in flight
				if err := s.Release(ctx, key, politeness.ReleaseRequest{LeaseID: req.LeaseID, Used: true}); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(30 * time.Minute)
		for i := range 10000 { // enough operations to sweep every key
			req.LeaseID = fmt.Sprint("x", i)
			if _, err := s.Acquire(ctx, "busy.example", politeness.AcquireRequest{Limit: 1, Lease: time.Hour, DryRun: true}); err != nil {
				t.Fatal(err)
			}
		}
		if got := s.Len(); got != 2500 {
			t.Fatalf("%d keys left, want the 2500 with a live lease", got)
		}
	})
}
