//go:build !unix

package fetch

import "time"

// cpuTime is not measured here: BenchmarkFetchPaths reports 0 cpu-ns/op.
func cpuTime() time.Duration { return 0 }
