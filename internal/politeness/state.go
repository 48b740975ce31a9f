package politeness

import (
	"context"
	"errors"
	"time"
)

// State holds the per-key scheduling state that must be shared by every
// process enforcing politeness for the same keys: in-flight leases, the end
// of the last fetch, the backoff and the adaptive delay. Times are the
// State's own clock (the process clock for memory, Redis server time for
// Redis); callers only ever see durations relative to it, so the clocks of
// different machines never have to agree.
//
// Each method is one atomic step: the Redis implementation does each in one
// Lua script round trip. Implementations must be safe for concurrent use
// and pass statetest.State.
type State interface {
	// Acquire takes one of req.Limit slots of key for req.Lease if the key
	// is open: fewer than Limit unexpired leases, at least req.Delay (or
	// the stored adaptive delay, unless req.Override) since the end of the
	// last fetch, and no backoff in force. Expired leases are dropped
	// first; their expiry counts as the end of a fetch, so a dead holder
	// still leaves a gap. With req.DryRun nothing is taken or changed.
	Acquire(ctx context.Context, key string, req AcquireRequest) (Grant, error)
	// Release ends lease req.LeaseID of key. When req.Used, the fetch's end
	// (now) is recorded, the adaptive delay is set and the backoff updated
	// as req says — even if the lease had already expired, since the fetch
	// happened. An unused release only frees the slot.
	Release(ctx context.Context, key string, req ReleaseRequest) error
}

// AcquireRequest is the caller's side of State.Acquire.
type AcquireRequest struct {
	// LeaseID names the lease; unique per grant (the Gate uses 128 random
	// bits). Ignored with DryRun.
	LeaseID string
	// Limit is the maximum number of leases in flight; at least 1.
	Limit int
	// Delay is the gap required after the end of the last fetch, before the
	// adaptive delay is considered (the largest of configured, robots and
	// rate delays).
	Delay time.Duration
	// Override makes Delay final: the stored adaptive delay is ignored.
	Override bool
	// Lease is how long the slot is held unless released; > 0.
	Lease time.Duration
	// DryRun evaluates without taking a slot (Peek).
	DryRun bool
}

// Grant is the answer of State.Acquire.
type Grant struct {
	// OK is true when the slot was taken (or, with DryRun, would be).
	OK bool
	// Reason is ReasonConcurrency, ReasonDelay or ReasonBackoff when !OK.
	// When several hold, backoff is reported before concurrency before
	// delay.
	Reason Reason
	// Wait is the time from now until the blocking condition lifts at the
	// earliest (for concurrency: the earliest lease expiry plus the gap).
	Wait time.Duration
	// InFlight is the number of unexpired leases after the call.
	InFlight int
	// Adaptive is the stored adaptive delay.
	Adaptive time.Duration
	// Backoff is what remains of the backoff (0 when none).
	Backoff time.Duration
	// BackoffLevel is the number of consecutive 429/503 answers.
	BackoffLevel int
	// SinceEnd is the time since the end of the last fetch; -1 when the
	// key has no recorded fetch.
	SinceEnd time.Duration
}

// BackoffOp says how Release changes a key's backoff.
type BackoffOp int

const (
	// BackoffKeep leaves the backoff as it is (network errors, unused
	// reservations).
	BackoffKeep BackoffOp = iota
	// BackoffReset clears it: the origin answered normally.
	BackoffReset
	// BackoffGrow raises the level and closes the key for RetryAfter if
	// given, else for Base × 2^(level-1) capped at Max.
	BackoffGrow
)

// ReleaseRequest is the caller's side of State.Release.
type ReleaseRequest struct {
	// LeaseID is the lease being ended.
	LeaseID string
	// Used is true when a fetch was made under the lease.
	Used bool
	// Adaptive is the new adaptive delay (factor × duration); used only
	// when Used. 0 clears it.
	Adaptive time.Duration
	// Backoff, RetryAfter, BackoffBase and BackoffMax update the backoff
	// (only when Used).
	Backoff     BackoffOp
	RetryAfter  time.Duration
	BackoffBase time.Duration
	BackoffMax  time.Duration
}

// ErrNotFound is returned by store lookups for a missing entry.
var ErrNotFound = errors.New("politeness: not found")

// backoffFor is the exponential backoff for level (1-based), capped.
func backoffFor(level int, base, maxD time.Duration) time.Duration {
	if level <= 0 || base <= 0 {
		return 0
	}
	d := base
	for i := 1; i < level; i++ {
		if d >= maxD/2 {
			return maxD
		}
		d *= 2
	}
	return min(d, maxD)
}
