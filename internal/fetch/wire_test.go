package fetch

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

func TestArchivedHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, raw, want string }{
		{"kept as sent", "HTTP/1.1 200 Fine\r\ncontent-type: text/html\r\nSet-Cookie: a=1\r\nX-Z: z\r\nSet-Cookie: b=2\r\n\r\n",
			"HTTP/1.1 200 Fine\r\ncontent-type: text/html\r\nSet-Cookie: a=1\r\nX-Z: z\r\nSet-Cookie: b=2\r\n\r\n"},
		{"chunked left out", "HTTP/1.1 200 OK\r\nA: 1\r\ntransfer-encoding: chunked\r\nB: 2\r\n\r\n", "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n"},
		{"folded transfer-encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n chunked\r\nX-Folded: a\r\n b\r\n\r\n",
			"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\n\r\n"},
		{"bare LF", "HTTP/1.0 404 Not Found\nServer: x\n\n", "HTTP/1.0 404 Not Found\r\nServer: x\r\n\r\n"},
		{"no empty line", "HTTP/1.1 204 No Content\r\nA: 1", "HTTP/1.1 204 No Content\r\nA: 1\r\n\r\n"},
		{"status line never a field", "Transfer-Encoding: odd status line\r\nA: 1\r\n\r\n", "Transfer-Encoding: odd status line\r\nA: 1\r\n\r\n"},
	} {
		if got := string(archivedHeader([]byte(tc.raw))); got != tc.want {
			t.Errorf("%s: archivedHeader(%q) = %q, want %q", tc.name, tc.raw, got, tc.want)
		}
	}
}

// TestWireHeader: a page over http:// is archived with its header as the
// server sent it (order, case, repeated fields), less the chunking; the
// parsed Header still has every field.
func TestWireHeader(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	const header = "HTTP/1.1 200 OK\r\nserver: hand-made\r\nSet-Cookie: a=1\r\ncontent-type: text/html\r\nSet-Cookie: b=2\r\nTransfer-Encoding: chunked\r\nX-Last: z\r\n\r\n"
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					io.WriteString(c, header+"5\r\nhello\r\n0\r\n\r\n")
				}
			}()
		}
	}()
	c := newClient(t, Config{})
	r := fetchOK(t, c, "http://"+ln.Addr().String()+"/", Request{})
	want := "HTTP/1.1 200 OK\r\nserver: hand-made\r\nSet-Cookie: a=1\r\ncontent-type: text/html\r\nSet-Cookie: b=2\r\nX-Last: z\r\n\r\n"
	if got := string(r.HTTPHeaderBytes()); got != want {
		t.Errorf("HTTPHeaderBytes:\n got %q\nwant %q", got, want)
	}
	if string(r.WireHeader) != header {
		t.Errorf("WireHeader = %q, want what was sent", r.WireHeader)
	}
	if string(r.RawBody) != "hello" || len(r.Header.Values("Set-Cookie")) != 2 || r.Header.Get("X-Last") != "z" {
		t.Errorf("body %q, header %v", r.RawBody, r.Header)
	}
}
