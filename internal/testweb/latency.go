package testweb

import (
	"fmt"
	"strings"
	"time"
)

// Latency returns how long the response to target on host waits before
// its header (Config.LatencyMin and LatencyMax): 0 when the web has no
// latency, otherwise a time in [LatencyMin, LatencyMax] that depends only
// on the seed, the host (case and port do not matter) and the target.
func (w *Web) Latency(host, target string) time.Duration {
	lo, hi := w.cfg.LatencyMin, w.cfg.LatencyMax
	if hi <= 0 {
		return 0
	}
	span := uint64(hi - lo)
	if span == 0 {
		return lo
	}
	// A separate identity from the page content's, so that the wait is
	// not correlated with what the page says.
	r := w.seedFor("latency\x00"+NormalizeHost(host), target)
	return lo + time.Duration(r.next()%(span+1))
}

// ParseLatency parses a latency range "MIN-MAX" of two Go durations
// ("100ms-300ms"), or a single duration for a fixed wait ("200ms"). The
// range must satisfy 0 <= MIN <= MAX <= MaxLatency.
func ParseLatency(s string) (lo, hi time.Duration, err error) {
	if len(s) > 64 {
		return 0, 0, fmt.Errorf("testweb: latency %.64q...: too long", s)
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	if lo, err = time.ParseDuration(strings.TrimSpace(a)); err != nil {
		return 0, 0, fmt.Errorf("testweb: latency %q: want MIN-MAX such as 100ms-300ms: %w", s, err)
	}
	if hi, err = time.ParseDuration(strings.TrimSpace(b)); err != nil {
		return 0, 0, fmt.Errorf("testweb: latency %q: want MIN-MAX such as 100ms-300ms: %w", s, err)
	}
	if lo < 0 || hi > MaxLatency || lo > hi {
		return 0, 0, fmt.Errorf("testweb: latency %q: want 0 <= MIN <= MAX <= %v", s, MaxLatency)
	}
	return lo, hi, nil
}
