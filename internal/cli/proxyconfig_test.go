package cli

// The proxy's configuration: the file, reloads, and the keys that take effect only at start.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/proxy"
)

// TestConfigReload: a changed config file applies without a restart.
func TestConfigReload(t *testing.T) {
	w := startWeb(t)
	cfg := filepath.Join(t.TempDir(), "courtesy.yaml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("politeness:\n  domains:\n    - domain: site-0003.test\n      delay: 1000\n  default-domain:\n    domain: default\n    delay: 100\n")
	p := startProxy(t, w, "--config", cfg)
	delays := func() string {
		_, _, body := getStatus(t, http.DefaultClient, "http://"+p.addr+"/delays", "X-Courtesy-Token", p.token(t))
		return body
	}
	if d := delays(); !strings.Contains(d, `"domain":"site-0003.test","delay":1000`) || !strings.Contains(d, `"domain":"default","delay":100`) {
		t.Fatalf("initial delays %s", d)
	}
	write("politeness:\n  domains:\n    - domain: site-0003.test\n      delay: 4000\n  default-domain:\n    domain: default\n    delay: 250\nproxy:\n  mode: reject\n")
	deadline := time.Now().Add(10 * time.Second)
	for d := delays(); !strings.Contains(d, `"domain":"site-0003.test","delay":4000`) || !strings.Contains(d, `"domain":"default","delay":250`); d = delays() {
		if time.Now().After(deadline) {
			t.Fatalf("reload not applied: %s\n%s", delays(), p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Reject mode now: a second quick request to one host gets 429.
	c := p.client()
	getStatus(t, c, "http://site-0004.test/")
	p.waitOpen(t, "site-0004.test") // the robots.txt fetch and its delay are over
	getStatus(t, c, "http://site-0004.test/")
	if code, _, _ := getStatus(t, c, "http://site-0004.test/page-1.html"); code != http.StatusTooManyRequests {
		t.Errorf("mode not reloaded: %d", code)
	}
	write("politeness: [broken")
	if !p.waitLog("config reload failed") {
		t.Errorf("a broken file was not reported: %s", p.stderr.String())
	}
}

// TestReloadStartOnlyKeys: a reload that changes keys applied only at
// start (cache.override, upstream-ca-file) logs that they need a restart,
// and GET /admin/config, asked with curl, still shows the running values.
func TestReloadStartOnlyKeys(t *testing.T) {
	w := startWeb(t)
	cfg := filepath.Join(t.TempDir(), "courtesy.yaml")
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cache:\n  override: true\n")
	p := startProxy(t, w, "--config", cfg)
	config := func() map[string]any {
		out, err := exec.Command("curl", "-s", "-H", "X-Courtesy-Token: "+p.token(t), "http://"+p.addr+"/admin/config").Output()
		if err != nil {
			t.Fatalf("curl /admin/config: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("/admin/config: %v: %s", err, out)
		}
		return m
	}
	before := fmt.Sprint(config()["cache"])
	write("cache:\n  override: false\nupstream-ca-file: /nonexistent/ca.pem\n")
	if !p.waitLog("restart to apply them") {
		t.Fatalf("no restart notice in the log: %s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "upstream-ca-file") {
		t.Errorf("the notice does not name upstream-ca-file: %s", p.stderr.String())
	}
	after := config()
	if got := fmt.Sprint(after["cache"]); got != before {
		t.Errorf("/admin/config shows cache %s after the reload, want the running %s", got, before)
	}
	if ca := fmt.Sprint(after["upstream-ca-file"]); strings.Contains(ca, "nonexistent") {
		t.Errorf("/admin/config shows upstream-ca-file %q, which is not applied", ca)
	}
}

// TestPopularityReload: a popularity list added to the config file while
// the proxy runs scales the default delay of a listed domain (seed 000 work
// package 8), and GET /admin/delays/{key} says why.
func TestPopularityReload(t *testing.T) {
	w := startWeb(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "courtesy.yaml")
	list := filepath.Join(dir, "top.csv")
	if err := os.WriteFile(list, []byte("1,site-0005.test\n2,example.org\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("politeness:\n  default-domain:\n    domain: default\n    delay: 2000\n")
	p := startProxy(t, w, "--config", cfg)
	tok := p.token(t)
	get := func() map[string]any {
		req, _ := http.NewRequest("GET", "http://"+p.addr+"/admin/delays/site-0005.test", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("admin delay: %d %v", resp.StatusCode, err)
		}
		return m
	}
	if m := get(); m["effective"] != float64(2000) || m["popularity"] != nil {
		t.Fatalf("before the list: %v", m)
	}
	write("politeness:\n  default-domain:\n    domain: default\n    delay: 2000\n  popularity:\n    list: " + list +
		"\n    tiers:\n      - {top: 10, factor: 0.25}\n")
	deadline := time.Now().Add(10 * time.Second)
	m := get()
	for m["effective"] != float64(500) {
		if time.Now().After(deadline) {
			t.Fatalf("popularity not applied on reload: %v\n%s", m, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
		m = get()
	}
	pop, _ := m["popularity"].(map[string]any)
	if pop["rank"] != float64(1) || pop["factor"] != 0.25 || m["default"] != float64(2000) {
		t.Errorf("breakdown %v", m)
	}
}

// TestProxyConfigFile: the full file of docs/configuration.md loads, and
// Listing 9's millisecond delays become the gate's delays.
func TestProxyConfigFile(t *testing.T) {
	var fl proxyFlags
	fc, err := loadProxyFile("testdata/proxy-full.yaml", &fl, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	gc := gateConfig(fc)
	if gc.DefaultDelay != 1500*time.Millisecond || len(gc.Delays) != 2 || gc.Delays[1].Key != "orf.at" || gc.Delays[1].Delay != 5*time.Second {
		t.Errorf("gate config %+v", gc)
	}
	if fc.Proxy.MaxWait != 30*time.Second || fc.Listen != "127.0.0.1:8080" || !fc.Cache.Override {
		t.Errorf("file config %+v", fc)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("proxy:\n  mode: sideways\n"), 0o644)
	if _, err := loadProxyFile(bad, &fl, map[string]bool{}); err == nil {
		t.Error("bad mode accepted")
	}
	os.WriteFile(bad, []byte("proxy:\n  maxwait: 3s\n"), 0o644)
	if _, err := loadProxyFile(bad, &fl, map[string]bool{}); err == nil {
		t.Error("unknown key accepted")
	}
}

// TestKeepStartOnly: a reload keeps the values in force of keys read only
// at start, and names them, so that /admin/config shows what runs and the
// log says what needs a restart.
func TestKeepStartOnly(t *testing.T) {
	old := defaultProxyFile()
	old.UpstreamCAFile = "/etc/a.pem"
	old.Proxy.MaxHeaderBytes = 1 << 16
	nf := old
	nf.UpstreamCAFile = "/etc/b.pem"
	nf.Cache.Override = false
	nf.Proxy.MaxHeaderBytes = 1 << 10
	nf.Proxy.Mode = proxy.ModeReject // applies live
	got, pending := keepStartOnly(old, nf)
	if got.UpstreamCAFile != "/etc/a.pem" || !got.Cache.Override || got.Proxy.MaxHeaderBytes != 1<<16 {
		t.Errorf("start-only values not kept: %+v", got)
	}
	if got.Proxy.Mode != proxy.ModeReject {
		t.Errorf("live key not applied: mode %q", got.Proxy.Mode)
	}
	if want := []string{"upstream-ca-file", "cache", "proxy.max-header-bytes"}; !reflect.DeepEqual(pending, want) {
		t.Errorf("pending %q, want %q", pending, want)
	}
	if _, pending := keepStartOnly(old, old); len(pending) != 0 {
		t.Errorf("unchanged file: pending %q", pending)
	}
}
