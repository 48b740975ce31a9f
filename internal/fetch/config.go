package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// Defaults applied by New for zero Config fields.
const (
	// DefaultUserAgent names the crawler, its version and a contact URL
	// (the Viuva Negra report §5.4: "providing its name, software version and the URL of
	// a web page that exposes the purpose of the crawler"). Deployments
	// should set their own contact.
	DefaultUserAgent = "courtesy/0.1 (+https://github.com/courtesy-crawler/courtesy)"
	// DefaultAccept prefers HTML, the only format links are followed in.
	DefaultAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	// DefaultAcceptEncoding lists the codings Body can be decoded from.
	DefaultAcceptEncoding = "gzip, deflate, br"

	DefaultConnectTimeout      = 10 * time.Second // the Viuva Negra report §6.4: web clients should not wait longer than 10 s
	DefaultTimeout             = 30 * time.Second
	DefaultMaxBodySize         = 2 << 20 // the Viuva Negra report §6: 2 MB
	DefaultMaxDecodedSize      = 8 << 20
	DefaultMaxIdleConnsPerHost = 4 // 2 (net/http's default) doubled CPU per request in our measurements
	DefaultMaxIdleConns        = 256
	DefaultIdleConnTimeout     = 90 * time.Second
	DefaultMaxHeaderBytes      = 256 << 10
	DefaultDNSCacheTTL         = 5 * time.Minute
	DefaultDNSNegativeTTL      = 30 * time.Second
	DefaultDNSCacheSize        = 10000
	DefaultCookieSites         = 10000
)

// DefaultHeadExtensions are the file extensions (lower case, without the
// dot) whose URLs get a HEAD before the GET when Config.HeadBeforeGet is
// set: formats that are usually big and never HTML (the Viuva Negra report §5.1: "if the
// content is an MP3 file and the selection criteria defines that only HTML
// pages should be harvested, the content is not downloaded").
var DefaultHeadExtensions = []string{
	"7z", "apk", "avi", "bin", "bmp", "bz2", "deb", "dmg", "doc", "docx",
	"exe", "flac", "flv", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg",
	"m4a", "m4v", "mkv", "mov", "mp3", "mp4", "mpeg", "mpg", "msi", "odp",
	"ods", "odt", "ogg", "pdf", "png", "ppt", "pptx", "rar", "rpm", "rtf",
	"tar", "tgz", "tif", "tiff", "wav", "webm", "webp", "wma", "wmv", "xls",
	"xlsx", "xz", "zip",
}

// DefaultWantedTypes are the media types a HEAD-checked URL is fetched
// for when Config.WantedTypes is nil: text and the XML and JSON formats
// links and sitemaps come in. "type/*" matches a whole top-level type.
var DefaultWantedTypes = []string{
	"text/*", "application/xhtml+xml", "application/xml", "application/rss+xml",
	"application/atom+xml", "application/json", "application/ld+json",
}

// LookupFunc resolves a host name, like (*net.Resolver).LookupNetIP with
// network "ip".
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// Config configures a Client. The zero value works: every zero field takes
// the default named in its comment. Config is copied by New.
type Config struct {
	// UserAgent is sent with every request. Default DefaultUserAgent. Name,
	// version and a contact URL, so webmasters can reach the operator.
	UserAgent string
	// Accept is the Accept header. Default DefaultAccept.
	Accept string

	// ConnectTimeout bounds DNS lookup plus TCP connect, and separately
	// the TLS handshake. Default 10 s.
	ConnectTimeout time.Duration
	// Timeout bounds a whole fetch, from dialing to the last body byte
	// (the Viuva Negra report §6 used 60 s; §6.4 found that too long). A response whose
	// headers arrived is returned truncated (TruncTime) when the timeout
	// hits during the body; earlier it is an error of KindTimeout.
	// Default 30 s.
	Timeout time.Duration

	// MaxBodySize caps RawBody, the body as transferred, in bytes; the rest
	// is not read and the result is marked TruncSize, not an error (the Viuva Negra report
	// §6: 2 MB). Default 2 MiB.
	MaxBodySize int64
	// MaxDecodedSize caps Body, the decoded content, in bytes, against
	// decompression bombs; reaching it marks the result TruncSize.
	// Default 8 MiB.
	MaxDecodedSize int64
	// MaxHeaderBytes caps the response header block. Default 256 KiB.
	MaxHeaderBytes int64

	// MaxIdleConnsPerHost is the number of keep-alive connections kept per
	// host. Default 4 (at least 4 is advised: net/http's 2 doubled CPU per
	// request in our measurements).
	MaxIdleConnsPerHost int
	// MaxIdleConns caps keep-alive connections over all hosts. Default 256.
	MaxIdleConns int
	// IdleConnTimeout closes keep-alive connections idle this long.
	// Default 90 s.
	IdleConnTimeout time.Duration
	// HTTP2 fetches https:// URLs through net/http, over HTTP/2 when the
	// server offers it (ALPN). Default false: https goes over HTTP/1.1
	// through internal/h1, as http:// does, so that Result.WireHeader and
	// WireRequest hold the bytes of the exchange for the archive (Heritrix
	// and wget speak HTTP/1.1 too; one request at a time per host gains
	// little from HTTP/2).
	HTTP2 bool
	// TLSConfig is cloned for TLS connections (to add trusted roots, e.g.
	// in tests). Nil means the system roots.
	TLSConfig *tls.Config

	// Resolver overrides where connections go (--resolve rules), applied in
	// the dialer before the DNS cache. Nil resolves every host normally.
	Resolver *resolve.Resolver
	// AddrPolicy says which addresses a host may resolve to (checked on
	// the address dialled, DNS answers and IP literals alike; a Resolver
	// rule's target is the caller's own choice and is not checked). The
	// zero value allows every address; the crawler refuses link-local
	// ones by default.
	AddrPolicy addrpolicy.Policy
	// Lookup resolves host names. Nil means net.DefaultResolver.LookupNetIP.
	Lookup LookupFunc
	// DNSCacheTTL is how long a successful lookup is reused. Default 5 min;
	// negative disables the cache.
	DNSCacheTTL time.Duration
	// DNSNegativeTTL is how long a failed lookup is reused, so that a dead
	// host is not looked up for every queued URL. Default 30 s; negative
	// disables negative caching.
	DNSNegativeTTL time.Duration
	// DNSCacheSize caps the cached host names (least recently used go
	// first). Default 10000.
	DNSCacheSize int

	// DisableCookies stops accepting and sending cookies. Default false:
	// cookies are kept per site (registrable domain), because sites that
	// cannot set cookies put session ids in URLs (the Viuva Negra report §5.4: 27% of
	// URLs had session ids without cookies, 3.5% with).
	DisableCookies bool
	// CookieSites caps the sites whose cookies are kept (least recently
	// used jars are dropped). Default 10000.
	CookieSites int

	// HeadBeforeGet sends a HEAD before the GET of a URL whose extension
	// is in HeadExtensions, and skips the GET when the Content-Type is not
	// in WantedTypes. Default false.
	HeadBeforeGet bool
	// HeadExtensions lists extensions (lower case, no dot) that trigger the
	// HEAD. Nil means DefaultHeadExtensions.
	HeadExtensions []string
	// WantedTypes lists the media types worth a GET after a HEAD ("type/*"
	// for a whole type). Nil means DefaultWantedTypes.
	WantedTypes []string
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    string
	}{{"UserAgent", c.UserAgent}, {"Accept", c.Accept}} {
		if strings.ContainsFunc(f.v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			errs = append(errs, fmt.Errorf("fetch: %s must not contain control characters", f.name))
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"ConnectTimeout", int64(c.ConnectTimeout)}, {"Timeout", int64(c.Timeout)},
		{"IdleConnTimeout", int64(c.IdleConnTimeout)}, {"MaxBodySize", c.MaxBodySize},
		{"MaxDecodedSize", c.MaxDecodedSize}, {"MaxHeaderBytes", c.MaxHeaderBytes},
		{"MaxIdleConnsPerHost", int64(c.MaxIdleConnsPerHost)}, {"MaxIdleConns", int64(c.MaxIdleConns)},
		{"DNSCacheSize", int64(c.DNSCacheSize)}, {"CookieSites", int64(c.CookieSites)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("fetch: %s must not be negative", f.name))
		}
	}
	if len(c.HeadExtensions) > 1000 || len(c.WantedTypes) > 1000 {
		errs = append(errs, errors.New("fetch: HeadExtensions and WantedTypes hold at most 1000 entries"))
	}
	for _, t := range c.WantedTypes {
		if !strings.Contains(t, "/") {
			errs = append(errs, fmt.Errorf("fetch: WantedTypes entry %q is not a media type", t))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.Accept == "" {
		c.Accept = DefaultAccept
	}
	setDefault(&c.ConnectTimeout, DefaultConnectTimeout)
	setDefault(&c.Timeout, DefaultTimeout)
	setDefault(&c.IdleConnTimeout, DefaultIdleConnTimeout)
	setDefault(&c.DNSCacheTTL, DefaultDNSCacheTTL)
	setDefault(&c.DNSNegativeTTL, DefaultDNSNegativeTTL)
	setDefault(&c.MaxBodySize, DefaultMaxBodySize)
	setDefault(&c.MaxDecodedSize, DefaultMaxDecodedSize)
	setDefault(&c.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setDefault(&c.MaxIdleConnsPerHost, DefaultMaxIdleConnsPerHost)
	setDefault(&c.MaxIdleConns, DefaultMaxIdleConns)
	setDefault(&c.DNSCacheSize, DefaultDNSCacheSize)
	setDefault(&c.CookieSites, DefaultCookieSites)
	if c.HeadExtensions == nil {
		c.HeadExtensions = DefaultHeadExtensions
	}
	if c.WantedTypes == nil {
		c.WantedTypes = DefaultWantedTypes
	}
	return c
}

// setDefault sets *v to d when *v is the zero value.
func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
