package politeness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// delays returns the delay breakdown for key (Adaptive and Backoff are
// filled in by the State), view giving the robots parts.
func (g *Gate) delays(ctx context.Context, key string, view *robotsView, now time.Time) (Delays, error) {
	var d Delays
	e, found, err := g.delayEntry(ctx, key)
	if err != nil {
		return d, err
	}
	g.mu.Lock()
	rule, inFile := g.mu.fileDelays[key]
	g.mu.Unlock()
	switch {
	case found && e.HasManual:
		d.Configured, d.Manual, d.Override = e.Manual, true, e.Override
	case inFile:
		d.Configured, d.Manual, d.Override = rule.Delay, true, rule.Override
	default:
		def, err := g.DefaultDelay(ctx)
		if err != nil {
			return d, err
		}
		d.Default = def
		d.Configured, d.Popularity, d.Bandwidth = g.scale(key, def, now)
	}
	if view != nil && !view.blocked {
		if cd, ok := view.group.CrawlDelay(); ok {
			d.Robots = min(max(cd, 0), g.cfg.MaxCrawlDelay)
		}
		if r, ok := view.group.RequestRate(now); ok {
			d.Rate = min(max(r.Interval(), 0), g.cfg.MaxRateInterval)
		}
		// REGP Ip-delay / Ip-rate space requests from
		// our own address, which every request of this gate uses.
		if ip := view.group.IPInterval(now); ip > 0 {
			d.Rate = max(d.Rate, min(ip, g.cfg.MaxRateInterval))
		}
	}
	return effectiveDelay(d), nil
}

// delayEntry reads key's DelayEntry through the in-process cache.
func (g *Gate) delayEntry(ctx context.Context, key string) (DelayEntry, bool, error) {
	now := g.now()
	g.mu.Lock()
	c, ok := g.mu.delays[key]
	g.mu.Unlock()
	if ok && now.Sub(c.at) < g.cfg.ConfigCacheTTL && !now.Before(c.at) {
		return c.e, c.found, nil
	}
	e, err := g.dstore.GetDelay(ctx, key)
	found := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return DelayEntry{}, false, fmt.Errorf("politeness: delay store: %w", err)
	}
	g.cacheDelay(key, e, found, now)
	return e, found, nil
}

func (g *Gate) cacheDelay(key string, e DelayEntry, found bool, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.mu.delays) >= maxCachedDelays {
		clear(g.mu.delays)
	}
	g.mu.delays[key] = cachedDelay{e: e, found: found, at: now}
}

// freshDelayEntry reads key's entry from the store, bypassing the cache
// (read-modify-write of admin operations).
func (g *Gate) freshDelayEntry(ctx context.Context, key string) (DelayEntry, bool, error) {
	e, err := g.dstore.GetDelay(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return DelayEntry{Key: key}, false, nil
	}
	if err != nil {
		return DelayEntry{}, false, fmt.Errorf("politeness: delay store: %w", err)
	}
	return e, true, nil
}

func (g *Gate) putDelay(ctx context.Context, e DelayEntry) error {
	e.Updated = g.now()
	if err := g.dstore.PutDelay(ctx, e); err != nil {
		return fmt.Errorf("politeness: delay store: %w", err)
	}
	g.cacheDelay(e.Key, e, true, g.now())
	return nil
}

// noteRobotsDelay records the robots delay of key when it
// changed.
func (g *Gate) noteRobotsDelay(ctx context.Context, key string, v *robotsView, now time.Time) error {
	d, err := g.delays(ctx, key, v, now)
	if err != nil {
		return err
	}
	rd := max(d.Robots, d.Rate)
	e, found, err := g.delayEntry(ctx, key)
	if err != nil {
		return err
	}
	if e.Robots == rd && (found || rd == 0) {
		return nil
	}
	e, found, err = g.freshDelayEntry(ctx, key)
	if err != nil {
		return err
	}
	if e.Robots == rd && (found || rd == 0) {
		return nil
	}
	e.Robots = rd
	return g.putDelay(ctx, e)
}

// checkKey vets a key an operator names: a host name, registrable domain
// or IP address, never a URL (which no request's key would match).
func checkKey(key string) error {
	if err := checkStoredKey(key); err != nil {
		return err
	}
	if strings.ContainsAny(key, "/?#@") {
		return fmt.Errorf("politeness: bad key %q: want a host name, domain or IP address (not a URL)", key)
	}
	return nil
}

// checkStoredKey is the weaker check of DeleteDelay, so that a key stored
// before checkKey refused URLs can still be removed.
func checkStoredKey(key string) error {
	if key == "" || key == DefaultDelayKey || len(key) > 1024 || strings.ContainsAny(key, " \t\r\n") {
		return fmt.Errorf("politeness: bad key %q", key)
	}
	return nil
}

// SetDelay sets key's manual delay. With
// override it wins even over a larger robots Crawl-delay. d is 0..24h.
func (g *Gate) SetDelay(ctx context.Context, key string, d time.Duration, override bool) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if d < 0 || d > maxConfigDelay {
		return fmt.Errorf("politeness: delay %v outside 0..%v", d, maxConfigDelay)
	}
	e, _, err := g.freshDelayEntry(ctx, key)
	if err != nil {
		return err
	}
	e.Key, e.HasManual, e.Manual, e.Override = key, true, d, override
	return g.putDelay(ctx, e)
}

// DeleteDelay removes key's manual delay set by SetDelay; the config
// file's delay for key, else the default, applies again. The robots delay
// record is kept.
func (g *Gate) DeleteDelay(ctx context.Context, key string) error {
	if err := checkStoredKey(key); err != nil {
		return err
	}
	e, found, err := g.freshDelayEntry(ctx, key)
	if err != nil || !found {
		return err
	}
	if e.Robots > 0 {
		e.HasManual, e.Manual, e.Override = false, 0, false
		return g.putDelay(ctx, e)
	}
	if err := g.dstore.DeleteDelay(ctx, key); err != nil {
		return fmt.Errorf("politeness: delay store: %w", err)
	}
	g.cacheDelay(key, DelayEntry{}, false, g.now())
	return nil
}

// DelayInfo is one key's delay configuration as ListDelays shows it.
type DelayInfo struct {
	Key string `json:"key"`
	// Manual is the operator's delay (admin API or config file); valid
	// when HasManual.
	Manual    time.Duration `json:"manual"`
	HasManual bool          `json:"has_manual"`
	Override  bool          `json:"override"`
	// FromFile is true when Manual comes from the config file.
	FromFile bool `json:"from_file"`
	// Robots is the last robots delay seen (Crawl-delay or Request-rate
	// interval, capped); 0 when none.
	Robots time.Duration `json:"robots"`
	// Current is the delay in force without adaptive delay and backoff
	// (Status has those): Manual when Override, else the largest of
	// Manual (or the default scaled by popularity and bandwidth) and
	// Robots.
	Current time.Duration `json:"current"`
	// Updated is when the stored entry was last written (zero for file
	// entries).
	Updated time.Time `json:"updated"`
	// Popularity and Bandwidth are the popularity tier and bandwidth class
	// that scaled the default delay in Current; nil when none did (or
	// HasManual).
	Popularity *PopularityInfo `json:"popularity,omitempty"`
	Bandwidth  *BandwidthInfo  `json:"bandwidth,omitempty"`
}

// ListDelays lists keys with a manual or robots delay, in key order, after
// the key after (exclusive; "" starts at the beginning), at most limit
// (≤ 0 means 100, at most 10000). Pass the last key as after to page.
func (g *Gate) ListDelays(ctx context.Context, after string, limit int) ([]DelayInfo, error) {
	limit = ListLimit(limit)
	entries, err := g.dstore.ListDelays(ctx, after, limit+1)
	if err != nil {
		return nil, fmt.Errorf("politeness: delay store: %w", err)
	}
	def, err := g.DefaultDelay(ctx)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]DelayInfo, len(entries))
	for _, e := range entries {
		if e.Key == DefaultDelayKey {
			continue
		}
		byKey[e.Key] = DelayInfo{Key: e.Key, Manual: e.Manual, HasManual: e.HasManual, Override: e.Override, Robots: e.Robots, Updated: e.Updated}
	}
	// The store page covers keys up to its last one only; file rules
	// beyond that are left for the next page.
	storeFull := len(entries) > limit
	last := ""
	if len(entries) > 0 {
		last = entries[len(entries)-1].Key
	}
	g.mu.Lock()
	for k, r := range g.mu.fileDelays {
		if k <= after || (storeFull && k > last) {
			continue
		}
		info, ok := byKey[k]
		if !ok || !info.HasManual {
			info.Key, info.Manual, info.HasManual, info.Override, info.FromFile = k, r.Delay, true, r.Override, true
			byKey[k] = info
		}
	}
	g.mu.Unlock()
	out := make([]DelayInfo, 0, len(byKey))
	now := g.now()
	for _, info := range byKey {
		base := def
		if !info.HasManual {
			var pi PopularityInfo
			var bi BandwidthInfo
			base, pi, bi = g.scale(info.Key, def, now)
			if pi.Rank > 0 {
				info.Popularity = &pi
			}
			if bi.Class != "" {
				info.Bandwidth = &bi
			}
		}
		if info.HasManual {
			base = info.Manual
		}
		info.Current = max(base, info.Robots)
		if info.HasManual && info.Override {
			info.Current = info.Manual
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b DelayInfo) int { return strings.Compare(a.Key, b.Key) })
	return out[:min(len(out), limit)], nil
}

// DefaultDelay returns the default delay in force: SetDefaultDelay's (the
// admin layer, persisted), else the config file's (SetConfigDefaultDelay,
// else Config.DefaultDelay).
func (g *Gate) DefaultDelay(ctx context.Context) (time.Duration, error) {
	e, found, err := g.delayEntry(ctx, DefaultDelayKey)
	if err != nil {
		return 0, err
	}
	if found && e.HasManual {
		return e.Manual, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.fileDefault != nil {
		return *g.mu.fileDefault, nil
	}
	return g.cfg.DefaultDelay, nil
}

// SetConfigDefaultDelay replaces the config-file layer's default delay
// (call it when the file changes). Unlike SetDefaultDelay it is not
// persisted: the file stays the source of its own values, so an edit made
// while the process is down takes effect at the next start. An admin
// default (SetDefaultDelay) wins over it, as for per-key delays.
func (g *Gate) SetConfigDefaultDelay(d time.Duration) error {
	if d < 0 || d > maxConfigDelay {
		return fmt.Errorf("politeness: default delay %v outside 0..%v", d, maxConfigDelay)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.fileDefault = &d
	return nil
}

// SetDefaultDelay changes the default delay at runtime and persists it
// (it then wins over Config.DefaultDelay, also after a restart). d is
// 0..24h.
func (g *Gate) SetDefaultDelay(ctx context.Context, d time.Duration) error {
	if d < 0 || d > maxConfigDelay {
		return fmt.Errorf("politeness: default delay %v outside 0..%v", d, maxConfigDelay)
	}
	return g.putDelay(ctx, DelayEntry{Key: DefaultDelayKey, HasManual: true, Manual: d})
}

// SetConfigDelays replaces the config-file layer of manual delays (call it
// when the file changes). Delays set through SetDelay win over these.
// Invalid rules are skipped (Config.Validate reports them).
func (g *Gate) SetConfigDelays(rules []DelayRule) {
	m := make(map[string]DelayRule, len(rules))
	for _, r := range rules {
		r.Key = strings.ToLower(r.Key)
		if checkKey(r.Key) != nil || r.Delay < 0 || r.Delay > maxConfigDelay {
			continue
		}
		m[r.Key] = r
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.fileDelays = m
}
