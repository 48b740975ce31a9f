package fetch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestErrorAnswered checks Error.Answered on both paths: set when the
// origin sent part of a response before the failure (the host is up and
// the crawler must not count the failure against it), unset when nothing
// came back.
func TestErrorAnswered(t *testing.T) {
	t.Parallel()
	const page = "<html>0123456789</html>"
	o := newRawOrigin(t, func(path string) string {
		switch path {
		case "/bad-chunk":
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n<htm\r\nzz\r\nabc\r\n0\r\n\r\nCLOSE"
		case "/no-last-chunk":
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n17\r\n" + page + "\r\nCLOSE"
		case "/short":
			return "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + page + "CLOSE"
		case "/bad-length":
			return "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n" + page + "CLOSE"
		case "/two-lengths":
			return "HTTP/1.1 200 OK\r\nContent-Length: 23\r\nContent-Length: 24\r\n\r\n" + page + "CLOSE"
		case "/long-header":
			return "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("z", 300<<10) + "\r\n\r\n" + page + "CLOSE"
		case "/garbage":
			return "SSH-2.0-OpenSSH_9.6\r\nCLOSE"
		case "/half-header":
			return "HTTP/1.1 200 OK\r\nContent-Ty" + "HANG"
		}
		return "" // closed without a word
	})
	tests := []struct {
		path     string
		kind     Kind
		answered bool
	}{
		{"/bad-chunk", KindOther, true},
		{"/no-last-chunk", KindReset, true},
		{"/short", KindReset, true},
		{"/bad-length", KindOther, true},
		{"/two-lengths", KindOther, true},
		{"/long-header", KindOther, true},
		{"/garbage", KindOther, true},
		{"/half-header", KindTimeout, true},
		{"/silent", KindReset, false},
	}
	for _, path := range paths {
		c := newClientOn(t, Config{Timeout: 2 * time.Second, MaxHeaderBytes: 256 << 10}, path)
		for _, tc := range tests {
			t.Run(path+tc.path, func(t *testing.T) {
				_, err := c.Fetch(context.Background(), mustURL(t, "http://"+o.addr+tc.path), Request{})
				var fe *Error
				if !errors.As(err, &fe) {
					t.Fatalf("error %v, want a *fetch.Error", err)
				}
				if fe.Kind != tc.kind || fe.Answered != tc.answered || Answered(err) != tc.answered {
					t.Errorf("error %v: kind %v, answered %v; want %v, %v", err, fe.Kind, fe.Answered, tc.kind, tc.answered)
				}
			})
		}
	}
	if Answered(errors.New("x")) || Answered(nil) {
		t.Error("Answered of a foreign error or nil")
	}
}
