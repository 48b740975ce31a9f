package politeness

import (
	"fmt"
	"os"
	"reflect"
	"time"
)

// loadedPopularity is a Popularity with what it was loaded from, so that a
// reload with the same configuration and an unchanged file is skipped.
type loadedPopularity struct {
	pop  *Popularity
	cfg  PopularityConfig
	size int64
	mod  time.Time
}

// SetConfigPopularity replaces the popularity tiers (call it at start, New
// does, and when the config file changes). The list file is read again
// when the configuration or the file (size, modification time) changed.
// On error the tiers in force are kept. A zero c turns popularity off.
func (g *Gate) SetConfigPopularity(c PopularityConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	if c.List == "" {
		g.pop.Store(nil)
		return nil
	}
	fi, err := os.Stat(c.List)
	if err != nil {
		return fmt.Errorf("politeness: popularity list: %w", err)
	}
	if old := g.pop.Load(); old != nil && reflect.DeepEqual(old.cfg, c) && old.size == fi.Size() && old.mod.Equal(fi.ModTime()) {
		return nil
	}
	p, err := LoadPopularity(c)
	if err != nil {
		return err
	}
	g.pop.Store(&loadedPopularity{pop: p, cfg: c, size: fi.Size(), mod: fi.ModTime()})
	return nil
}

// Popularity returns the popularity list in force; nil when off.
func (g *Gate) Popularity() *Popularity {
	if lp := g.pop.Load(); lp != nil {
		return lp.pop
	}
	return nil
}

// SetConfigBandwidth replaces the bandwidth classes (call it when the
// config file changes). Rates measured so far are kept. A zero c (no
// classes) turns the classes off; rates are then no longer measured.
func (g *Gate) SetConfigBandwidth(c BandwidthConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	if len(c.Classes) == 0 {
		g.bw.Store(nil)
		return nil
	}
	c = c.withDefaults()
	g.bw.Store(&c)
	return nil
}

// BandwidthHosts returns the number of keys whose download rate this
// process is tracking.
func (g *Gate) BandwidthHosts() int { return g.meter.len() }

// scale applies popularity and bandwidth to key's default delay def. Only the default delay is scaled: callers use it when the key
// has no manual delay.
func (g *Gate) scale(key string, def time.Duration, now time.Time) (time.Duration, PopularityInfo, BandwidthInfo) {
	var (
		pi     PopularityInfo
		bi     BandwidthInfo
		factor = 1.0
		floor  time.Duration
	)
	if lp := g.pop.Load(); lp != nil {
		if info, ok := lp.pop.Lookup(key); ok {
			pi, factor, floor = info, info.Factor, lp.pop.floor
		}
	}
	if c := g.bw.Load(); c != nil {
		info, ok := g.meter.class(c, key, now)
		bi = info
		if ok {
			factor *= info.Factor
			floor = max(floor, c.Floor)
		}
	}
	return scaleDefault(def, factor, floor), pi, bi
}

// observeBandwidth records a fetch's download rate for key when bandwidth
// classes are on and the fetch succeeded (2xx, no transport error).
func (g *Gate) observeBandwidth(key string, o Outcome, dur time.Duration) {
	c := g.bw.Load()
	if c == nil || o.Err != nil || o.Status < 200 || o.Status > 299 {
		return
	}
	g.meter.observe(c, key, o.Bytes, dur, g.now())
}
