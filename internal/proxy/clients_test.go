package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tests through real clients (curl, Python's urllib) against local
// origins: what a user of the proxy sees, framing and all.
// scripts/install-test-deps installs the clients.

// curlResult is what curl saw: its exit code (0, or curl's error number),
// the status, header and body of the last response.
type curlResult struct {
	exit   int
	status int
	header http.Header
	body   string
	stderr string
}

// lookTool finds a client program, failing the test without it.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (run scripts/install-test-deps): %v", name, err)
	}
	return p
}

// curl runs curl through the proxy with args (the URL among them), bounded
// to 30 s, and parses what it wrote.
func (e *env) curl(args ...string) curlResult {
	e.t.Helper()
	bin := lookTool(e.t, "curl")
	dir := e.t.TempDir()
	hf, bf := filepath.Join(dir, "h"), filepath.Join(dir, "b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append([]string{"-s", "-S", "--max-time", "20", "-x", e.front.URL, "-D", hf, "-o", bf}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	r := curlResult{stderr: stderr.String(), header: http.Header{}}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.exit = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("curl: %v", err)
	}
	if b, err := os.ReadFile(bf); err == nil {
		r.body = string(b)
	}
	if h, err := os.Open(hf); err == nil {
		defer h.Close()
		// -D writes every response's head (a 100 Continue, a redirect):
		// keep the last.
		tp := textproto.NewReader(bufio.NewReader(h))
		for {
			line, err := tp.ReadLine()
			if err != nil {
				break
			}
			if !strings.HasPrefix(line, "HTTP/") {
				continue
			}
			if f := strings.Fields(line); len(f) >= 2 {
				r.status, _ = strconv.Atoi(f[1])
			}
			mh, _ := tp.ReadMIMEHeader()
			r.header = http.Header(mh)
		}
	}
	return r
}

// TestCurlRelaysContentTypeAsSent: a response without Content-Type
// reaches curl without one, from the origin and from the cache (net/http
// would otherwise sniff the body and announce text/plain or the like),
// and one the origin sent keeps its value. A stored body whose origin
// streamed it (chunked) is served from the cache with its length.
func TestCurlRelaysContentTypeAsSent(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		if ct := r.URL.Query().Get("ct"); ct != "" {
			w.Header().Set("Content-Type", ct)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing at the origin either
		}
		// Longer than net/http's buffer, so that a response it is not
		// told the length of goes out in chunks.
		body := "<html><body>" + strings.Repeat("sniff me ", 2000) + "</body></html>"
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no length: chunked
		}
		io.WriteString(w, body)
	})
	e := newEnv(t, envOpts{cache: true})
	for _, tt := range []struct {
		name, query, wantCT string
	}{
		{"none", "?a", ""},
		{"none chunked", "?chunked=1", ""},
		{"image", "?ct=image/png", "image/png"},
		{"html chunked", "?ct=text/html&chunked=1", "text/html"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := o.URL + "/page" + tt.query
			for _, want := range []string{"MISS", "HIT"} {
				r := e.curl(u)
				if r.exit != 0 || r.status != 200 || r.header.Get(HeaderCache) != want {
					t.Fatalf("%s: exit %d status %d X-Cache %q, want %s (%s)", want, r.exit, r.status, r.header.Get(HeaderCache), want, r.stderr)
				}
				if got, ok := r.header["Content-Type"]; tt.wantCT == "" && ok || tt.wantCT != "" && r.header.Get("Content-Type") != tt.wantCT {
					t.Errorf("%s: Content-Type %q, want %q", want, got, tt.wantCT)
				}
				if want == "HIT" && r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
					t.Errorf("HIT: Content-Length %q, Transfer-Encoding %q, body %d bytes",
						r.header.Get("Content-Length"), r.header.Get("Transfer-Encoding"), len(r.body))
				}
			}
		})
	}
}

// TestCurlExpectContinue: curl uploads with Expect: 100-continue. To a
// URL robots.txt allows, the proxy sends 100 Continue, reads the body
// and forwards it whole; to one it disallows, the 403 comes instead of
// the 100 and curl uploads nothing. The origin is not sent the
// expectation: the proxy has the body and sends it at once.
func TestCurlExpectContinue(t *testing.T) {
	o := newOrigin(t, "User-agent: *\nDisallow: /private/\n", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, "got "+strconv.FormatInt(n, 10))
	})
	e := newEnv(t, envOpts{})
	file := filepath.Join(t.TempDir(), "upload")
	const size = 1 << 20
	if err := os.WriteFile(file, []byte(strings.Repeat("u", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path         string
		status       int
		body         string
		wantContinue bool
	}{
		{"/upload", 200, "got " + strconv.Itoa(size), true},
		{"/private/upload", 403, "", false},
	} {
		r := e.curl("-v", "-H", "Expect: 100-continue", "--expect100-timeout", "10", "--data-binary", "@"+file, o.URL+tt.path)
		if r.status != tt.status || tt.body != "" && r.body != tt.body {
			t.Errorf("%s: %d %q, want %d %q", tt.path, r.status, r.body, tt.status, tt.body)
		}
		if got := strings.Contains(r.stderr, "< HTTP/1.1 100 Continue"); got != tt.wantContinue {
			t.Errorf("%s: 100 Continue sent: %v, want %v\n%s", tt.path, got, tt.wantContinue, r.stderr)
		}
		if tt.status == 403 && strings.Contains(r.stderr, "upload completely sent off") {
			t.Errorf("%s: curl uploaded the body to a refused URL", tt.path)
		}
	}
	pages := o.pages()
	if len(pages) != 1 {
		t.Fatalf("origin saw %d requests, want 1", len(pages))
	}
	// The expectation was met by the proxy, which had the whole body: the
	// origin is not asked for a 100 it need not send.
	if e := pages[0].header.Get("Expect"); e != "" {
		t.Errorf("Expect forwarded to the origin: %q", e)
	}
}

// TestCurlViaNamesReceivedProtocol: our Via entry names the protocol of
// the message the proxy received (RFC 9110 §7.6.3): 1.0 on the request
// of an HTTP/1.0 client (curl --http1.0), and on the response of an
// HTTP/1.0 origin.
func TestCurlViaNamesReceivedProtocol(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "request via "+r.Header.Get("Via"))
	})
	// An HTTP/1.0 origin: answers every request in 1.0 and closes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold")
				}
			}()
		}
	}()
	e := newEnv(t, envOpts{})
	for _, tt := range []struct {
		name, url   string
		args        []string
		wantBody    string // what the origin saw
		wantRespVia string // prefix of our entry in the response's Via
	}{
		{"1.1 both ways", o.URL + "/a", nil, "request via 1.1 courtesy-", "1.1 courtesy-"},
		{"1.0 client", o.URL + "/b", []string{"--http1.0"}, "request via 1.0 courtesy-", "1.1 courtesy-"},
		{"1.0 origin", "http://" + ln.Addr().String() + "/c", nil, "old", "1.0 courtesy-"},
	} {
		r := e.curl(append(tt.args, tt.url)...)
		if r.exit != 0 || !strings.HasPrefix(r.body, tt.wantBody) {
			t.Errorf("%s: exit %d body %q, want %q (%s)", tt.name, r.exit, r.body, tt.wantBody, r.stderr)
		}
		if v := r.header.Values("Via"); len(v) == 0 || !strings.HasPrefix(v[len(v)-1], tt.wantRespVia) {
			t.Errorf("%s: response Via %q, want %q...", tt.name, v, tt.wantRespVia)
		}
	}
}
