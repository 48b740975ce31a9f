package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/crawl"
)

func TestCrawlUsage(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# comment\n\nftp://x.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no seeds, no state", []string{"crawl", "--data", filepath.Join(dir, "none")}, 2, "give seed URLs"},
		{"relative seed", []string{"crawl", "--data", dir, "example.org"}, 2, "absolute http"},
		{"bad seed in file", []string{"crawl", "--data", dir, "--seeds", seeds}, 2, "absolute http"},
		{"missing seeds file", []string{"crawl", "--data", dir, "--seeds", filepath.Join(dir, "nope")}, 1, "seeds"},
		{"bad scope", []string{"crawl", "--data", dir, "--scope", "domains:", "http://a.test/"}, 2, "--scope"},
		{"negative delay", []string{"crawl", "--data", dir, "--delay", "-1s", "http://a.test/"}, 2, "negative"},
		{"bad config", []string{"crawl", "--data", dir, "--config", filepath.Join(dir, "nope.yaml"), "http://a.test/"}, 1, "config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, errOut, tc.msg)
			}
		})
	}
}

// TestCrawlSmallSite crawls a three-page site (plus its missing
// /sitemap.xml: four fetches) on loopback through the
// command line, with a config file, and resumes the finished crawl.
func TestCrawlSmallSite(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="/a">a</a> <a href="/b">b</a> <a href="/private/x">p</a>`))
		case "/a", "/b":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<p>page ` + r.URL.Path + `</p><a href="/">home</a>`))
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "c.yaml")
	// The file is shared with the proxy: its sections are ignored, the
	// politeness section (Listing 9 delays, in ms) applies.
	os.WriteFile(cfgFile, []byte("proxy:\n  mode: wait\npoliteness:\n  default-domain:\n    domain: default\n    delay: 10\ncrawl:\n  workers: 4\n  traps:\n    max-depth: 3\n"), 0o644)
	data := filepath.Join(dir, "data")
	args := []string{"crawl", "--data", data, "--config", cfgFile, "--resolve", "site.test=" + addr, "--log-level", "error", "http://site.test/"}
	code, out, errOut := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"finished", "pages fetched       4", "robots.txt refusals 1 URLs", "WARC files"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	logBytes, err := os.ReadFile(filepath.Join(data, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logBytes), "\n"); n < 4 {
		t.Errorf("crawl.log has %d lines:\n%s", n, logBytes)
	}
	if !regexp.MustCompile(`pages fetched .* in \d+ms, this run\n`).MatchString(out) {
		t.Errorf("the 10 ms delay of the config file was not applied:\n%s", out)
	}
	// The same command again: nothing left, nothing fetched again.
	code, out, errOut = run(t, "", args...)
	if code != 0 || !strings.Contains(out, "pages fetched       0") || !strings.Contains(out, "this run only (resumed crawl") {
		t.Errorf("second run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestDemoShort(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run(t, "", "demo", "--duration", "3s", "--sites", "3", "--data", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Crawled ", "Robots.txt refusals", "Traps avoided", "WARC files", "Crawl log:"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz")); len(files) == 0 {
		t.Error("demo wrote no WARC file")
	}
}

// TestDemoTempRemoved: without --data the demo removes its directory and
// says how to keep it.
func TestDemoTempRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, out, errOut := run(t, "", "demo", "--duration", "2s", "--sites", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "now removed: give --data DIR") {
		t.Errorf("demo output lacks the removal note:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "courtesy-demo-*")); len(left) != 0 {
		t.Errorf("demo left %v behind", left)
	}
}

// TestDemoBadConfig: the demo reads --config as crawl does: a missing or
// invalid file is a usage error, not ignored.
func TestDemoBadConfig(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("crawl:\n  no-such-key: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(t.TempDir(), "missing.yaml"), bad} {
		if code, _, errOut := run(t, "", "demo", "--duration", "1s", "--sites", "1", "--data", t.TempDir(), "--config", path); code == 0 {
			t.Errorf("--config %s: exit 0, want an error (stderr %q)", path, errOut)
		}
	}
}

// TestCrawlBadSeeds: bad seeds are a usage error (exit 2) that names each
// one with its file and line, before anything is created in --data; an
// upper-case scheme is fine.
func TestCrawlBadSeeds(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# seeds\nhttp://ok.test/\nftp://x.test/\n\nnot a url\nHTTP://UPPER.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "", "crawl", "--data", data, "--seeds", seeds, "http://")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, errOut)
	}
	for _, want := range []string{"3 seed(s)", "argument 1", seeds + ":3", seeds + ":5"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "UPPER") || strings.Contains(errOut, ":2") || strings.Contains(errOut, ":6") {
		t.Errorf("a good seed is named as bad:\n%s", errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("--data created for bad seeds: %v", err)
	}
}

// TestSummaryWording: a process sharing its crawl says its pages are its
// own and the completed URLs the whole crawl's, not a resumed run's.
func TestSummaryWording(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resumed    bool
		shared     bool
		requisites int64
		want, not  string
	}{
		{"fresh", false, false, 0, "s, this run\n", "resumed"},
		{"resumed", true, false, 0, "this run only (resumed crawl", "shared"},
		{"shared node", true, true, 0, "by this process\n  URLs completed      7 (the whole shared crawl)", "resumed"},
		{"no requisites", false, false, 0, "duplicates", "page requisites"},
		{"requisites", false, false, 5, "  page requisites     5 fetched (2 out of scope)\n", "resumed"},
		{"retired", false, false, 0, "  hosts retired       1 (4 URLs left in their queues, not crawled)\n", "resumed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			s := &crawl.Summary{Pages: 3, Completed: 7, Resumed: tc.resumed, Requisites: tc.requisites}
			if tc.requisites > 0 {
				s.RequisitesOffScope = 2
			}
			if tc.name == "retired" {
				s.Retired, s.RetiredURLs = map[string]string{"down.test": "5 failures in a row"}, 4
			}
			printSummary(&b, s, tc.shared)
			if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), tc.not) {
				t.Errorf("summary has no %q or has %q:\n%s", tc.want, tc.not, b.String())
			}
		})
	}
}
