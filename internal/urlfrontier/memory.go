package urlfrontier

import (
	"os"
	"runtime"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// The memory budget of `courtesy serve` on the embedded frontier, shared
// with bench/frontier-service so that the benchmark measures the process
// as it is run. What a service holds (docs/frontier-service.md, "Memory"):
//
//   - the frontier's in-memory record of each queue (about 200 bytes of
//     Go heap with its map and heap entries) and its 32 MiB seen cache;
//   - Pebble's memtables, two of StoreOptions().MemTableBytes at most;
//   - Pebble's block cache, StoreOptions().CacheBytes, which holds the
//     Bloom filter and index blocks of the seen-test (about 1.25 bytes
//     per stored key for the filters);
//   - gRPC buffers, bounded per stream by the put flow control.
//
// Pebble allocates its memtables and cache in the Go heap when built
// without cgo (CGO_ENABLED=0, how Courtesy is released), so the Go memory
// limit bounds them too; with cgo they are C memory on top of it.

// StoreOptions returns the Pebble options of the service's store: 16 MiB
// memtables and a 128 MiB block cache, enough for the filter and index
// blocks of about 50 M URLs. Every new URL's seen-test seeks the memtables
// and every write inserts into one; with 64 MiB memtables those skiplist
// walks took 60 % of the put path's CPU, and 16 MiB ones cut the CPU per
// URL stored by about 17 % (bench/frontier-service, 600,000 URLs) while
// the 10 M URL / 1 M queue run kept its speed and memory.
func StoreOptions() kv.Options {
	return kv.Options{MemTableBytes: 16 << 20, CacheBytes: 128 << 20}
}

// DefaultMemoryLimitMiB is the Go memory limit (runtime/debug
// SetMemoryLimit) `courtesy serve` sets unless told otherwise: the
// collector runs more often as the heap nears it, instead of letting the
// heap grow to twice what is live (GOGC 100), which at 1 M queues made the
// resident size peak 1.5 times above the live heap. It is a soft limit:
// a frontier whose live memory exceeds it keeps running, with the
// collector bounded to about half the CPU.
const DefaultMemoryLimitMiB = 1200

// ReadAheadBytes is the frontier's read-ahead budget in the service
// (frontier.Options.ReadAheadBytes; the frontier's default is 8 MiB):
// 8 entries of 10,000 busy queues with their URLs fit in about 13 MiB, and
// a queue served from its read-ahead costs Get no store seek while it
// holds the frontier's lock (with 8 MiB, 64 clients over 10,000 queues
// had a direct Get p50 of 0.6 ms; with 32 MiB, 0.2-0.5 ms).
const ReadAheadBytes = 32 << 20

// ExtraProcs is how many more Go processors (GOMAXPROCS) than cores
// `courtesy serve` runs with unless told otherwise. Pebble's flushes and
// compactions and the frontier's committer are goroutines that keep a
// processor busy for milliseconds at a time, and Go's scheduler takes a
// processor back from a goroutine only after 10 ms; a GetURLs woken behind
// them (for the frontier's lock, or by the network) waited that long. With
// more processors than cores the kernel shares the cores among the threads
// in slices of a few milliseconds and runs a thread that wakes soon. On 2
// cores, 64 clients at a quarter of the service's saturated rate had a
// GetURLs p99 of 30-56 ms with 2 processors and 3.5-6.4 ms with 4 to 16
// (bench/frontier-service; docs/performance.md). The cost is more thread
// switches: at saturation the service serves about as many URLs.
const ExtraProcs = 6

// Procs returns the GOMAXPROCS `courtesy serve` runs with on cores cores.
func Procs(cores int) int {
	return max(cores, 1) + ExtraProcs
}

// ApplyProcs sets GOMAXPROCS as `courtesy serve --procs n` does: n when
// above 0, else Procs of the processors Go found (the cores, or the
// container's CPU limit), unless the GOMAXPROCS variable is set and the
// flag was not given (given is false).
func ApplyProcs(n int, given bool) {
	switch {
	case n > 0:
		runtime.GOMAXPROCS(n)
	case given || os.Getenv("GOMAXPROCS") == "":
		runtime.GOMAXPROCS(Procs(runtime.GOMAXPROCS(0)))
	}
}
