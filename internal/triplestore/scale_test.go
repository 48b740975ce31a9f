package triplestore

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

// synthPage returns the quads of one synthetic page of schema.org data, as
// an extractor would write them: a product or a person with a handful of
// properties, an offer, and links to other pages' subjects.
func synthPage(i int, out []rdf.Quad) []rdf.Quad {
	g := rdf.NewIRI(fmt.Sprintf("http://site%d.example/page/%d", i%1000, i))
	s := rdf.NewIRI(fmt.Sprintf("http://site%d.example/page/%d#it", i%1000, i))
	offer := rdf.NewBlank(fmt.Sprintf("o%d", i))
	sch := func(p string) rdf.Term { return rdf.NewIRI("http://schema.org/" + p) }
	lit := func(v string) rdf.Term { return rdf.NewLiteral(v, "", "") }
	if i%2 == 0 {
		return append(out,
			rdf.Quad{S: s, P: typ, O: sch("Product"), G: g},
			rdf.Quad{S: s, P: sch("name"), O: lit(fmt.Sprintf("Widget model %d", i)), G: g},
			rdf.Quad{S: s, P: sch("description"), O: lit(fmt.Sprintf("A sturdy widget, series %d, for every home and office.", i%977)), G: g},
			rdf.Quad{S: s, P: sch("sku"), O: lit(strconv.Itoa(i * 7919)), G: g},
			rdf.Quad{S: s, P: sch("brand"), O: lit(fmt.Sprintf("Brand %d", i%50)), G: g},
			rdf.Quad{S: s, P: sch("offers"), O: offer, G: g},
			rdf.Quad{S: offer, P: typ, O: sch("Offer"), G: g},
			rdf.Quad{S: offer, P: sch("price"), O: rdf.NewLiteral(fmt.Sprintf("%d.99", i%500), "http://www.w3.org/2001/XMLSchema#decimal", ""), G: g},
			rdf.Quad{S: offer, P: sch("priceCurrency"), O: lit("EUR"), G: g},
			rdf.Quad{S: s, P: sch("isRelatedTo"), O: rdf.NewIRI(fmt.Sprintf("http://site%d.example/page/%d#it", (i/3)%1000, i/3)), G: g},
		)
	}
	return append(out,
		rdf.Quad{S: s, P: typ, O: sch("Person"), G: g},
		rdf.Quad{S: s, P: sch("name"), O: lit(fmt.Sprintf("Person %d", i)), G: g},
		rdf.Quad{S: s, P: sch("jobTitle"), O: rdf.NewLiteral(fmt.Sprintf("Engineer grade %d", i%12), "", "en"), G: g},
		rdf.Quad{S: s, P: sch("email"), O: lit(fmt.Sprintf("person%d@site%d.example", i, i%1000)), G: g},
		rdf.Quad{S: s, P: sch("worksFor"), O: rdf.NewIRI(fmt.Sprintf("http://site%d.example/#org", i%1000)), G: g},
		rdf.Quad{S: s, P: sch("knows"), O: rdf.NewIRI(fmt.Sprintf("http://site%d.example/page/%d#it", (i*31)%1000, i*31/7)), G: g},
		rdf.Quad{S: s, P: sch("birthDate"), O: rdf.NewLiteral(fmt.Sprintf("19%02d-01-%02d", i%100, i%28+1), "http://www.w3.org/2001/XMLSchema#date", ""), G: g},
		rdf.Quad{S: s, P: sch("url"), O: g, G: g},
		rdf.Quad{S: s, P: sch("address"), O: lit(fmt.Sprintf("%d Main Street, Town %d", i%300, i%2000)), G: g},
		rdf.Quad{S: s, P: sch("telephone"), O: lit(fmt.Sprintf("+33 1 %08d", i)), G: g},
	)
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkScale loads COURTESY_SCALE_QUADS quads (default 300,000; the
// figures in docs/structured-data.md are for 10,000,000) in batches
// of 10,000 and reports the load rate, the disk bytes per quad, the peak
// RSS of the process and, as a ratio against a peer in the same run, the
// rate of the last tenth of the load over the first tenth (1.0: no
// slowdown as the store grows).
//
//	COURTESY_SCALE_QUADS=10000000 go test -run XXX -bench Scale -benchtime 1x ./internal/triplestore/
func BenchmarkScale(b *testing.B) {
	n := 300_000
	if v := os.Getenv("COURTESY_SCALE_QUADS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("COURTESY_SCALE_QUADS=%q", v)
		}
	}
	debug.SetGCPercent(50)
	for b.Loop() {
		dir := b.TempDir()
		st, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		cpu0 := cpuTime()
		var firstTenth, lastTenth time.Duration
		tenth := n / 10
		var quads []rdf.Quad
		batch := st.NewBatch()
		added, page := 0, 0
		mark := time.Now()
		for added < n {
			quads = synthPage(page, quads[:0])
			page++
			for _, q := range quads {
				if _, err := batch.Add(q); err != nil {
					b.Fatal(err)
				}
				added++
				if added == tenth {
					firstTenth = time.Since(mark)
				}
				if added == n-tenth {
					mark = time.Now()
				}
			}
			if batch.Len() >= 10_000 {
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
				batch = st.NewBatch()
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		lastTenth = time.Since(mark)
		load := time.Since(start)
		loadCPU := cpuTime() - cpu0
		// A query on the loaded store: every Person, first page.
		qStart := time.Now()
		pg, err := st.Match(Pattern{P: typ, O: rdf.NewIRI("http://schema.org/Person")}, "", 100)
		if err != nil || len(pg.Quads) != 100 {
			b.Fatalf("Match: %d quads, %v", len(pg.Quads), err)
		}
		qTime := time.Since(qStart)
		quadsN, terms, _ := st.Stats()
		if quadsN != int64(n) && quadsN < int64(n)-20 {
			b.Fatalf("store holds %d quads, loaded %d", quadsN, n)
		}
		if os.Getenv("COURTESY_SCALE_METRICS") != "" {
			fmt.Fprintln(os.Stderr, st.db.Pebble().Metrics().String())
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		disk := dirBytes(dir)
		b.ReportMetric(float64(n)/load.Seconds(), "quads/s")
		// The machine is shared: the rate per CPU second of this process
		// (all its threads, Pebble's compactions included) is the figure
		// that does not depend on the neighbours.
		b.ReportMetric(float64(n)/loadCPU.Seconds(), "quads/cpu-s")
		b.ReportMetric(float64(disk)/float64(n), "disk-B/quad")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		b.ReportMetric(float64(terms), "terms")
		b.ReportMetric(float64(qTime.Microseconds()), "match-µs")
		b.ReportMetric(firstTenth.Seconds()/lastTenth.Seconds(), "last/first-rate")
	}
}
