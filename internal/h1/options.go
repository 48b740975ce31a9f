package h1

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// Defaults for zero Options fields.
const (
	DefaultMaxIdlePerHost = 2 // as http.DefaultMaxIdleConnsPerHost
	DefaultMaxIdle        = 100
	DefaultIdleTimeout    = 90 * time.Second
	DefaultMaxHeaderBytes = 1 << 20 // as net/http's client
	// DefaultHandshakeTimeout bounds a TLS handshake (as
	// http.DefaultTransport's).
	DefaultHandshakeTimeout = 10 * time.Second
)

// Options configures a Client. Only Dial is required; every other zero
// field takes the default named in its comment.
type Options struct {
	// Dial opens a connection to "host:port" (port 80 when the URL has
	// none). The request's context is passed, with its deadline and
	// client trace. Required.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Wrap, when set, wraps each new connection after Dial (the proxy's
	// polling reads, internal/proxy/latency.go). Nil: none.
	Wrap func(net.Conn) net.Conn
	// MaxIdlePerHost bounds the idle connections kept per origin address.
	// Default 2; negative keeps none.
	MaxIdlePerHost int
	// MaxIdle bounds the idle connections kept in all; past it the oldest
	// is closed. Default 100; negative keeps none.
	MaxIdle int
	// IdleTimeout: a connection idle for this long is closed by the
	// reaper, whether or not another request comes. Default 90 s.
	IdleTimeout time.Duration
	// HeaderTimeout bounds the wait for the response header after the
	// request is written. Zero: none (RoundTrip's timeout and the
	// context still apply).
	HeaderTimeout time.Duration
	// MaxHeaderBytes bounds the bytes read for a response header, 1xx
	// responses included. Default 1 MiB.
	MaxHeaderBytes int64
	// TLSConfig, when set, lets the client take https:// requests too:
	// after Dial it runs a TLS handshake with this configuration
	// (ServerName from the URL when empty; ALPN offers only HTTP/1.1, so
	// the exchange is HTTP/1.1 and its bytes are known, WithWire). Nil:
	// http:// only.
	TLSConfig *tls.Config
	// HandshakeTimeout bounds a TLS handshake. Default 10 s.
	HandshakeTimeout time.Duration
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.MaxIdlePerHost == 0 {
		o.MaxIdlePerHost = DefaultMaxIdlePerHost
	}
	if o.MaxIdle == 0 {
		o.MaxIdle = DefaultMaxIdle
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return o
}
