package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRobotsCheckStream(t *testing.T) {
	long := `{"robots": "` + strings.Repeat("a", maxCheckLine) + `", "url": "/"}`
	in := strings.Join([]string{
		`{"robots": "User-agent: *\nDisallow: /x\nCrawl-delay: 1.5\nRequest-rate: 1/5s\nSitemap: https://e.com/s.xml\nHost: e.com", "agent": "bot", "url": "https://e.com/x/y"}`,
		`not json`,
		`{"robots_base64": "VXNlci1hZ2VudDogKgpEaXNhbGxvdzogL2I/Cg==", "agent": "bot", "url": "https://e.com/a"}`,
		long,
		`{"robots": "", "url": "https://e.com/"}`,
		`{"robots": "x"}`,
		`{"robots": "Robot-version: 3.0\n\nUser-agent: *\nAllow: /only", "agent": "bot", "url": "/other"}`,
		`{"robots": "Sitemap: /s.xml", "robots_url": "https://e.com/robots.txt", "url": "/"}`,
	}, "\n") + "\n"
	code, out, errOut := run(t, in, "robots", "check")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{
		`{"allowed":false,"crawl_delay_seconds":1.5,"request_rate":{"requests":1,"seconds":5},"sitemaps":["https://e.com/s.xml"],"host":"e.com","dialect":"rfc9309","matched_rule":{"line":2,"rule":"Disallow: /x"}}`,
		`{"error":"line 2: invalid character 'o' in literal null (expecting 'u')"}`,
		`{"allowed":true,"crawl_delay_seconds":null,"request_rate":null,"sitemaps":[],"host":null,"dialect":"rfc9309","matched_rule":null}`,
		`{"error":"line 4: longer than 2097152 bytes"}`,
		`{"allowed":true,"crawl_delay_seconds":null,"request_rate":null,"sitemaps":[],"host":null,"dialect":"rfc9309","matched_rule":null}`,
		`{"error":"line 6: missing url"}`,
		`{"allowed":false,"crawl_delay_seconds":null,"request_rate":null,"sitemaps":[],"host":null,"dialect":"regp","matched_rule":null}`,
		`{"allowed":true,"crawl_delay_seconds":null,"request_rate":null,"sitemaps":["https://e.com/s.xml"],"host":null,"dialect":"rfc9309","matched_rule":null}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d output lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], want[i])
		}
		if !json.Valid([]byte(lines[i])) {
			t.Errorf("line %d is not JSON", i+1)
		}
	}
}

func TestRobotsCheckHuman(t *testing.T) {
	file := writeFile(t, "robots.txt", "User-agent: *\nDisallow: /private\n")
	code, out, errOut := run(t, "", "robots", "check", "--robots", file, "--agent", "bot",
		"https://e.com/private/a", "https://e.com/public")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "disallowed https://e.com/private/a (line 2: Disallow: /private)\n" +
		"allowed    https://e.com/public (no rule matched)\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

func TestRobotsUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no subcommand", []string{"robots"}, 2},
		{"unknown subcommand", []string{"robots", "frob"}, 2},
		{"check help", []string{"robots", "check", "-h"}, 0},
		{"lint help", []string{"robots", "lint", "-h"}, 0},
		{"robots without urls", []string{"robots", "check", "--robots", "x"}, 2},
		{"lint without file", []string{"robots", "lint"}, 2},
		{"lint missing file", []string{"robots", "lint", "/nonexistent/robots.txt"}, 1},
		{"bad --at", []string{"robots", "check", "--at", "yesterday"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, errOut := run(t, "", tc.args...); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
		})
	}
}

func TestRobotsLint(t *testing.T) {
	clean := writeFile(t, "clean.txt", "User-agent: *\nDisallow: /x\n")
	code, out, _ := run(t, "", "robots", "lint", clean)
	if code != 0 || out != "" {
		t.Errorf("clean file: exit %d, stdout %q", code, out)
	}
	bad := writeFile(t, "bad.txt", "User-agent: *\nDissalow: /x\nFoo: bar\n")
	code, out, errOut := run(t, "", "robots", "lint", bad)
	want := bad + `:2: "Dissalow" read as "Disallow"` + "\n" + bad + `:3: unknown directive "Foo"; skipped` + "\n"
	if code != 1 || out != want {
		t.Errorf("bad file: exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}
	if !strings.Contains(errOut, "2 problems") {
		t.Errorf("stderr %q", errOut)
	}
}
