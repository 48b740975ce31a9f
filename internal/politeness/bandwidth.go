package politeness

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Bandwidth classes (the polite-proxy thesis: "The download speed can easily be
// calculated by dividing the size of downloaded page through the time
// needed ... [it] then can be used to classify domains and to use suitable
// crawl delays for each group"). Each successful fetch reported to
// Permit.Done with Outcome.Bytes ≥ MinBytes gives a sample of bytes per
// second (latency included, as the thesis notes); a key's rate is the
// exponentially weighted mean of its samples. Once a key has MinSamples
// samples, the class with the largest MinBytesPerSecond not above its rate
// scales its default delay, under the same rules as popularity (manual
// delays, robots and rate delays are never shortened; Floor bounds it).
//
// The measurements are per process, also with the Redis backend: a rate
// is what this process observed over its own network path (the thesis
// counts the network into it), the samples are kept in memory (bounded by
// MaxHosts, forgotten after MaxAge) and a restart relearns them within
// MinSamples fetches. Two processes may so put one host in different
// classes; each still enforces at least the larger of its scaled delay and
// the robots and operator delays against the shared state.

// BandwidthConfig configures bandwidth classes. The zero value is off.
type BandwidthConfig struct {
	// Classes are the bandwidth classes; empty (default) turns the feature
	// off. At most 32. A key whose rate is below every class's
	// MinBytesPerSecond is not scaled.
	Classes []BandwidthClass `yaml:"classes"`
	// MinBytes is the smallest response body that gives a sample: the
	// time of a tiny response is all latency. Default 8192 bytes.
	MinBytes int64 `yaml:"min-bytes"`
	// MinSamples is how many samples a key needs before it is classified.
	// Default 3.
	MinSamples int `yaml:"min-samples"`
	// Smoothing is the weight of a new sample in the key's mean rate,
	// more than 0 and at most 1 (1: the last sample only). Default 0.3.
	Smoothing float64 `yaml:"smoothing"`
	// MaxAge is how long a key's rate is kept after its last sample.
	// Default 1h.
	MaxAge time.Duration `yaml:"max-age"`
	// MaxHosts bounds the keys measured; when full, stale keys and then
	// arbitrary ones make room. Default 100,000 (about 64 bytes each plus
	// the key).
	MaxHosts int `yaml:"max-hosts"`
	// Floor is the smallest delay a factor below 1 may produce. Default
	// 100ms; negative means no floor.
	Floor time.Duration `yaml:"floor"`
}

// BandwidthClass is one class of BandwidthConfig.Classes.
type BandwidthClass struct {
	// Name labels the class in Decision and the API ("slow", "fast").
	Name string `yaml:"name" json:"name"`
	// MinBytesPerSecond is the class's lower bound of the measured rate,
	// in bytes per second; 0 takes every rate.
	MinBytesPerSecond int64 `yaml:"min-bytes-per-second" json:"minBytesPerSecond"`
	// Factor multiplies the default delay: more than 0, at most 100.
	Factor float64 `yaml:"factor" json:"factor"`
}

// BandwidthInfo says which class scaled a key's default delay.
type BandwidthInfo struct {
	// Class is the class's name; "" when none applied.
	Class string `json:"class"`
	// BytesPerSecond is the key's measured mean rate; 0 when unknown.
	BytesPerSecond int64 `json:"bytesPerSecond"`
	// Samples is how many samples the rate rests on (capped at 1000).
	Samples int `json:"samples"`
	// Factor is the class's factor; 0 when none applied.
	Factor float64 `json:"factor"`
}

const (
	maxBandwidthClasses = 32
	maxBandwidthHosts   = 10_000_000
	maxBandwidthSamples = 1000
	// bandwidthEvictBudget bounds the keys examined to make room.
	bandwidthEvictBudget = 64
)

func (c BandwidthConfig) withDefaults() BandwidthConfig {
	setDefault(&c.MinBytes, 8192)
	setDefault(&c.MinSamples, 3)
	setDefault(&c.Smoothing, 0.3)
	setDefault(&c.MaxAge, time.Hour)
	setDefault(&c.MaxHosts, 100_000)
	setDefault(&c.Floor, 100*time.Millisecond)
	if c.Floor < 0 {
		c.Floor = 0
	}
	c.Classes = slices.Clone(c.Classes)
	slices.SortStableFunc(c.Classes, func(a, b BandwidthClass) int {
		switch {
		case a.MinBytesPerSecond < b.MinBytesPerSecond:
			return -1
		case a.MinBytesPerSecond > b.MinBytesPerSecond:
			return 1
		}
		return 0
	})
	return c
}

func (c BandwidthConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("politeness: bandwidth."+format, args...))
	}
	if len(c.Classes) > maxBandwidthClasses {
		bad("classes: %d classes, at most %d", len(c.Classes), maxBandwidthClasses)
	}
	seen := make(map[int64]bool, len(c.Classes))
	for i, k := range c.Classes {
		if k.MinBytesPerSecond < 0 {
			bad("classes[%d]: min-bytes-per-second %d is negative", i, k.MinBytesPerSecond)
		}
		if seen[k.MinBytesPerSecond] {
			bad("classes[%d]: min-bytes-per-second %d given twice", i, k.MinBytesPerSecond)
		}
		seen[k.MinBytesPerSecond] = true
		if !(k.Factor > 0 && k.Factor <= maxScaleFactor) {
			bad("classes[%d]: factor %v outside (0, %d]", i, k.Factor, maxScaleFactor)
		}
		if len(k.Name) > 64 {
			bad("classes[%d]: name longer than 64 bytes", i)
		}
	}
	if c.MinBytes < 0 {
		bad("min-bytes %d is negative", c.MinBytes)
	}
	if c.MinSamples < 0 || c.MinSamples > maxBandwidthSamples {
		bad("min-samples %d outside 0..%d", c.MinSamples, maxBandwidthSamples)
	}
	if c.Smoothing < 0 || c.Smoothing > 1 {
		bad("smoothing %v outside (0, 1]", c.Smoothing)
	}
	if c.MaxAge < 0 {
		bad("max-age %v is negative", c.MaxAge)
	}
	if c.MaxHosts < 0 || c.MaxHosts > maxBandwidthHosts {
		bad("max-hosts %d outside 0..%d", c.MaxHosts, maxBandwidthHosts)
	}
	return errors.Join(errs...)
}

// bandwidthMeter keeps the per-key mean download rates of this process.
type bandwidthMeter struct {
	// mu guards keys.
	mu   sync.Mutex
	keys map[string]bwSample
}

// bwSample is one key's rate: about 32 bytes plus the map entry.
type bwSample struct {
	rate float64 // bytes per second, weighted mean
	n    int32   // samples, capped at maxBandwidthSamples
	at   time.Time
}

func newBandwidthMeter() *bandwidthMeter {
	return &bandwidthMeter{keys: make(map[string]bwSample)}
}

// observe adds a sample of bytes in dur to key.
func (m *bandwidthMeter) observe(c *BandwidthConfig, key string, bytes int64, dur time.Duration, now time.Time) {
	if bytes < c.MinBytes || bytes <= 0 || dur <= 0 {
		return
	}
	rate := float64(bytes) / dur.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.keys[key]
	if ok && now.Sub(s.at) > c.MaxAge {
		ok, s = false, bwSample{}
	}
	if !ok && len(m.keys) >= c.MaxHosts {
		m.evictLocked(c, now)
	}
	if s.n == 0 {
		s.rate = rate
	} else {
		s.rate += c.Smoothing * (rate - s.rate)
	}
	s.n = min(s.n+1, maxBandwidthSamples)
	s.at = now
	m.keys[key] = s
}

// evictLocked makes room for one key: stale keys first among a bounded
// number examined, else an arbitrary one (map order).
func (m *bandwidthMeter) evictLocked(c *BandwidthConfig, now time.Time) {
	n := 0
	var victim string
	for k, s := range m.keys {
		if now.Sub(s.at) > c.MaxAge {
			delete(m.keys, k)
			return
		}
		if victim == "" {
			victim = k
		}
		if n++; n >= bandwidthEvictBudget {
			break
		}
	}
	if len(m.keys) >= c.MaxHosts && victim != "" {
		delete(m.keys, victim)
	}
}

// class returns key's bandwidth class; ok is false when none applies
// (too few samples, rate below every class, or stale).
func (m *bandwidthMeter) class(c *BandwidthConfig, key string, now time.Time) (BandwidthInfo, bool) {
	m.mu.Lock()
	s, found := m.keys[key]
	m.mu.Unlock()
	if !found || now.Sub(s.at) > c.MaxAge {
		return BandwidthInfo{}, false
	}
	info := BandwidthInfo{BytesPerSecond: int64(s.rate), Samples: int(s.n)}
	if int(s.n) < c.MinSamples {
		return info, false
	}
	idx := -1
	for i, k := range c.Classes {
		if float64(k.MinBytesPerSecond) <= s.rate {
			idx = i
		}
	}
	if idx < 0 {
		return info, false
	}
	info.Class, info.Factor = c.Classes[idx].Name, c.Classes[idx].Factor
	return info, true
}

// len returns the number of keys measured.
func (m *bandwidthMeter) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}

// scaleDefault scales the default delay def by the given factors
// (popularity and bandwidth, 1 when absent), bounded below by floor for a
// shortening (never under def itself when def is already smaller) and
// above by maxConfigDelay.
func scaleDefault(def time.Duration, factor float64, floor time.Duration) time.Duration {
	if factor == 1 || def <= 0 {
		return def
	}
	f := float64(def) * factor
	if f >= float64(maxConfigDelay) {
		return maxConfigDelay
	}
	d := time.Duration(f)
	if d < def {
		d = max(d, min(floor, def))
	}
	return d
}
