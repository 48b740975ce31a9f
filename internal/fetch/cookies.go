package fetch

import (
	"container/list"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"
)

// Cookie limits, from the minimum capabilities of RFC 6265 §6.1 (a client
// need not keep more): 50 cookies per domain, 4096 bytes per cookie. They
// bound what one hostile site can make the crawler store.
const (
	maxCookiesPerSite = 50
	maxCookieBytes    = 4096
)

// cookieStore keeps one cookie jar per site (registrable domain), at most
// n sites, least recently used dropped first. net/http/cookiejar with the
// public suffix list does the RFC 6265 domain and path matching; the store
// adds the bounds the jar lacks.
type cookieStore struct {
	n  int
	mu struct {
		sync.Mutex
		lru  *list.List // of *siteJar, most recent first
		jars map[string]*list.Element
	}
}

type siteJar struct {
	site string
	jar  *cookiejar.Jar
}

func newCookieStore(n int) *cookieStore {
	s := &cookieStore{n: n}
	s.mu.lru = list.New()
	s.mu.jars = make(map[string]*list.Element)
	return s
}

func site(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return d
	}
	return h
}

// jar returns the site's jar, creating it when create is set.
func (s *cookieStore) jar(u *url.URL, create bool) *cookiejar.Jar {
	key := site(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.mu.jars[key]; ok {
		s.mu.lru.MoveToFront(el)
		return el.Value.(*siteJar).jar
	}
	if !create {
		return nil
	}
	// cookiejar.New documents an error result but never returns one.
	j, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil
	}
	s.mu.jars[key] = s.mu.lru.PushFront(&siteJar{site: key, jar: j})
	for s.mu.lru.Len() > s.n {
		old := s.mu.lru.Back()
		s.mu.lru.Remove(old)
		delete(s.mu.jars, old.Value.(*siteJar).site)
	}
	return j
}

// Cookies returns the cookies to send to u.
func (s *cookieStore) Cookies(u *url.URL) []*http.Cookie {
	j := s.jar(u, false)
	if j == nil {
		return nil
	}
	return j.Cookies(u)
}

// SetCookies stores the cookies of a response from u, within the limits.
func (s *cookieStore) SetCookies(u *url.URL, cookies []*http.Cookie) {
	if len(cookies) == 0 {
		return
	}
	j := s.jar(u, true)
	if j == nil {
		return
	}
	have := len(j.Cookies(u))
	keep := cookies[:0:0]
	for _, c := range cookies {
		if len(c.Name)+len(c.Value) > maxCookieBytes {
			continue
		}
		if have+len(keep) >= maxCookiesPerSite {
			break
		}
		keep = append(keep, c)
	}
	j.SetCookies(u, keep)
}
