// Command origin is the proxy benchmark's web server (bench/proxy/run.sh):
// every host name and every path answers 200 with the same cacheable body
// of -bytes bytes, so that any number of unique URLs (cache misses) and of
// host names can be asked for, and a cache may keep each answer for a day.
// /robots.txt allows everything. It counts the requests it serves, so the
// load driver can tell how many requests a proxy really forwarded (a cache
// hit must not reach the origin): GET /_origin/stats answers {"requests":N}
// (robots.txt and the stats themselves are not counted).
//
//	origin [-listen 127.0.0.1:0] [-bytes 1024]
//
// It prints "origin: listening on http://ADDR" and serves until SIGINT or
// SIGTERM. The testweb server was not used as the origin because its pages
// are a fixed set per site (no unlimited unique URLs) and it renders each
// page, which would put the origin's CPU in every peer's figures.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// maxBytes bounds -bytes.
const maxBytes = 16 << 20

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "origin:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "listen `ADDR` (loopback)")
	size := flag.Int("bytes", 1024, "body size in `BYTES` of every page")
	flag.Parse()
	if *size < 0 || *size > maxBytes {
		return fmt.Errorf("-bytes %d: want 0..%d", *size, maxBytes)
	}
	if host, _, err := net.SplitHostPort(*listen); err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-listen %q: want a loopback IP and port", *listen)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           newHandler(*size),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
	}
	fmt.Printf("origin: listening on http://%s\n", ln.Addr())
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
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// handler serves the fixed page and counts requests.
type handler struct {
	body         []byte
	length       string
	lastModified string
	requests     atomic.Int64
}

func newHandler(size int) *handler {
	body := bytes.Repeat([]byte("courtesy proxy benchmark page. "), size/31+1)[:size]
	return &handler{
		body:         body,
		length:       strconv.Itoa(size),
		lastModified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat),
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
		return
	case "/_origin/stats":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "{\"requests\":%d}\n", h.requests.Load())
		return
	}
	h.requests.Add(1)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Length", h.length)
	hd.Set("Cache-Control", "public, max-age=86400")
	hd.Set("Last-Modified", h.lastModified)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(h.body)
}
