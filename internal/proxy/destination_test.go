package proxy

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
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
