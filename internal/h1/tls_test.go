package h1

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tlsServer is an httptest TLS server (offering h2 and HTTP/1.1) that
// counts its connections, and a TLS configuration trusting it.
func tlsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64, *tls.Config) {
	t.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.EnableHTTP2 = true
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return s, &conns, &tls.Config{RootCAs: pool}
}

// TestClientTLS: with a TLSConfig the client takes https:// GETs over
// HTTP/1.1 (a server that offers h2 too), keeps the connection alive,
// gives the exchange's bytes (WithWire), reports the handshake to the
// trace, and fails a certificate it cannot verify with the
// verification error; without one it leaves https to http.Transport.
func TestClientTLS(t *testing.T) {
	srv, conns, conf := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		w.Header()["x-lower"] = []string{"kept"}
		io.WriteString(w, "hello "+r.URL.Path)
	})
	var d net.Dialer
	o := New(Options{Dial: d.DialContext, TLSConfig: conf})
	defer o.CloseIdle()
	if plain := New(Options{Dial: d.DialContext}); plain.Handles(getReq(t, context.Background(), http.MethodGet, srv.URL)) {
		t.Error("a client without TLSConfig takes https")
	}
	if !o.Handles(getReq(t, context.Background(), http.MethodGet, srv.URL)) {
		t.Fatal("a client with TLSConfig does not take https")
	}
	var handshakes atomic.Int64
	for i, path := range []string{"/a", "/b"} {
		var w Wire
		var reused bool
		ctx := httptrace.WithClientTrace(WithWire(context.Background(), &w), &httptrace.ClientTrace{
			TLSHandshakeDone: func(st tls.ConnectionState, err error) {
				if err != nil || st.NegotiatedProtocol != "http/1.1" && st.NegotiatedProtocol != "" {
					t.Errorf("handshake: %v, protocol %q", err, st.NegotiatedProtocol)
				}
				handshakes.Add(1)
			},
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		})
		resp, err := o.RoundTrip(getReq(t, ctx, http.MethodGet, srv.URL+path), time.Minute)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello "+path || resp.Proto != "HTTP/1.1" || resp.Header.Get("X-Proto") != "HTTP/1.1" {
			t.Errorf("GET %s: %q, %s, server saw %s", path, b, resp.Proto, resp.Header.Get("X-Proto"))
		}
		if reused != (i > 0) {
			t.Errorf("GET %s: reused %v", path, reused)
		}
		if !strings.HasPrefix(string(w.Request), "GET "+path+" HTTP/1.1\r\nHost: "+strings.TrimPrefix(srv.URL, "https://")+"\r\n") ||
			!strings.HasPrefix(string(w.Response), "HTTP/1.1 200 OK\r\n") || !strings.Contains(string(w.Response), "\r\nx-lower: kept\r\n") ||
			!strings.HasSuffix(string(w.Response), "\r\n\r\n") {
			t.Errorf("GET %s wire:\n%q\n%q", path, w.Request, w.Response)
		}
	}
	if n, h := conns.Load(), handshakes.Load(); n != 1 || h != 1 {
		t.Errorf("%d connections, %d handshakes; want 1 and 1", n, h)
	}

	// An authority the client does not trust: the handshake fails with
	// the verification error, and the trace says so.
	var failed bool
	untrusted := New(Options{Dial: d.DialContext, TLSConfig: &tls.Config{RootCAs: x509.NewCertPool()}})
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) { failed = err != nil },
	})
	_, err := untrusted.RoundTrip(getReq(t, ctx, http.MethodGet, srv.URL+"/"), time.Minute)
	var cve *tls.CertificateVerificationError
	if !errors.As(err, &cve) || !failed {
		t.Errorf("untrusted certificate: %v (trace saw a failure: %v), want a CertificateVerificationError", err, failed)
	}
}

// TestClientTLSPoolApart: http:// and https:// requests to one address
// never share a connection: a plain server answers http, and https to
// the same address fails its handshake on a new connection instead of
// reusing the idle plain one.
func TestClientTLSPoolApart(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "plain") })
	var d net.Dialer
	o := New(Options{Dial: d.DialContext, TLSConfig: &tls.Config{}, HandshakeTimeout: 5 * time.Second})
	defer o.CloseIdle()
	if _, body, err := roundTripBody(t, o, http.MethodGet, srv.URL+"/"); err != nil || body != "plain" {
		t.Fatalf("http: %q, %v", body, err)
	}
	if o.IdleCount() != 1 {
		t.Fatalf("%d idle connections after the http GET, want 1", o.IdleCount())
	}
	if _, _, err := roundTripBody(t, o, http.MethodGet, strings.Replace(srv.URL, "http://", "https://", 1)+"/"); err == nil {
		t.Fatal("https to a plain server succeeded: it reused the plain connection")
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the https request dials its own)", n)
	}
}

// TestClientTLSBodyToClose: over TLS, a response without Content-Length
// or chunking ends where the server closes the connection, with or
// without a close_notify alert, as over plain TCP.
func TestClientTLSBodyToClose(t *testing.T) {
	srv, _, conf := tlsServer(t, func(http.ResponseWriter, *http.Request) {})
	cert := srv.TLS.Certificates
	for _, notify := range []bool{true, false} {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: cert})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			c.Read(buf) // the request
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")
			if notify {
				c.Close()
			} else {
				c.(*tls.Conn).NetConn().Close()
			}
		}()
		var d net.Dialer
		o := New(Options{Dial: d.DialContext, TLSConfig: &tls.Config{RootCAs: conf.RootCAs, ServerName: "example.com"}})
		resp, err := o.RoundTrip(getReq(t, context.Background(), http.MethodGet, "https://"+ln.Addr().String()+"/"), 10*time.Second)
		if err != nil {
			t.Fatalf("close_notify %v: %v", notify, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "until the end" || err != nil {
			t.Errorf("close_notify %v: body %q, %v", notify, b, err)
		}
		ln.Close()
		o.CloseIdle()
	}
}
