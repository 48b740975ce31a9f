// Package mitm intercepts TLS for `courtesy proxy --mitm` (HTTPS, which
// the polite-proxy thesis §7 names as its open work): a local
// certificate authority mints a certificate for each host a client
// tunnels to, the proxy terminates the client's TLS with it, and the
// HTTP requests inside go through the same pipeline as plain HTTP —
// path-level robots.txt, politeness gate, cache — before being sent to the
// origin over a TLS connection of the proxy's own.
//
// Use:
//
//	ca, created, err := mitm.LoadOrCreateCA(dataDir) // dataDir/mitm-ca.pem, mitm-ca-key.pem
//	if created { fmt.Println("trust", ca.CertPath()) }
//	srv := &mitm.Server{CA: ca}
//	// after answering CONNECT host:443 with 200 and hijacking the connection:
//	err = srv.ServeConn(ctx, mitm.BufferedConn(conn, brw.Reader), "host:443", proxyHandler)
//
// proxyHandler then sees requests as a forward proxy does: r.URL is
// absolute (https://host/path), r.TLS is set, and mitm.FromContext tells
// the tunnel they came through.
//
// # The CA
//
// A new CA is an ECDSA P-256 key and a self-signed certificate with common
// name "Courtesy proxy local CA <hostname>", valid ten years (backdated one
// hour), basic constraints CA with path length 0 (it can sign leaves, not
// intermediate CAs), key usage certificate signing, extended key usage
// server authentication only. It has no name constraints (RFC 5280
// §4.2.1.10): the proxy must impersonate whatever host a client tunnels
// to, so no permitted subtree would fit; the extended key usage and path
// length limit what a stolen key can do instead, and the key file is
// mode 0600. Any CA in PEM form (PKCS #8, SEC 1 or PKCS #1 key) can be put
// in its place; loading checks the key matches, the certificate is a CA
// allowed to sign, and it is valid now.
//
// # Leaves
//
// One leaf per host (the exact DNS name or IP address, as the only subject
// alternative name), valid 30 days, backdated one hour, signed with the
// CA key. All leaves share one ECDSA P-256 key generated at load and kept
// in memory only: it saves a key generation per host, and a per-host key would not
// protect anything, since every leaf is trusted by the same clients
// through the same CA. Leaves are cached in a bounded LRU (10,000) and
// minted once per host however many handshakes ask at the same time
// (singleflight); a cached leaf is renewed a day before it expires.
package mitm
