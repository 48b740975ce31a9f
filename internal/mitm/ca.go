package mitm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// File names of the CA inside the directory given to LoadOrCreateCA.
const (
	CertFile = "mitm-ca.pem"     // PEM "CERTIFICATE", mode 0644: users hand it to their clients
	KeyFile  = "mitm-ca-key.pem" // PEM "PRIVATE KEY" (PKCS #8), mode 0600: a secret
)

// Defaults of Options.
const (
	DefaultCacheSize    = 10_000
	DefaultLeafValidity = 30 * 24 * time.Hour
	caValidityYears     = 10
	backdate            = time.Hour // tolerates client clocks behind ours
	maxPEMFile          = 64 << 10  // a CA file larger than this is not a CA file
	maxCACommonName     = 64        // RFC 5280 ub-common-name
)

// Options tune a CA. The zero value is the documented default.
type Options struct {
	// CacheSize bounds the number of leaf certificates kept in memory
	// (least recently used evicted first). Default DefaultCacheSize
	// (10,000); zero means the default.
	CacheSize int
	// LeafValidity is how long a minted leaf certificate is valid, counted
	// from its minting; it is also backdated by one hour and never outlives
	// the CA. A cached leaf is re-minted when less than a day (or half its
	// validity, if shorter) remains. Default DefaultLeafValidity (30 days);
	// zero means the default.
	LeafValidity time.Duration
	// Hostname names the machine in a new CA's common name. Default
	// os.Hostname(); empty means the default.
	Hostname string
	// Now is the clock, for tests. Default time.Now; nil means the default.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.LeafValidity <= 0 {
		o.LeafValidity = DefaultLeafValidity
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Hostname == "" {
		o.Hostname, _ = os.Hostname()
		if o.Hostname == "" {
			o.Hostname = "localhost"
		}
	}
	return o
}

// CA is a local certificate authority that mints leaf certificates for
// intercepted hosts. It is safe for concurrent use.
type CA struct {
	opts     Options
	cert     *x509.Certificate
	certPEM  []byte
	key      crypto.Signer
	certPath string

	// leafKey is the one key pair of every leaf this CA mints in this
	// process: generating a P-256 key costs about as much as signing the
	// certificate, and a key per host buys nothing here since all leaves
	// are equally trusted by the same clients and live in the same process.
	// It is never written to disk.
	leafKey *ecdsa.PrivateKey

	group  singleflight.Group
	minted atomic.Uint64
	mu     struct {
		sync.Mutex
		cache *lru // host key → *tls.Certificate; guarded by mu
	}
}

// LoadOrCreateCA loads the CA in dir (CertFile and KeyFile) or, when
// neither file exists, creates one there with the defaults of Options.
// created reports a new CA, so the caller can tell the user once where it
// is and how to trust it. See LoadOrCreateCAOptions.
func LoadOrCreateCA(dir string) (ca *CA, created bool, err error) {
	return LoadOrCreateCAOptions(dir, Options{})
}

// LoadOrCreateCAOptions is LoadOrCreateCA with options.
//
// Loading checks that the key matches the certificate, that the
// certificate is a CA allowed to sign certificates, and that it is valid
// now. When only one of the two files exists it fails rather than create a
// new CA over it: replacing a CA the user's clients trust would break them
// silently. A new CA is an ECDSA P-256 key with a ten-year self-signed
// certificate (see doc.go for its profile); both files are written
// atomically (temporary file, fsync, rename), the key with mode 0600, and
// dir is created with mode 0700 if missing.
func LoadOrCreateCAOptions(dir string, o Options) (ca *CA, created bool, err error) {
	o = o.withDefaults()
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	certOK, err := exists(certPath)
	if err != nil {
		return nil, false, err
	}
	keyOK, err := exists(keyPath)
	if err != nil {
		return nil, false, err
	}
	switch {
	case certOK && keyOK:
		certPEM, err := readBounded(certPath)
		if err != nil {
			return nil, false, err
		}
		keyPEM, err := readBounded(keyPath)
		if err != nil {
			return nil, false, err
		}
		ca, err := parseCA(certPEM, keyPEM, o)
		if err != nil {
			return nil, false, fmt.Errorf("%w (files %s and %s; remove both to create a new CA)", err, certPath, keyPath)
		}
		ca.certPath = certPath
		return ca, false, nil
	case certOK != keyOK:
		present, missing := certPath, keyPath
		if keyOK {
			present, missing = keyPath, certPath
		}
		return nil, false, fmt.Errorf("mitm: %s exists but %s does not; restore it, or remove %s to create a new CA", present, missing, present)
	}
	certPEM, keyPEM, err := generateCA(o)
	if err != nil {
		return nil, false, err
	}
	ca, err = parseCA(certPEM, keyPEM, o)
	if err != nil {
		return nil, false, fmt.Errorf("mitm: new CA does not load: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("mitm: create CA directory: %w", err)
	}
	// The key goes first: a crash between the two renames leaves a key
	// without a certificate, which the next start reports instead of
	// silently replacing.
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return nil, false, err
	}
	if err := writeFileAtomic(certPath, certPEM, 0o644); err != nil {
		return nil, false, err
	}
	ca.certPath = certPath
	return ca, true, nil
}

// Root returns the CA certificate.
func (ca *CA) Root() *x509.Certificate { return ca.cert }

// CertPEM returns the CA certificate in PEM form, as clients need it.
func (ca *CA) CertPEM() []byte { return append([]byte(nil), ca.certPEM...) }

// CertPath returns the path of the CA certificate file; empty for a CA not
// loaded from a directory.
func (ca *CA) CertPath() string { return ca.certPath }

// Pool returns a certificate pool holding only this CA, for Go clients
// (tests, tools) that should trust it.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Minted returns how many leaf certificates this CA has signed since it
// was loaded (cache misses), for metrics.
func (ca *CA) Minted() uint64 { return ca.minted.Load() }

// parseCA checks and loads a CA from its PEM files. It is the parser the
// fuzz target exercises: any input gives a CA or an error.
func parseCA(certPEM, keyPEM []byte, o Options) (*CA, error) {
	o = o.withDefaults()
	certDER, err := pemBlock(certPEM, "CERTIFICATE")
	if err != nil {
		return nil, fmt.Errorf("mitm: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("mitm: CA certificate: %w", err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("mitm: CA key: %w", err)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	pub, ok := key.Public().(equaler)
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("mitm: CA key does not match the CA certificate")
	}
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return nil, errors.New("mitm: CA certificate is not a CA (basic constraints)")
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, errors.New("mitm: CA certificate may not sign certificates (key usage)")
	}
	now := o.Now()
	if now.Before(cert.NotBefore) {
		return nil, fmt.Errorf("mitm: CA certificate not valid before %s", cert.NotBefore.UTC().Format(time.RFC3339))
	}
	if !now.Before(cert.NotAfter) {
		return nil, fmt.Errorf("mitm: CA certificate expired at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mitm: leaf key: %w", err)
	}
	ca := &CA{
		opts:    o,
		cert:    cert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}),
		key:     key,
		leafKey: leafKey,
	}
	ca.mu.cache = newLRU(o.CacheSize)
	return ca, nil
}

// pemBlock returns the bytes of the first PEM block of type typ in data,
// skipping blocks of other types (an "EC PARAMETERS" block before a key,
// for instance).
func pemBlock(data []byte, types ...string) ([]byte, error) {
	for range 16 { // a CA file holds one or two blocks; bound the scan
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		for _, t := range types {
			if b.Type == t {
				return b.Bytes, nil
			}
		}
	}
	return nil, fmt.Errorf("no PEM block of type %q", types)
}

// parseKey accepts the usual PEM key encodings: PKCS #8 (what this package
// writes), SEC 1 "EC PRIVATE KEY" and PKCS #1 "RSA PRIVATE KEY", so a CA
// made with openssl can be dropped in.
func parseKey(keyPEM []byte) (crypto.Signer, error) {
	var b *pem.Block
	rest := keyPEM
	for range 16 {
		b, rest = pem.Decode(rest)
		if b == nil || b.Type == "PRIVATE KEY" || b.Type == "EC PRIVATE KEY" || b.Type == "RSA PRIVATE KEY" {
			break
		}
	}
	if b == nil {
		return nil, errors.New(`no PEM block of type "PRIVATE KEY", "EC PRIVATE KEY" or "RSA PRIVATE KEY"`)
	}
	var key any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("unsupported PEM block %q", b.Type)
	}
	if err != nil {
		return nil, err
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported key type %T", key)
}

// generateCA makes a new CA key and self-signed certificate (profile in
// doc.go) and returns both in PEM form.
func generateCA(o Options) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("mitm: generate CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	cn := "Courtesy proxy local CA " + o.Hostname
	if len(cn) > maxCACommonName {
		cn = cn[:maxCACommonName]
	}
	now := o.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"Courtesy proxy"}},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.AddDate(caValidityYears, 0, 0),
		// A root for server certificates only (RFC 5280 §4.2.1.9): it may
		// sign leaves but no intermediate CA (path length 0).
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign,
		// Verifiers that chain extended key usage (Go, OpenSSL, Windows)
		// then refuse leaves of this CA for anything but TLS servers:
		// no code signing, no e-mail, no client authentication.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("mitm: sign CA certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("mitm: encode CA key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// randomSerial returns a positive 128-bit serial number (RFC 5280 §4.1.2.2
// allows up to 20 octets; CAs use at least 64 random bits).
func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("mitm: serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("mitm: %w", err)
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mitm: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err != nil {
		return nil, fmt.Errorf("mitm: read %s: %w", path, err)
	}
	if len(b) > maxPEMFile {
		return nil, fmt.Errorf("mitm: %s is larger than %d bytes", path, maxPEMFile)
	}
	return b, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path, so a reader sees the old file or
// the whole new one, never a part.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("mitm: write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename is durable once the directory is
		_ = d.Close()
	}
	return nil
}
