package fetch

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestReadBodySizeHint checks that the Content-Length hint only sizes the
// buffer: the bytes read and the truncation are the same whether the
// hint is absent, right, too small, too large or past the limit.
func TestReadBodySizeHint(t *testing.T) {
	body := strings.Repeat("0123456789", 300) // 3,000 bytes
	tests := []struct {
		name      string
		limit     int64
		hint      int64
		wantLen   int
		wantTrunc Truncation
	}{
		{"no hint", 10_000, -1, 3000, TruncNone},
		{"exact hint", 10_000, 3000, 3000, TruncNone},
		{"hint too small", 10_000, 10, 3000, TruncNone},
		{"hint too large", 10_000, 1 << 40, 3000, TruncNone},
		{"cut at limit", 1000, 3000, 1000, TruncSize},
		{"cut at limit, no hint", 1000, -1, 1000, TruncSize},
		{"limit equals size", 3000, 3000, 3000, TruncNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trunc, err := readBody(strings.NewReader(body), tt.limit, tt.hint)
			if err != nil {
				t.Fatalf("readBody: %v", err)
			}
			if len(got) != tt.wantLen || !bytes.Equal(got, []byte(body[:tt.wantLen])) {
				t.Errorf("readBody returned %d bytes, want the first %d", len(got), tt.wantLen)
			}
			if trunc != tt.wantTrunc {
				t.Errorf("truncation = %q, want %q", trunc, tt.wantTrunc)
			}
		})
	}
}

// TestHeaderBytesByHand checks the hand-built status and request lines
// against what fmt produced before.
func TestHeaderBytesByHand(t *testing.T) {
	for _, st := range []int{0, 5, 99, 200, 404, 999, 1000, -1} {
		r := &Result{Status: st, Reason: "R", Proto: "HTTP/1.1"}
		want := fmt.Sprintf("HTTP/1.1 %03d R\r\n\r\n", st)
		if got := string(r.HTTPHeaderBytes()); got != want {
			t.Errorf("status %d: HTTPHeaderBytes = %q, want %q", st, got, want)
		}
	}
	u, _ := url.Parse("http://example.com/a?b=c")
	req := SentRequest{Method: "GET", URL: u, Header: http.Header{
		"Host": {"example.com"}, "User-Agent": {"ua"}, "Accept": {"*/*"}, "X-Two": {"1", "2"},
	}}
	r := &Result{Request: req}
	want := "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nUser-Agent: ua\r\nX-Two: 1\r\nX-Two: 2\r\n\r\n"
	if got := string(r.RequestHeaderBytes()); got != want {
		t.Errorf("RequestHeaderBytes = %q, want %q", got, want)
	}
	if len(req.Header["Host"]) != 1 {
		t.Error("RequestHeaderBytes changed the request's header")
	}
}
