package mitm

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureNow lies inside the validity of the testdata certificates.
var fixtureNow = time.Date(2027, 6, 1, 12, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// newTestCA creates a CA in a fresh temporary directory.
func newTestCA(t *testing.T, o Options) (*CA, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	ca, created, err := LoadOrCreateCAOptions(dir, o)
	if err != nil {
		t.Fatalf("LoadOrCreateCAOptions: %v", err)
	}
	if !created {
		t.Fatalf("created = false for a new directory")
	}
	return ca, dir
}

func copyFixture(t *testing.T, dir, from, to string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", from))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, to), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOrCreateCACreatesThenLoads(t *testing.T) {
	t.Parallel()
	ca, dir := newTestCA(t, Options{Hostname: "build-host"})

	c := ca.Root()
	if want := "Courtesy proxy local CA build-host"; c.Subject.CommonName != want {
		t.Errorf("CN = %q, want %q", c.Subject.CommonName, want)
	}
	if !c.IsCA || !c.BasicConstraintsValid || c.MaxPathLen != 0 || !c.MaxPathLenZero {
		t.Errorf("basic constraints: IsCA=%v valid=%v maxPathLen=%d zero=%v", c.IsCA, c.BasicConstraintsValid, c.MaxPathLen, c.MaxPathLenZero)
	}
	if c.KeyUsage != x509.KeyUsageCertSign {
		t.Errorf("key usage = %v, want CertSign only", c.KeyUsage)
	}
	if len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("ext key usage = %v, want server auth", c.ExtKeyUsage)
	}
	if pk, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pk.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", c.PublicKey)
	}
	if life := c.NotAfter.Sub(c.NotBefore); life < 3650*24*time.Hour || life > 3654*24*time.Hour {
		t.Errorf("validity %v, want about ten years", life)
	}
	if ca.CertPath() != filepath.Join(dir, CertFile) {
		t.Errorf("CertPath = %q", ca.CertPath())
	}

	for name, want := range map[string]os.FileMode{KeyFile: 0o600, CertFile: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v (err %v), want 0700", fi.Mode().Perm(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("directory holds %d entries, want the 2 CA files (no temporary files left)", len(ents))
	}

	again, created, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if created {
		t.Errorf("reload: created = true, want false")
	}
	if !bytes.Equal(again.Root().Raw, c.Raw) || !bytes.Equal(again.CertPEM(), ca.CertPEM()) {
		t.Errorf("reload gave a different CA")
	}
}

func TestLoadOrCreateCAErrors(t *testing.T) {
	t.Parallel()
	other, otherDir := newTestCA(t, Options{})
	_ = other
	otherKey, err := os.ReadFile(filepath.Join(otherDir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) // dir holds a fresh CA
		now     time.Time
		wantErr string
	}{
		{"cert only", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, KeyFile)) }, time.Time{}, "mitm-ca-key.pem does not"},
		{"key only", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, CertFile)) }, time.Time{}, "mitm-ca.pem does not"},
		{"corrupt cert", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, CertFile), []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), 0o644)
		}, time.Time{}, "mitm: CA certificate:"},
		{"cert not PEM", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, CertFile), []byte("hello"), 0o644)
		}, time.Time{}, "no PEM block"},
		{"corrupt key", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, KeyFile), []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
		}, time.Time{}, "mitm: CA key:"},
		{"mismatched key", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, KeyFile), otherKey, 0o600)
		}, time.Time{}, "does not match"},
		{"not a CA", func(t *testing.T, dir string) {
			copyFixture(t, dir, "not-ca.pem", CertFile)
			copyFixture(t, dir, "not-ca-key.pem", KeyFile)
		}, fixtureNow, "not a CA"},
		{"expired", func(t *testing.T, dir string) {}, time.Now().AddDate(11, 0, 0), "expired"},
		{"not yet valid", func(t *testing.T, dir string) {}, time.Now().AddDate(0, 0, -1), "not valid before"},
		{"oversized", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, CertFile), bytes.Repeat([]byte("x"), maxPEMFile+1), 0o644)
		}, time.Time{}, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, dir := newTestCA(t, Options{})
			tt.setup(t, dir)
			var o Options
			if !tt.now.IsZero() {
				o.Now = fixedClock(tt.now)
			}
			ca, created, err := LoadOrCreateCAOptions(dir, o)
			if err == nil {
				t.Fatalf("loaded (created=%v), want error containing %q", created, tt.wantErr)
			}
			if ca != nil {
				t.Errorf("got a CA with the error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "mitm: ") {
				t.Errorf("error %q, want prefix \"mitm: \" and %q", err, tt.wantErr)
			}
			// Nothing was replaced: a broken CA is reported, not overwritten.
			if _, statErr := os.Stat(filepath.Join(dir, CertFile)); tt.name != "key only" && statErr != nil {
				t.Errorf("cert file gone: %v", statErr)
			}
		})
	}
}

func TestLoadForeignCA(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, cert, key string }{
		{"openssl RSA PKCS1", "openssl-rsa-ca.pem", "openssl-rsa-ca-key.pem"},
		{"openssl EC SEC1", "openssl-ec-ca.pem", "openssl-ec-ca-key.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyFixture(t, dir, tt.cert, CertFile)
			copyFixture(t, dir, tt.key, KeyFile)
			ca, created, err := LoadOrCreateCAOptions(dir, Options{Now: fixedClock(fixtureNow)})
			if err != nil || created {
				t.Fatalf("load: created=%v err=%v", created, err)
			}
			leaf, err := ca.Certificate("site.test")
			if err != nil {
				t.Fatal(err)
			}
			_, err = leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "site.test", Roots: ca.Pool(), CurrentTime: fixtureNow})
			if err != nil {
				t.Errorf("leaf of a foreign CA does not verify: %v", err)
			}
		})
	}
}
