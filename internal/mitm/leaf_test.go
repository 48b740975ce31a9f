package mitm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCertificateVerifies(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	tests := []struct {
		name, host string
		wantDNS    string // SAN DNS name; empty for an address
		wantIP     string
	}{
		{"name", "site.test", "site.test", ""},
		{"name with port", "site.test:8443", "site.test", ""},
		{"upper case and root dot", "Site.TEST.", "site.test", ""},
		{"underscore", "a_b.site.test", "a_b.site.test", ""},
		{"ipv4", "127.0.0.1", "", "127.0.0.1"},
		{"ipv4 with port", "127.0.0.1:443", "", "127.0.0.1"},
		{"ipv6 bracketed with port", "[::1]:443", "", "::1"},
		{"ipv6 bare", "::1", "", "::1"},
		{"ipv6 bracketed", "[2001:db8::1]", "", "2001:db8::1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := ca.Certificate(tt.host)
			if err != nil {
				t.Fatal(err)
			}
			leaf := c.Leaf
			if tt.wantDNS != "" {
				if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != tt.wantDNS || len(leaf.IPAddresses) != 0 {
					t.Errorf("SAN DNS %v IP %v, want DNS [%s]", leaf.DNSNames, leaf.IPAddresses, tt.wantDNS)
				}
			} else if len(leaf.IPAddresses) != 1 || leaf.IPAddresses[0].String() != tt.wantIP || len(leaf.DNSNames) != 0 {
				t.Errorf("SAN DNS %v IP %v, want IP [%s]", leaf.DNSNames, leaf.IPAddresses, tt.wantIP)
			}
			verifyName := tt.wantDNS + tt.wantIP
			if _, err := leaf.Verify(x509.VerifyOptions{DNSName: verifyName, Roots: ca.Pool()}); err != nil {
				t.Errorf("verify as %s: %v", verifyName, err)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.test", Roots: ca.Pool()}); err == nil {
				t.Errorf("leaf verifies for other.test")
			}
			if life := leaf.NotAfter.Sub(leaf.NotBefore); life != DefaultLeafValidity+backdate {
				t.Errorf("leaf validity %v, want %v", life, DefaultLeafValidity+backdate)
			}
			if leaf.IsCA || leaf.KeyUsage != x509.KeyUsageDigitalSignature {
				t.Errorf("leaf IsCA=%v KeyUsage=%v", leaf.IsCA, leaf.KeyUsage)
			}
		})
	}
}

func TestCertificateBadHost(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	for _, host := range []string{"", ":443", "a..b", "bad host", "é.test", "*.site.test", "fe80::1%eth0", strings.Repeat("a", 64) + ".test", strings.Repeat("a.", 150), "a:b:c"} {
		if _, err := ca.Certificate(host); err == nil || !strings.HasPrefix(err.Error(), "mitm: ") {
			t.Errorf("Certificate(%q) error = %v, want a mitm error", host, err)
		}
	}
	if ca.Minted() != 0 {
		t.Errorf("minted %d for bad hosts", ca.Minted())
	}
}

// TestCertificateConcurrentMintsOnce: a burst of handshakes for one host
// signs one certificate (singleflight plus cache).
func TestCertificateConcurrentMintsOnce(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	const n = 100
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		certs = make([]*tls.Certificate, n)
		errs  = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			certs[i], errs[i] = ca.Certificate("x.test")
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if certs[i] != certs[0] {
			t.Fatalf("goroutine %d got a different certificate", i)
		}
	}
	if got := ca.Minted(); got != 1 {
		t.Errorf("minted %d certificates for one host, want 1", got)
	}
}

func TestCertificateCacheBoundAndRenewal(t *testing.T) {
	t.Parallel()
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ca, _ := newTestCA(t, Options{CacheSize: 2, Now: clock})

	mustCert := func(host string) *tls.Certificate {
		t.Helper()
		c, err := ca.Certificate(host)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := mustCert("a.test")
	mustCert("b.test")
	if mustCert("a.test") != a || ca.Minted() != 2 {
		t.Fatalf("cache hit expected: minted %d", ca.Minted())
	}
	mustCert("c.test") // evicts b.test, the least recently used
	if ca.mu.cache.len() != 2 {
		t.Errorf("cache holds %d, want 2", ca.mu.cache.len())
	}
	if mustCert("a.test") != a || ca.Minted() != 3 {
		t.Errorf("a.test should still be cached: minted %d", ca.Minted())
	}
	mustCert("b.test")
	if ca.Minted() != 4 {
		t.Errorf("b.test should have been evicted and re-minted: minted %d", ca.Minted())
	}

	// 28 days on, a.test's leaf has more than a day left: kept. 29.5 days
	// on it has less: renewed.
	mu.Lock()
	now = now.Add(28 * 24 * time.Hour)
	mu.Unlock()
	if mustCert("a.test") != a {
		t.Errorf("leaf renewed with 2 days left")
	}
	mu.Lock()
	now = now.Add(36 * time.Hour)
	mu.Unlock()
	renewed := mustCert("a.test")
	if renewed == a || !renewed.Leaf.NotAfter.After(a.Leaf.NotAfter) {
		t.Errorf("leaf not renewed with half a day left")
	}
}

func TestCertificateNeverOutlivesCA(t *testing.T) {
	t.Parallel()
	ca, dir := newTestCA(t, Options{})
	late := ca.Root().NotAfter.Add(-10 * 24 * time.Hour)
	old, _, err := LoadOrCreateCAOptions(dir, Options{Now: fixedClock(late)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := old.Certificate("site.test")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Leaf.NotAfter.Equal(ca.Root().NotAfter) {
		t.Errorf("leaf NotAfter %v, want the CA's %v", c.Leaf.NotAfter, ca.Root().NotAfter)
	}
}

// handshake runs a TLS handshake between a client with cfg and a server
// with srvCfg over loopback TCP, and returns the client's state.
func handshake(t *testing.T, srvCfg, cfg *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tls.Server(c, srvCfg).HandshakeContext(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return tls.ConnectionState{}, err
	}
	return tc.ConnectionState(), nil
}

func TestTLSHandshakeGoClient(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	wrong, _ := newTestCA(t, Options{})
	tests := []struct {
		name       string
		srv        *tls.Config
		serverName string // the client's SNI and verification name
		roots      *x509.CertPool
		wantErr    func(error) bool
	}{
		{"sni name", ca.TLSConfig(), "site.test", ca.Pool(), nil},
		{"sni name, connect fallback unused", ca.ServerConfig("other.test"), "site.test", ca.Pool(), nil},
		// Go sends no SNI for an IP address (RFC 6066 §3): the CONNECT
		// host is the fallback.
		{"ip via fallback", ca.ServerConfig("127.0.0.1"), "127.0.0.1", ca.Pool(), nil},
		{"ip without fallback", ca.TLSConfig(), "127.0.0.1", ca.Pool(), func(err error) bool { return err != nil }},
		{"wrong CA", ca.TLSConfig(), "site.test", wrong.Pool(), func(err error) bool {
			var ua x509.UnknownAuthorityError
			var ve *tls.CertificateVerificationError
			return errors.As(err, &ve) && errors.As(err, &ua)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, err := handshake(t, tt.srv, &tls.Config{
				ServerName: tt.serverName,
				RootCAs:    tt.roots,
				NextProtos: []string{"h2", "http/1.1"},
			})
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("handshake error %v, not the expected failure", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			if len(st.VerifiedChains) != 1 || len(st.VerifiedChains[0]) != 2 {
				t.Fatalf("verified chains %v, want leaf → CA", st.VerifiedChains)
			}
			if err := st.PeerCertificates[0].VerifyHostname(tt.serverName); err != nil {
				t.Errorf("SAN: %v", err)
			}
			if !st.VerifiedChains[0][1].Equal(ca.Root()) {
				t.Errorf("chain does not end at the CA")
			}
			if st.NegotiatedProtocol != "http/1.1" {
				t.Errorf("ALPN %q, want http/1.1", st.NegotiatedProtocol)
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ip       bool
		ok       bool
	}{
		{"site.test", "site.test", false, true},
		{"  SITE.test.:443 ", "site.test", false, true},
		{"xn--bcher-kva.test", "xn--bcher-kva.test", false, true},
		{"10.0.0.1", "10.0.0.1", true, true},
		{"[::ffff:10.0.0.1]:443", "::ffff:10.0.0.1", true, true},
		{"[2001:DB8::1]", "2001:db8::1", true, true},
		{"", "", false, false},
		{".", "", false, false},
		{"a..b", "", false, false},
		{"[::1", "", false, false},
		{"host:port:x", "", false, false},
		{"bücher.test", "", false, false},
		{strings.Repeat("a", 301), "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ip, err := normalizeHost(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("normalizeHost(%q) = %q, %v; want ok=%v", tt.in, got, err, tt.ok)
			}
			if got != tt.want || ip.IsValid() != tt.ip {
				t.Errorf("normalizeHost(%q) = %q ip=%v, want %q ip=%v", tt.in, got, ip.IsValid(), tt.want, tt.ip)
			}
		})
	}
}
