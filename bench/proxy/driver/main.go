// Command driver is the load driver of the proxy benchmark
// (bench/proxy/run.sh, docs/performance.md). It has three roles:
//
//	driver origin   -listen ADDR -size N        the origin: 1 KB pages, robots.txt 404
//	driver httputil -listen ADDR -origin ADDR   a minimal net/http/httputil forward proxy
//	driver load     [flags]                     the clients; prints one JSON line
//
// The origin answers /miss/... with Cache-Control: private (no shared cache
// stores it) and /hit/... with max-age=3600. Host names are h<i>.bench;
// every role that dials maps them to the origin address itself (squid uses
// a hosts_file, courtesy --resolve).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: driver origin|httputil|load [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "origin":
		err = origin(ctx, os.Args[2:])
	case "httputil":
		err = reverse(ctx, os.Args[2:])
	case "load":
		err = load(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown role %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Println("listening on", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func origin(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("origin", flag.ExitOnError)
	addr := fs.String("listen", "127.0.0.1:0", "listen address")
	size := fs.Int("size", 1024, "page size in bytes")
	fs.Parse(args)
	page := []byte(strings.Repeat("x", *size))
	return serve(ctx, *addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
			return
		case strings.HasPrefix(r.URL.Path, "/hit/"):
			w.Header().Set("Cache-Control", "max-age=3600")
		default:
			w.Header().Set("Cache-Control", "private")
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Write(page)
	}))
}

// dialTo returns a dial function sending every connection to addr.
func dialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	d := &net.Dialer{}
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}

func reverse(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("httputil", flag.ExitOnError)
	addr := fs.String("listen", "127.0.0.1:0", "listen address")
	to := fs.String("origin", "", "origin address every host maps to")
	fs.Parse(args)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL // absolute form: forward as is
			pr.Out.Host = ""
		},
		Transport: &http.Transport{
			DialContext:         dialTo(*to),
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		ErrorLog: nil,
	}
	return serve(ctx, *addr, rp)
}

type result struct {
	Name       string  `json:"name"`
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	RPS        float64 `json:"rps"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	CPUPer10k  float64 `json:"cpu_per_10k_s,omitempty"`
}

func load(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	name := fs.String("name", "", "label of this run")
	proxyURL := fs.String("proxy", "", "proxy URL; empty: direct")
	originAddr := fs.String("origin", "", "origin address (direct runs dial it for every host)")
	port := fs.String("port", "", "origin port named in URLs")
	clients := fs.Int("clients", 1, "concurrent clients")
	requests := fs.Int("requests", 0, "requests to time (latency runs); 0: run for -duration")
	duration := fs.Duration("duration", 5*time.Second, "length of a throughput run")
	warmup := fs.Int("warmup", 500, "untimed requests first")
	hosts := fs.Int("hosts", 1, "distinct host names h0.bench ... to spread requests over")
	path := fs.String("path", "miss", "miss (uncacheable) or hit (cacheable, -hitset URLs)")
	hitset := fs.Int("hitset", 100, "distinct URLs of a hit run")
	pid := fs.Int("pid", 0, "process whose CPU time to report (the proxy)")
	fs.Parse(args)

	tr := &http.Transport{
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	if *proxyURL != "" {
		pu, err := url.Parse(*proxyURL)
		if err != nil {
			return err
		}
		tr.Proxy = http.ProxyURL(pu)
	} else {
		tr.DialContext = dialTo(*originAddr)
	}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var seq atomic.Int64
	target := func() string {
		n := seq.Add(1)
		h := n % int64(*hosts)
		if *path == "hit" {
			return fmt.Sprintf("http://h%d.bench:%s/hit/%d", h, *port, n%int64(*hitset))
		}
		return fmt.Sprintf("http://h%d.bench:%s/miss/%d", h, *port, n)
	}
	var errors atomic.Int64
	get := func() bool {
		resp, err := client.Get(target())
		if err != nil {
			errors.Add(1)
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			errors.Add(1)
			return false
		}
		return true
	}
	// Warm up: connections, robots.txt of every host, cache entries.
	warm := max(*warmup, *hosts)
	if *path == "hit" {
		warm = max(warm, *hitset**hosts)
	}
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(warm))
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				get()
			}
		}()
	}
	wg.Wait()
	errors.Store(0)

	cpu0 := cpuSeconds(*pid)
	res := result{Name: *name}
	start := time.Now()
	if *requests > 0 {
		lat := make([]time.Duration, 0, *requests)
		var mu sync.Mutex
		left.Store(int64(*requests))
		for range *clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 && ctx.Err() == nil {
					t := time.Now()
					if get() {
						d := time.Since(t)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		slices.Sort(lat)
		if len(lat) > 0 {
			res.P50us = float64(lat[len(lat)/2].Nanoseconds()) / 1e3
			res.P99us = float64(lat[len(lat)*99/100].Nanoseconds()) / 1e3
		}
		res.Requests = int64(len(lat))
	} else {
		var done atomic.Int64
		end := start.Add(*duration)
		for range *clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) && ctx.Err() == nil {
					if get() {
						done.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		res.Requests = done.Load()
	}
	res.Seconds = time.Since(start).Seconds()
	res.RPS = float64(res.Requests) / res.Seconds
	res.Errors = errors.Load()
	if *pid > 0 {
		res.CPUSeconds = cpuSeconds(*pid) - cpu0
		if res.Requests > 0 {
			res.CPUPer10k = res.CPUSeconds / float64(res.Requests) * 10000
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// cpuSeconds is the user+system CPU time of pid and its threads, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s).
func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}
