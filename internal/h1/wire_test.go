package h1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestClientWire: WithWire gives the request as written, as the origin
// read it, and the final response's header as sent (case, order, repeated
// fields, bare LF, obs-fold), without the 1xx before it or the body after
// it, on a new and on a reused connection, and for a header longer than
// the reader's buffer; nil after a failure.
func TestClientWire(t *testing.T) {
	long := "X-Long: " + strings.Repeat("v", 9000) + "\r\n"
	responses := []struct{ header, body string }{
		{"HTTP/1.1 200 Fine\r\ncontent-type: text/plain\r\nSet-Cookie: a=1\r\nX-Folded: one\r\n two\r\nSet-Cookie: b=2\r\nContent-Length: 5\r\n\r\n", "hello"},
		{"HTTP/1.1 404 Not Found\nServer: bare-lf\nContent-Length: 3\n\n", "no!"},
		{"HTTP/1.1 200 OK\r\n" + long + "Transfer-Encoding: chunked\r\n\r\n", "4\r\nbody\r\n0\r\n\r\n"},
	}
	var mu sync.Mutex
	var seen [][]byte // the requests as the origin read them
	var conns atomic.Int64
	addr := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		var in bytes.Buffer
		br := bufio.NewReader(io.TeeReader(c, &in))
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, bytes.Clone(in.Next(in.Len()-br.Buffered())))
			mu.Unlock()
			i, _ := strconv.Atoi(strings.TrimPrefix(req.URL.Path, "/"))
			io.WriteString(c, "HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n"+responses[i].header+responses[i].body)
		}
	})
	o := testPool(5*time.Second, 64<<10)
	defer o.CloseIdle()
	for i, r := range responses {
		var w Wire
		req := getReq(t, WithWire(context.Background(), &w), http.MethodGet, "http://"+addr+"/"+strconv.Itoa(i))
		req.Header.Set("X-Mixed", "Case")
		resp, err := o.RoundTrip(req, time.Minute)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(b) == 0 {
			t.Fatalf("response %d body: %q, %v", i, b, err)
		}
		if string(w.Response) != r.header {
			t.Errorf("response %d raw header:\n got %q\nwant %q", i, w.Response, r.header)
		}
		mu.Lock()
		if i >= len(seen) || !bytes.Equal(w.Request, seen[i]) || !strings.HasPrefix(string(w.Request), "GET /"+strconv.Itoa(i)+" HTTP/1.1\r\n") {
			t.Errorf("request %d as written %q, as read by the origin %q", i, w.Request, seen)
		}
		mu.Unlock()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 reused", n)
	}
	// An exchange that fails in the header sets the destination to nil.
	cut := rawServer(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Half: ")
		}
	})
	w := Wire{Response: []byte("stale")}
	req := getReq(t, WithWire(context.Background(), &w), http.MethodGet, "http://"+cut+"/")
	if _, err := o.RoundTrip(req, time.Minute); err == nil {
		t.Fatal("a header cut short did not fail")
	}
	if w.Request != nil || w.Response != nil {
		t.Errorf("after a failed exchange the destination holds %q, %q", w.Request, w.Response)
	}
}
