package crawl

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// TestCrawlAddressPolicy: a page links to the cloud metadata address, a
// link-local IPv6 host, 0.0.0.0 and a loopback address; with --scope all
// the crawler follows what its address policy allows and logs the rest
// as blocked (-5001), once each, without a connection attempt or a retry.
// Hosts a --resolve rule maps are never refused. (No address outside
// loopback is dialled: the refused ones are refused before connecting.)
func TestCrawlAddressPolicy(t *testing.T) {
	w := &recordingWeb{pages: map[string]string{}}
	ln := listenHandler(t, w)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	res, err := resolve.New([]string{"*.test=" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	refusedAlways := []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://[fe80::1]/x",
		"http://0.0.0.0:" + port + "/zero",
	}
	loopback := "http://127.0.0.1:" + port + "/direct"
	var links strings.Builder
	for _, u := range append(slices.Clone(refusedAlways), loopback) {
		links.WriteString(`<a href="` + u + `">x</a> `)
	}
	w.pages["ap.test /robots.txt"] = "User-agent: *\nAllow: /\n"
	w.pages["ap.test /"] = "<html><body>" + links.String() + "</body></html>"
	w.pages["127.0.0.1 /robots.txt"] = "User-agent: *\nAllow: /\n"
	w.pages["127.0.0.1 /direct"] = "direct"

	for _, c := range []struct {
		policy       string
		loopbackSent bool
	}{
		{"", true}, // the default: no-link-local
		{"no-link-local", true},
		{"public-only", false},
	} {
		t.Run(c.policy, func(t *testing.T) {
			w.mu.Lock()
			w.log = nil
			w.mu.Unlock()
			data := t.TempDir()
			cfg := Config{DataDir: data, Delay: 5 * time.Millisecond, MaxDuration: time.Minute, Workers: 4,
				UserAgent: "courtesy-test/1.0", AddressPolicy: c.policy}
			cfg.Scope.Mode = ScopeAll
			start := time.Now()
			runCrawl(t, cfg, res, "http://ap.test/")
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("crawl took %v: refused hosts were retried", d)
			}
			reqs := w.requests()
			if !slices.Contains(reqs, "ap.test /") {
				t.Errorf("the seed (a --resolve host) was not fetched: %q", reqs)
			}
			if got := slices.Contains(reqs, "127.0.0.1 /direct"); got != c.loopbackSent {
				t.Errorf("loopback page requested: %v, want %v (requests %q)", got, c.loopbackSent, reqs)
			}
			raw, err := os.ReadFile(filepath.Join(data, "crawl.log"))
			if err != nil {
				t.Fatal(err)
			}
			status := map[string][]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				f := strings.Fields(line)
				if len(f) > 3 {
					status[f[3]] = append(status[f[3]], f[1])
				}
			}
			blocked := strconv.Itoa(crawllog.StatusBlockedByUser)
			want := slices.Clone(refusedAlways)
			if !c.loopbackSent {
				want = append(want, loopback)
			}
			for _, u := range want {
				if got := status[u]; !slices.Equal(got, []string{blocked}) {
					t.Errorf("%s: crawl.log statuses %q, want one %s\n%s", u, got, blocked, raw)
				}
			}
			if c.loopbackSent && !slices.Equal(status[loopback], []string{"200"}) {
				t.Errorf("%s: crawl.log statuses %q, want one 200", loopback, status[loopback])
			}
		})
	}
}

// TestCrawlAddressPolicyPageRefused: a host whose robots.txt the crawl
// already holds (from an earlier run under another policy) is refused at
// the page fetch itself: the first URL tried is logged as blocked and the
// host retired (its other URLs stay in the frontier, as any retired
// host's do), with nothing sent.
func TestCrawlAddressPolicyPageRefused(t *testing.T) {
	w := &recordingWeb{pages: map[string]string{
		"127.0.0.1 /robots.txt": "User-agent: *\nAllow: /\n",
		"127.0.0.1 /":           `<a href="/a">a</a> <a href="/b">b</a>`,
		"127.0.0.1 /a":          "a",
		"127.0.0.1 /b":          "b",
	}}
	ln := listenHandler(t, w)
	seed := "http://" + ln.Addr().String() + "/"
	data := t.TempDir()
	run := func(policy string, maxPages int64) {
		t.Helper()
		cfg := Config{DataDir: data, Delay: 5 * time.Millisecond, MaxDuration: time.Minute, MaxPages: maxPages, Workers: 1,
			UserAgent: "courtesy-test/1.0", AddressPolicy: policy}
		runCrawl(t, cfg, nil, seed)
	}
	run("no-link-local", 1) // robots.txt and the seed; /a and /b stay queued
	sent := len(w.requests())
	run("public-only", 0)
	if reqs := w.requests(); len(reqs) != sent {
		t.Errorf("requests after the policy changed: %q", reqs[sent:])
	}
	raw, err := os.ReadFile(filepath.Join(data, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	blocked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[1] == strconv.Itoa(crawllog.StatusBlockedByUser) {
			blocked++
		}
	}
	if blocked != 1 {
		t.Errorf("%d lines blocked, want 1:\n%s", blocked, raw)
	}
}
