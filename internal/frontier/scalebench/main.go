// Command scalebench measures the frontier at scale: it inserts N synthetic
// discovered URLs (a share of them repeats, to exercise the seen-test both
// ways) in batches, as the crawler does, and prints inserts/s, bytes per URL
// on disk and the process's RSS as it goes.
//
//	go run ./internal/frontier/scalebench -n 10000000 -dir /tmp/fs
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

func main() {
	n := flag.Int("n", 1_000_000, "URLs to insert")
	hosts := flag.Int("hosts", 100_000, "distinct hosts")
	batch := flag.Int("batch", 1000, "URLs per Put")
	dupEvery := flag.Int("dup-every", 5, "every Nth URL repeats an earlier one (0: none)")
	dir := flag.String("dir", "", "data directory (default: a temporary one, removed)")
	report := flag.Int("report", 1_000_000, "print a line every this many URLs")
	putters := flag.Int("putters", 8, "concurrent Put callers (crawler workers share fsyncs through group commit)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	flag.Parse()
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "scalebench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	db, err := kv.Open(*dir, kv.Options{})
	if err != nil {
		log.Fatal(err)
	}
	f, err := frontier.Open(db, frontier.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	start, last := time.Now(), time.Now()
	var ok, skipped atomic.Int64
	lastCount := 0
	fmt.Println("urls\tnew\tskipped\tinserts/s(interval)\tinserts/s(total)\tdisk_bytes/url\trss_mb\theap_mb")
	// Batches are generated in order and handed to the putters; a report
	// line is printed every -report URLs.
	batches := make(chan []frontier.Item, *putters)
	var wg sync.WaitGroup
	for range *putters {
		wg.Go(func() {
			for items := range batches {
				st, err := f.Put(ctx, items)
				if err != nil {
					log.Fatal(err)
				}
				for _, s := range st {
					if s == frontier.OK {
						ok.Add(1)
					} else {
						skipped.Add(1)
					}
				}
			}
		})
	}
	items := make([]frontier.Item, 0, *batch)
	for i := 1; i <= *n; i++ {
		j := i
		if *dupEvery > 0 && i%*dupEvery == 0 {
			j = i / 2 // an earlier URL: a seen-test hit
		}
		h := j % *hosts
		items = append(items, frontier.Item{Info: frontier.URLInfo{
			URL:   fmt.Sprintf("http://www.site%d.example.pt/section/%d/article-%d.html?ref=home", h, j%97, j),
			Depth: j % 6,
		}})
		if len(items) == *batch || i == *n {
			batches <- items
			items = make([]frontier.Item, 0, *batch)
		}
		if i%*report == 0 || i == *n {
			now := time.Now()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			du := diskUsage(*dir)
			fmt.Printf("%d\t%d\t%d\t%.0f\t%.0f\t%.1f\t%d\t%d\n", i, ok.Load(), skipped.Load(),
				float64(i-lastCount)/now.Sub(last).Seconds(), float64(i)/now.Sub(start).Seconds(),
				float64(du)/float64(max(ok.Load(), 1)), rssMB(), ms.HeapInuse>>20)
			last, lastCount = now, i
		}
	}
	close(batches)
	wg.Wait()
	fmt.Printf("done: %d URLs offered, %d new, %d skipped in %s = %.0f inserts/s\n", *n, ok.Load(), skipped.Load(),
		time.Since(start).Round(time.Millisecond), float64(*n)/time.Since(start).Seconds())
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("closed: disk %d bytes for %d URLs = %.1f bytes/URL; peak RSS %d MB\n", diskUsage(*dir), ok.Load(), float64(diskUsage(*dir))/float64(max(ok.Load(), 1)), peakRSSMB())
}

func diskUsage(dir string) int64 {
	var total int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

func procStatus(field string) int64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb >> 10
		}
	}
	return -1
}

func rssMB() int64     { return procStatus("VmRSS") }
func peakRSSMB() int64 { return procStatus("VmHWM") }
