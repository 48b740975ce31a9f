package console

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// BenchmarkHostsPage answers hosts-table pages over a synthetic frontier
// of a million hosts (the snapshot is built once, before the timer). The
// bar is 100 ms per page; "full-sort" is the peer: sorting every row for
// each page, which the bounded heap avoids.
func BenchmarkHostsPage(b *testing.B) {
	const n = 1_000_000
	x := newHostIndex(synthHosts(n), time.Hour, time.Now)
	x.size = func() int { return n }
	snap := x.snapshot()
	if len(snap.rows) != n {
		b.Fatalf("%d rows", len(snap.rows))
	}
	cases := []struct {
		name string
		q    HostQuery
	}{
		{"first-page-by-host", HostQuery{Sort: "host", Limit: 50}},
		{"top-queued", HostQuery{Sort: "queued", Desc: true, Limit: 50}},
		{"page-100-by-fetched", HostQuery{Sort: "fetched", Offset: 4950, Limit: 50}},
		{"search", HostQuery{Search: "12345", Sort: "queued", Desc: true, Limit: 50}},
		{"deep-page-cached-sort", HostQuery{Sort: "blocked_until", Offset: 500_000, Limit: 50}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			if err := q.check(); err != nil {
				b.Fatal(err)
			}
			snap.page(q) // a deep page sorts its column once per snapshot
			c0 := cpuclock.Process()
			for b.Loop() {
				if rows, _ := snap.page(q); len(rows) == 0 {
					b.Fatal("empty page")
				}
			}
			reportPage(b, cpuclock.Process()-c0)
		})
	}
	b.Run("peer-full-sort", func(b *testing.B) {
		c0 := cpuclock.Process()
		for b.Loop() {
			snap.sortedBy("queued", true)
		}
		reportPage(b, cpuclock.Process()-c0)
	})
	b.Run("snapshot-build", func(b *testing.B) {
		c0 := cpuclock.Process()
		for b.Loop() {
			x.build()
		}
		reportPage(b, cpuclock.Process()-c0)
	})
}

// reportPage reports wall and CPU milliseconds per operation: on a shared
// machine the CPU time is the steadier figure.
func reportPage(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkConsoleCPU measures what an open console costs a crawl, in
// one run: the driven crawl of the synthetic web (four workers, a real
// frontier and gate; the testweb server runs in this process too) is
// measured without the console (its CPU per second, R), then the
// console's work for one update (a sample of the counters, the overview
// built from the crawl, the frontier and the gate, sent over HTTP as a
// server-sent event to a subscriber that reads it, as an open page does)
// is repeated back to back for two seconds while the crawl runs (and its
// garbage collected before the next phase); its CPU,
// less R over those seconds, divided by the updates made, is the cost C of
// one update. At one update per second the console costs C per second:
// overhead-% is 100·C/R (the bar is 1 %). The phases alternate b.N times.
// with-console-overhead-% is the plain comparison of CPU per page in
// phases with and without the console running at 1 update/s, in
// alternating order (run an even -benchtime such as 4x): it includes the
// console but is dominated by the noise of a shared machine (several
// percent between runs), so C is the figure to judge by.
func BenchmarkConsoleCPU(b *testing.B) {
	const phase = 4 * time.Second
	const burst = 2 * time.Second
	crawl := newLiveCrawl(b, testweb.Config{Seed: 5, Sites: 200, PagesPerSite: 2000, Plain: true}, 200*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { crawl.run(ctx, 4) })
	defer wg.Wait()
	defer cancel()
	time.Sleep(2 * time.Second) // warm up: robots.txt of the first hosts, connections

	// open starts a console with one live subscriber; run starts its
	// update loop too.
	open := func(run bool) (*Server, *atomic.Int64, func()) {
		s := crawl.console(b, Config{})
		srv := httptest.NewServer(s.Handler())
		var got atomic.Int64
		cctx, ccancel := context.WithCancel(ctx)
		var cwg sync.WaitGroup
		if run {
			cwg.Go(func() { s.Run(cctx) })
		}
		cwg.Go(func() { subscribe(cctx, srv.URL, &got) })
		for got.Load() == 0 { // the first event: the stream is open
			time.Sleep(time.Millisecond)
		}
		return s, &got, func() { ccancel(); srv.Close(); cwg.Wait() }
	}
	var cpuOff, cpuOn, burstCPU, burstBase time.Duration
	var pagesOff, pagesOn, updates, liveUpdates int64
	iter := 0
	for b.Loop() {
		// Without the console and with it running at 1 update/s, in
		// alternating order (the phase that follows the burst's garbage
		// collection runs cheaper, whichever it is).
		var rate float64 // crawl CPU per second
		off := func() {
			c0, p0 := cpuclock.Process(), crawl.pages.Load()
			time.Sleep(phase)
			c, p := cpuclock.Process()-c0, crawl.pages.Load()-p0
			cpuOff, pagesOff = cpuOff+c, pagesOff+p
			rate = float64(c) / phase.Seconds()
		}
		on := func() {
			_, got, stop := open(true)
			c0, p0 := cpuclock.Process(), crawl.pages.Load()
			g0 := got.Load()
			time.Sleep(phase)
			c, p := cpuclock.Process()-c0, crawl.pages.Load()-p0
			liveUpdates += got.Load() - g0
			stop()
			cpuOn, pagesOn = cpuOn+c, pagesOn+p
		}
		if iter%2 == 0 {
			off()
			on()
		} else {
			on()
			off()
		}
		iter++

		// The console's updates back to back.
		s, got, stop := open(false)
		c0 := cpuclock.Process()
		start := time.Now()
		n := int64(0)
		for time.Since(start) < burst {
			want := got.Load() + 1
			s.sample()
			s.hub.publish(s.overviewEvent())
			for got.Load() < want {
				runtime.Gosched()
			}
			n++
		}
		el := time.Since(start)
		burstCPU += cpuclock.Process() - c0
		burstBase += time.Duration(rate * el.Seconds())
		updates += n
		stop()

		// Let the garbage of the burst be collected before the next
		// phase, outside the measured time.
		runtime.GC()
		time.Sleep(500 * time.Millisecond)
	}
	if pagesOff == 0 || pagesOn == 0 || updates == 0 || liveUpdates == 0 {
		b.Fatalf("no progress: %d pages without, %d with, %d updates, %d live", pagesOff, pagesOn, updates, liveUpdates)
	}
	crawlPerSec := float64(cpuOff.Microseconds()) / (float64(b.N) * phase.Seconds())
	perUpdate := float64((burstCPU - burstBase).Microseconds()) / float64(updates)
	b.ReportMetric(crawlPerSec/1000, "crawl-cpu-ms/s")
	b.ReportMetric(perUpdate, "cpu-µs/update")
	b.ReportMetric(100*perUpdate/crawlPerSec, "overhead-%")
	off := float64(cpuOff.Microseconds()) / float64(pagesOff)
	on := float64(cpuOn.Microseconds()) / float64(pagesOn)
	b.ReportMetric(100*(on-off)/off, "with-console-overhead-%")
	b.ReportMetric(float64(pagesOff)/(float64(b.N)*phase.Seconds()), "pages/s")
	b.ReportMetric(float64(liveUpdates)/(float64(b.N)*phase.Seconds()), "updates/s")
}

// subscribe reads the console's live updates as the page does, counting
// them, until ctx is done.
func subscribe(ctx context.Context, base string, n *atomic.Int64) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			n.Add(1)
		}
	}
}

// synthFrontier is a synthetic frontier of many hosts for the hosts-table
// benchmark: rows only, nothing to act on.
type synthFrontier struct{ rows func(func(HostRow) bool) }

func (f synthFrontier) Stats() QueueStats           { return QueueStats{Hosts: 1_000_000} }
func (f synthFrontier) Hosts(fn func(HostRow) bool) { f.rows(fn) }
func (f synthFrontier) Host(h string) (HostRow, error) {
	return HostRow{}, ErrUnknownHost
}
func (f synthFrontier) Head(context.Context, string, int) ([]QueueEntry, error) { return nil, nil }
func (f synthFrontier) Paused() bool                                            { return false }
func (f synthFrontier) SetPaused(bool)                                          {}
func (f synthFrontier) AddSeeds(context.Context, []string) (int, error)         { return 0, nil }
func (f synthFrontier) Block(context.Context, string, time.Time) error          { return nil }
func (f synthFrontier) Retire(context.Context, string, string) error            { return nil }

// BenchmarkHostsHTTP is GET /api/hosts over a synthetic frontier of a
// million hosts, through the handler: the page, the politeness state of
// its 50 rows from a real gate, and the JSON.
func BenchmarkHostsHTTP(b *testing.B) {
	gate, err := politeness.New(politeness.Config{}, politeness.Backend{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{}, Sources{Frontier: synthFrontier{synthHosts(1_000_000)},
		Politeness: PolitenessSource(gate, politeness.NewMemoryRobotsStore())})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	for _, q := range []string{"sort=queued&order=desc", "q=99&sort=fetched&order=desc&offset=50"} {
		b.Run(q, func(b *testing.B) {
			get := func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/hosts?"+q, nil))
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			get() // the first snapshot
			c0 := cpuclock.Process()
			for b.Loop() {
				get()
			}
			reportPage(b, cpuclock.Process()-c0)
		})
	}
}
