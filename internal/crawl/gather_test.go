package crawl

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestGatherFree: the loop waits for getBatch free workers, but never
// longer than getGather.
func TestGatherFree(t *testing.T) {
	tests := []struct {
		name      string
		inFlight  int64
		finishing int           // workers that finish while it waits
		every     time.Duration // one finishes every this long
		wantFree  int
		wantWait  time.Duration
	}{
		{name: "enough free already", inFlight: 56, wantFree: 8, wantWait: 0},
		{name: "workers finish in time", inFlight: 60, finishing: 4, every: 100 * time.Microsecond, wantFree: 8, wantWait: 400 * time.Microsecond},
		{name: "too few finish: the bound", inFlight: 62, finishing: 3, every: 200 * time.Microsecond, wantFree: 5, wantWait: getGather},
		{name: "none finish", inFlight: 63, wantFree: 1, wantWait: getGather},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &Crawler{}
				c.cfg.Workers = 64
				done := make(chan struct{}, c.cfg.Workers)
				c.wake = done
				c.inFlight.Store(tc.inFlight)
				go func() {
					for range tc.finishing {
						time.Sleep(tc.every)
						c.urlDone()
					}
				}()
				start := time.Now()
				free := c.gatherFree(context.Background(), done)
				if waited := time.Since(start); free != tc.wantFree || waited != tc.wantWait {
					t.Errorf("gatherFree = %d after %v, want %d after %v", free, waited, tc.wantFree, tc.wantWait)
				}
				synctest.Wait()
			})
		})
	}
}
