package politeness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// Config tunes a Gate. The zero value is ready to use; every zero field
// means its documented default. YAML keys follow internal/config
// (kebab-case, Go durations such as "1500ms").
type Config struct {
	// Agent is the robots.txt product token whose group applies (RFC 9309
	// §2.2.1). Default "courtesy".
	Agent string `yaml:"agent"`
	// UserAgent is the User-Agent header of robots.txt fetches. Default
	// "courtesy (+https://github.com/courtesy-crawler/courtesy)".
	UserAgent string `yaml:"user-agent"`
	// DefaultDelay is the gap after a fetch for keys with no manual
	// delay. Default 1s; negative means no delay. SetDefaultDelay
	// changes it at runtime (persisted in the DelayStore).
	DefaultDelay time.Duration `yaml:"default-delay"`
	// Delays are manual per-key delays from the config file (the
	// `domains` list of FileConfig). They are a layer under the admin API's: a delay set with
	// SetDelay wins; DeleteDelay brings the file's back. Gate.SetConfigDelays
	// replaces them when the file changes.
	Delays []DelayRule `yaml:"delays"`
	// MaxInFlight is the number of fetches one key may have in flight.
	// Default 1.
	MaxInFlight int `yaml:"max-in-flight"`
	// MaxCrawlDelay caps robots Crawl-delay, so one robots.txt cannot
	// stall a host forever. Default 30s.
	MaxCrawlDelay time.Duration `yaml:"max-crawl-delay"`
	// MaxRateInterval caps the interval implied by robots Request-rate
	// (a "1/24h" rate would otherwise close a host for a day). Default 1h.
	MaxRateInterval time.Duration `yaml:"max-rate-interval"`
	// AdaptiveFactor multiplies the last fetch's duration into the
	// adaptive delay (Najork and Heydon used 10). Default 0: off.
	AdaptiveFactor float64 `yaml:"adaptive-factor"`
	// MaxAdaptiveDelay caps the adaptive delay. Default 1m.
	MaxAdaptiveDelay time.Duration `yaml:"max-adaptive-delay"`
	// Popularity scales the default delay of popular domains
	// (popularity.go has the rules). Off by default. New reads the
	// list file; Gate.SetConfigPopularity reloads it.
	Popularity PopularityConfig `yaml:"popularity"`
	// Bandwidth scales the default delay by the measured download rate
	// of a key. Off by default.
	// Gate.SetConfigBandwidth replaces it.
	Bandwidth BandwidthConfig `yaml:"bandwidth"`
	// BackoffBase is the first backoff after a 429/503 without
	// Retry-After; it doubles with each further one. Default 5s.
	BackoffBase time.Duration `yaml:"backoff-base"`
	// BackoffMax caps the exponential backoff. Default 1h.
	BackoffMax time.Duration `yaml:"backoff-max"`
	// MaxRetryAfter caps an honoured Retry-After. Default 24h.
	MaxRetryAfter time.Duration `yaml:"max-retry-after"`
	// Lease is how long a Permit holds its slot if neither Done nor
	// Released. Default 2m. The WithLease option sets it per call.
	Lease time.Duration `yaml:"lease"`
	// PollInterval bounds how long Wait sleeps when a slot is held by
	// another process (in-process releases wake it at once). Default 100ms.
	PollInterval time.Duration `yaml:"poll-interval"`
	// ConfigCacheTTL is how long a manual delay read from the DelayStore is
	// reused before it is read again (changes made through this Gate apply
	// at once; other processes' changes within this time). Default 5s.
	ConfigCacheTTL time.Duration `yaml:"config-cache-ttl"`
	// Robots tunes the robots.txt cache.
	Robots RobotsConfig `yaml:"robots"`
	// ParseOptions tunes robots.txt parsing (the crawler's egress
	// addresses for REGP Ip-allow). Not in YAML.
	ParseOptions robots.Options `yaml:"-"`
	// KeyMode selects the politeness key (urlnorm.KeyMode): "host"
	// (default: the host name, port ignored), "domain" (registrable
	// domain) or "ip" (server address; names are resolved with the
	// system resolver on every ask, so prefer KeyFunc with a cached
	// resolver for "ip").
	KeyMode urlnorm.KeyMode `yaml:"key-mode"`
	// KeyFunc, when set, replaces KeyMode. Not in YAML.
	KeyFunc func(ctx context.Context, u *url.URL) (string, error) `yaml:"-"`
}

// DelayRule is one manual delay of the config file.
type DelayRule struct {
	// Key is the politeness key (a host by default), e.g. "example.org".
	Key string `yaml:"domain"`
	// Delay is the gap after each fetch. Zero is allowed (no delay).
	Delay time.Duration `yaml:"delay"`
	// Override forces Delay even when robots.txt asks for more.
	Override bool `yaml:"override"`
}

// Unauthorized modes for RobotsConfig.Unauthorized.
const (
	UnauthorizedDisallow = "disallow"
	UnauthorizedAllow    = "allow"
)

// RobotsConfig tunes the robots.txt cache.
type RobotsConfig struct {
	// TTL is how long a fetched robots.txt is used (RFC 9309 §2.4). Default 24h.
	TTL time.Duration `yaml:"ttl"`
	// NegativeTTL is how long a 4xx answer (no robots.txt: allow all; or
	// 401/403) is cached before asking again. Default 6h.
	NegativeTTL time.Duration `yaml:"negative-ttl"`
	// RetryBase is the wait before asking again after a 5xx, 429 or network
	// error; it doubles per consecutive failure. Default 1m.
	RetryBase time.Duration `yaml:"retry-base"`
	// RetryMax caps RetryBase's doubling. Default 1h.
	RetryMax time.Duration `yaml:"retry-max"`
	// StaleMax is how old a good copy may be and still be used while
	// robots.txt is unavailable (RFC 9309 §2.3.1.4). Default 720h (30 days).
	StaleMax time.Duration `yaml:"stale-max"`
	// Unauthorized says what 401/403 means: "disallow" (default, the 1996
	// draft) or "allow" (RFC 9309 §2.3.1.3).
	Unauthorized string `yaml:"unauthorized"`
	// MaxRedirects is how many redirects are followed (RFC 9309 §2.3.1.2
	// asks for at least five). Default 5; more than that means allow all.
	MaxRedirects int `yaml:"max-redirects"`
	// FetchTimeout bounds one robots.txt fetch, redirects included.
	// Default 30s.
	FetchTimeout time.Duration `yaml:"fetch-timeout"`
	// MaxCached is how many parsed files are kept in memory (the store
	// keeps all). Default 10000.
	MaxCached int `yaml:"max-cached"`
}

// Limits on what a Config may ask, so a typo cannot build a gate that
// never opens or never closes.
const (
	maxConfigDelay    = 24 * time.Hour
	maxConfigInFlight = 1024
)

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Agent == "" {
		c.Agent = "courtesy"
	}
	if c.UserAgent == "" {
		c.UserAgent = "courtesy (+https://github.com/courtesy-crawler/courtesy)"
	}
	switch {
	case c.DefaultDelay == 0:
		c.DefaultDelay = time.Second
	case c.DefaultDelay < 0:
		c.DefaultDelay = 0
	}
	setDefault(&c.MaxInFlight, 1)
	setDefault(&c.MaxCrawlDelay, 30*time.Second)
	setDefault(&c.MaxRateInterval, time.Hour)
	setDefault(&c.MaxAdaptiveDelay, time.Minute)
	setDefault(&c.BackoffBase, 5*time.Second)
	setDefault(&c.BackoffMax, time.Hour)
	setDefault(&c.MaxRetryAfter, 24*time.Hour)
	setDefault(&c.Lease, 2*time.Minute)
	setDefault(&c.PollInterval, 100*time.Millisecond)
	setDefault(&c.ConfigCacheTTL, 5*time.Second)
	if c.KeyFunc == nil {
		c.KeyFunc = KeyFunc(c.KeyMode)
	}
	r := &c.Robots
	setDefault(&r.TTL, 24*time.Hour)
	setDefault(&r.NegativeTTL, 6*time.Hour)
	setDefault(&r.RetryBase, time.Minute)
	setDefault(&r.RetryMax, time.Hour)
	setDefault(&r.StaleMax, 30*24*time.Hour)
	setDefault(&r.Unauthorized, UnauthorizedDisallow)
	setDefault(&r.MaxRedirects, 5)
	setDefault(&r.FetchTimeout, 30*time.Second)
	setDefault(&r.MaxCached, 10000)
	return c
}

func setDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// Validate reports the first unusable setting. Zero values are fine.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("politeness: "+format, args...))
	}
	if c.DefaultDelay > maxConfigDelay {
		bad("default-delay %v exceeds %v", c.DefaultDelay, maxConfigDelay)
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > maxConfigInFlight {
		bad("max-in-flight %d outside 0..%d", c.MaxInFlight, maxConfigInFlight)
	}
	if c.AdaptiveFactor < 0 || c.AdaptiveFactor > 1000 {
		bad("adaptive-factor %v outside 0..1000", c.AdaptiveFactor)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"max-crawl-delay", c.MaxCrawlDelay}, {"max-rate-interval", c.MaxRateInterval},
		{"max-adaptive-delay", c.MaxAdaptiveDelay}, {"backoff-base", c.BackoffBase},
		{"backoff-max", c.BackoffMax}, {"max-retry-after", c.MaxRetryAfter},
		{"lease", c.Lease}, {"poll-interval", c.PollInterval},
		{"config-cache-ttl", c.ConfigCacheTTL}, {"robots.ttl", c.Robots.TTL},
		{"robots.negative-ttl", c.Robots.NegativeTTL}, {"robots.retry-base", c.Robots.RetryBase},
		{"robots.retry-max", c.Robots.RetryMax}, {"robots.stale-max", c.Robots.StaleMax},
		{"robots.fetch-timeout", c.Robots.FetchTimeout},
	} {
		if f.d < 0 {
			bad("%s must not be negative, got %v", f.name, f.d)
		}
	}
	switch strings.ToLower(c.Robots.Unauthorized) {
	case "", UnauthorizedDisallow, UnauthorizedAllow:
	default:
		bad("robots.unauthorized must be %q or %q, got %q", UnauthorizedDisallow, UnauthorizedAllow, c.Robots.Unauthorized)
	}
	if c.Robots.MaxRedirects < 0 || c.Robots.MaxRedirects > 20 {
		bad("robots.max-redirects %d outside 0..20", c.Robots.MaxRedirects)
	}
	if c.KeyMode > urlnorm.ByIP {
		bad("key-mode %v unknown", c.KeyMode)
	}
	if c.Robots.MaxCached < 0 {
		bad("robots.max-cached must not be negative, got %d", c.Robots.MaxCached)
	}
	if err := c.Popularity.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Bandwidth.validate(); err != nil {
		errs = append(errs, err)
	}
	for i, r := range c.Delays {
		if r.Key == "" {
			bad("delays[%d]: empty domain", i)
		}
		if r.Delay < 0 || r.Delay > maxConfigDelay {
			bad("delays[%d] (%s): delay %v outside 0..%v", i, r.Key, r.Delay, maxConfigDelay)
		}
	}
	return errors.Join(errs...)
}

// KeyFunc returns the key function of mode m (see urlnorm.Key): ByHost
// and ByDomain need no I/O; ByIP resolves names with net.DefaultResolver.
func KeyFunc(m urlnorm.KeyMode) func(ctx context.Context, u *url.URL) (string, error) {
	if m == urlnorm.ByIP {
		lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
		return func(ctx context.Context, u *url.URL) (string, error) {
			return urlnorm.KeyLookup(ctx, u, m, lookup)
		}
	}
	return func(_ context.Context, u *url.URL) (string, error) { return urlnorm.Key(u, m) }
}
