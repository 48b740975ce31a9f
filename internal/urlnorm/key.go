package urlnorm

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// KeyMode selects what one politeness key covers: the unit that gets one
// delay and one concurrency limit.
type KeyMode uint8

const (
	// ByHost keys by host name ("www.example.org"), the default: the polite-proxy thesis
	// §4.2 and the Viuva Negra report §3.3 (site partitioning) treat a site as one
	// host name. The port is not part of the key: two ports are one server.
	ByHost KeyMode = iota
	// ByDomain keys by registrable domain (eTLD+1 from the public suffix
	// list: "a.example.co.uk" and "b.example.co.uk" share
	// "example.co.uk"), for organisations serving many host names from one
	// farm. A host that is itself a public suffix, or an IP address, is
	// its own key.
	ByDomain
	// ByIP keys by server address, so that virtual hosts on one machine
	// share its politeness budget (REGP Ip-delay). Needs a DNS lookup
	// when the host is a name: see KeyLookup.
	ByIP
)

// ErrNeedsLookup is wrapped by Key for ByIP when the host is a name, not
// an address: call KeyLookup with a resolver instead.
var ErrNeedsLookup = errors.New("urlnorm: ByIP key needs a DNS lookup")

// String returns "host", "domain" or "ip".
func (m KeyMode) String() string {
	switch m {
	case ByHost:
		return "host"
	case ByDomain:
		return "domain"
	case ByIP:
		return "ip"
	}
	return fmt.Sprintf("KeyMode(%d)", uint8(m))
}

// ParseKeyMode parses "host" (or ""), "domain" or "ip", case-insensitively.
func ParseKeyMode(s string) (KeyMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "host":
		return ByHost, nil
	case "domain":
		return ByDomain, nil
	case "ip":
		return ByIP, nil
	}
	return 0, fmt.Errorf("urlnorm: key mode %q: want host, domain or ip", s)
}

// MarshalText implements encoding.TextMarshaler (for config files).
func (m KeyMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler via ParseKeyMode.
func (m *KeyMode) UnmarshalText(b []byte) error {
	v, err := ParseKeyMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Key returns the politeness key of u, which should be normalized (a host
// name in lower case without trailing dot). For ByIP, a host that is an IP
// address is its own key; a name gives an error wrapping ErrNeedsLookup.
func Key(u *url.URL, m KeyMode) (string, error) {
	host, err := keyHost(u)
	if err != nil {
		return "", err
	}
	switch m {
	case ByHost:
		return host, nil
	case ByDomain:
		if _, err := netip.ParseAddr(host); err == nil {
			return host, nil
		}
		d, err := publicsuffix.EffectiveTLDPlusOne(host)
		if err != nil {
			return host, nil // a public suffix or single label: its own key
		}
		return d, nil
	case ByIP:
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap().String(), nil
		}
		return "", fmt.Errorf("%w: %q", ErrNeedsLookup, host)
	}
	return "", fmt.Errorf("urlnorm: unknown key mode %d", m)
}

// LookupFunc resolves a host name to addresses, like
// (*net.Resolver).LookupNetIP with network "ip".
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// KeyLookup is Key that resolves names with lookup for ByIP. Of several
// addresses it takes the lowest, so that the key does not change with the
// order of DNS answers (a host whose address set changes gets a new key;
// a crawler should cache keys per host name for a crawl). Other modes do
// not call lookup.
func KeyLookup(ctx context.Context, u *url.URL, m KeyMode, lookup LookupFunc) (string, error) {
	k, err := Key(u, m)
	if !errors.Is(err, ErrNeedsLookup) {
		return k, err
	}
	if lookup == nil {
		return "", err
	}
	host, _ := keyHost(u)
	addrs, err := lookup(ctx, host)
	if err != nil {
		return "", fmt.Errorf("urlnorm: key for %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("urlnorm: key for %q: no addresses", host)
	}
	lowest := addrs[0].Unmap()
	for _, a := range addrs[1:] {
		if a = a.Unmap(); a.Less(lowest) {
			lowest = a
		}
	}
	return lowest.String(), nil
}

func keyHost(u *url.URL) (string, error) {
	if u == nil {
		return "", errors.New("urlnorm: key of a nil URL")
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return "", fmt.Errorf("%w: %q has no host", ErrMalformed, clip(u.String()))
	}
	return host, nil
}
