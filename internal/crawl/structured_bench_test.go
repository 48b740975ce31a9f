package crawl

import (
	"context"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/index"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStructuredCrawl crawls the same small testweb (the
// structured-data sites and plain sites) with structured data off and on,
// alternately, in one process, and prints the crawl's CPU per page for
// each and their ratio; then it indexes the last crawl with structured
// data (as `courtesy index --once`) and prints the indexer's page rate
// against the crawl's. The testweb server runs in the process: its CPU is
// in both figures, so the difference is what extraction costs.
//
//	go test -run XXX -bench StructuredCrawl -benchtime 1x ./internal/crawl/
func BenchmarkStructuredCrawl(b *testing.B) {
	web, err := testweb.New(testweb.Config{Seed: 4, Sites: 20, PagesPerSite: 50, Plain: true, NoExternal: true, Structured: true})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: web.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	r, err := resolve.New([]string{"*.test=" + ln.Addr().String()})
	if err != nil {
		b.Fatal(err)
	}
	seeds := seedsOf(web)
	ctx := context.Background()
	const rounds = 2
	var cpu, wall [2]time.Duration
	var pages [2]int64
	var lastOn string
	var lastOnWall time.Duration
	var lastOnPages int64
	for range b.N {
		for round := range 2 * rounds {
			on := round%2 == 1
			dir := b.TempDir()
			c, err := New(Config{DataDir: dir, StructuredData: on, Delay: -1, Workers: 32}, Options{Resolver: r})
			if err != nil {
				b.Fatal(err)
			}
			c0, t0 := cpuTime(b), time.Now()
			sum, err := c.Run(ctx, seeds)
			if err != nil || !sum.Finished {
				b.Fatalf("crawl: %v", err)
			}
			i := 0
			if on {
				i = 1
				lastOn, lastOnWall, lastOnPages = dir, time.Since(t0), sum.Pages
			}
			cpu[i] += cpuTime(b) - c0
			wall[i] += time.Since(t0)
			pages[i] += sum.Pages
		}
	}
	perPage := func(i int) float64 { return float64(cpu[i].Microseconds()) / 1000 / float64(pages[i]) }
	b.ReportMetric(perPage(0), "cpu-ms/page-off")
	b.ReportMetric(perPage(1), "cpu-ms/page-on")
	b.ReportMetric(perPage(1)/perPage(0), "on/off")
	b.Logf("crawl CPU per page: off %.3f ms, on %.3f ms (ratio %.2f); %d and %d pages; wall %v and %v",
		perPage(0), perPage(1), perPage(1)/perPage(0), pages[0], pages[1], wall[0].Round(time.Millisecond), wall[1].Round(time.Millisecond))

	// The indexer on the last crawl with structured data.
	ix, err := index.Open(index.Options{DataDir: lastOn})
	if err != nil {
		b.Fatal(err)
	}
	c0, t0 := cpuTime(b), time.Now()
	if err := ix.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	icpu, iwall := cpuTime(b)-c0, time.Since(t0)
	st := ix.Stats()
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	crawlRate := float64(lastOnPages) / lastOnWall.Seconds()
	indexRate := float64(st.Pages) / iwall.Seconds()
	b.ReportMetric(float64(st.Pages)/icpu.Seconds(), "index-pages/cpu-s")
	b.ReportMetric(indexRate/crawlRate, "index/crawl-rate")
	b.Logf("crawl (structured data on): %d pages in %v = %.0f pages/s; index: %d pages, %d quads in %v (%v CPU) = %.0f pages/s, %.0f pages/cpu-s; index rate / crawl rate = %.2f",
		lastOnPages, lastOnWall.Round(time.Millisecond), crawlRate, st.Pages, st.Quads, iwall.Round(time.Millisecond), icpu.Round(time.Millisecond),
		indexRate, float64(st.Pages)/icpu.Seconds(), indexRate/crawlRate)
}
