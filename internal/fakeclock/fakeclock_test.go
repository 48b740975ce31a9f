package fakeclock

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c := New(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
	c.Advance(1500 * time.Millisecond)
	if got, want := c.Now(), start.Add(1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("after Advance: %v, want %v", got, want)
	}
	c.Set(start.Add(time.Hour))
	if got, want := c.Now(), start.Add(time.Hour); !got.Equal(want) {
		t.Errorf("after Set: %v, want %v", got, want)
	}
}

func TestConcurrentAdvance(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(800*time.Millisecond); !got.Equal(want) {
		t.Errorf("after 800 concurrent advances: %v, want %v", got, want)
	}
}
