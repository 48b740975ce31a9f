package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlowBodyHoldsNoSlot: a client trickling a POST body holds no slot
// of its host. While it stalls, another client of the same host (reject
// mode, one request at a time, no delay) gets 200 through curl, not 429;
// the slow client gets 408 once its body is slower than the minimum rate.
func TestSlowBodyHoldsNoSlot(t *testing.T) {
	var startOnce sync.Once
	started := make(chan struct{}) // the origin began the slow request
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/upload" {
			startOnce.Do(func() { close(started) })
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "got %d", len(b))
			return
		}
		hello(w, r)
	})
	e := newEnv(t, envOpts{cfg: Config{Mode: ModeReject, ClientBodyTimeout: 300 * time.Millisecond, ClientBodyMinRate: 1000}})

	slow, err := net.Dial("tcp", e.front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_ = slow.SetDeadline(time.Now().Add(10 * time.Second)) // bounds the test only
	fmt.Fprintf(slow, "POST %s/upload HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\n0123456789",
		o.URL, strings.TrimPrefix(o.URL, "http://"))
	waitFor(t, "the slow request to be read", func() bool {
		select {
		case <-started:
			return true
		default:
			return e.proxy.bodiesReading.Load() > 0
		}
	})
	if r := e.curl(o.URL + "/page"); r.status != 200 || r.body != "hello /page" {
		t.Errorf("another client while the body trickles: %d %s %q", r.status, r.header.Get(HeaderReason), r.body)
	}
	b := make([]byte, 512)
	n, _ := io.ReadAtLeast(slow, b, len("HTTP/1.1 408"))
	if line, _, _ := strings.Cut(string(b[:n]), "\r\n"); !strings.HasPrefix(line, "HTTP/1.1 408") {
		t.Errorf("slow client got %q, want 408", line)
	}
	if n := len(o.pages()); n != 1 {
		t.Errorf("origin saw %d requests, want 1 (the slow body never reaches it)", n)
	}
	waitFor(t, "the trace entry", func() bool {
		for _, te := range e.proxy.Trace() {
			if te.Outcome == "request_body_timeout" && te.Status == 408 {
				return true
			}
		}
		return false
	})
}

// TestRequestBodiesRelayed: bodies read before admission reach the origin
// whole, in memory or spilled to a file, framed by length or chunked by
// the client (curl).
func TestRequestBodiesRelayed(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(b)
		fmt.Fprintf(w, "%d %s %d", len(b), hex.EncodeToString(sum[:8]), r.ContentLength)
	})
	e := newEnv(t, envOpts{})
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		size    int
		chunked bool
	}{
		{"small", 1000, false},
		{"small chunked", 1000, true},
		{"spilled to a file", bodyMemBytes + 300<<10, false},
		{"spilled chunked", bodyMemBytes + 300<<10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(strings.Repeat("abcdefghij", tt.size/10))
			f := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(f, data, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"--data-binary", "@" + f}
			if tt.chunked {
				args = append(args, "-H", "Transfer-Encoding: chunked")
			}
			r := e.curl(append(args, o.URL+"/post")...)
			sum := sha256.Sum256(data)
			want := fmt.Sprintf("%d %s %d", len(data), hex.EncodeToString(sum[:8]), len(data))
			if r.exit != 0 || r.status != 200 || r.body != want {
				t.Errorf("exit %d status %d body %q, want %q (%s)", r.exit, r.status, r.body, want, r.stderr)
			}
		})
	}
	if e.proxy.bodiesReading.Load() != 0 {
		t.Error("bodiesReading not back to 0")
	}
}
