//go:build unix

package testweb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchWeb is the crawl benchmark's web: 2,000 plain sites of 50 pages.
func benchWeb(b *testing.B) *Web {
	b.Helper()
	w, err := New(Config{Sites: 2000, PagesPerSite: 50, Plain: true})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkRender measures building and serving one generic page
// in-process (no network, no logging).
func BenchmarkRender(b *testing.B) {
	w := benchWeb(b)
	h := w.Handler()
	req := httptest.NewRequest("GET", "http://site-0042.test"+genericPath(17), nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkServeLogged drives the logged handler over loopback TCP with 32
// keep-alive connections speaking minimal HTTP/1.1 (so that the client
// costs little of the shared CPU), every request recorded by a Log into
// io.Discard. It reports pages/s; client and server share the machine.
func BenchmarkServeLogged(b *testing.B) {
	benchServe(b, 32, true)
}

// BenchmarkServeLoggedSeparateClient is BenchmarkServeLogged with the
// client in a child process, so that the server's own CPU time can be
// measured: "pages/server-cpu-s" is what one core of server gives.
func BenchmarkServeLoggedSeparateClient(b *testing.B) {
	w := benchWeb(b)
	l := NewLog(io.Discard)
	srv := httptest.NewServer(w.LoggedHandler(l))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", benchClientEnv, addr, b.N, 32))
	cmd.Stderr = os.Stderr
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("client: %v", err)
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	if got := l.Entries(); got != int64(b.N) {
		b.Fatalf("logged %d of %d requests", got, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pages/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "pages/server-cpu-s")
	}
}

// benchClientEnv, when set to ADDR,N,CONNS, makes the test binary a
// benchmark client (see TestMain) instead of running tests.
const benchClientEnv = "TESTWEB_BENCH_CLIENT"

func TestMain(m *testing.M) {
	if spec := os.Getenv(benchClientEnv); spec != "" {
		if err := benchClient(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench client:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchClient fetches N generic pages from ADDR over CONNS keep-alive
// connections.
func benchClient(spec string) error {
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	n, err1 := strconv.ParseInt(parts[1], 10, 64)
	conns, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("bad spec %q", spec)
	}
	return drive(parts[0], n, conns)
}

// drive sends n requests for generic pages to addr over conns keep-alive
// connections speaking minimal HTTP/1.1.
func drive(addr string, n int64, conns int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, conns)
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				errc <- err
				return
			}
			defer conn.Close()
			br := bufio.NewReaderSize(conn, 64<<10)
			bw := bufio.NewWriter(conn)
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				site, page := int(i%2000), int(i/2000%50)
				fmt.Fprintf(bw, "GET %s HTTP/1.1\r\nHost: site-%04d.test\r\nUser-Agent: bench/1.0\r\n\r\n", genericPath(page), site)
				if err := bw.Flush(); err != nil {
					errc <- err
					return
				}
				if err := readResponse(br); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// BenchmarkServeUnlogged is BenchmarkServeLogged without the log, to show
// what logging costs.
func BenchmarkServeUnlogged(b *testing.B) {
	benchServe(b, 32, false)
}

func benchServe(b *testing.B, conns int, logged bool) {
	w := benchWeb(b)
	var h http.Handler = w.Handler()
	var l *Log
	if logged {
		l = NewLog(io.Discard)
		h = w.LoggedHandler(l)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	n := int64(b.N)
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	err := drive(addr, n, conns)
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if l != nil {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		if got := l.Entries(); got != n {
			b.Fatalf("logged %d of %d requests", got, n)
		}
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "pages/s")
	// On a shared machine wall-clock rates depend on the neighbours; the
	// rate per CPU-second of this process (server and client together) is
	// steadier.
	if cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "pages/cpu-s")
	}
}

// cpuTime is the user plus system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readResponse reads one response with a Content-Length body and checks
// its status is 200.
func readResponse(br *bufio.Reader) error {
	status, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(status), "HTTP/1.1 200") {
		return fmt.Errorf("status line %q", status)
	}
	length := -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := strings.Cut(string(line), ":"); ok && strings.EqualFold(k, "Content-Length") {
			length, err = strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return err
			}
		}
	}
	if length < 0 {
		return fmt.Errorf("no Content-Length")
	}
	_, err = br.Discard(length)
	return err
}
