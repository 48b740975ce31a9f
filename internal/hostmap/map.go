package hostmap

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// Map holds the rewrite rules. It is safe for concurrent use; the
// fast path (no rules at all, the usual crawl) takes no lock.
type Map struct {
	norm    urlnorm.Options
	now     func() time.Time
	max     int          // rules learned from robots.txt, at most
	n       atomic.Int64 // rules held; 0 skips the lock
	learned atomic.Int64 // rules learned from robots.txt (bounded by max)

	// mu guards byAuthority and byHost.
	mu sync.RWMutex
	// byAuthority: rules for one "host[:port]" as a normalized URL
	// writes it (robots.txt rules, operator aliases with a port).
	byAuthority map[string][]hostRule
	// byHost: operator aliases without a port, for every port.
	byHost map[string]hostRule
	// memberOf: for each mirror ("scheme://authority") of a learned
	// Mirror-site rule with two or more targets, the origins whose rule
	// names it, sorted. A mirror named by exactly one rule is re-picked
	// by it (repickLocked).
	memberOf map[string][]string

	// refreshed holds the origins whose robots.txt the gate fetched and
	// the crawler has not re-read yet (at most maxRefreshed).
	refreshed struct {
		sync.Mutex
		origins map[string]bool
	}
}

func newMap(norm urlnorm.Options, maxLearned int) *Map {
	m := &Map{norm: norm, now: time.Now, max: maxLearned, byAuthority: map[string][]hostRule{}, byHost: map[string]hostRule{},
		memberOf: map[string][]string{},
	}
	m.refreshed.origins = map[string]bool{}
	return m
}

// AddOperator adds an operator rule. Operator rules come before the
// rules robots.txt files give.
func (m *Map) AddOperator(r OperatorRule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.alias.port == "" {
		m.byHost[r.alias.host] = r.rule
	} else {
		a := joinHost(r.alias.host, r.alias.port)
		// Operator rules come first: the operator knows best.
		m.byAuthority[a] = append([]hostRule{r.rule}, m.byAuthority[a]...)
	}
	m.n.Add(1)
}

// origin writes s as an origin, "scheme://authority".
func (s hostSpec) origin() string {
	return s.scheme + "://" + joinHost(s.host, s.port)
}

// canonicalSpec returns t as a normalized URL writes it (a default port
// dropped), so that its origin compares equal to a URL's; false when t
// does not make a URL.
func canonicalSpec(t hostSpec, norm urlnorm.Options) (hostSpec, bool) {
	u, err := urlnorm.Normalize(t.origin()+"/", norm)
	if err != nil || u.Hostname() == "" {
		return hostSpec{}, false
	}
	return hostSpec{scheme: u.Scheme, host: u.Hostname(), port: u.Port()}, true
}

// findLocked returns the rule for u, and whether it is a re-pick (u is
// on a mirror of another origin's Mirror-site rule). The operator's
// rules come first (host:port, then host); then, on a mirror, the
// Mirror-site rule that names it (repickLocked) when it gives u's path
// to another mirror; then the rule robots.txt of u's origin gave. So the
// declaring origin's division of the paths holds for every name of a
// path, and a mirror's own rule moves the paths the division leaves on
// it: with the mirror's rule first, a path would have two homes (the
// mirror the origin's URL goes to, and the one the mirror's rule names).
func (m *Map) findLocked(u *url.URL) (r hostRule, repick, ok bool) {
	if r, ok := m.operatorLocked(u); ok {
		return r, false, true
	}
	if len(m.memberOf) > 0 {
		o := u.Scheme + "://" + u.Host
		if r, ok := m.repickLocked(o, ""); ok && r.mirrors[pickMirror(r.mirrors, u.EscapedPath())].origin() != o {
			return r, true, true
		}
	}
	if r, ok := m.findLearnedLocked(u.Scheme, u.Host); ok {
		return r, false, true
	}
	return hostRule{}, false, false
}

// operatorLocked returns the operator's rule for u (host:port, then
// host).
func (m *Map) operatorLocked(u *url.URL) (hostRule, bool) {
	for _, r := range m.byAuthority[u.Host] {
		if r.fixed() {
			return r, true
		}
	}
	r, ok := m.byHost[u.Hostname()]
	return r, ok
}

// repickLocked returns the Mirror-site rule that re-picks the mirror
// origin o: the rule of the one origin other than skip that names o among
// its two or more mirrors. A mirror named by the rules of several origins
// is re-picked by none: each would divide its paths differently, and
// following one after the other could move a URL around the sites
// without end; the rules still send their own origins' URLs to it.
func (m *Map) repickLocked(o, skip string) (hostRule, bool) {
	by := ""
	for _, d := range m.memberOf[o] {
		if d == skip {
			continue
		}
		if by != "" {
			return hostRule{}, false
		}
		by = d
	}
	if by == "" {
		return hostRule{}, false
	}
	scheme, authority, _ := strings.Cut(by, "://")
	r, ok := m.findLearnedLocked(scheme, authority)
	if !ok || len(r.mirrors) < 2 {
		return hostRule{}, false
	}
	return r, true
}

// resolve follows the rules from u, at most maxRewriteChain of them. It
// returns the final URL and the source of the first rule (nil when u stays
// where it is); loop is true when the rules lead back to a host already
// passed, in which case u is not moved. A learned rule due for a
// re-check may stop u on its origin, as mode says, so that the origin's
// robots.txt is read again.
func (m *Map) Resolve(u *url.URL, mode ProbeMode) (moved *url.URL, source string, loop bool) {
	if m.n.Load() == 0 {
		return nil, "", false
	}
	var now time.Time
	if mode != ProbeNone {
		now = m.now()
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.resolveLocked(u, mode, now)
}

// resolveLocked is resolve.
func (m *Map) resolveLocked(u *url.URL, mode ProbeMode, now time.Time) (*url.URL, string, bool) {
	cur := u
	var seen [maxRewriteChain + 1]string
	seen[0] = u.Scheme + "://" + u.Host
	source := ""
	for i := range maxRewriteChain {
		r, repick, ok := m.findLocked(cur)
		if !ok || r.identity(cur) {
			break
		}
		// A re-pick never probes: a probe is there to fetch the declaring
		// origin's robots.txt again, which only a URL of that origin does.
		if !repick && r.probes(mode, now) {
			break
		}
		next, err := r.apply(cur, m.norm)
		if err != nil {
			break
		}
		o := next.Scheme + "://" + next.Host
		if o == seen[i] {
			break // a mirror re-picked for a path of its own: it stays
		}
		for _, s := range seen[:i+1] {
			if s == o {
				return nil, "", true
			}
		}
		seen[i+1] = o
		if source == "" {
			source = r.source
		}
		cur = next
	}
	if cur == u {
		return nil, "", false
	}
	return cur, source, false
}

// maxLoopWalk bounds the origins one loop check visits; a check that
// would visit more refuses the target, as a loop would be.
const maxLoopWalk = 1024

// loopsLocked reports whether a rule of origin sending URLs to targets
// could make a loop through its target t: whether the rules, for any
// path, lead from t back to origin, or to another of targets (a target
// that leads to a sibling mirror could come back to itself by the
// sibling's re-pick: t → s by t's own rules, s → t by origin's). The walk
// goes over every branch a path could take (every mirror of a
// Mirror-site rule, not only the one a given path picks), so a rule
// accepted here loops for no path. origin's current rule plays no part:
// the new one replaces it.
func (m *Map) loopsLocked(origin string, t hostSpec, targets []hostSpec) bool {
	start := t.origin()
	if start == origin {
		return true
	}
	stops := map[string]bool{origin: true}
	for _, x := range targets {
		stops[x.origin()] = true
	}
	// t's re-pick by another origin's rule counts, although t would be
	// named by two rules (and re-picked by none) if the new rule kept two
	// targets or more: it may keep only t.
	visited := map[step]bool{{origin: start}: true}
	queue := m.stepsLocked(start, origin, true)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if stops[s.origin] {
			return true
		}
		if visited[s] {
			continue
		}
		visited[s] = true
		if len(visited) > maxLoopWalk {
			return true
		}
		queue = append(queue, m.stepsLocked(s.origin, origin, !s.repicked)...)
	}
	return false
}

// stepsLocked returns every origin one rule may move a URL of origin o to,
// whatever its path (the operator's rule; else each mirror of the rules
// that name o, and each target of o's own rule), leaving out the
// rules of origin skip. Without repick, o's re-pick is left out too: o
// was reached by one, and the rule that re-picks it picked it (a path's
// mirror stays there).
func (m *Map) stepsLocked(o, skip string, repick bool) []step {
	scheme, authority, _ := strings.Cut(o, "://")
	u := &url.URL{Scheme: scheme, Host: authority, Path: "/"}
	var out []step
	add := func(r *hostRule, ts []hostSpec, repicked bool) {
		for _, t := range ts {
			nr := hostRule{to: t, keepPort: r.keepPort}
			if next, err := nr.apply(u, m.norm); err == nil && next.Scheme+"://"+next.Host != o {
				out = append(out, step{origin: next.Scheme + "://" + next.Host, repicked: repicked})
			}
		}
	}
	if r, ok := m.operatorLocked(u); ok {
		if !r.identity(u) {
			add(&r, r.targets(), false)
		}
		return out
	}
	if repick {
		// Every rule naming o, not only when it is the one: a rule that
		// stops naming o later (replaced, dropped) leaves o to the
		// others, and nothing checks the moves that gives back.
		for _, d := range m.memberOf[o] {
			if d == skip {
				continue
			}
			ds, da, _ := strings.Cut(d, "://")
			if r, ok := m.findLearnedLocked(ds, da); ok && len(r.mirrors) > 1 {
				add(&r, r.mirrors, true)
			}
		}
	}
	if r, ok := m.findLearnedLocked(scheme, authority); ok && o != skip {
		add(&r, r.targets(), false)
	}
	return out
}

// step is one move of the loop check: the origin reached, and whether a
// re-pick reached it.
type step struct {
	origin   string
	repicked bool
}

// ErrFull and ErrLoop refuse a learned rule: the bound on learned rules
// is reached, or every target could lead back to the origin.
var (
	ErrFull = errors.New("hostmap: host rewrite limit reached")
	ErrLoop = errors.New("hostmap: host rewrite would loop")
)

// Internal names of the two errors.
var (
	errHostMapFull = ErrFull
	errHostLoop    = ErrLoop
)

// indexLocked records r, the learned rule of origin, as naming its
// mirrors (memberOf); unindexLocked forgets it.
func (m *Map) indexLocked(origin string, r *hostRule) {
	if len(r.mirrors) < 2 {
		return
	}
	for _, t := range r.mirrors {
		k := t.origin()
		if i, found := slices.BinarySearch(m.memberOf[k], origin); !found {
			m.memberOf[k] = slices.Insert(m.memberOf[k], i, origin)
		}
	}
}

func (m *Map) unindexLocked(origin string, r *hostRule) {
	if len(r.mirrors) < 2 {
		return
	}
	for _, t := range r.mirrors {
		k := t.origin()
		if i, found := slices.BinarySearch(m.memberOf[k], origin); found {
			m.memberOf[k] = slices.Delete(m.memberOf[k], i, i+1)
			if len(m.memberOf[k]) == 0 {
				delete(m.memberOf, k)
			}
		}
	}
}

// setLearned sets (to non-nil) or removes (to nil) the robots.txt rule of
// origin scheme://authority. It reports whether its targets changed (a
// new due time alone is no change). Targets that could close a loop
// (loopsLocked) are left out; a rule left with no target is refused
// (errHostLoop).
func (m *Map) setLearned(scheme, authority string, to *hostRule) (bool, error) {
	return m.set(scheme, authority, to, true)
}

// restoreLearned is setLearned for a rule stored by an earlier run: its
// targets are the ones kept when it was learned, and no loop check
// leaves one out now. Checked again in the store's order, rather than
// the order they were learned in, a target could be left out that was
// kept before, and the URLs of the paths it had would move: the resumed
// crawl would fetch them again. resolve still never follows a loop.
func (m *Map) restoreLearned(scheme, authority string, to *hostRule) (bool, error) {
	return m.set(scheme, authority, to, false)
}

func (m *Map) set(scheme, authority string, to *hostRule, check bool) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rules := m.byAuthority[authority]
	idx := -1
	for i, r := range rules {
		if !r.fixed() && r.scheme == scheme {
			idx = i
		}
	}
	origin := scheme + "://" + authority
	if to == nil {
		if idx < 0 {
			return false, nil
		}
		m.unindexLocked(origin, &rules[idx])
		m.byAuthority[authority] = append(rules[:idx:idx], rules[idx+1:]...)
		if len(m.byAuthority[authority]) == 0 {
			delete(m.byAuthority, authority)
		}
		m.n.Add(-1)
		m.learned.Add(-1)
		return true, nil
	}
	r := *to
	r.scheme = scheme
	// Targets as URLs write them, once each, so that a mirror's origin
	// matches the URLs on it (memberOf).
	var targets []hostSpec
	for _, t := range r.targets() {
		if c, ok := canonicalSpec(t, m.norm); ok && !slices.Contains(targets, c) {
			targets = append(targets, c)
		}
	}
	// Refuse targets that could lead back here (a says b, b says a), or
	// to a sibling mirror: every URL must still resolve somewhere else
	// than back to where it was.
	var keep []hostSpec
	for _, t := range targets {
		if !check && t.origin() != origin || !m.loopsLocked(origin, t, targets) {
			keep = append(keep, t)
		}
	}
	if len(keep) == 0 {
		return false, errHostLoop
	}
	r.to, r.mirrors = keep[0], nil
	if len(keep) > 1 {
		r.mirrors = keep
	}
	if idx >= 0 && rules[idx].sameTargets(&r) {
		rules[idx].due = r.due // re-confirmed: next re-check from the new entry's expiry
		return false, nil
	}
	if idx < 0 && m.learned.Load() >= int64(m.max) {
		return false, errHostMapFull
	}
	r.probe = new(atomic.Int64)
	if idx >= 0 {
		m.unindexLocked(origin, &rules[idx])
		rules[idx] = r
	} else {
		rules = append(rules, r)
		m.n.Add(1)
		m.learned.Add(1)
	}
	m.byAuthority[authority] = rules
	m.indexLocked(origin, &r)
	return true, nil
}

// setDue sets when the learned rule of origin scheme://authority, if any,
// is next re-checked.
func (m *Map) setDue(scheme, authority string, due time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rules := m.byAuthority[authority]
	for i := range rules {
		if !rules[i].fixed() && rules[i].scheme == scheme {
			rules[i].due = due
		}
	}
}

// findLearnedLocked returns the learned rule of origin
// scheme://authority.
func (m *Map) findLearnedLocked(scheme, authority string) (hostRule, bool) {
	for _, r := range m.byAuthority[authority] {
		if !r.fixed() && r.scheme == scheme {
			return r, true
		}
	}
	return hostRule{}, false
}

// due reports whether the learned rule of u's origin is due for a
// re-check.
func (m *Map) due(u *url.URL) bool {
	if m.learned.Load() == 0 {
		return false
	}
	now := m.now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, r := range m.byAuthority[u.Host] {
		if !r.fixed() && r.scheme == u.Scheme {
			return !r.due.IsZero() && !now.Before(r.due)
		}
	}
	return false
}

// noteRefreshed records that origin's robots.txt was fetched.
func (m *Map) noteRefreshed(origin string) {
	m.refreshed.Lock()
	defer m.refreshed.Unlock()
	if len(m.refreshed.origins) >= maxRefreshed && !m.refreshed.origins[origin] {
		// Full of origins never granted a permit since (disallowed,
		// retired): forget one; a rule of its own is still re-checked
		// when it falls due.
		for o := range m.refreshed.origins {
			delete(m.refreshed.origins, o)
			break
		}
	}
	m.refreshed.origins[origin] = true
}

// takeRefreshed reports whether origin's robots.txt was fetched since the
// last call for it.
func (m *Map) takeRefreshed(origin string) bool {
	m.refreshed.Lock()
	defer m.refreshed.Unlock()
	if !m.refreshed.origins[origin] {
		return false
	}
	delete(m.refreshed.origins, origin)
	return true
}
