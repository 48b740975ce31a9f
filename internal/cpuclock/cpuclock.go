// Package cpuclock reads the CPU time the process has used, for
// benchmarks that report CPU per operation next to wall time: on a shared
// machine CPU time is the steadier figure (docs/performance.md).
package cpuclock

import "time"

// Process returns the user plus system CPU time of the whole process so
// far (every thread, the garbage collector's too), or 0 where it is not
// measured (see Supported).
func Process() time.Duration { return process() }
