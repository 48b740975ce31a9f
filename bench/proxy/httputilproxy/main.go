// Command httputilproxy is the proxy benchmark's baseline (bench/proxy/run.sh,
// docs/performance.md): the smallest useful HTTP forward proxy built on the
// standard library's net/http/httputil.ReverseProxy, with no cache and no
// politeness. It shows what any Go proxy costs before it does anything.
//
//	httputilproxy [-listen 127.0.0.1:0] [-resolve SUFFIX=ADDR:PORT]
//
// It accepts absolute-form requests ("GET http://host/path HTTP/1.1");
// anything else gets 400. -resolve sends connections for host names ending
// in SUFFIX (".test" matches every *.test name) to ADDR:PORT, as courtesy's
// --resolve does, since the benchmark's host names are not in DNS.
//
// The Transport is tuned the way a proxy should be: many idle connections
// kept per origin host (Go's default of 2 makes a proxy under 64 clients open
// and close connections all the time, doubling its CPU per request).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "httputilproxy:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "listen `ADDR`")
	resolveFlag := flag.String("resolve", "", "send connections for hosts ending in `SUFFIX=ADDR:PORT` there")
	flag.Parse()

	h, err := newProxy(*resolveFlag)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
	fmt.Printf("httputilproxy: listening on http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// newProxy builds the forward proxy. resolveRule is "" or SUFFIX=ADDR:PORT.
func newProxy(resolveRule string) (http.Handler, error) {
	var suffix, target string
	if resolveRule != "" {
		s, t, ok := strings.Cut(resolveRule, "=")
		if !ok || s == "" {
			return nil, fmt.Errorf("httputilproxy: -resolve %q: want SUFFIX=ADDR:PORT", resolveRule)
		}
		if _, _, err := net.SplitHostPort(t); err != nil {
			return nil, fmt.Errorf("httputilproxy: -resolve %q: %w", resolveRule, err)
		}
		suffix, target = strings.ToLower(strings.TrimPrefix(s, "*")), t
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if suffix != "" {
				host, _, err := net.SplitHostPort(addr)
				if err == nil && strings.HasSuffix(strings.ToLower(host), suffix) {
					addr = target
				}
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConns:          0, // no limit in total
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true, // pass encodings through untouched
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The incoming URL is absolute (checked below); forward it as is.
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
		},
		Transport: tr,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
			http.Error(w, "httputilproxy: only absolute-form http:// requests", http.StatusBadRequest)
			return
		}
		rp.ServeHTTP(w, r)
	}), nil
}
