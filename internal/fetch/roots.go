package fetch

import (
	"crypto/x509"
	"fmt"
	"os"
)

// Roots returns the system's root certificates plus those of the PEM file
// (an intranet's or a lab's own authority), for a tls.Config's RootCAs.
func Roots(pemFile string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(pemFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", pemFile)
	}
	return pool, nil
}
