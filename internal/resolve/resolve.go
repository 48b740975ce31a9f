// Package resolve overrides name resolution for outgoing connections, like
// curl's --resolve but with wildcards: a rule PATTERN=ADDR:PORT sends every
// connection for a host matching PATTERN to ADDR:PORT, whatever port the URL
// named. Every courtesy subcommand takes such rules (--resolve), so that the
// synthetic web's thousands of host names reach one loopback listener.
//
// Patterns, matched case-insensitively against the host name:
//
//	example.org        exactly that host
//	*.example.org      any name below example.org (not example.org itself)
//	*                  every host
//	example.org:8080   the host, only when the URL's port is 8080
//
// The first matching rule wins; hosts no rule matches resolve normally.
package resolve

import (
	"context"
	"fmt"
	"net"
	"strings"
)

// Rule sends connections for hosts matching Pattern to Addr.
type Rule struct {
	Host string // lower-case host pattern: "name", "*.suffix" or "*"
	Port string // port the URL must name, or "" for any
	Addr string // host:port to dial instead
}

// ParseRule parses one PATTERN=ADDR:PORT rule.
func ParseRule(spec string) (Rule, error) {
	pat, addr, ok := strings.Cut(spec, "=")
	if !ok || pat == "" || addr == "" {
		return Rule{}, fmt.Errorf("resolve: rule %q: want PATTERN=ADDR:PORT", spec)
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil || h == "" || p == "" {
		return Rule{}, fmt.Errorf("resolve: rule %q: address %q: want ADDR:PORT", spec, addr)
	}
	r := Rule{Host: strings.ToLower(pat), Addr: addr}
	if host, port, err := net.SplitHostPort(pat); err == nil {
		r.Host, r.Port = strings.ToLower(host), port
	}
	if strings.Contains(strings.TrimPrefix(r.Host, "*."), "*") && r.Host != "*" {
		return Rule{}, fmt.Errorf("resolve: rule %q: '*' may only stand alone or start a '*.suffix' pattern", spec)
	}
	return r, nil
}

// Matches reports whether the rule applies to host and port.
func (r Rule) Matches(host, port string) bool {
	if r.Port != "" && r.Port != port {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case r.Host == "*":
		return true
	case strings.HasPrefix(r.Host, "*."):
		return strings.HasSuffix(host, r.Host[1:])
	default:
		return host == r.Host
	}
}

// Resolver holds an ordered list of rules. The zero value and nil resolve
// nothing.
type Resolver struct {
	rules []Rule
}

// New parses specs into a Resolver.
func New(specs []string) (*Resolver, error) {
	r := &Resolver{}
	for _, s := range specs {
		rule, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		r.rules = append(r.rules, rule)
	}
	return r, nil
}

// Rules returns the rules in order.
func (r *Resolver) Rules() []Rule {
	if r == nil {
		return nil
	}
	return append([]Rule(nil), r.rules...)
}

// Lookup returns the address to dial for hostport ("host:port"), and whether a
// rule matched.
func (r *Resolver) Lookup(hostport string) (string, bool) {
	if r == nil || len(r.rules) == 0 {
		return "", false
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	for _, rule := range r.rules {
		if rule.Matches(host, port) {
			return rule.Addr, true
		}
	}
	return "", false
}

// DialFunc is the signature of net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dial wraps dial so that addresses matching a rule are dialled at the rule's
// address instead. A nil dial means a zero net.Dialer.
func (r *Resolver) Dial(dial DialFunc) DialFunc {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := r.Lookup(addr); ok {
			addr = to
		}
		return dial(ctx, network, addr)
	}
}
