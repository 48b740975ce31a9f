package mitm

import (
	"strconv"
	"testing"
)

// BenchmarkCertificate: the cost of a leaf on a cache miss (one ECDSA
// P-256 signature) and on a hit.
func BenchmarkCertificate(b *testing.B) {
	dir := b.TempDir()
	ca, _, err := LoadOrCreateCA(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("mint", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := ca.Certificate("h" + strconv.Itoa(i) + ".test"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		if _, err := ca.Certificate("hot.test"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := ca.Certificate("hot.test"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
