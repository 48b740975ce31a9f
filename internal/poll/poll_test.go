package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWithin(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	if !Within(10*time.Second, func() bool { return n.Load() == 3 }) {
		t.Fatal("a condition that becomes true was not seen")
	}
	calls := 0
	if Within(20*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("a condition that never holds was reported as holding")
	}
	if calls < 2 {
		t.Errorf("the condition was checked %d times in 20 ms, want at least 2", calls)
	}
}
