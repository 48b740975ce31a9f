package cpuclock

import (
	"testing"
	"time"
)

func TestProcessAdvances(t *testing.T) {
	if !Supported {
		t.Skip("no CPU clock on this platform")
	}
	start := Process()
	if start <= 0 {
		t.Fatalf("Process() = %v at start, want > 0", start)
	}
	x := uint64(1)
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if got := Process() - start; got <= 0 {
		t.Errorf("50 ms of busy loop (%d) added %v of CPU time, want > 0", x, got)
	}
}
