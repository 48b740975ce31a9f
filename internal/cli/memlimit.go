package cli

import (
	"flag"
	"math"
	"os"
	"runtime/debug"

	"github.com/courtesy-crawler/courtesy/internal/urlfrontier"
)

// applyMemoryLimit sets the Go memory limit (a soft bound the collector
// works to keep the heap under) from a --memory-limit-mib flag: the flag,
// when given, wins over GOMEMLIMIT, and GOMEMLIMIT over the flag's
// default; 0 means no limit.
func applyMemoryLimit(fs *flag.FlagSet, mib int) error {
	if mib < 0 {
		return usagef("--memory-limit-mib must not be negative")
	}
	if flagsSet(fs)["memory-limit-mib"] || os.Getenv("GOMEMLIMIT") == "" {
		limit := int64(math.MaxInt64) // none
		if mib > 0 {
			limit = int64(mib) << 20
		}
		debug.SetMemoryLimit(limit)
	}
	return nil
}

// applyProcs sets GOMAXPROCS from a --procs flag (urlfrontier.ApplyProcs):
// the flag, when given, wins over the GOMAXPROCS variable, and the
// variable over the default.
func applyProcs(fs *flag.FlagSet, n int) error {
	if n < 0 {
		return usagef("--procs must not be negative")
	}
	urlfrontier.ApplyProcs(n, flagsSet(fs)["procs"])
	return nil
}
