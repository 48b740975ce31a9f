package crawl

import (
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// scoper decides which URLs are crawled (Config.Scope).
type scoper struct {
	mode    string
	domains []string
	include []*regexp.Regexp
	exclude []*regexp.Regexp
	maxOff  int
	policy  string

	// mu guards seedHosts (added to while seeding, read by workers).
	mu        sync.RWMutex
	seedHosts map[string]bool
	// byName keys seedHosts on host names alone, whatever the port: the
	// scope of a state written before seeds were keyed by origin
	// (seedKey), whose seeds on other ports were stored by name only.
	byName bool
}

// seedKey is the key of u's origin in the seeds scope: its host name, with
// the port when it is not the scheme's default. http and https on their
// default ports share a key (a site moving to https stays in scope), but a
// port no seed names is another site: a server that leaks an internal
// port in its redirects (Location: http://host:8080/dir/) must not have
// its pages crawled a second time there, which wget and Heritrix do not
// do either.
func seedKey(u *url.URL) string {
	h := u.Hostname()
	switch p := u.Port(); {
	case p == "", p == "80" && u.Scheme == "http", p == "443" && u.Scheme == "https":
		return h
	default:
		return net.JoinHostPort(h, p)
	}
}

func newScoper(s Scope) *scoper {
	sc := &scoper{mode: s.Mode, maxOff: s.MaxOffScopeHops, policy: s.ExternalLinks, seedHosts: map[string]bool{}}
	for _, d := range s.Domains {
		sc.domains = append(sc.domains, strings.ToLower(strings.TrimPrefix(d, "*")))
	}
	for _, re := range s.Include {
		sc.include = append(sc.include, regexp.MustCompile(re)) // validated
	}
	for _, re := range s.Exclude {
		sc.exclude = append(sc.exclude, regexp.MustCompile(re))
	}
	return sc
}

// addSeedHost adds a seedKey (or, with byName, a host name).
func (s *scoper) addSeedHost(h string) {
	s.mu.Lock()
	s.seedHosts[h] = true
	s.mu.Unlock()
}

// key returns u's key in the seed hosts: seedKey, or the host name with
// byName.
func (s *scoper) key(u *url.URL) string {
	if s.byName {
		return u.Hostname()
	}
	return seedKey(u)
}

// inScope reports whether u is in the crawl's scope.
func (s *scoper) inScope(u *url.URL) bool {
	if len(s.exclude) > 0 || len(s.include) > 0 {
		str := u.String()
		for _, re := range s.exclude {
			if re.MatchString(str) {
				return false
			}
		}
		for _, re := range s.include {
			if re.MatchString(str) {
				return true
			}
		}
	}
	h := u.Hostname()
	k := s.key(u)
	s.mu.RLock()
	seed := s.seedHosts[k]
	s.mu.RUnlock()
	switch s.mode {
	case ScopeAll:
		return true
	case ScopeDomains:
		if seed {
			return true
		}
		for _, d := range s.domains {
			d = strings.TrimPrefix(d, ".")
			if h == d || strings.HasSuffix(h, "."+d) {
				return true
			}
		}
		return false
	default:
		return seed
	}
}

// excluded reports whether an Exclude pattern matches u (off-scope hops do
// not lift an exclusion).
func (s *scoper) excluded(u *url.URL) bool {
	if len(s.exclude) == 0 {
		return false
	}
	str := u.String()
	for _, re := range s.exclude {
		if re.MatchString(str) {
			return true
		}
	}
	return false
}
