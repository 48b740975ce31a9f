package crawl

import (
	"crypto/tls"
	"fmt"

	"github.com/courtesy-crawler/courtesy/internal/fetch"
)

// TLS says how the crawler checks the certificates of https origins.
type TLS struct {
	// CAFile names a PEM file of certificates trusted besides the system
	// roots: an intranet's, a lab's or a test web's own authority.
	CAFile string `yaml:"ca-file"`
	// Insecure accepts any certificate, as wget --no-check-certificate,
	// curl -k and Heritrix's default trust level do: an archive may want
	// a site whose certificate expired or is self-signed. Whoever answers
	// for a host's address is then crawled as that host. Default false.
	Insecure bool `yaml:"insecure"`
}

// config returns the tls.Config of origins' connections: the system roots
// and verification on unless t says otherwise.
func (t TLS) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.Insecure}
	if t.CAFile != "" {
		pool, err := fetch.Roots(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("crawl: tls.ca-file: %w", err)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
