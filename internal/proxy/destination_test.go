package proxy

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// TestHostNameResolvingPrivate: a host name (not an IP literal) that
// resolves to a loopback address is refused as private-destination, not
// as robots-unavailable, although the refusal comes from the guarded
// robots.txt fetch. Through curl.
func TestHostNameResolvingPrivate(t *testing.T) {
	o := newOrigin(t, "", hello)
	gateClient := &http.Client{Transport: &http.Transport{DialContext: Dialer(nil, func() bool { return false })}}
	e := newEnv(t, envOpts{cfg: Config{AllowedClients: []string{"127.0.0.0/8"}}, gateHTTP: gateClient})
	u := strings.Replace(o.URL, "127.0.0.1", "localhost", 1) + "/x"
	r := e.curl(u)
	if r.status != http.StatusForbidden || r.header.Get(HeaderReason) != "private-destination" {
		t.Errorf("got %d %s %q, want 403 private-destination", r.status, r.header.Get(HeaderReason), r.body)
	}
	if n := len(o.pages()); n != 0 {
		t.Errorf("origin saw %d requests", n)
	}
}

// TestTLSVerifyFailed: CONNECT to an origin whose certificate does not
// verify is refused as tls-verify-failed (it was robots-unavailable);
// once the operator allows the host, curl -k gets through.
func TestTLSVerifyFailed(t *testing.T) {
	origin := tlsOrigin(t, "")
	port := portOf(t, origin)
	var allowed atomic.Bool
	insecure := func(host string) bool { return allowed.Load() && host == "127.0.0.1" }
	gateClient := func() *http.Client {
		var d net.Dialer
		return &http.Client{Transport: &http.Transport{DialTLSContext: TLSDialer(d.DialContext, nil, insecure)}}
	}
	e := newEnv(t, envOpts{cfg: Config{ConnectPorts: []int{port}}, gateHTTP: gateClient()})
	r := e.curl("-k", origin.URL+"/hello")
	if r.exit == 0 || r.status != http.StatusBadGateway || r.header.Get(HeaderReason) != "tls-verify-failed" {
		t.Errorf("unverifiable origin: exit %d, %d %s", r.exit, r.status, r.header.Get(HeaderReason))
	}

	allowed.Store(true)
	e2 := newEnv(t, envOpts{cfg: Config{ConnectPorts: []int{port}}, gateHTTP: gateClient()})
	if r := e2.curl("-k", origin.URL+"/hello"); r.exit != 0 || r.status != 200 || r.body != "secure /hello" {
		t.Errorf("allowed host: exit %d, %d %s %q %s", r.exit, r.status, r.header.Get(HeaderReason), r.body, r.stderr)
	}
	// Allowing one host allows no other name.
	if insecure("localhost") {
		t.Error("insecure for a host not listed")
	}
}

// TestRobotsUnavailableRefusal: a robots.txt that could not be fetched
// is answered by what went wrong. The origin answered 5xx: 403
// robots-unavailable; it could not be reached: 502 upstream-error (504
// when it did not answer in time), as for a page; the name resolved to a
// private address or the certificate did not verify: their own reasons.
func TestRobotsUnavailableRefusal(t *testing.T) {
	const pre = "robots.txt of http://h.test unavailable ("
	const post = "): all URLs disallowed until it can be fetched (RFC 9309 §2.3.1.4)"
	for _, tt := range []struct {
		cause  string
		status int
		reason string
	}{
		{"status 503", http.StatusForbidden, "robots-unavailable"},
		{"status 429", http.StatusForbidden, "robots-unavailable"},
		{`Get "http://h.test/robots.txt": dial tcp 127.0.0.1:9: connect: connection refused`, http.StatusBadGateway, "upstream-error"},
		{`Get "http://h.test/robots.txt": dial tcp: lookup h.test on 127.0.0.53:53: no such host`, http.StatusBadGateway, "upstream-error"},
		{`Get "http://h.test/robots.txt": EOF`, http.StatusBadGateway, "upstream-error"},
		{`Get "http://h.test/robots.txt": read tcp 127.0.0.1:5->127.0.0.1:9: read: connection reset by peer`, http.StatusBadGateway, "upstream-error"},
		{`Get "http://h.test/robots.txt": dial tcp 10.0.0.1:80: i/o timeout`, http.StatusGatewayTimeout, "upstream-timeout"},
		{`Get "http://h.test/robots.txt": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, http.StatusGatewayTimeout, "upstream-timeout"},
		{`Get "http://h.test/robots.txt": dial tcp 127.0.0.1:80: ` + ErrPrivateDestination.Error(), http.StatusForbidden, "private-destination"},
		{`Get "https://h.test/robots.txt": tls: failed to verify certificate: x509: certificate signed by unknown authority`, http.StatusBadGateway, "tls-verify-failed"},
	} {
		d := politeness.Decision{Reason: politeness.ReasonRobotsUnavailable, Detail: pre + tt.cause + post, RetryAfter: time.Minute}
		f := decisionRefusal(d)
		if f.status != tt.status || f.reason != tt.reason {
			t.Errorf("%s: %d %s, want %d %s", tt.cause, f.status, f.reason, tt.status, tt.reason)
		}
		if tt.reason != "private-destination" && f.retryAfter != time.Minute {
			t.Errorf("%s: retry after %v, want the robots cache's 1m", tt.cause, f.retryAfter)
		}
	}
}
