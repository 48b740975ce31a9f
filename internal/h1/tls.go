package h1

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
)

// tlsKeyPrefix marks the pool keys of https:// origins, so that an http://
// and an https:// origin on one address never share a connection.
const tlsKeyPrefix = "https://"

// origin returns the address to dial for a request to scheme://host and
// its connection pool key: host:port (port 80 or 443 by default), and for
// https the address behind tlsKeyPrefix.
func origin(scheme, host string) (addr, key string) {
	if scheme == "https" {
		addr = addrPort(host, "443")
		return addr, tlsKeyPrefix + addr
	}
	addr = Addr(host)
	return addr, addr
}

// handshake runs the TLS client handshake on c for host (the URL's host
// name, without port or brackets: Go sends no SNI for an IP address, and
// checks its IP SANs), offering only HTTP/1.1 by ALPN, within
// o.handshakeTimeout and ctx. It reports to trace's TLS hooks, as
// http.Transport does, so that callers tell a certificate failure from a
// connection failure. On failure c is closed.
func (o *Client) handshake(ctx context.Context, c net.Conn, host string, trace *httptrace.ClientTrace) (*tls.Conn, error) {
	cfg := o.tlsConf.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	if o.handshakeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.handshakeTimeout)
		defer cancel()
	}
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	tc := tls.Client(c, cfg)
	// crypto/tls refuses a protocol the server picks that was not
	// offered, so the exchange is HTTP/1.1 (or the server does no ALPN).
	err := tc.HandshakeContext(ctx)
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(tc.ConnectionState(), err)
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return tc, nil
}

// rawConn is the connection under c: the TCP connection of a TLS one, so
// that quiet can peek at its socket.
func rawConn(c net.Conn) net.Conn {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c
}
