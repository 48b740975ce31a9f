package mitm

import (
	"container/list"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Certificate returns a leaf certificate for host, signed by the CA, for a
// TLS server answering as host. host is a DNS name or an IP address,
// optionally with a port (ignored) and IPv6 brackets; names are matched
// case-insensitively and without a trailing dot. The certificate's subject
// alternative name is that one name or address (RFC 5280 §4.2.1.6; clients
// check nothing else, RFC 6125 §6.4.4), it is valid for Options.LeafValidity
// from now, backdated one hour, and never past the CA's own expiry.
//
// Leaves are cached (LRU, Options.CacheSize) and concurrent calls for one
// host share one signing, so a burst of CONNECTs to a host mints once.
func (ca *CA) Certificate(host string) (*tls.Certificate, error) {
	key, ip, err := normalizeHost(host)
	if err != nil {
		return nil, err
	}
	if c := ca.cached(key); c != nil {
		return c, nil
	}
	v, err, _ := ca.group.Do(key, func() (any, error) {
		if c := ca.cached(key); c != nil { // minted while we queued
			return c, nil
		}
		c, err := ca.mint(key, ip)
		if err != nil {
			return nil, err
		}
		ca.mu.Lock()
		ca.mu.cache.add(key, c)
		ca.mu.Unlock()
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*tls.Certificate), nil
}

// cached returns the cached leaf for key unless it is due for renewal.
func (ca *CA) cached(key string) *tls.Certificate {
	ca.mu.Lock()
	c := ca.mu.cache.get(key)
	ca.mu.Unlock()
	if c == nil {
		return nil
	}
	renew := min(24*time.Hour, ca.opts.LeafValidity/2)
	if !ca.opts.Now().Before(c.Leaf.NotAfter.Add(-renew)) {
		return nil
	}
	return c
}

// mint signs a new leaf for the normalized name (or address, when ip is
// valid).
func (ca *CA) mint(name string, ip netip.Addr) (*tls.Certificate, error) {
	now := ca.opts.Now()
	if !now.Before(ca.cert.NotAfter) {
		return nil, fmt.Errorf("mitm: CA certificate expired at %s", ca.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(ca.opts.LeafValidity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter // RFC 5280 §6.1.3: a leaf outliving its CA fails validation anyway
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if len(name) <= maxCACommonName {
		// Only for people reading the certificate: clients match the SAN.
		tmpl.Subject = pkix.Name{CommonName: name}
	}
	if ip.IsValid() {
		tmpl.IPAddresses = []net.IP{ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, ca.leafKey.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("mitm: sign certificate for %s: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("mitm: parse certificate for %s: %w", name, err)
	}
	ca.minted.Add(1)
	// The chain holds the leaf only: the CA is the client's trust anchor,
	// so sending it would add bytes and nothing else (RFC 8446 §4.4.2).
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: ca.leafKey, Leaf: leaf}, nil
}

// TLSConfig returns a server configuration that presents, for each
// handshake, a leaf for the name the client sent in SNI (RFC 6066 §3). A
// client sending no SNI (an IP address, or an old client) fails the
// handshake; use ServerConfig when the CONNECT host is known.
func (ca *CA) TLSConfig() *tls.Config { return ca.ServerConfig("") }

// ServerConfig is TLSConfig with a fallback: a handshake without SNI gets
// a leaf for host, the target of the CONNECT request. Clients do not send
// IP addresses in SNI (RFC 6066 §3), so this is how a tunnel to an address
// gets a certificate for it.
//
// ALPN offers "http/1.1" only: the intercepted requests are read by an
// HTTP/1.1 server and each goes through the proxy's pipeline (robots,
// gate, cache) like a plain proxied request; HTTP/2 would multiplex many
// requests to one host on one stream of frames, which the proxy would
// then hold one by one anyway. Clients that offer h2 fall back to
// HTTP/1.1, as they do with any server that does not select it.
func (ca *CA) ServerConfig(host string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = host
			}
			if name == "" {
				return nil, errors.New("mitm: client sent no server name (SNI) and no CONNECT host is known")
			}
			return ca.Certificate(name)
		},
	}
}

// Limits of host names (RFC 1035 §2.3.4).
const (
	maxHostInput = 300
	maxDNSName   = 253
	maxDNSLabel  = 63
)

// normalizeHost turns a host, host:port or [v6]:port into the cache key:
// a lowercase DNS name without a trailing dot, or the canonical text of an
// IP address (then ip is valid). It is the second parser the fuzz target
// exercises.
func normalizeHost(host string) (key string, ip netip.Addr, err error) {
	if len(host) > maxHostInput {
		return "", netip.Addr{}, fmt.Errorf("mitm: host name longer than %d bytes", maxHostInput)
	}
	h := strings.TrimSpace(host)
	if strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1 {
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		} else {
			return "", netip.Addr{}, fmt.Errorf("mitm: bad host %q: %w", host, err)
		}
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", netip.Addr{}, fmt.Errorf("mitm: bad host %q: an address with a zone cannot be in a certificate", host)
		}
		return a.String(), a, nil
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" {
		return "", netip.Addr{}, fmt.Errorf("mitm: empty host in %q", host)
	}
	if len(h) > maxDNSName {
		return "", netip.Addr{}, fmt.Errorf("mitm: host name longer than %d bytes", maxDNSName)
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > maxDNSLabel {
			return "", netip.Addr{}, fmt.Errorf("mitm: bad host %q: empty label or label over %d bytes", host, maxDNSLabel)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			// Letters, digits, hyphen; underscore too, which real host
			// names carry though RFC 952 forbids it. Non-ASCII names come
			// as A-labels (RFC 5890): SNI is ASCII (RFC 6066 §3).
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", netip.Addr{}, fmt.Errorf("mitm: bad host %q: character %q not allowed in a host name (use the punycode form)", host, c)
			}
		}
	}
	return h, netip.Addr{}, nil
}

// lru is a bounded map of leaves with least-recently-used eviction. Not
// safe for concurrent use: CA.mu guards it.
type lru struct {
	max   int
	order *list.List // front = most recently used; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	key  string
	cert *tls.Certificate
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

func (l *lru) get(key string) *tls.Certificate {
	e, ok := l.items[key]
	if !ok {
		return nil
	}
	l.order.MoveToFront(e)
	return e.Value.(*lruEntry).cert
}

func (l *lru) add(key string, c *tls.Certificate) {
	if e, ok := l.items[key]; ok {
		e.Value.(*lruEntry).cert = c
		l.order.MoveToFront(e)
		return
	}
	l.items[key] = l.order.PushFront(&lruEntry{key, c})
	for l.order.Len() > l.max {
		e := l.order.Back()
		l.order.Remove(e)
		delete(l.items, e.Value.(*lruEntry).key)
	}
}

func (l *lru) len() int { return l.order.Len() }
