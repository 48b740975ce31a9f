package fetch

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
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
		{"chunked overrides content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nA: 1\r\nTransfer-Encoding: chunked\r\ncontent-length: 7\r\n\r\n",
			"HTTP/1.1 200 OK\r\nA: 1\r\n\r\n"},
		{"content-length alone kept", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"},
		{"status line never a field", "Transfer-Encoding: odd status line\r\nA: 1\r\n\r\n", "Transfer-Encoding: odd status line\r\nA: 1\r\n\r\n"},
	} {
		if got := string(archivedHeader([]byte(tc.raw))); got != tc.want {
			t.Errorf("%s: archivedHeader(%q) = %q, want %q", tc.name, tc.raw, got, tc.want)
		}
	}
}

// TestWireHeader: a page over http:// is archived with its header as the
// server sent it (order, case, repeated fields), less the chunking, and
// its request as the server read it; the parsed Header still has every
// field.
func TestWireHeader(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	requests := make(chan []byte, 1)
	const header = "HTTP/1.1 200 OK\r\nserver: hand-made\r\nSet-Cookie: a=1\r\ncontent-type: text/html\r\nSet-Cookie: b=2\r\nTransfer-Encoding: chunked\r\nX-Last: z\r\n\r\n"
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var in bytes.Buffer
				br := bufio.NewReader(io.TeeReader(c, &in))
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					requests <- bytes.Clone(in.Next(in.Len() - br.Buffered()))
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
	if got, sent := r.RequestHeaderBytes(), <-requests; !bytes.Equal(got, sent) || !bytes.Equal(r.WireRequest, sent) {
		t.Errorf("RequestHeaderBytes:\n got %q\nwant what the server read, %q", got, sent)
	}
	if string(r.RawBody) != "hello" || len(r.Header.Values("Set-Cookie")) != 2 || r.Header.Get("X-Last") != "z" {
		t.Errorf("body %q, header %v", r.RawBody, r.Header)
	}
}

// FuzzArchivedHeader: whatever a server sent, the archived header is one
// block of CRLF lines ending in the empty line, with no Transfer-Encoding
// field after the status line, and every line it keeps was sent.
func FuzzArchivedHeader(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nA: 1\r\n\r\n")
	f.Add("HTTP/1.0 200 OK\nA: 1\n b\n\n")
	f.Add("\r\n")
	f.Fuzz(func(t *testing.T, raw string) {
		out := string(archivedHeader([]byte(raw)))
		if out == "\r\n" {
			return // nothing before the empty line
		}
		if !strings.HasSuffix(out, "\r\n\r\n") {
			t.Fatalf("archivedHeader(%q) = %q: no empty line at the end", raw, out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\r\n\r\n"), "\r\n")
		for i, ln := range lines {
			if strings.ContainsAny(ln, "\n") || ln == "" {
				t.Fatalf("archivedHeader(%q) = %q: line %d is %q", raw, out, i, ln)
			}
			name, _, _ := strings.Cut(ln, ":")
			if i > 0 && ln[0] != ' ' && ln[0] != '\t' && strings.EqualFold(strings.TrimSpace(name), "Transfer-Encoding") {
				t.Fatalf("archivedHeader(%q) = %q keeps %q", raw, out, ln)
			}
			if !strings.Contains(raw, ln) {
				t.Fatalf("archivedHeader(%q) = %q: line %q was not sent", raw, out, ln)
			}
		}
	})
}
