// Package addrpolicy says which network addresses an outgoing connection may
// reach. A page can link to any address; a crawler or proxy that follows
// every link would also fetch the machine's own services, the intranet
// behind it and the cloud's instance-metadata service (169.254.169.254,
// which hands out credentials), and archive what they answer. The check runs
// on the address actually dialled, after name resolution, so a public name
// that resolves to an internal address is caught too.
//
//	p, err := addrpolicy.Parse("no-link-local")
//	d := &net.Dialer{Control: p.Control()}
package addrpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrRefused is wrapped by the errors of refused connections.
var ErrRefused = errors.New("destination address refused by policy")

// Policy is a rule on destination addresses.
type Policy uint8

const (
	// All allows every address.
	All Policy = iota
	// NoLinkLocal refuses the addresses no web server is reached at:
	// link-local (169.254.0.0/16, with the cloud metadata services, and
	// fe80::/10), multicast, unspecified (0.0.0.0, ::), "this network"
	// (0.0.0.0/8) and the reserved 240.0.0.0/4. Loopback and private
	// networks stay reachable: crawls of local and intranet sites are
	// common and deliberate.
	NoLinkLocal
	// PublicOnly also refuses loopback, private networks (RFC 1918, RFC
	// 4193) and carrier-grade NAT (RFC 6598): only the public Internet.
	PublicOnly
)

// names are the policies' names in flags and configuration files.
var names = [...]string{All: "allow", NoLinkLocal: "no-link-local", PublicOnly: "public-only"}

// String returns the policy's name.
func (p Policy) String() string {
	if int(p) < len(names) {
		return names[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// Parse reads a policy name: "allow", "no-link-local" or "public-only".
func Parse(s string) (Policy, error) {
	for p, n := range names {
		if s == n {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("addrpolicy: %q: want allow, no-link-local or public-only", s)
}

// Allowed reports whether p lets a connection reach a.
func (p Policy) Allowed(a netip.Addr) bool {
	switch p {
	case All:
		return true
	case NoLinkLocal:
		return !unreachable(a)
	default:
		return !Internal(a)
	}
}

// Check returns nil if p allows a, else an error wrapping ErrRefused that
// names the address and why.
func (p Policy) Check(a netip.Addr) error {
	if p.Allowed(a) {
		return nil
	}
	return fmt.Errorf("%w (%s): %s is %s", ErrRefused, p, a.Unmap(), Class(a))
}

// Control returns a net.Dialer Control function applying p to each address
// dialled.
func (p Policy) Control() func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrRefused, address)
		}
		return p.Check(ap.Addr())
	}
}

// Internal reports whether a is not a public Internet address: loopback,
// private (RFC 1918, RFC 4193), link-local, unspecified, multicast,
// carrier-grade NAT (RFC 6598), "this network" and 240.0.0.0/4.
func Internal(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || unreachable(a) {
		return true
	}
	if a.Is4() {
		b := a.As4()
		return b[0] == 100 && b[1]&0xc0 == 64
	}
	return false
}

// unreachable reports the addresses NoLinkLocal refuses.
func unreachable(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	if a.Is4() {
		b := a.As4()
		return b[0] == 0 || b[0] >= 240
	}
	return false
}

// Class names the kind of address a is, for messages.
func Class(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case a.IsUnspecified():
		return "unspecified"
	case Internal(a):
		return "reserved"
	}
	return "public"
}
