package mitm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseCA: any pair of files in the CA directory gives a CA or an
// error, never a panic; a CA that loads can mint.
func FuzzParseCA(f *testing.F) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read("openssl-ec-ca.pem"), read("openssl-ec-ca-key.pem"))
	f.Add(read("openssl-rsa-ca.pem"), read("openssl-rsa-ca-key.pem"))
	f.Add(read("not-ca.pem"), read("not-ca-key.pem"))
	f.Add(read("openssl-ec-ca.pem"), read("openssl-rsa-ca-key.pem"))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----\n"), []byte("-----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----\n"))
	f.Add([]byte{}, []byte{})
	o := Options{Now: fixedClock(fixtureNow), CacheSize: 4}
	f.Fuzz(func(t *testing.T, certPEM, keyPEM []byte) {
		ca, err := parseCA(certPEM, keyPEM, o)
		if err != nil {
			if ca != nil || !strings.HasPrefix(err.Error(), "mitm: ") {
				t.Fatalf("error %q with CA %v", err, ca != nil)
			}
			return
		}
		if !ca.Root().IsCA {
			t.Fatalf("loaded a non-CA certificate")
		}
		if _, err := ca.Certificate("fuzz.test"); err != nil {
			// A CA whose key type or parameters cannot sign is possible
			// in principle; it must say so, not panic.
			if !strings.HasPrefix(err.Error(), "mitm: ") {
				t.Fatalf("mint error %q", err)
			}
		}
	})
}

// FuzzNormalizeHost: host parsing never panics, its output is stable (a
// normalized key normalizes to itself) and bounded.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"site.test", "SITE.test.:443", "[::1]:443", "::1", "127.0.0.1", "[fe80::1%25eth0]", "a..b", "é.test", "a_b-c.test", ":", "[", "]:", "[]:443", strings.Repeat("a.", 130)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		key, ip, err := normalizeHost(host)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "mitm: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(key) == 0 || len(key) > maxDNSName+2 && !ip.IsValid() {
			t.Fatalf("key %q out of bounds", key)
		}
		key2, ip2, err := normalizeHost(key)
		if err != nil || key2 != key || ip2 != ip {
			t.Fatalf("normalizeHost(%q) = %q; again = %q, %v, %v", host, key, key2, ip2, err)
		}
		if _, _, err := splitAuthority(host); err != nil && !strings.HasPrefix(err.Error(), "mitm: ") {
			t.Fatalf("splitAuthority error %q", err)
		}
	})
}
