package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
)

// An origin whose certificate does not verify (self-signed, expired, an
// unknown CA) is refused with reason tls-verify-failed, not taken for an
// origin without robots.txt. An operator who knows the host may allow it
// (upstream-insecure-hosts): the proxy then skips verification for that
// host only, for its robots.txt fetch and intercepted requests alike. The
// client still verifies what it receives through a tunnel itself.

// TLSDialer returns a DialTLSContext for an http.Transport: it dials
// with dial, then shakes hands with a clone of base (nil: the system
// roots) named for the host, skipping certificate verification for the
// hosts insecure reports true for. insecure may be nil, and is asked on
// every connection, so it may change while the proxy runs. (A per-host
// choice needs the dialer: crypto/tls's VerifyConnection does not see
// the host name of an IP address, which is sent without SNI.)
func TLSDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error), base *tls.Config, insecure func(host string) bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("proxy: tls dial %s: %w", addr, err)
		}
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		var cfg *tls.Config
		if base != nil {
			cfg = base.Clone()
		} else {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		if insecure != nil && insecure(strings.ToLower(host)) {
			cfg.InsecureSkipVerify = true
		}
		c := tls.Client(raw, cfg)
		if err := c.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return c, nil
	}
}

// tlsVerifyFailed reports whether an error text (the robots.txt fetch's,
// kept as text in the robots cache) is a certificate that did not verify.
func tlsVerifyFailed(msg string) bool {
	return strings.Contains(msg, "tls: failed to verify certificate") || strings.Contains(msg, "x509: ")
}

// TLSVerifyFailed is tlsVerifyFailed for other packages (the robots store
// of the proxy command, which forgets such failures for allowed hosts).
func TLSVerifyFailed(msg string) bool { return tlsVerifyFailed(msg) }
