package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime ...
	tests := []struct {
		name    string
		stat    string
		want    float64
		wantErr bool
	}{
		{"plain", "123 (squid) S 1 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0", 3.0, false},
		{"name with spaces and parens", "7 (a) b (c)) R 1 1 1 0 -1 0 0 0 0 0 1 2 0 0", 0.03, false},
		{"no name", "123 squid S 1", 0, true},
		{"too few fields", "123 (x) S 1 1 1", 0, true},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 ten 2 0", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU(tc.stat)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && (got < tc.want-1e-9 || got > tc.want+1e-9) {
				t.Errorf("got %v s, want %v", got, tc.want)
			}
		})
	}
}

func TestProcCPUSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	got, err := procCPU(os.Getpid())
	if err != nil || got < 0 {
		t.Fatalf("procCPU(self) = %v, %v; want >= 0, nil", got, err)
	}
}

func TestPercentiles(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var hundred []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		hundred = append(hundred, ms(i))
	}
	tests := []struct {
		name               string
		in                 []time.Duration
		p50, p99, wantMean time.Duration
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []time.Duration{ms(7)}, ms(7), ms(7), ms(7)},
		{"1..100", hundred, ms(50), ms(99), ms(50) + ms(1)/2},
		{"two", []time.Duration{ms(3), ms(1)}, ms(1), ms(3), ms(2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p50, p99, mean := percentiles(tc.in)
			if p50 != tc.p50 || p99 != tc.p99 || mean != tc.wantMean {
				t.Errorf("got p50 %v p99 %v mean %v, want %v %v %v", p50, p99, mean, tc.p50, tc.p99, tc.wantMean)
			}
		})
	}
}

func TestURLs(t *testing.T) {
	miss := urls{port: "8080", hosts: 3, runID: "r1", mode: "miss", hit: 5}
	seen := map[string]bool{}
	for i := int64(0); i < 30; i++ {
		u := miss.page(i)
		if seen[u] {
			t.Fatalf("miss URL %d repeats: %s", i, u)
		}
		seen[u] = true
	}
	if got, want := miss.page(4), "http://site-0001.test:8080/miss/r1/4"; got != want {
		t.Errorf("miss page 4 = %s, want %s", got, want)
	}
	hit := urls{port: "8080", hosts: 2, runID: "r1", mode: "hit", hit: 5}
	if hit.page(2) != hit.page(7) || hit.page(2) == hit.page(3) {
		t.Errorf("hit URLs should repeat with period 5: %s %s %s", hit.page(2), hit.page(7), hit.page(3))
	}
}

func TestParseErrors(t *testing.T) {
	base := []string{"-peer", "p", "-scenario", "s", "-origin", "127.0.0.1:1"}
	tests := []struct {
		name string
		args []string
	}{
		{"no peer", []string{"-scenario", "s", "-origin", "127.0.0.1:1"}},
		{"no origin", []string{"-peer", "p", "-scenario", "s"}},
		{"origin without port", []string{"-peer", "p", "-scenario", "s", "-origin", "127.0.0.1"}},
		{"zero clients", append(base, "-clients", "0")},
		{"too many hosts", append(base, "-hosts", "1000000")},
		{"bad mode", append(base, "-mode", "both")},
		{"bad proxy", append(base, "-proxy", "socks5://127.0.0.1:1")},
		{"run id with slash", append(base, "-run-id", "a/b")},
		{"long duration", append(base, "-duration", "1h")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parse(tc.args); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := parse(base); err != nil {
		t.Errorf("valid flags: %v", err)
	}
}

// testOrigin mimics bench/proxy/origin: 1024-byte pages and a request count.
func testOrigin(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	body := bytes.Repeat([]byte("x"), 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_origin/stats" {
			fmt.Fprintf(w, "{\"requests\":%d}", n.Load())
			return
		}
		n.Add(1)
		if !strings.HasSuffix(r.Host, ".test:"+localPort(r)) {
			http.Error(w, "unexpected host "+r.Host, http.StatusBadRequest)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// localPort returns the port the request came in on.
func localPort(r *http.Request) string {
	addr := r.Context().Value(http.LocalAddrContextKey)
	s := fmt.Sprint(addr)
	return s[strings.LastIndexByte(s, ':')+1:]
}

func TestRun(t *testing.T) {
	origin, _ := testOrigin(t)
	originAddr := strings.TrimPrefix(origin.URL, "http://")
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", originAddr
			pr.Out.Host = pr.In.Host
		},
	})
	t.Cleanup(proxy.Close)

	tests := []struct {
		name  string
		extra []string
	}{
		{"direct miss", []string{"-mode", "miss", "-hosts", "3"}},
		{"proxied miss", []string{"-mode", "miss", "-proxy", proxy.URL, "-pid", fmt.Sprint(os.Getpid())}},
		{"direct hit", []string{"-mode", "hit", "-hit-urls", "4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.jsonl")
			args := append([]string{"-peer", "p", "-scenario", tc.name, "-origin", originAddr,
				"-clients", "4", "-duration", "5m", "-max-requests", "40", "-o", out}, tc.extra...)
			if err := run(args); err != nil {
				t.Fatal(err)
			}
			rs, err := readResults(out)
			if err != nil || len(rs) != 1 {
				t.Fatalf("results %v, %v; want one", rs, err)
			}
			r := rs[0]
			if r.Requests != 40 || r.Errors != 0 {
				t.Errorf("requests %d errors %d (%s), want 40 and 0", r.Requests, r.Errors, r.FirstError)
			}
			// No cache anywhere here: every timed request reaches the origin.
			if r.OriginRequests != 40 {
				t.Errorf("origin requests %d, want 40", r.OriginRequests)
			}
			if r.P50Ms <= 0 || r.P99Ms < r.P50Ms {
				t.Errorf("p50 %v p99 %v: want 0 < p50 <= p99", r.P50Ms, r.P99Ms)
			}
			hasPID := strings.Contains(strings.Join(tc.extra, " "), "-pid")
			if hasPID != (r.ProxyCPUSeconds >= 0) {
				t.Errorf("proxy cpu %v with -pid %v", r.ProxyCPUSeconds, hasPID)
			}
		})
	}
}

func TestTable(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "r.jsonl")
	var buf bytes.Buffer
	for _, r := range []Result{
		{Peer: "direct", Scenario: "miss-1c", Mode: "miss", Clients: 1, Hosts: 1, RequestsPerS: 1000, P50Ms: 0.1, P99Ms: 0.3, ProxyCPUSeconds: -1, OriginRequests: 10},
		{Peer: "squid", Scenario: "miss-1c", Mode: "miss", Clients: 1, Hosts: 1, RequestsPerS: 500, P50Ms: 0.4, P99Ms: 1.3, ProxyCPUSeconds: 2, ProxyCPUPer10k: 0.25, OriginRequests: 10},
		{Peer: "courtesy", Scenario: "miss-1c", Mode: "miss", Clients: 1, Hosts: 1, RequestsPerS: 750, P50Ms: 0.2, P99Ms: 0.8, ProxyCPUSeconds: 1, ProxyCPUPer10k: 0.125, OriginRequests: 10},
	} {
		b, _ := json.Marshal(r)
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := table(&out, []string{name}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"miss-1c (miss, 1 clients, 1 hosts)",
		"| courtesy | 750 | 1.50 | 0.200 | 0.800 | +0.100 | +0.500 | 0 | 10 | 1.00 | 0.125 |",
		"| direct | 1000 | 2.00 | 0.100 | 0.300 |  |  | 0 | 10 |  |  |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if err := table(&out, []string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("missing file: no error")
	}
}
