package proxy

// Low-load mode.
//
// With one client and an idle machine, most of what a proxied request
// adds to a direct one is not the proxy's work but waking things up. A
// direct request wakes the origin and then the client; through the proxy,
// the proxy is woken twice more, and with every core available the Go
// scheduler hands each wake-up from the thread that polled the network
// to another one (3.3 futex calls per request at one client, counted
// with strace), on virtual CPUs that halt when idle and are slow to
// resume. Two measures remove most of it while the load is low:
//
//   - one core: the governor sets GOMAXPROCS to 1, so the goroutine whose
//     socket became readable runs on the thread that saw it;
//   - polling: a read the proxy is about to wait on (the origin's response
//     header, the client's next request) first polls its socket for up
//     to LowLatencyConfig.Poll (100 µs by default), so the thread does not
//     go to sleep for a wait that usually lasts tens of microseconds.
//
// Both cost throughput under load, so the governor leaves low-load mode
// as soon as more than lowLoadMax requests are in flight and enters it
// again only after lowLoadQuiet without that. docs/proxy.md has the
// figures; GOMAXPROCS is process-wide, so only the proxy command
// (Options.GovernProcs) turns this on, never a library user by default.

import (
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// lowLoadMax is the most requests in flight that still count as low
	// load (one client, or a client and a monitoring probe).
	lowLoadMax = 2
	// lowLoadQuiet is how long the load must stay low before the
	// governor returns to one core.
	lowLoadQuiet = time.Second
	// governTick is how often the governor looks at the load.
	governTick = 250 * time.Millisecond
)

// governor switches the process between one core with polling (low load)
// and every core without.
type governor struct {
	inflight atomic.Int64 // requests in the proxy's handler now
	busyAt   atomic.Int64 // unix ns when more than lowLoadMax were last in flight
	low      atomic.Bool  // low-load mode: one core, polling allowed
	polling  atomic.Bool  // a read is polling now (one at a time)
	switches atomic.Int64 // entries into low-load mode
	polls    atomic.Int64 // reads that polled
	pollHits atomic.Int64 // polls that ended readable within the budget
	wake     chan struct{}
	done     chan struct{}

	cfg      func() LowLatencyConfig
	setProcs func(int) int // runtime.GOMAXPROCS
	many     int           // GOMAXPROCS outside low-load mode
	now      func() time.Time
}

func newGovernor(cfg func() LowLatencyConfig, setProcs func(int) int, now func() time.Time) *governor {
	return &governor{
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		cfg:      cfg,
		setProcs: setProcs,
		many:     setProcs(0),
		now:      now,
	}
}

// begin counts a request in; a request that makes the load high wakes the
// governor at once when it is in low-load mode.
func (g *governor) begin() {
	if g.inflight.Add(1) <= lowLoadMax {
		return
	}
	g.busyAt.Store(g.now().UnixNano())
	if g.low.Load() {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// end counts a request out; the load was high until now when more than
// lowLoadMax were in flight before it.
func (g *governor) end() {
	if g.inflight.Add(-1) >= lowLoadMax {
		g.busyAt.Store(g.now().UnixNano())
	}
}

// run switches modes until closing is closed, then restores every core.
func (g *governor) run(closing <-chan struct{}) {
	defer close(g.done)
	t := time.NewTicker(governTick)
	defer t.Stop()
	for {
		select {
		case <-closing:
			g.leave()
			return
		case <-g.wake:
			g.leave()
		case <-t.C:
			g.check()
		}
	}
}

// check enters low-load mode after lowLoadQuiet of low load, and leaves
// it when the configuration turns it off.
func (g *governor) check() {
	if g.cfg().Disabled {
		g.leave()
		return
	}
	now := g.now().UnixNano()
	if g.inflight.Load() > lowLoadMax {
		g.busyAt.Store(now)
		g.leave()
		return
	}
	if !g.low.Load() && now-g.busyAt.Load() >= int64(lowLoadQuiet) {
		if g.many > 1 {
			g.setProcs(1)
		}
		g.switches.Add(1)
		g.low.Store(true) // last: polling starts on one core
	}
}

func (g *governor) leave() {
	if !g.low.Load() {
		return
	}
	g.low.Store(false) // first: no new poll starts
	if g.many > 1 {
		g.setProcs(g.many)
	}
}

// awaitReadable polls rc until it is readable (data, end of stream or an
// error), for at most the configured budget, while the proxy is in
// low-load mode with at most max requests in flight. It returns at once
// otherwise; the read that follows then waits as usual.
func (g *governor) awaitReadable(rc syscall.RawConn, max int64) {
	if !canPoll || !g.low.Load() || g.inflight.Load() > max {
		return
	}
	budget := g.cfg().Poll
	if budget <= 0 || !g.polling.CompareAndSwap(false, true) {
		return
	}
	defer g.polling.Store(false)
	g.polls.Add(1)
	end := time.Now().Add(budget)
	_ = rc.Read(func(fd uintptr) bool {
		for i := 1; ; i++ {
			if readable(fd) {
				g.pollHits.Add(1)
				return true
			}
			if i%8 == 0 && (!g.low.Load() || g.inflight.Load() > max || time.Now().After(end)) {
				return true
			}
			if i%16 == 0 {
				runtime.Gosched() // one core: let the other request run
				yieldCPU()        // and other processes (the origin, the client)
			}
		}
	})
}

// pollConn is a TCP connection whose reads first poll (awaitReadable).
type pollConn struct {
	*net.TCPConn
	rc  syscall.RawConn
	g   *governor
	max int64
}

func (c *pollConn) Read(p []byte) (int, error) {
	if len(p) > 0 {
		c.g.awaitReadable(c.rc, c.max)
	}
	return c.TCPConn.Read(p)
}

// wrap returns c with polling reads allowed while at most max requests
// are in flight (0 for a client connection between requests, 1 for the
// origin connection of the only request); c itself when it is not TCP or
// polling is not supported here.
func (g *governor) wrap(c net.Conn, max int64) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok || !canPoll {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &pollConn{TCPConn: tc, rc: rc, g: g, max: max}
}

// pollListener wraps accepted connections for polling.
type pollListener struct {
	net.Listener
	g *governor
}

func (l pollListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.g.wrap(c, 0), nil
}
