// The noarchive check: pages that ask not to be kept in a cache.

package proxy

import (
	"net/http"
	"net/url"

	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// noArchive reports whether the page asks not to be kept in a cache:
// X-Robots-Tag or, in HTML, a robots meta tag with noarchive (or nocache)
// for our agent or all robots (the polite-proxy thesis §7: meta tags). The thesis
// override never outranks it. The HTML is only parsed when the word
// occurs in it, so ordinary pages cost one scan.
func (p *Proxy) noArchive(u *url.URL, h http.Header, body []byte) bool {
	agent := p.gate.Config().Agent
	if len(h["X-Robots-Tag"]) > 0 && robots.XRobotsTag(h.Values("X-Robots-Tag"), agent).NoArchive {
		return true
	}
	if httpcache.MediaType(h.Get("Content-Type")) != "text/html" || !mentionsNoArchive(body) {
		return false
	}
	page, err := extract.HTML(u, body, h.Get("Content-Type"), extract.Options{Agent: agent})
	return err == nil && page.Robots.NoArchive
}

// containsFold reports whether b contains the lower-case ASCII word s in
// any case, without allocating. It runs on every HTML body the proxy
// stores, so it is a plain byte loop: OR-ing 0x20 folds exactly the upper-
// case ASCII letters onto the lower-case ones, and the first letter is
// tested before anything else (bytes.IndexAny rebuilt its byte set on
// every call, which cost more than the loop).
func containsFold(b []byte, s string) bool {
	if len(s) == 0 {
		return true
	}
	c0 := s[0]
	for i, last := 0, len(b)-len(s); i <= last; i++ {
		if b[i]|0x20 != c0 {
			continue
		}
		j := 1
		for j < len(s) && b[i+j]|0x20 == s[j] {
			j++
		}
		if j == len(s) {
			return true
		}
	}
	return false
}

// mentionsNoArchive is containsFold(b, "noarchive") || containsFold(b,
// "nocache") in one pass over b: both words start with "no".
func mentionsNoArchive(b []byte) bool {
	for i, last := 0, len(b)-len("nocache"); i <= last; i++ {
		if b[i]|0x20 != 'n' || b[i+1]|0x20 != 'o' {
			continue
		}
		if rest := b[i+2:]; hasPrefixFold(rest, "cache") || hasPrefixFold(rest, "archive") {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word s
// in any case.
func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for j := 0; j < len(s); j++ {
		if b[j]|0x20 != s[j] {
			return false
		}
	}
	return true
}
