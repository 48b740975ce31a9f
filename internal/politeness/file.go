package politeness

import (
	"strings"
	"time"
)

// FileConfig is the `politeness:` section of the YAML configuration, one
// reading shared by `courtesy proxy` and `courtesy crawl`: the gate's
// knobs (Config, kebab-case keys) and the per-domain delays of the
// polite-proxy thesis' configuration format, in milliseconds:
//
//	politeness:
//	  default-delay: 1s        # Config.DefaultDelay; negative: no delay
//	  domains:
//	    - domain: example.org  # a politeness key (a host by default)
//	      delay: 5000          # ms after the end of each fetch
//	      override: false      # true: win over a longer robots Crawl-delay
//	  default-domain:
//	    domain: default
//	    delay: 1000            # ms; 0 means no delay, as written
//
// A delay of 0 always means "no delay": a manual delay of 0 for a domain,
// and a default-domain delay of 0 for every key without one. The
// default-domain entry, when present, replaces default-delay.
type FileConfig struct {
	Config `yaml:",squash"`
	// Domains are manual delays, one per politeness key.
	Domains []DomainDelay `yaml:"domains"`
	// DefaultDomain, when set, gives the default delay.
	DefaultDomain *DomainDelay `yaml:"default-domain"`
}

// DomainDelay is one entry of the configuration format's domain list.
type DomainDelay struct {
	Domain   string `yaml:"domain"`
	Delay    Millis `yaml:"delay"`
	Override bool   `yaml:"override"`
}

// Millis is a delay written in whole milliseconds.
type Millis int64

// Duration returns m as a time.Duration.
func (m Millis) Duration() time.Duration { return time.Duration(m) * time.Millisecond }

// GateConfig returns the gate's Config: the domains become manual delays
// (after those of Config.Delays, keys lower-cased) and the default-domain
// delay the default delay, 0 read as "no delay" (Config.DefaultDelay
// negative). The result is checked by Config.Validate as any other.
func (f FileConfig) GateConfig() Config {
	c := f.Config
	c.Delays = append([]DelayRule(nil), c.Delays...)
	for _, d := range f.Domains {
		c.Delays = append(c.Delays, DelayRule{Key: strings.ToLower(d.Domain), Delay: d.Delay.Duration(), Override: d.Override})
	}
	if dd := f.DefaultDomain; dd != nil {
		c.DefaultDelay = dd.Delay.Duration()
		if c.DefaultDelay == 0 {
			c.DefaultDelay = -1
		}
	}
	return c
}
