//go:build !linux

package frontier

import "time"

// threadCPU is not measured here (see threadcpu_linux_test.go).
func threadCPU() time.Duration { return 0 }
