package hostmap

// Host specs, rules and the operator's duplicate-hosts list.

import (
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

const (
	// maxDuplicateHosts bounds the duplicate-hosts list.
	maxDuplicateHosts = 10_000
	// maxRewriteChain bounds how many rules one URL goes through
	// (www.a → a → mirror-of-a ...); a loop is never followed.
	maxRewriteChain = 4
	// maxHostSpec bounds a host value: a DNS name is at most 253
	// characters, plus scheme and port.
	maxHostSpec = 300
	// MaxMirrors bounds the mirrors one origin's load is spread over;
	// maxMirrorLines bounds the Mirror-site lines read to find them.
	MaxMirrors     = 16
	maxMirrorLines = 64
	// probeInterval is how often a URL of an origin whose learned rule is
	// due is left on the origin, so that its robots.txt is fetched again.
	probeInterval = time.Minute
	// maxRefreshed bounds the origins whose robots.txt was fetched and
	// not yet re-read (NoteRefreshed); beyond it one is forgotten, and
	// its rule, if any, is re-checked when it falls due instead.
	maxRefreshed = 10_000

	// Rule sources, as Resolve reports them.
	SourceOperator = "duplicate-hosts" // the operator's duplicate-hosts list
	SourceHost     = "robots-host"     // a robots.txt Host line
	SourceMirror   = "mirror-site"     // REGP Mirror-site lines
	SourceSameHome = "same-home"       // two hosts found serving the same pages (SameHomeRule)
)

// hostSpec is a parsed host value: "[scheme://]host[:port]".
type hostSpec struct {
	scheme string // "http", "https", or "" when not given
	host   string // normalized host name (lower case, IDNA), IPv6 without brackets
	port   string // "" when not given
}

// parseHostSpec reads a host as robots.txt Host and Mirror-site lines and
// the duplicate-hosts list write it (RFC 1738 host[:port], with the
// optional scheme Yandex allows for an HTTPS master host).
func parseHostSpec(s string, norm urlnorm.Options) (hostSpec, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxHostSpec {
		return hostSpec{}, fmt.Errorf("hostmap: host %q: empty or longer than %d bytes", s, maxHostSpec)
	}
	var spec hostSpec
	rest := s
	if i := strings.Index(s, "://"); i >= 0 {
		spec.scheme = strings.ToLower(s[:i])
		if spec.scheme != "http" && spec.scheme != "https" {
			return hostSpec{}, fmt.Errorf("hostmap: host %q: scheme must be http or https", s)
		}
		rest = s[i+3:]
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@\\ \t") || rest == "" {
		return hostSpec{}, fmt.Errorf("hostmap: host %q: want [scheme://]host[:port]", s)
	}
	u, err := url.Parse("http://" + rest + "/")
	if err != nil || u.Hostname() == "" {
		return hostSpec{}, fmt.Errorf("hostmap: host %q: want [scheme://]host[:port]", s)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return hostSpec{}, fmt.Errorf("hostmap: host %q: port not in 1..65535", s)
		}
		spec.port = strconv.Itoa(n)
	} else if strings.HasSuffix(rest, ":") {
		return hostSpec{}, fmt.Errorf("hostmap: host %q: empty port", s)
	}
	// The host name goes through the crawl normalization, so that it
	// compares equal to the host of a normalized URL.
	nu, err := urlnorm.Normalize("http://"+joinHost(u.Hostname(), "")+"/", norm)
	if err != nil || nu.Hostname() == "" {
		return hostSpec{}, fmt.Errorf("hostmap: host %q: bad host name", s)
	}
	spec.host = nu.Hostname()
	return spec, nil
}

// joinHost writes host and port as a URL authority.
func joinHost(host, port string) string {
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// hostRule moves the URLs it matches to another host.
type hostRule struct {
	// scheme limits the rule to one scheme (a robots.txt rule holds for
	// its origin); "" matches every scheme.
	scheme string
	to     hostSpec
	// mirrors, when it holds two or more targets (to is the first), are
	// the mirrors of a Mirror-site rule: each URL goes to the one chosen
	// by pickMirror.
	mirrors []hostSpec
	// keepPort keeps the URL's port when to has none (an operator alias
	// written without scheme and port names only another host name).
	keepPort bool
	source   string
	// due is when a learned rule should be checked against a fresh
	// robots.txt (the expiry of the entry it was read from); zero: never
	// (operator rules).
	due time.Time
	// probe holds the earliest time, in Unix nanoseconds, another URL
	// may be left on the origin to re-check a due rule. Shared by the
	// copies of one rule.
	probe *atomic.Int64
}

// sameTargets reports whether r and o move URLs to the same places.
func (r *hostRule) sameTargets(o *hostRule) bool {
	if r.scheme != o.scheme || r.to != o.to || r.keepPort != o.keepPort || r.source != o.source || len(r.mirrors) != len(o.mirrors) {
		return false
	}
	for i := range r.mirrors {
		if r.mirrors[i] != o.mirrors[i] {
			return false
		}
	}
	return true
}

// targets returns every host the rule may move a URL to.
func (r *hostRule) targets() []hostSpec {
	if len(r.mirrors) > 1 {
		return r.mirrors
	}
	return []hostSpec{r.to}
}

// target returns the host u goes to.
func (r *hostRule) target(u *url.URL) hostSpec {
	if len(r.mirrors) > 1 {
		return r.mirrors[pickMirror(r.mirrors, u.EscapedPath())]
	}
	return r.to
}

// pickMirror chooses the mirror of a path by rendezvous hashing: the
// mirror with the highest hash(mirror, path) wins. It depends on the
// mirror names and the path only, never on the mirrors' order.
func pickMirror(mirrors []hostSpec, path string) int {
	best, bestScore := 0, uint64(0)
	h := fnv.New64a() // FNV-1a: stable across runs and Go versions, as the choice must be
	for i, m := range mirrors {
		h.Reset()
		io.WriteString(h, m.scheme+"://"+joinHost(m.host, m.port)+"\x00"+path)
		score := mix64(h.Sum64())
		if i == 0 || score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// mix64 is the splitmix64 finalizer: FNV's low bits mix poorly, and
// rendezvous hashing compares whole values.
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// identity reports whether the rule leaves u where it is (an operator's
// "host=host" pin).
func (r *hostRule) identity(u *url.URL) bool {
	return len(r.mirrors) < 2 && r.to.host == u.Hostname() && (r.to.scheme == "" || r.to.scheme == u.Scheme) &&
		(r.keepPort && r.to.port == "" || r.to.port == u.Port())
}

// apply returns u moved by r, normalized (a default port is dropped).
func (r *hostRule) apply(u *url.URL, norm urlnorm.Options) (*url.URL, error) {
	to := r.target(u)
	nu := *u
	if to.scheme != "" {
		nu.Scheme = to.scheme
	}
	port := to.port
	if port == "" && r.keepPort {
		port = u.Port()
	}
	nu.Host = joinHost(to.host, port)
	return urlnorm.Normalize(nu.String(), norm)
}

// ProbeMode says whether resolve may leave a URL on the origin of a
// learned rule due for a re-check, so that it goes through the gate and
// the origin's robots.txt is fetched again.
type ProbeMode int

const (
	// ProbeNone applies every rule (after the gate: the rule was just
	// re-checked).
	ProbeNone ProbeMode = iota
	// ProbePeek leaves a discovered URL (link, seed) on the origin while
	// the rule is due and no probe was sent in the last probeInterval.
	ProbePeek
	// ProbeClaim leaves a leased URL on the origin under the same
	// condition, and makes it the probe: the next one may stay
	// probeInterval later.
	ProbeClaim
)

// probe reports whether mode leaves a URL on the origin of r at now.
func (r *hostRule) probes(mode ProbeMode, now time.Time) bool {
	if mode == ProbeNone || r.fixed() || r.due.IsZero() || now.Before(r.due) || r.probe == nil {
		return false
	}
	next := r.probe.Load()
	if now.UnixNano() < next {
		return false
	}
	return mode == ProbePeek || r.probe.CompareAndSwap(next, now.Add(probeInterval).UnixNano())
}

// ParseDuplicateHosts reads the operator's duplicate-hosts list:
// "ALIAS=CANONICAL" entries. ALIAS is a host (every port) or host:port;
// CANONICAL a host spec ("[scheme://]host[:port]"; without scheme and
// port the URL's scheme and port stay). At most 10,000 entries; a loop
// among them is an error.
func ParseDuplicateHosts(entries []string) ([]OperatorRule, error) {
	if len(entries) > maxDuplicateHosts {
		return nil, fmt.Errorf("hostmap: duplicate-hosts: %d entries, at most %d", len(entries), maxDuplicateHosts)
	}
	norm := urlnorm.CrawlDefaults()
	var out []OperatorRule
	seen := map[string]bool{}
	for _, e := range entries {
		alias, canon, ok := strings.Cut(e, "=")
		if !ok {
			return nil, fmt.Errorf("hostmap: duplicate-hosts entry %q: want ALIAS=CANONICAL", e)
		}
		a, err := parseHostSpec(alias, norm)
		if err != nil {
			return nil, fmt.Errorf("hostmap: duplicate-hosts entry %q: alias: %w", e, err)
		}
		if a.scheme != "" {
			return nil, fmt.Errorf("hostmap: duplicate-hosts entry %q: the alias takes no scheme (it matches both)", e)
		}
		if a.port == "80" || a.port == "443" {
			// Normalized URLs carry no default port, so such an alias
			// would never match.
			return nil, fmt.Errorf("hostmap: duplicate-hosts entry %q: write the alias without its default port", e)
		}
		t, err := parseHostSpec(canon, norm)
		if err != nil {
			return nil, fmt.Errorf("hostmap: duplicate-hosts entry %q: canonical: %w", e, err)
		}
		key := joinHost(a.host, a.port)
		if seen[key] {
			return nil, fmt.Errorf("hostmap: duplicate-hosts: alias %s given twice", key)
		}
		seen[key] = true
		out = append(out, OperatorRule{alias: a, rule: hostRule{to: t, keepPort: t.scheme == "" && t.port == "", source: SourceOperator}})
	}
	// A loop among the operator's own rules is a configuration error.
	m := newMap(norm, 0)
	for _, r := range out {
		m.AddOperator(r)
	}
	for _, r := range out {
		u := &url.URL{Scheme: "http", Host: joinHost(r.alias.host, r.alias.port), Path: "/"}
		if _, _, loop := m.Resolve(u, ProbeNone); loop {
			return nil, fmt.Errorf("hostmap: duplicate-hosts: %s is rewritten in a loop", u.Host)
		}
	}
	return out, nil
}

// fixed reports whether r is not a robots.txt's: the operator's, or a
// duplicate host the crawler found; such rules are never re-checked,
// replaced or dropped by a robots.txt.
func (r *hostRule) fixed() bool {
	return r.source == SourceOperator || r.source == SourceSameHome
}

// SameHomeRule is the rule that moves the URLs of the host (and port) of
// alias to the origin of canonical, for two hosts the crawler found
// serving the same pages; Map.AddOperator applies it like an operator's
// entry, as it is never dropped by a robots.txt.
func SameHomeRule(alias, canonical *url.URL) (OperatorRule, error) {
	norm := urlnorm.CrawlDefaults()
	a, err := parseHostSpec(alias.Host, norm)
	if err != nil {
		return OperatorRule{}, fmt.Errorf("hostmap: same-home alias %q: %w", alias.Host, err)
	}
	a.scheme = ""
	t, err := parseHostSpec(canonical.Scheme+"://"+canonical.Host, norm)
	if err != nil {
		return OperatorRule{}, fmt.Errorf("hostmap: same-home canonical %q: %w", canonical.Host, err)
	}
	return OperatorRule{alias: a, rule: hostRule{to: t, source: SourceSameHome}}, nil
}

// OperatorRule is one parsed duplicate-hosts entry; Map.AddOperator
// applies it.
type OperatorRule struct {
	alias hostSpec
	rule  hostRule
}
