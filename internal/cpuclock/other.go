//go:build !unix

package cpuclock

import "time"

// Supported reports whether Process measures anything here.
const Supported = false

func process() time.Duration { return 0 }
