package crawl

import (
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

func (s *scoper) addSeedHost(h string) {
	s.mu.Lock()
	s.seedHosts[h] = true
	s.mu.Unlock()
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
	s.mu.RLock()
	seed := s.seedHosts[h]
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
