package politeness_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// TestScalingYAML loads the documented keys (docs/configuration.md)
// through internal/config, as the proxy and the crawler do.
func TestScalingYAML(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	yaml := `
popularity:
  list: top.csv
  tiers: [{top: 1000, factor: 0.25}, {top: 100000, factor: 0.5}]
  max-entries: 5000
  floor: 50ms
bandwidth:
  classes:
    - {name: slow, min-bytes-per-second: 0, factor: 2}
    - {name: fast, min-bytes-per-second: 1000000, factor: 0.5}
  min-bytes: 1024
  min-samples: 2
  smoothing: 0.5
  max-age: 30m
  max-hosts: 10
  floor: 20ms
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var c politeness.Config
	if err := config.Load(file, &c); err != nil {
		t.Fatal(err)
	}
	p, b := c.Popularity, c.Bandwidth
	if p.List != "top.csv" || len(p.Tiers) != 2 || p.Tiers[1] != (politeness.PopularityTier{Top: 100000, Factor: 0.5}) ||
		p.MaxEntries != 5000 || p.Floor != 50*time.Millisecond {
		t.Fatalf("popularity = %+v", p)
	}
	if len(b.Classes) != 2 || b.Classes[1] != (politeness.BandwidthClass{Name: "fast", MinBytesPerSecond: 1000000, Factor: 0.5}) ||
		b.MinBytes != 1024 || b.MinSamples != 2 || b.Smoothing != 0.5 || b.MaxAge != 30*time.Minute || b.MaxHosts != 10 || b.Floor != 20*time.Millisecond {
		t.Fatalf("bandwidth = %+v", b)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
