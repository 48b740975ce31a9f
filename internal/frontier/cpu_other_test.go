//go:build !unix

package frontier

import (
	"testing"
	"time"
)

// processCPU is not measured here: BenchmarkAck reports 0 cpu-ns/op.
func processCPU(*testing.B) time.Duration { return 0 }
