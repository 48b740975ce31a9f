package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type domain struct {
	Domain string `yaml:"domain"`
	Delay  int    `yaml:"delay"`
}

type sample struct {
	Politeness struct {
		Domains       []domain      `yaml:"domains"`
		DefaultDomain domain        `yaml:"default-domain"`
		MaxDelay      time.Duration `yaml:"max-delay"`
	} `yaml:"politeness"`
	Listen string `yaml:"listen"`
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "courtesy.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// the polite-proxy thesis' configuration listing, verbatim, loads into the struct.
func TestLoadListing9(t *testing.T) {
	p := write(t, `politeness:
  domains:
    - domain: derstandard.at
      delay: 1000
    - domain: orf.at
      delay: 5000
  default-domain:
    domain: default
    delay: 1500
`)
	var c sample
	c.Listen = "127.0.0.1:8080"
	c.Politeness.MaxDelay = 30 * time.Second
	if err := load(p, nil, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Politeness.Domains) != 2 || c.Politeness.Domains[1] != (domain{"orf.at", 5000}) {
		t.Errorf("domains = %+v", c.Politeness.Domains)
	}
	if c.Politeness.DefaultDomain.Delay != 1500 {
		t.Errorf("default delay = %d", c.Politeness.DefaultDomain.Delay)
	}
	if c.Listen != "127.0.0.1:8080" || c.Politeness.MaxDelay != 30*time.Second {
		t.Errorf("defaults lost: %+v", c)
	}
}

func TestLoadEnvOverridesFile(t *testing.T) {
	p := write(t, "listen: 127.0.0.1:1\npoliteness:\n  max-delay: 10s\n")
	var c sample
	env := []string{"COURTESY_LISTEN=127.0.0.1:2", "COURTESY_POLITENESS__MAX_DELAY=45s", "COURTESY_CONFIG=ignored", "COURTESY_ADMIN_TOKEN=not-a-key", "OTHER=1"}
	if err := load(p, env, &c); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:2" || c.Politeness.MaxDelay != 45*time.Second {
		t.Errorf("env did not override: %+v", c)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unknown key", "lisen: x\n", "lisen"},
		{"bad duration", "politeness:\n  max-delay: soon\n", "max-delay"},
		{"bad yaml", "politeness: [\n", "courtesy.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c sample
			err := load(write(t, tc.body), nil, &c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
	var c sample
	if err := load(filepath.Join(t.TempDir(), "missing.yaml"), nil, &c); err == nil {
		t.Error("missing file: no error")
	}
}

// TestWatch: a write made once NewWatcher returned is reported once
// (two writes within 100 ms are one call), and Run ends with its context.
func TestWatch(t *testing.T) {
	p := write(t, "listen: a\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := NewWatcher(p)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 10)
	done := make(chan error, 1)
	for _, v := range []string{"listen: b\n", "listen: c\n"} {
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	go func() { done <- w.Run(ctx, func() { changed <- struct{}{} }) }()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no change seen within 10s")
	}
	select {
	case <-changed:
		t.Error("two writes within 100 ms reported twice")
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
