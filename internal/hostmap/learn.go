package hostmap

import (
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
	"net/url"
	"slices"
	"strings"
	"time"
)

// New returns an empty Map. norm is the URL normalization the crawler
// uses (a moved URL is normalized with it); maxLearned bounds the rules
// learned from robots.txt files (0: none are learned); now is the clock of
// the re-checks (nil: time.Now).
func New(norm urlnorm.Options, maxLearned int, now func() time.Time) *Map {
	m := newMap(norm, maxLearned)
	if now != nil {
		m.now = now
	}
	return m
}

// Len returns the number of rules held (operator and learned).
func (m *Map) Len() int { return int(m.n.Load()) }

// Directives are what an origin's robots.txt says about its host names.
type Directives struct {
	// Host is the value of the file's Host line ("" when none, or when
	// the crawler does not follow Host lines).
	Host string
	// Mirrors are the REGP Mirror-site values of the crawler's group, in
	// file order (nil when none, or when Mirror-site is off).
	Mirrors []string
	// Keep: the file could not be read (5xx, network error); the last
	// known rule stays, to be checked again at Due.
	Keep bool
	// Due is when the rule should be checked against a fresh robots.txt
	// (the expiry of the entry it was read from); zero: never.
	Due time.Time
}

// Change says what Learn did to an origin's rule.
type Change int

const (
	// Unchanged: no rule and none now, the same targets (Due updated), or
	// Keep.
	Unchanged Change = iota
	// Learned: a rule was set or its targets changed.
	Learned
	// Dropped: the rule was removed.
	Dropped
)

// Learn applies the robots.txt directives of origin u (scheme and
// authority count; the path is ignored) to its rule: a Host line wins
// over Mirror-site lines; a target that is bad, names the origin itself,
// is refused by accept (out of scope) or could make a loop is left out;
// with no target left the rule is dropped. accept is asked about each
// target as a URL of the origin moved there (the crawler adds a target
// of the origin's registrable domain to its seed hosts). It returns what
// changed; err is set when a rule was refused whole (errHostLoop: every
// target loops back; errHostMapFull: the bound is reached), in which case
// the old rule, if any, stays.
func (m *Map) Learn(u *url.URL, d Directives, accept func(t *url.URL, source string) bool) (Change, error) {
	if d.Keep {
		m.setDue(u.Scheme, u.Host, d.Due)
		return Unchanged, nil
	}
	var rule *hostRule
	// target reads one directive value: the URL of u's origin moved
	// there, or false when the value is bad, names the origin itself (it
	// is the master), or is not accepted.
	target := func(value, source string) (hostSpec, bool) {
		spec, err := parseHostSpec(value, m.norm)
		if err != nil {
			return hostSpec{}, false
		}
		// No scheme: the origin's; no port: the scheme's default
		// (RFC 1738 §3.1), as Yandex reads Host.
		r := hostRule{to: spec, source: source}
		if r.to.scheme == "" {
			r.to.scheme = u.Scheme
		}
		t, err := r.apply(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}, m.norm)
		if err != nil || (t.Scheme == u.Scheme && t.Host == u.Host) {
			return hostSpec{}, false
		}
		if accept != nil && !accept(t, source) {
			return hostSpec{}, false
		}
		return hostSpec{scheme: t.Scheme, host: t.Hostname(), port: t.Port()}, true
	}
	if strings.TrimSpace(d.Host) != "" {
		if t, ok := target(d.Host, SourceHost); ok {
			rule = &hostRule{to: t, source: SourceHost}
		}
	}
	if rule == nil {
		// Every accepted mirror, in file order, without repeats: the
		// load is spread over them (pickMirror).
		var mirrors []hostSpec
		for i, v := range d.Mirrors {
			if i >= maxMirrorLines || len(mirrors) >= MaxMirrors {
				break
			}
			t, ok := target(v, SourceMirror)
			if ok && !slices.Contains(mirrors, t) {
				mirrors = append(mirrors, t)
			}
		}
		if len(mirrors) > 0 {
			rule = &hostRule{to: mirrors[0], source: SourceMirror}
			if len(mirrors) > 1 {
				rule.mirrors = mirrors
			}
		}
	}
	if rule == nil {
		if changed, _ := m.setLearned(u.Scheme, u.Host, nil); changed {
			return Dropped, nil
		}
		return Unchanged, nil
	}
	rule.due = d.Due
	changed, err := m.setLearned(u.Scheme, u.Host, rule)
	if err != nil || !changed {
		return Unchanged, err
	}
	return Learned, nil
}

// Stored returns the learned rule of origin u in the form Restore reads
// ("SOURCE TARGET-URL...": one target, or every mirror of a Mirror-site
// rule), and false when it has none.
func (m *Map) Stored(u *url.URL) (string, bool) {
	m.mu.RLock()
	r, ok := m.findLearnedLocked(u.Scheme, u.Host)
	m.mu.RUnlock()
	if !ok {
		return "", false
	}
	return encodeStoredRule(&r), true
}

// Restore sets the rule of origin ("scheme://authority") from its Stored
// form, kept by an earlier run, due for a re-check at due. The targets
// are the ones kept when it was learned: no loop check leaves one out
// now (restoreLearned says why). It reports false for a value it cannot
// read.
func (m *Map) Restore(origin, stored string, due time.Time) (bool, error) {
	o, err := url.Parse(origin)
	if err != nil || o.Host == "" {
		return false, nil
	}
	r, ok := decodeStoredRule(stored)
	if !ok {
		return false, nil
	}
	r.due = due
	if _, err := m.restoreLearned(o.Scheme, o.Host, &r); err != nil {
		return true, err
	}
	return true, nil
}

// NoteRefreshed records that origin's robots.txt was fetched (the gate's
// robots hook), so that the next Recheck of one of its URLs says yes.
func (m *Map) NoteRefreshed(origin string) { m.noteRefreshed(origin) }

// Recheck reports whether the crawler should read u's origin's robots.txt
// again and Learn from it: it was fetched since the last Recheck of the
// origin, or the origin's learned rule is due. It takes the origin's
// refresh notice.
func (m *Map) Recheck(u *url.URL) bool {
	refreshed := m.takeRefreshed(u.Scheme + "://" + u.Host)
	return refreshed || m.due(u)
}

// Forget takes origin's refresh notice without a re-check (the crawler
// just read its robots.txt).
func (m *Map) Forget(origin string) { m.takeRefreshed(origin) }

// encodeStoredRule writes r as Stored gives it.
func encodeStoredRule(r *hostRule) string {
	var b strings.Builder
	b.WriteString(r.source)
	for _, t := range r.targets() {
		b.WriteString(" " + t.scheme + "://" + joinHost(t.host, t.port))
	}
	return b.String()
}

// decodeStoredRule reads what encodeStoredRule wrote (one target in
// earlier versions); false for anything else.
func decodeStoredRule(v string) (hostRule, bool) {
	f := strings.Fields(v)
	if len(f) < 2 || len(f) > MaxMirrors+1 || (f[0] != SourceHost && f[0] != SourceMirror) {
		return hostRule{}, false
	}
	r := hostRule{source: f[0]}
	var targets []hostSpec
	for _, s := range f[1:] {
		t, err := url.Parse(s)
		if err != nil || t.Hostname() == "" || t.Path != "" || t.RawQuery != "" || t.Fragment != "" || t.User != nil ||
			(t.Scheme != "http" && t.Scheme != "https") {
			return hostRule{}, false
		}
		targets = append(targets, hostSpec{scheme: t.Scheme, host: t.Hostname(), port: t.Port()})
	}
	r.to = targets[0]
	if len(targets) > 1 {
		r.mirrors = targets
	}
	return r, true
}
