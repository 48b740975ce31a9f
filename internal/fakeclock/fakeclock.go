// Package fakeclock is a clock that moves only when a test says so, for
// tests of time-dependent rules (delays, backoff, leases) that also talk to
// real servers, where testing/synctest cannot advance time while a
// goroutine waits on the network. Pass Clock.Now where the code under test
// takes a `func() time.Time`.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a manually advanced clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock that reads t until it is advanced.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
