package politeness

import (
	"sync"
	"time"
)

// Counters is an Observer that counts robots.txt fetches by result and
// decisions by reason, for the proxy's metrics endpoint to export (it can
// read them in a Prometheus Collector's Collect). The zero value is ready.
type Counters struct {
	// mu guards the maps.
	mu        sync.Mutex
	robots    map[RobotsResult]int64
	stale     int64
	decisions map[Reason]int64
}

// RobotsFetched implements Observer.
func (c *Counters) RobotsFetched(_ string, r RobotsResult, stale bool, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.robots == nil {
		c.robots = make(map[RobotsResult]int64)
	}
	c.robots[r]++
	if stale {
		c.stale++
	}
}

// Decided implements Observer.
func (c *Counters) Decided(d Decision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.decisions == nil {
		c.decisions = make(map[Reason]int64)
	}
	c.decisions[d.Reason]++
}

// RobotsFetches returns the number of robots.txt fetches per result, and
// how many of the unavailable ones kept a stale good copy in force.
func (c *Counters) RobotsFetches() (byResult map[RobotsResult]int64, stale int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byResult = make(map[RobotsResult]int64, len(c.robots))
	for k, v := range c.robots {
		byResult[k] = v
	}
	return byResult, c.stale
}

// Decisions returns the number of Try/Wait answers per reason
// (ReasonNone: granted).
func (c *Counters) Decisions() map[Reason]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[Reason]int64, len(c.decisions))
	for k, v := range c.decisions {
		out[k] = v
	}
	return out
}
