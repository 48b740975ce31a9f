package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// fakeProcs stands in for runtime.GOMAXPROCS.
type fakeProcs struct {
	mu  sync.Mutex
	cur int
	set []int
}

func (f *fakeProcs) procs(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.cur
	if n > 0 {
		f.cur = n
		f.set = append(f.set, n)
	}
	return old
}

func (f *fakeProcs) now() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur
}

func TestGovernorModes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProcs{cur: 4}
		var disabled atomic.Bool
		g := newGovernor(func() LowLatencyConfig {
			return LowLatencyConfig{Disabled: disabled.Load(), Poll: 100 * time.Microsecond}
		}, fp.procs, time.Now)
		closing := make(chan struct{})
		go g.run(closing)
		check := func(step string, low bool, procs int) {
			t.Helper()
			synctest.Wait()
			if g.low.Load() != low || fp.now() != procs {
				t.Fatalf("%s: low %v procs %d, want low %v procs %d", step, g.low.Load(), fp.now(), low, procs)
			}
		}
		check("start", false, 4)
		time.Sleep(lowLoadQuiet + governTick)
		check("after a quiet second", true, 1)

		g.begin()
		g.begin()
		check("two in flight", true, 1)
		g.begin()
		check("a third in flight", false, 4) // at once, not at the next tick
		time.Sleep(3 * lowLoadQuiet)
		check("still three in flight", false, 4)
		g.end()
		time.Sleep(lowLoadQuiet / 2)
		check("half a second after the load fell", false, 4)
		time.Sleep(lowLoadQuiet/2 + governTick)
		check("a second after the load fell", true, 1)

		disabled.Store(true)
		time.Sleep(governTick)
		check("disabled", false, 4)
		time.Sleep(3 * lowLoadQuiet)
		check("still disabled", false, 4)
		disabled.Store(false)
		time.Sleep(governTick)
		check("enabled again", true, 1)

		close(closing)
		<-g.done
		check("closed", false, 4)
		if got := g.switches.Load(); got != 3 {
			t.Errorf("switches = %d, want 3", got)
		}
	})
}

func TestGovernorOneCore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProcs{cur: 1}
		g := newGovernor(func() LowLatencyConfig { return LowLatencyConfig{} }, fp.procs, time.Now)
		closing := make(chan struct{})
		go g.run(closing)
		time.Sleep(2 * lowLoadQuiet)
		synctest.Wait()
		if !g.low.Load() {
			t.Error("a one-core process does not enter low-load mode")
		}
		close(closing)
		<-g.done
		if len(fp.set) != 0 {
			t.Errorf("GOMAXPROCS set to %v on a one-core process", fp.set)
		}
	})
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	a, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-done
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestPollingRead(t *testing.T) {
	if !canPoll {
		t.Skip("polling reads are implemented on Linux only") // poll_other.go
	}
	cases := []struct {
		name      string
		low       bool
		inflight  int64
		poll      time.Duration
		after     time.Duration // the peer writes after this
		closePeer bool
		polls     int64
		hits      int64
	}{
		{name: "data arrives within the budget", low: true, poll: 5 * time.Second, after: 20 * time.Millisecond, polls: 1, hits: 1},
		{name: "data already there", low: true, poll: 5 * time.Second, polls: 1, hits: 1},
		{name: "end of stream counts as readable", low: true, poll: 5 * time.Second, after: 20 * time.Millisecond, closePeer: true, polls: 1, hits: 1},
		{name: "budget runs out, the read still waits", low: true, poll: 5 * time.Millisecond, after: 300 * time.Millisecond, polls: 1, hits: 0},
		{name: "not in low-load mode", low: false, poll: 5 * time.Second, after: 20 * time.Millisecond},
		{name: "too many in flight", low: true, inflight: 2, poll: 5 * time.Second, after: 20 * time.Millisecond},
		{name: "polling off", low: true, poll: -1, after: 20 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGovernor(func() LowLatencyConfig { return LowLatencyConfig{Poll: tc.poll} }, func(int) int { return 2 }, time.Now)
			g.low.Store(tc.low)
			g.inflight.Store(tc.inflight)
			a, b := tcpPair(t)
			pc := g.wrap(a, 1)
			if _, ok := pc.(*pollConn); !ok {
				t.Fatalf("wrap returned %T, want *pollConn", pc)
			}
			go func() {
				time.Sleep(tc.after)
				if tc.closePeer {
					b.Close()
					return
				}
				io.WriteString(b, "ping")
			}()
			_ = pc.SetReadDeadline(time.Now().Add(10 * time.Second))
			buf := make([]byte, 16)
			n, err := pc.Read(buf)
			switch {
			case tc.closePeer && err != io.EOF:
				t.Fatalf("read = %d, %v; want EOF", n, err)
			case !tc.closePeer && (err != nil || string(buf[:n]) != "ping"):
				t.Fatalf("read = %q, %v; want ping", buf[:n], err)
			}
			if g.polls.Load() != tc.polls || g.pollHits.Load() != tc.hits {
				t.Errorf("polls %d hits %d, want %d and %d", g.polls.Load(), g.pollHits.Load(), tc.polls, tc.hits)
			}
			if g.polling.Load() {
				t.Error("the poll slot was not released")
			}
		})
	}
}

// TestLowLoadModeEndToEnd runs a proxy that governs the (test) process:
// one client's requests switch it to one core and polling reads, a burst
// of clients switches it back, Close restores GOMAXPROCS.
func TestLowLoadModeEndToEnd(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 { // the switch needs two cores to show
		old := runtime.GOMAXPROCS(2)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
	many := runtime.GOMAXPROCS(0)
	o := newOrigin(t, "", hello)
	g, err := politeness.New(politeness.Config{DefaultDelay: -1}, politeness.Backend{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{AllowPrivate: true}, Options{Gate: g, GovernProcs: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(p.Handler(nil), Config{}, nil)
	go srv.Serve(p.Listener(ln))
	closed := false
	closeAll := func() {
		if !closed {
			closed = true
			srv.Close()
			p.Close()
		}
	}
	t.Cleanup(closeAll)

	pu, _ := url.Parse("http://" + ln.Addr().String())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	get := func(c *http.Client, i int) error {
		resp, err := c.Get(fmt.Sprintf("%s/p%d", o.URL, i))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if want := fmt.Sprintf("hello /p%d", i); resp.StatusCode != 200 || string(b) != want {
			return fmt.Errorf("GET /p%d: %d %q, want 200 %q", i, resp.StatusCode, b, want)
		}
		return nil
	}

	waitFor(t, "low-load mode", func() bool { return p.gov.low.Load() })
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS in low-load mode = %d, want 1", got)
	}
	for i := range 200 {
		if err := get(client, i); err != nil {
			t.Fatal(err)
		}
	}
	if p.gov.polls.Load() == 0 || p.gov.pollHits.Load() == 0 {
		t.Errorf("one client's requests made %d polls, %d hits; want some of each", p.gov.polls.Load(), p.gov.pollHits.Load())
	}

	// A burst: 16 clients at once leave low-load mode while they run.
	var wg sync.WaitGroup
	var left atomic.Bool
	errs := make(chan error, 16)
	stop := time.Now().Add(5 * time.Second)
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop) && !left.Load(); i++ {
				if err := get(client, 1000*c+i); err != nil {
					errs <- err
					return
				}
				if !p.gov.low.Load() && runtime.GOMAXPROCS(0) == many {
					left.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !left.Load() {
		t.Fatalf("16 clients did not bring back %d cores within 5 s", many)
	}

	waitFor(t, "low-load mode again", func() bool { return p.gov.low.Load() })
	closeAll()
	if got := runtime.GOMAXPROCS(0); got != many {
		t.Errorf("GOMAXPROCS after Close = %d, want %d", got, many)
	}
}
