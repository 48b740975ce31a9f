package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientSeen is what a real client reports of one response through the
// proxy.
type clientSeen struct {
	XCache      string `json:"x_cache"`
	CacheStatus string `json:"cache_status"`
	Body        string `json:"body"`
}

// clientRequest is one request a real client sends: a URL and, for the
// user, an Authorization or Cookie field.
type clientRequest struct {
	URL    string `json:"url"`
	Header string `json:"header"` // "Name: value", or ""
}

// requestsScript fetches each request of argv[2] (JSON) with Python's
// requests through the proxy argv[1], printing one JSON line per response.
const requestsScript = `
import json, sys, requests
proxies = {"http": sys.argv[1]}
for r in json.loads(sys.argv[2]):
    h = {}
    if r["header"]:
        k, v = r["header"].split(": ", 1)
        h[k] = v
    resp = requests.get(r["url"], headers=h, proxies=proxies, timeout=10)
    print(json.dumps({"x_cache": resp.headers.get("X-Cache", ""), "cache_status": resp.headers.get("Cache-Status", ""), "body": resp.text}))
`

// TestCacheSharingThroughRealClients: through curl, wget and Python's
// requests, a cacheable page is served from the cache to the next client
// (X-Cache: HIT, Cache-Status "courtesy; hit"), and a page that belongs to
// one user (private; answered to Authorization; answered to a Cookie) is
// never handed to another, whatever the client.
func TestCacheSharingThroughRealClients(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/public"):
			w.Header().Set("Cache-Control", "max-age=3600")
		case strings.HasSuffix(r.URL.Path, "/private"):
			w.Header().Set("Cache-Control", "private, max-age=3600")
		case strings.HasSuffix(r.URL.Path, "/shared"):
			w.Header().Set("Cache-Control", "public, max-age=3600")
		default:
			w.Header().Set("Cache-Control", "max-age=3600")
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.URL.Path+" for "+requestUser(r))
	})
	e := newEnv(t, envOpts{cache: true})
	alice, bob := "Authorization: Bearer alice", "Authorization: Bearer bob"
	steps := []struct {
		path, header string
		hit          bool
		user         string // whose page the body must be
	}{
		{"/public", "", false, "anonymous"},
		{"/public", "", true, "anonymous"},
		{"/private", alice, false, "alice"},
		{"/private", "", false, "anonymous"},
		{"/auth", alice, false, "alice"},
		{"/auth", "", false, "anonymous"},
		{"/auth", bob, false, "bob"},
		{"/shared", alice, false, "alice"},
		{"/shared", alice, true, "alice"},
		{"/shared", bob, false, "bob"},
		{"/shared", "", false, "anonymous"},
		{"/cookie", "Cookie: session=alice", false, "alice"},
		{"/cookie", "Cookie: session=alice", true, "alice"},
		{"/cookie", "Cookie: session=bob", false, "bob"},
	}
	clients := map[string]func(t *testing.T, reqs []clientRequest) []clientSeen{
		"curl": func(t *testing.T, reqs []clientRequest) []clientSeen {
			var out []clientSeen
			for _, r := range reqs {
				args := []string{r.URL}
				if r.Header != "" {
					args = append([]string{"-H", r.Header}, args...)
				}
				c := e.curl(args...)
				if c.exit != 0 {
					t.Fatalf("curl %v: exit %d %s", args, c.exit, c.stderr)
				}
				out = append(out, clientSeen{c.header.Get(HeaderCache), c.header.Get("Cache-Status"), c.body})
			}
			return out
		},
		"wget":            func(t *testing.T, reqs []clientRequest) []clientSeen { return wgetAll(t, e.front.URL, reqs) },
		"python requests": func(t *testing.T, reqs []clientRequest) []clientSeen { return requestsAll(t, e.front.URL, reqs) },
	}
	for name, run := range clients {
		t.Run(name, func(t *testing.T) {
			base := o.URL + "/" + strings.ReplaceAll(name, " ", "-")
			var reqs []clientRequest
			for _, s := range steps {
				reqs = append(reqs, clientRequest{base + s.path, s.header})
			}
			got := run(t, reqs)
			if len(got) != len(steps) {
				t.Fatalf("%d responses, want %d", len(got), len(steps))
			}
			for i, s := range steps {
				g := got[i]
				if want := reqs[i].URL[len(o.URL):] + " for " + s.user; g.Body != want {
					t.Errorf("%d %s %q: body %q, want %q (X-Cache %s)", i, s.path, s.header, g.Body, want, g.XCache)
				}
				hit := g.XCache == "HIT"
				if hit != s.hit || hit != strings.HasPrefix(g.CacheStatus, "courtesy; hit; ttl=") {
					t.Errorf("%d %s %q: X-Cache %q, Cache-Status %q; want hit %v", i, s.path, s.header, g.XCache, g.CacheStatus, s.hit)
				}
			}
		})
	}
}

// clientEnv is a bounded environment for a client program: no proxy
// settings but the ones given, a HOME of its own.
func clientEnv(t *testing.T, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "no_proxy=", "NO_PROXY="}, extra...)
}

// wgetAll fetches each request with wget through proxy (http_proxy=),
// reading X-Cache and Cache-Status from its -S report.
func wgetAll(t *testing.T, proxy string, reqs []clientRequest) []clientSeen {
	t.Helper()
	bin := lookTool(t, "wget")
	dir := t.TempDir()
	var out []clientSeen
	for i, r := range reqs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		body := filepath.Join(dir, "b")
		args := []string{"-S", "-q", "--tries=1", "--timeout=5", "-O", body, r.URL}
		if r.Header != "" {
			args = append([]string{"--header=" + r.Header}, args...)
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = clientEnv(t, "http_proxy="+proxy)
		report, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("wget %d %v: %v %s", i, args, err, report)
		}
		var seen clientSeen
		sc := bufio.NewScanner(strings.NewReader(string(report)))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": ")
			switch {
			case ok && strings.EqualFold(k, HeaderCache):
				seen.XCache = v
			case ok && strings.EqualFold(k, "Cache-Status"):
				seen.CacheStatus = v
			}
		}
		b, err := os.ReadFile(body)
		if err != nil {
			t.Fatal(err)
		}
		seen.Body = string(b)
		out = append(out, seen)
	}
	return out
}

// requestsAll fetches the requests in order with Python's requests
// through proxy, in one bounded run of python3.
func requestsAll(t *testing.T, proxy string, reqs []clientRequest) []clientSeen {
	t.Helper()
	bin := lookTool(t, "python3")
	arg, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-c", requestsScript, proxy, string(arg))
	cmd.Env = clientEnv(t)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 requests: %v %s", err, stderr.String())
	}
	var out []clientSeen
	for line := range strings.Lines(string(stdout)) {
		var s clientSeen
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("python3 requests printed %q: %v", line, err)
		}
		out = append(out, s)
	}
	return out
}
