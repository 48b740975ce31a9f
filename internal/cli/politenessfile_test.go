package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/config"
)

// TestPolitenessOneReading: `courtesy proxy` and `courtesy crawl` read the
// same `politeness:` section into the same gate configuration.
func TestPolitenessOneReading(t *testing.T) {
	for _, y := range []string{
		"politeness:\n  default-domain:\n    domain: default\n    delay: 0\n",
		"politeness:\n  default-delay: -1ns\n",
		"politeness:\n  default-delay: 2s\n  domains:\n    - domain: A.test\n      delay: 1500\n      override: true\n  default-domain:\n    domain: default\n    delay: 300\n",
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		var pf proxyFile
		var cf crawlFile
		if err := config.Load(path, &pf); err != nil {
			t.Fatal(err)
		}
		if err := config.Load(path, &cf); err != nil {
			t.Fatal(err)
		}
		p, c := gateConfig(pf), cf.Politeness.GateConfig()
		if !reflect.DeepEqual(p, c) {
			t.Errorf("%q:\nproxy reads %+v\ncrawl reads %+v", y, p, c)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
}
