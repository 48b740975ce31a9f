package mitm

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeConnHijack: a handler may take over the intercepted connection
// (the proxy does so for a wss:// WebSocket handshake). ServeConn then
// returns without closing it, and the handler keeps talking TLS on it,
// bytes the client sent early included.
func TestServeConnHijack(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	handlerDone := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			handlerDone <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n"); err != nil {
			handlerDone <- err
			return
		}
		// Echo lines until the client closes, after ServeConn returned.
		for range 10 {
			line, err := brw.Reader.ReadString('\n')
			if err != nil {
				handlerDone <- nil
				return
			}
			if _, err := io.WriteString(conn, strings.ToUpper(line)); err != nil {
				handlerDone <- err
				return
			}
		}
		handlerDone <- nil
	})
	ts := startServer(t, &Server{CA: ca}, "", h)
	// The first line comes in the same write as the request: the server
	// has it buffered when the handler hijacks.
	c, br := rawTLS(t, ca, ts, "GET /up HTTP/1.1\r\nHost: site.test:"+strconv.Itoa(ts.port)+"\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\nearly\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	select {
	case err := <-ts.errs:
		if err != nil {
			t.Fatalf("ServeConn after the hijack: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeConn did not return after the hijack")
	}
	for _, want := range []string{"EARLY\n", "LATE\n"} {
		if want == "LATE\n" {
			if _, err := io.WriteString(c, "late\n"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := br.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("echo %q %v, want %q (the connection must outlive ServeConn)", got, err, want)
		}
	}
	c.Close()
	select {
	case err := <-handlerDone:
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not see the client close")
	}
}
