package proxy

import (
	"bufio"
	"context"
	"errors"
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
