// Package poll waits, in tests, for a condition that a real server or a
// goroutine makes true on its own time: a bounded wait, never a timing
// assertion (the limit is generous; a test that depends on how fast
// something happens belongs in a benchmark).
package poll

import (
	"testing"
	"time"
)

// interval is how often a condition is checked.
const interval = 5 * time.Millisecond

// Within reports whether cond holds within limit, checking it every few
// milliseconds (first at once).
func Within(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// Until fails t when cond does not hold within limit; what names the
// condition in the failure ("the trace entry").
func Until(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(limit, cond) {
		t.Fatalf("waited %v for %s", limit, what)
	}
}
