package index

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
)

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPage returns a product page's quads (a dozen, as a schema.org
// product page with an offer and a review carries) and its HTML.
func benchPage(i int) ([]rdf.Quad, string) {
	g := rdf.NewIRI(fmt.Sprintf("http://shop%d.test/p/%d", i%100, i))
	s := rdf.NewBlank("b0")
	o := rdf.NewBlank("b1")
	r := rdf.NewBlank("b2")
	sch := func(p string) rdf.Term { return rdf.NewIRI("https://schema.org/" + p) }
	lit := func(v string) rdf.Term { return rdf.NewLiteral(v, "", "") }
	qs := []rdf.Quad{
		{S: s, P: typ, O: sch("Product"), G: g},
		{S: s, P: sch("name"), O: lit(fmt.Sprintf("Widget %d deluxe", i)), G: g},
		{S: s, P: sch("description"), O: lit(fmt.Sprintf("Widget number %d is a sturdy tool for the workshop, series %d.", i, i%97)), G: g},
		{S: s, P: sch("sku"), O: lit(fmt.Sprint(i * 7919)), G: g},
		{S: s, P: sch("brand"), O: lit(fmt.Sprintf("Brand %d", i%40)), G: g},
		{S: s, P: sch("offers"), O: o, G: g},
		{S: o, P: typ, O: sch("Offer"), G: g},
		{S: o, P: sch("price"), O: lit(fmt.Sprintf("%d.99", i%300)), G: g},
		{S: o, P: sch("priceCurrency"), O: lit("EUR"), G: g},
		{S: s, P: sch("review"), O: r, G: g},
		{S: r, P: typ, O: sch("Review"), G: g},
		{S: r, P: sch("reviewBody"), O: lit(fmt.Sprintf("Review %d: works as described, would buy again.", i)), G: g},
	}
	body := "<!doctype html><html><head><title>Widget " + fmt.Sprint(i) + " deluxe</title></head><body>" +
		strings.Repeat(fmt.Sprintf("<p>Widget number %d is a sturdy tool for the workshop. It ships in two days.</p>", i), 40) +
		"</body></html>"
	return qs, body
}

// BenchmarkCatchUp indexes COURTESY_CATCHUP_PAGES (default 2,000)
// product pages (quads and WARC responses) from scratch and reports the
// input rate (MB/s of N-Quads and HTML), quads/s and pages/s, by wall clock
// and per CPU second of the process (the machine is shared), and the peak
// RSS of the process.
func BenchmarkCatchUp(b *testing.B) {
	pages := 2000
	if v := os.Getenv("COURTESY_CATCHUP_PAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("COURTESY_CATCHUP_PAGES=%q", v)
		}
		pages = n
	}
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		qw, err := rdf.NewQuadFileWriter(rdf.QuadFileOptions{Dir: dir + "/rdf", MaxFileBytes: 4 << 20})
		if err != nil {
			b.Fatal(err)
		}
		ww := newWARC(b, dir)
		for i := range pages {
			qs, body := benchPage(i)
			if err := qw.WriteQuads(qs); err != nil {
				b.Fatal(err)
			}
			writePage(b, ww, qs[0].G.Value, "text/html; charset=utf-8", body)
		}
		if err := qw.Close(); err != nil {
			b.Fatal(err)
		}
		if err := ww.Close(); err != nil {
			b.Fatal(err)
		}
		ix, err := Open(Options{DataDir: dir, Store: triplestore.Options{}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		if err := ix.CatchUp(context.Background()); err != nil {
			b.Fatal(err)
		}
		wall, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		st := ix.Stats()
		if st.Pages != int64(pages) || st.Quads != int64(pages)*12 {
			b.Fatalf("stats %+v", st)
		}
		b.ReportMetric(float64(st.Bytes)/1e6/wall.Seconds(), "MB/s")
		b.ReportMetric(float64(st.Quads)/wall.Seconds(), "quads/s")
		b.ReportMetric(float64(st.Pages)/wall.Seconds(), "pages/s")
		b.ReportMetric(float64(st.Bytes)/1e6/cpu.Seconds(), "MB/cpu-s")
		b.ReportMetric(float64(st.Quads)/cpu.Seconds(), "quads/cpu-s")
		b.ReportMetric(float64(st.Pages)/cpu.Seconds(), "pages/cpu-s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		ix.Close()
		b.StartTimer()
	}
}
