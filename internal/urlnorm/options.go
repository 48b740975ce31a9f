package urlnorm

import (
	"fmt"
	"strings"
)

// DefaultMaxLength is the input length limit when Options.MaxLength is 0:
// 8 KiB, the request-line limit of common servers. (The much shorter
// 200-character threshold of the Viuva Negra report §6 is a trap rule, applied by the
// traps package, not here.)
const DefaultMaxLength = 8 << 10

// Bounds on the configurable lists, so that a hostile or mistaken config
// cannot make every normalization slow.
const (
	maxListEntries = 256
	maxEntryLen    = 128
)

// DefaultIndexFiles are the trailing file names removed by
// Options.RemoveIndexFiles when Options.IndexFiles is nil: the index.*
// names of the Viuva Negra report §3.4 rule 9 and the polite-proxy thesis
// §2.2 step 5, and the index documents of PHP, ASP, ASP.NET and JSP
// servers. The report's "default.html" and "default.htm" are left out:
// only IIS serves default.* for a directory, while documentation
// generators name ordinary pages so (Sphinx: Django's
// topics/auth/default.html is not topics/auth/), and removing a name that
// is no index loses the page, while keeping one that is costs one
// duplicate fetch.
var DefaultIndexFiles = []string{
	"index.html", "index.htm", "index.shtml", "index.php", "index.asp",
	"index.aspx", "index.jsp",
}

// DefaultSessionIDParams are the query and path parameter names removed by
// Options.StripSessionIDs when Options.SessionIDParams is nil. Names match
// case-insensitively; a trailing '*' makes a prefix ("aspsessionid*" matches
// ASP's "ASPSESSIONIDQQGGQGPG"). phpsessid, sid and sessionid are the names
// The Viuva Negra report §5.4 measured in 27% of crawled URLs; jsessionid (also as the
// ";jsessionid=" path parameter of Java servlets), ASP, ColdFusion
// (cfid, cftoken), osCommerce (oscsid) and Zen Cart (zenid) add the other
// common engines. "sid" can be a legitimate parameter of some sites; drop it
// from the list if a crawl shows that.
var DefaultSessionIDParams = []string{
	"phpsessid", "jsessionid", "sid", "sessionid", "session_id", "sessid",
	"aspsessionid*", "cfid", "cftoken", "oscsid", "zenid",
}

// SlashPolicy says what happens to a trailing '/' of a non-root path.
type SlashPolicy uint8

const (
	// SlashKeep leaves the path as written (RFC 3986: "/a" and "/a/" are
	// different resources).
	SlashKeep SlashPolicy = iota
	// SlashRemove drops a trailing '/' of a non-root path (the polite-proxy thesis §2.2
	// step 2). Good for dedup keys; bad for fetching, since servers answer
	// "/dir" with a redirect to "/dir/".
	SlashRemove
)

// WWWPolicy says what happens to a "www." host prefix.
type WWWPolicy uint8

const (
	// WWWKeep leaves host names alone.
	WWWKeep WWWPolicy = iota
	// WWWRemove drops a leading "www." label when what remains still has a
	// registrable domain (so "www.co.uk" stays). For dedup keys: 51% of the
	// duplicate hosts of the Viuva Negra report §4.3.1 differed only in this prefix.
	WWWRemove
	// WWWAdd prefixes "www." to host names that are registrable domains
	// ("domain.pt" becomes "www.domain.pt"): the Viuva Negra report §3.4 rule 8. The Viuva Negra report
	// Table 3 measured 30% of duplicate hosts avoided but 4% of sites lost,
	// so it is off even in CrawlDefaults.
	WWWAdd
)

// Options selects the heuristics applied on top of RFC 3986 normalization.
// The zero value is pure RFC 3986 §6 normalization plus fragment removal.
// Options are read, never written, by this package: one value may be shared
// by any number of goroutines.
type Options struct {
	// KeepFragment keeps the "#fragment". Zero (false) removes it: the Viuva Negra report
	// §3.4 rule 7 and the polite-proxy thesis §2.2 step 3, since fragments never reach the
	// server.
	KeepFragment bool

	// RemoveEmptyQuery drops a '?' with nothing after it ("/a?" becomes
	// "/a"). RFC 3986 §6.2.3 keeps it: a server may tell the two apart.
	RemoveEmptyQuery bool

	// RemoveIndexFiles drops a last path segment naming a well-known
	// default document ("/dir/index.html" becomes "/dir/"), only when the
	// URL has no query, matched exactly (case included: "Index.html" is
	// not "index.html" on a case-sensitive server). The Viuva Negra report §3.4
	// rule 9 (36% fewer duplicates in its measurements) and the polite-proxy thesis §2.2
	// step 5.
	RemoveIndexFiles bool

	// IndexFiles lists the names RemoveIndexFiles removes. Nil means
	// DefaultIndexFiles; an empty non-nil slice removes nothing. At most
	// 256 names of at most 128 bytes.
	IndexFiles []string

	// TrailingSlash says what happens to a trailing '/' (the polite-proxy thesis §2.2
	// step 2). Zero is SlashKeep.
	TrailingSlash SlashPolicy

	// StripSessionIDs removes query parameters and ";name=value" path
	// parameters whose names are session identifiers, so that one page
	// reached under many session ids is one URL (the Viuva Negra report §4.1 "Session
	// identifiers and cookies", §5.4).
	StripSessionIDs bool

	// SessionIDParams lists the parameter names StripSessionIDs removes
	// (case-insensitive; a trailing '*' matches a prefix). Nil means
	// DefaultSessionIDParams; an empty non-nil slice removes nothing. At
	// most 256 names of at most 128 bytes.
	SessionIDParams []string

	// StripDirectorySort drops the query of an Apache directory listing
	// ("/dir/?C=N;O=D", "/dir/?N=D") when it holds nothing but
	// mod_autoindex sort and format parameters, trimming the URL at the
	// last slash as the Viuva Negra report §5.4 does: the 8 reorderings of one listing
	// are one page (the Viuva Negra report §4.1 "Directory list reordering").
	StripDirectorySort bool

	// SortQuery orders query parameters by name (stable, so repeated names
	// keep their relative order). Off by default: a few servers care about
	// order; for dedup keys it merges "?a=1&b=2" and "?b=2&a=1".
	SortQuery bool

	// LowercasePath lower-cases the ASCII letters of path and query (the polite-proxy thesis
	// §2.2 step 1). Off by default: paths are case-sensitive on most
	// servers. Percent-encoded octets keep upper-case hex digits.
	LowercasePath bool

	// WWW says what happens to a "www." host prefix. Zero is WWWKeep.
	WWW WWWPolicy

	// RemoveUserinfo drops "user:password@" from the authority. Off by
	// default (RFC 3986 keeps it); on in DedupDefaults.
	RemoveUserinfo bool

	// CollapseSlashes replaces runs of '/' in the path by one ("/a//b"
	// becomes "/a/b"). Off by default: "//" is a distinct path to most
	// servers, but runs of slashes are a growing-URL pattern (the Viuva Negra report §4.1
	// "Growing URLs").
	CollapseSlashes bool

	// MaxLength is the longest input accepted, in bytes. Zero means
	// DefaultMaxLength (8 KiB); negative values are invalid.
	MaxLength int
}

// CrawlDefaults returns the options a crawler applies to URLs it will
// fetch: the RFC 3986 rules plus the heuristics that do not change which
// resource a server returns in practice: index-file removal (rule 9),
// session-id stripping, directory-sort stripping, empty-query removal.
func CrawlDefaults() Options {
	return Options{
		RemoveEmptyQuery:   true,
		RemoveIndexFiles:   true,
		StripSessionIDs:    true,
		StripDirectorySort: true,
	}
}

// DedupDefaults returns CrawlDefaults plus the heuristics that are good for
// URL-seen keys but would change the URL actually fetched: "www." removal,
// trailing-slash removal, query sorting and userinfo removal.
func DedupDefaults() Options {
	o := CrawlDefaults()
	o.WWW = WWWRemove
	o.TrailingSlash = SlashRemove
	o.SortQuery = true
	o.RemoveUserinfo = true
	return o
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	if o.MaxLength < 0 {
		return fmt.Errorf("urlnorm: MaxLength %d: must not be negative", o.MaxLength)
	}
	if o.TrailingSlash > SlashRemove {
		return fmt.Errorf("urlnorm: unknown TrailingSlash policy %d", o.TrailingSlash)
	}
	if o.WWW > WWWAdd {
		return fmt.Errorf("urlnorm: unknown WWW policy %d", o.WWW)
	}
	if err := validateList("IndexFiles", o.IndexFiles, "/?#;"); err != nil {
		return err
	}
	return validateList("SessionIDParams", o.SessionIDParams, "&=;/?#")
}

func validateList(name string, list []string, forbidden string) error {
	if len(list) > maxListEntries {
		return fmt.Errorf("urlnorm: %s: %d entries, at most %d", name, len(list), maxListEntries)
	}
	for _, s := range list {
		if s == "" || s == "*" || len(s) > maxEntryLen {
			return fmt.Errorf("urlnorm: %s: entry %q: want 1 to %d bytes", name, s, maxEntryLen)
		}
		if strings.ContainsAny(s, forbidden) {
			return fmt.Errorf("urlnorm: %s: entry %q: must not contain any of %q", name, s, forbidden)
		}
		if i := strings.IndexByte(s, '*'); i >= 0 && i != len(s)-1 {
			return fmt.Errorf("urlnorm: %s: entry %q: '*' only at the end", name, s)
		}
	}
	return nil
}

func (o *Options) maxLength() int {
	if o.MaxLength == 0 {
		return DefaultMaxLength
	}
	return o.MaxLength
}

func (o *Options) indexFiles() []string {
	if o.IndexFiles == nil {
		return DefaultIndexFiles
	}
	return o.IndexFiles
}

func (o *Options) sessionIDParams() []string {
	if o.SessionIDParams == nil {
		return DefaultSessionIDParams
	}
	return o.SessionIDParams
}

// isSessionParam reports whether name (already percent-normalized) is in
// the session-id list.
func (o *Options) isSessionParam(name string) bool {
	for _, p := range o.sessionIDParams() {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) {
				return true
			}
		} else if strings.EqualFold(name, p) {
			return true
		}
	}
	return false
}
