// Package robots parses robots.txt files and answers questions about them.
//
// SKELETON: this file fixes the exported API that the politeness engine,
// the proxy and the crawler code against. The robots work replaces the
// bodies (and may add to the API, never change these signatures).
package robots

import (
	"net/netip"
	"time"
)

// MaxSize is the number of bytes of a robots.txt file that are parsed; the
// rest is ignored. RFC 9309 §2.5 requires at least 500 KiB.
const MaxSize = 500 << 10

// Dialect says which rules a file was parsed under.
type Dialect string

const (
	// RFC9309 is the standard of 2022, with the common extensions
	// (Crawl-delay, Sitemap, Host, Request-rate, Visit-time).
	RFC9309 Dialect = "rfc9309"
	// REGP is the Robots Exclusion and Guidance Protocol of seed 002,
	// selected by a leading `Robot-version: 3.0` (or higher) line.
	REGP Dialect = "regp"
)

// Options tunes parsing. The zero value is ready to use.
type Options struct {
	// EgressIPs are the crawler's own source addresses, matched by the REGP
	// Ip-allow and Ip-disallow directives. Empty means those directives are
	// recorded but never match.
	EgressIPs []netip.Addr
}

// File is a parsed robots.txt file. It is immutable and safe for concurrent
// use.
type File struct {
	dialect Dialect
}

// Parse parses body (at most MaxSize bytes are read) with default options.
// It never fails: lines it cannot understand are skipped and reported by
// Problems.
func Parse(body []byte) *File { return ParseOptions(body, Options{}) }

// ParseOptions parses body with opts.
func ParseOptions(body []byte, opts Options) *File { return &File{dialect: RFC9309} }

// AllowAll returns a file that allows everything (robots.txt answered 4xx).
func AllowAll() *File { return &File{dialect: RFC9309} }

// DisallowAll returns a file that disallows everything (robots.txt
// unreachable: 5xx, network error).
func DisallowAll() *File { return &File{dialect: RFC9309} }

// Dialect returns the dialect the file was parsed under.
func (f *File) Dialect() Dialect { return f.dialect }

// Sitemaps returns the Sitemap URLs of the file, in file order.
func (f *File) Sitemaps() []string { return nil }

// Host returns the value of the Host directive, or "".
func (f *File) Host() string { return "" }

// Problem is one line a parser skipped or found suspicious.
type Problem struct {
	Line    int    // 1-based line number
	Message string // what is wrong, e.g. `unknown directive "dissalow"`
}

// Problems returns what Lint would print for the file, in line order.
func (f *File) Problems() []Problem { return nil }

// Group returns the rules that apply to the crawler whose product token is
// agent (RFC 9309 §2.2.1: case-insensitive match, all matching groups merged,
// else the `*` group, else an empty group that allows everything). The
// result is never nil.
func (f *File) Group(agent string) *Group { return &Group{} }

// Allowed is shorthand for f.Group(agent).Allowed(path).
func (f *File) Allowed(agent, path string) bool { return f.Group(agent).Allowed(path) }

// Group is the merged set of rules for one agent.
type Group struct{}

// Allowed reports whether a URL may be fetched. path is the URL's path and
// query as sent on the wire (url.URL.RequestURI()); "" means "/".
// /robots.txt is always allowed (RFC 9309 §2.2.2).
func (g *Group) Allowed(path string) bool { return true }

// CrawlDelay returns the Crawl-delay of the group, if any.
func (g *Group) CrawlDelay() (time.Duration, bool) { return 0, false }

// Rate is a Request-rate: Requests per Per.
type Rate struct {
	Requests int
	Per      time.Duration
}

// Interval returns the minimum spacing of requests the rate implies.
func (r Rate) Interval() time.Duration {
	if r.Requests <= 0 {
		return 0
	}
	return r.Per / time.Duration(r.Requests)
}

// RequestRate returns the Request-rate in force at t (a REGP file may give
// different rates for different times of day), if any.
func (g *Group) RequestRate(t time.Time) (Rate, bool) { return Rate{}, false }

// NextVisit returns the earliest time at or after t at which the group's
// Visit-time and Time-forbidden windows permit a visit; t itself when they
// permit one now or when the group has none.
func (g *Group) NextVisit(t time.Time) time.Time { return t }
