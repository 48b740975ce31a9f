package politeness_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// TestFileConfig: the `politeness:` section has one reading, whoever
// loads it: default-domain's delay (ms) is the default delay and 0 means
// none; default-delay -1 means none; domains are manual delays.
func TestFileConfig(t *testing.T) {
	cases := []struct {
		name        string
		yaml        string
		wantDefault time.Duration // Config.DefaultDelay after GateConfig
		effective   time.Duration // the gate's default delay in force
		delays      []politeness.DelayRule
	}{
		{name: "nothing", yaml: "politeness: {}\n", wantDefault: 0, effective: time.Second},
		{name: "default-domain delay 0 is no delay", yaml: "politeness:\n  default-domain:\n    domain: default\n    delay: 0\n", wantDefault: -1, effective: 0},
		{name: "default-domain delay in ms", yaml: "politeness:\n  default-domain:\n    domain: default\n    delay: 250\n", wantDefault: 250 * time.Millisecond, effective: 250 * time.Millisecond},
		{name: "default-delay -1 is no delay", yaml: "politeness:\n  default-delay: -1ns\n", wantDefault: -1, effective: 0},
		{name: "default-domain replaces default-delay", yaml: "politeness:\n  default-delay: 3s\n  default-domain:\n    domain: default\n    delay: 500\n", wantDefault: 500 * time.Millisecond, effective: 500 * time.Millisecond},
		{name: "domains", yaml: "politeness:\n  domains:\n    - domain: A.example\n      delay: 4000\n      override: true\n", wantDefault: 0, effective: time.Second,
			delays: []politeness.DelayRule{{Key: "a.example", Delay: 4 * time.Second, Override: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f struct {
				Politeness politeness.FileConfig `yaml:"politeness"`
			}
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := config.Load(path, &f); err != nil {
				t.Fatal(err)
			}
			c := f.Politeness.GateConfig()
			if c.DefaultDelay != tc.wantDefault {
				t.Errorf("DefaultDelay %v, want %v", c.DefaultDelay, tc.wantDefault)
			}
			if len(c.Delays) != len(tc.delays) {
				t.Fatalf("delays %+v, want %+v", c.Delays, tc.delays)
			}
			for i := range c.Delays {
				if c.Delays[i] != tc.delays[i] {
					t.Errorf("delay %d: %+v, want %+v", i, c.Delays[i], tc.delays[i])
				}
			}
			g, err := politeness.New(c, politeness.Backend{})
			if err != nil {
				t.Fatalf("the gate refuses the reading: %v", err)
			}
			if got := g.Config().DefaultDelay; got != tc.effective {
				t.Errorf("default delay in force %v, want %v", got, tc.effective)
			}
		})
	}
}
