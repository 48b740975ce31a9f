package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

func TestTestwebUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
	}{
		{"help", []string{"testweb", "-h"}, 0, "courtesy testweb report"},
		{"hosts help", []string{"testweb", "hosts", "-h"}, 0, "Usage: courtesy testweb hosts"},
		{"report help", []string{"testweb", "report", "-h"}, 0, "Usage: courtesy testweb report"},
		{"sites help", []string{"testweb", "sites", "-h"}, 0, "Usage: courtesy testweb sites"},
		{"bad flag", []string{"testweb", "--nope"}, 2, ""},
		{"extra argument", []string{"testweb", "extra"}, 2, ""},
		{"negative sites", []string{"testweb", "hosts", "--sites", "-1"}, 2, ""},
		{"non-loopback listen", []string{"testweb", "--listen", "0.0.0.0:0"}, 2, ""},
		{"bad listen", []string{"testweb", "--listen", "nowhere"}, 2, ""},
		{"listen-hosts without port", []string{"testweb", "--listen", "127.0.0.1:0", "--listen-hosts"}, 2, ""},
		{"bad latency", []string{"testweb", "--listen", "127.0.0.1:0", "--latency", "300ms-100ms"}, 2, ""},
		{"latency too long", []string{"testweb", "--listen", "127.0.0.1:0", "--latency", "1s-2m"}, 2, ""},
		{"report without log", []string{"testweb", "report"}, 2, ""},
		{"report two logs", []string{"testweb", "report", "a", "b"}, 2, ""},
		{"report missing file", []string{"testweb", "report", filepath.Join(t.TempDir(), "none.jsonl")}, 1, ""},
		{"report negative min-delay", []string{"testweb", "report", "--min-delay", "-1s", "x"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if !strings.Contains(out, tc.inStdout) {
				t.Errorf("stdout %q lacks %q", out, tc.inStdout)
			}
		})
	}
}

func TestTestwebHosts(t *testing.T) {
	code, out, errOut := run(t, "", "testweb", "hosts", "--plain", "--sites", "10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "# courtesy testweb: 10 sites, seed 0\n" +
		"127.1.0.1\tsite-0000.test site-0001.test site-0002.test site-0003.test site-0004.test site-0005.test site-0006.test site-0007.test\n" +
		"127.1.0.2\tsite-0008.test site-0009.test\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	code, out, _ = run(t, "", "testweb", "hosts")
	if code != 0 || !strings.Contains(out, "www.dup.test") || !strings.Contains(out, "*.wild.test") {
		t.Errorf("default hosts: exit %d\n%s", code, out)
	}
}

func TestTestwebSites(t *testing.T) {
	code, out, _ := run(t, "", "testweb", "sites", "--json", "--sites", "3")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3+38 {
		t.Errorf("%d sites, want 41", len(lines))
	}
	found, mirrored := false, false
	for _, l := range lines {
		var s struct {
			Host         string   `json:"host"`
			RobotsStatus int      `json:"robots_status"`
			DelaySeconds float64  `json:"delay_seconds"`
			NonCanonical []string `json:"non_canonical"`
			Mirrors      []string `json:"mirrors"`
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		switch s.Host {
		case "crawl-delay.test":
			found = s.DelaySeconds == 1 && s.RobotsStatus == 200
		case "mirrored.test":
			mirrored = len(s.Mirrors) == 2 && len(s.NonCanonical) > 0
		}
	}
	if !found {
		t.Error("crawl-delay.test missing or wrong")
	}
	if !mirrored {
		t.Error("mirrored.test without its two mirrors and its non-canonical name in --json")
	}
	code, out, _ = run(t, "", "testweb", "sites")
	if code != 0 || !strings.Contains(out, "trap=calendar") {
		t.Errorf("text sites: exit %d\n%s", code, out)
	}
}

func TestTestwebReport(t *testing.T) {
	logPath := filepath.Join("..", "testweb", "report", "testdata", "crawl.jsonl")
	code, out, errOut := run(t, "", "testweb", "report", "--sites", "2", "--min-delay", "500ms", logPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"requests", "28", "gaps shorter than robots delay", "crawl-delay.test"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = run(t, string(log), "testweb", "report", "--sites", "2", "--json", "--agent", "BadBot", "-")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Requests   int `json:"requests"`
		Disallowed int `json:"disallowed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 28 || rep.Disallowed != 2 {
		t.Errorf("JSON report: %+v", rep)
	}
	code, _, errOut = run(t, "not a log\n", "testweb", "report", "-")
	if code != 1 || !strings.Contains(errOut, "line 1") {
		t.Errorf("bad log: exit %d, stderr %q", code, errOut)
	}
}

// lockedBuffer lets the test read what the server goroutine prints.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// courtesy testweb serves, logs, prints its address, and stops when its
// context ends; the log then gives a report.
func TestTestwebServe(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, env, []string{"testweb", "--listen", "127.0.0.1:0", "--sites", "3", "--log", logPath})
	}()
	addrRE := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)`)
	var addr string
	for i := 0; i < 500 && addr == ""; i++ {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exited %d early: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if addr == "" {
		t.Fatalf("no address printed: %q", out.String())
	}
	if !strings.Contains(out.String(), "--resolve '*.test="+addr+"'") {
		t.Errorf("no --resolve hint: %q", out.String())
	}
	proxy, _ := url.Parse("http://" + addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 10 * time.Second}
	for _, u := range []string{"http://site-0001.test/robots.txt", "http://site-0001.test/"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", u, resp.StatusCode)
		}
	}
	client.CloseIdleConnections()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("did not stop")
	}
	if !strings.Contains(out.String(), "2 requests logged") {
		t.Errorf("stdout %q", out.String())
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	if err := testweb.ReadLog(f, func(e testweb.Entry) error {
		n++
		if e.Host != "site-0001.test" || !e.Proxy || e.Status != 200 {
			t.Errorf("entry %+v", e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d log entries, want 2", n)
	}
}

// --profile realistic changes the generic sites for every subcommand;
// a bad profile is a usage error.
func TestTestwebProfile(t *testing.T) {
	code, out, errOut := run(t, "", "testweb", "sites", "--plain", "--sites", "2", "--pages-per-site", "40", "--profile", "realistic")
	if code != 0 || !strings.Contains(out, "site-0001.test") || !strings.Contains(out, "reachable=") {
		t.Errorf("sites --profile realistic: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "", "testweb", "sites", "--plain", "--sites", "2")
	if code != 0 || strings.Contains(out, "reachable=") {
		t.Errorf("sites (plain): exit %d, reachable= shown\n%s", code, out)
	}
	code, _, errOut = run(t, "", "testweb", "hosts", "--profile", "fancy")
	if code != 2 || !strings.Contains(errOut, "Profile") {
		t.Errorf("hosts --profile fancy: exit %d, %s", code, errOut)
	}
	logPath := filepath.Join("..", "testweb", "report", "testdata", "crawl.jsonl")
	code, out, errOut = run(t, "", "testweb", "report", "--sites", "2", "--profile", "realistic", "--coverage", logPath)
	if code != 0 || !strings.Contains(out, "coverage: reachable pages fetched") {
		t.Errorf("report --coverage: exit %d\n%s%s", code, out, errOut)
	}
}
