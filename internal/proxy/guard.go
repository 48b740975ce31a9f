package proxy

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// ErrPrivateDestination is returned (wrapped) when the SSRF guard refuses a
// connection to a loopback, private, link-local or otherwise internal
// address.
var ErrPrivateDestination = errors.New("proxy: destination address is not public")

// guardControl is a net.Dialer Control function: it runs after name
// resolution, on the address actually dialled, so a host name that
// resolves to an internal address (DNS rebinding included) is refused too.
func guardControl(allowPrivate func() bool) func(network, address string, c syscall.RawConn) error {
	check := addrpolicy.PublicOnly.Control()
	return func(network, address string, c syscall.RawConn) error {
		if allowPrivate() {
			return nil
		}
		if err := check(network, address, c); err != nil {
			return fmt.Errorf("%w: %w", ErrPrivateDestination, err)
		}
		return nil
	}
}

// literalInternal reports whether host is an IP literal the guard would
// refuse, so that such requests are answered before taking a gate slot.
func literalInternal(host string) bool {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && addrpolicy.Internal(a)
}

// clientAllowed reports whether the client address remote ("ip:port") is in
// one of the allowed networks.
func clientAllowed(remote string, nets []netip.Prefix) bool {
	ap, err := netip.ParseAddrPort(remote)
	var a netip.Addr
	if err == nil {
		a = ap.Addr()
	} else if a, err = netip.ParseAddr(remote); err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the address part of remote ("ip:port").
func clientIP(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// checkProxyAuth verifies Proxy-Authorization: Basic against users
// (RFC 9110 §11.7.2, RFC 7617). Comparisons take constant time.
func checkProxyAuth(h http.Header, users map[string]string) bool {
	if len(users) == 0 {
		return true
	}
	v := h.Get("Proxy-Authorization")
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return false
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return false
	}
	want, found := users[user]
	if !found {
		want = "\x00never" // keep timing independent of the user's existence
	}
	match := subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1
	return found && match
}

// Dialer returns a dial function with the proxy's rules: --resolve
// overrides first, then the SSRF guard on the address actually dialled
// (refused unless allowPrivate() is true). The robots.txt client of the
// gate should use it too, so that robots fetches obey the same guard.
func Dialer(r *resolve.Resolver, allowPrivate func() bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var lookup func(string) (string, bool)
	if r != nil {
		lookup = r.Lookup
	}
	return dialer(lookup, allowPrivate)
}

// dialer builds the guarded dial function of the transport: the --resolve
// rules first, then the SSRF check on the dialled address.
func dialer(resolve func(string) (string, bool), allowPrivate func() bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Control: guardControl(allowPrivate)}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if resolve != nil {
			if to, ok := resolve(addr); ok {
				addr = to
			}
		}
		return d.DialContext(ctx, network, addr)
	}
}
