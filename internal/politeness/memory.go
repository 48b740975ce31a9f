package politeness

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemoryState is the in-process State: leases and gaps for one process
// (the embedded backend uses it too: they need no disk, and a restart
// drops in-flight fetches anyway). Idle keys are swept lazily.
type MemoryState struct {
	now func() time.Time
	// mu guards keys and ops.
	mu struct {
		sync.Mutex
		keys map[string]*memKey
		ops  int
	}
}

type memLease struct {
	id  string
	exp time.Time
}

type memKey struct {
	leases       []memLease
	hasEnd       bool
	lastEnd      time.Time
	gap          time.Duration // last gap asked for, to know when the key is idle
	adaptive     time.Duration
	level        int
	backoffUntil time.Time
}

// Sweep tuning: every sweepEvery operations, up to sweepBudget keys are
// examined and idle ones dropped, so memory follows the active key set.
const (
	sweepEvery  = 4096
	sweepBudget = 4096
	// idleRetain keeps an idle key's adaptive delay and backoff level this
	// long after its gap has passed.
	idleRetain = 10 * time.Minute
)

// NewMemoryState returns an empty MemoryState reading the clock now (nil
// means time.Now).
func NewMemoryState(now func() time.Time) *MemoryState {
	if now == nil {
		now = time.Now
	}
	s := &MemoryState{now: now}
	s.mu.keys = make(map[string]*memKey)
	return s
}

// Acquire implements State.
func (s *MemoryState) Acquire(ctx context.Context, key string, req AcquireRequest) (Grant, error) {
	if err := ctx.Err(); err != nil {
		return Grant{}, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maybeSweepLocked(now)
	k := s.mu.keys[key]
	if k == nil {
		k = &memKey{}
		if !req.DryRun {
			s.mu.keys[key] = k
		}
	}
	k.expireLocked(now)
	gap := req.Delay
	if !req.Override && k.adaptive > gap {
		gap = k.adaptive
	}
	if !req.DryRun {
		k.gap = gap
	}
	limit := max(req.Limit, 1)
	g := Grant{InFlight: len(k.leases), Adaptive: k.adaptive, BackoffLevel: k.level, SinceEnd: -1}
	if k.hasEnd {
		g.SinceEnd = now.Sub(k.lastEnd)
	}
	var delayLeft time.Duration
	if k.hasEnd {
		delayLeft = max(k.lastEnd.Add(gap).Sub(now), 0)
	}
	if k.backoffUntil.After(now) {
		g.Backoff = k.backoffUntil.Sub(now)
	}
	switch {
	case g.Backoff > 0:
		g.Reason, g.Wait = ReasonBackoff, max(g.Backoff, delayLeft)
	case len(k.leases) >= limit:
		earliest := k.leases[0].exp
		for _, l := range k.leases[1:] {
			if l.exp.Before(earliest) {
				earliest = l.exp
			}
		}
		g.Reason, g.Wait = ReasonConcurrency, earliest.Sub(now)+gap
	case delayLeft > 0:
		g.Reason, g.Wait = ReasonDelay, delayLeft
	default:
		g.OK = true
		if !req.DryRun {
			k.leases = append(k.leases, memLease{id: req.LeaseID, exp: now.Add(req.Lease)})
			g.InFlight = len(k.leases)
		}
	}
	return g, nil
}

// expireLocked drops expired leases; an expired lease counts as a fetch
// that ended at its expiry, so a dead holder still leaves a gap.
func (k *memKey) expireLocked(now time.Time) {
	kept := k.leases[:0]
	for _, l := range k.leases {
		if l.exp.After(now) {
			kept = append(kept, l)
			continue
		}
		if !k.hasEnd || l.exp.After(k.lastEnd) {
			k.hasEnd, k.lastEnd = true, l.exp
		}
	}
	clear(k.leases[len(kept):])
	k.leases = kept
}

// Release implements State.
func (s *MemoryState) Release(ctx context.Context, key string, req ReleaseRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.mu.keys[key]
	if k == nil {
		if !req.Used {
			return nil
		}
		k = &memKey{}
		s.mu.keys[key] = k
	}
	k.leases = slices.DeleteFunc(k.leases, func(l memLease) bool { return l.id == req.LeaseID })
	if !req.Used {
		return nil
	}
	if !k.hasEnd || now.After(k.lastEnd) {
		k.hasEnd, k.lastEnd = true, now
	}
	k.adaptive = max(req.Adaptive, 0)
	switch req.Backoff {
	case BackoffReset:
		k.level, k.backoffUntil = 0, time.Time{}
	case BackoffGrow:
		k.level++
		d := req.RetryAfter
		if d <= 0 {
			d = backoffFor(k.level, req.BackoffBase, req.BackoffMax)
		}
		if until := now.Add(d); until.After(k.backoffUntil) {
			k.backoffUntil = until
		}
	}
	return nil
}

// maybeSweepLocked drops idle keys now and then.
func (s *MemoryState) maybeSweepLocked(now time.Time) {
	s.mu.ops++
	if s.mu.ops < sweepEvery {
		return
	}
	s.mu.ops = 0
	n := 0
	for key, k := range s.mu.keys {
		if n++; n > sweepBudget {
			break
		}
		k.expireLocked(now)
		if len(k.leases) == 0 && !k.backoffUntil.After(now) &&
			(!k.hasEnd || now.Sub(k.lastEnd) > k.gap+idleRetain) {
			delete(s.mu.keys, key)
		}
	}
}

// Len returns the number of keys held, for tests and metrics.
func (s *MemoryState) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.keys)
}

// maxMemoryRobots bounds MemoryRobotsStore; beyond it an arbitrary entry is
// dropped (it is only a cache: the origin is asked again).
const maxMemoryRobots = 100_000

// MemoryRobotsStore is a RobotsStore in a map (lost at exit).
type MemoryRobotsStore struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]RobotsEntry
}

// NewMemoryRobotsStore returns an empty store.
func NewMemoryRobotsStore() *MemoryRobotsStore {
	return &MemoryRobotsStore{m: make(map[string]RobotsEntry)}
}

// GetRobots implements RobotsStore.
func (s *MemoryRobotsStore) GetRobots(ctx context.Context, origin string) (RobotsEntry, error) {
	if err := ctx.Err(); err != nil {
		return RobotsEntry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[origin]
	if !ok {
		return RobotsEntry{}, ErrNotFound
	}
	return cloneRobots(e), nil
}

// PutRobots implements RobotsStore.
func (s *MemoryRobotsStore) PutRobots(ctx context.Context, e RobotsEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[e.Origin]; !ok && len(s.m) >= maxMemoryRobots {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[e.Origin] = cloneRobots(e)
	return nil
}

// DeleteRobots implements RobotsStore.
func (s *MemoryRobotsStore) DeleteRobots(ctx context.Context, origin string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, origin)
	return nil
}

func cloneRobots(e RobotsEntry) RobotsEntry {
	e.Body = slices.Clone(e.Body)
	e.Good = slices.Clone(e.Good)
	return e
}

// MemoryDelayStore is a DelayStore in a map (lost at exit).
type MemoryDelayStore struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]DelayEntry
}

// NewMemoryDelayStore returns an empty store.
func NewMemoryDelayStore() *MemoryDelayStore {
	return &MemoryDelayStore{m: make(map[string]DelayEntry)}
}

// GetDelay implements DelayStore.
func (s *MemoryDelayStore) GetDelay(ctx context.Context, key string) (DelayEntry, error) {
	if err := ctx.Err(); err != nil {
		return DelayEntry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok {
		return DelayEntry{}, ErrNotFound
	}
	return e, nil
}

// PutDelay implements DelayStore.
func (s *MemoryDelayStore) PutDelay(ctx context.Context, e DelayEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[e.Key] = e
	return nil
}

// DeleteDelay implements DelayStore.
func (s *MemoryDelayStore) DeleteDelay(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// ListDelays implements DelayStore.
func (s *MemoryDelayStore) ListDelays(ctx context.Context, after string, limit int) ([]DelayEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit = ListLimit(limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.m))
	for k := range s.m {
		if k > after {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, strings.Compare)
	keys = keys[:min(len(keys), limit)]
	out := make([]DelayEntry, len(keys))
	for i, k := range keys {
		out[i] = s.m[k]
	}
	return out, nil
}
