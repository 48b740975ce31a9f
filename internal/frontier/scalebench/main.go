// Command scalebench measures the frontier at scale: it inserts N synthetic
// discovered URLs (a share of them repeats, to exercise the seen-test both
// ways) in batches, as the crawler does, and prints inserts/s, bytes per URL
// on disk, the process's RSS, the Go heap and Pebble's file and cache
// figures as it goes. After the inserts it closes and reopens the store and
// checks that the frontier still works at that size: a sample of inserted
// URLs is known (Lookup, and Put answers Skipped), a sample of new URLs is
// not, and Get hands out URLs.
//
//	go run ./internal/frontier/scalebench -n 10000000 -dir /tmp/fs
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

type config struct {
	n, hosts, batch, dupEvery, report, putters, sample int
	dir                                                string
	keep                                               bool
	kv                                                 kv.Options
	seenEntries                                        int
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1_000_000, "URLs to insert")
	flag.IntVar(&c.hosts, "hosts", 100_000, "distinct hosts")
	flag.IntVar(&c.batch, "batch", 1000, "URLs per Put")
	flag.IntVar(&c.dupEvery, "dup-every", 5, "every Nth URL repeats an earlier one (0: none)")
	flag.StringVar(&c.dir, "dir", "", "data directory (default: a temporary one, removed)")
	flag.BoolVar(&c.keep, "keep", false, "keep -dir after the run (it is removed otherwise)")
	flag.IntVar(&c.report, "report", 1_000_000, "print a line every this many URLs")
	flag.IntVar(&c.putters, "putters", 8, "concurrent Put callers (crawler workers share fsyncs through group commit)")
	flag.IntVar(&c.sample, "sample", 10_000, "URLs checked after the run, each way")
	cacheMB := flag.Int64("cache-mb", 0, "Pebble block cache in MiB (0: kv's default)")
	memtableMB := flag.Int64("memtable-mb", 0, "Pebble memtable size in MiB (0: kv's default)")
	fileMB := flag.Int64("file-mb", 0, "Pebble L0 target file size in MiB (0: kv's default)")
	maxFileMB := flag.Int64("max-file-mb", 0, "cap of the per-level doubling of -file-mb in MiB (0: none)")
	flag.IntVar(&c.kv.MaxOpenFiles, "max-open-files", 0, "Pebble table cache bound (0: kv's default)")
	flag.IntVar(&c.seenEntries, "seen-entries", 0, "frontier.Options.SeenCacheEntries (0: default)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	flag.Parse()
	c.kv.CacheBytes = *cacheMB << 20
	c.kv.MemTableBytes = *memtableMB << 20
	c.kv.TargetFileBytes = *fileMB << 20
	c.kv.MaxTargetFileBytes = *maxFileMB << 20
	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "scalebench")
		if err != nil {
			log.Fatal(err)
		}
		c.dir = d
	}
	if !c.keep {
		defer os.RemoveAll(c.dir)
	}
	// SIGINT or SIGTERM ends the inserts early; the run then closes,
	// reports and verifies at the number reached.
	stopCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(stopCtx, c); err != nil {
		log.Print(err)
		pprof.StopCPUProfile()
		if !c.keep {
			os.RemoveAll(c.dir)
		}
		os.Exit(1)
	}
}

// urlOf is the synthetic URL number j (about 75 bytes) on host j % hosts.
func urlOf(buf []byte, j, hosts int) string {
	buf = append(buf[:0], "http://www.site"...)
	buf = strconv.AppendInt(buf, int64(j%hosts), 10)
	buf = append(buf, ".example.pt/section/"...)
	buf = strconv.AppendInt(buf, int64(j%97), 10)
	buf = append(buf, "/article-"...)
	buf = strconv.AppendInt(buf, int64(j), 10)
	buf = append(buf, ".html?ref=home"...)
	return string(buf)
}

func run(stopCtx context.Context, c config) error {
	ctx := context.Background()
	db, err := kv.Open(c.dir, c.kv)
	if err != nil {
		return err
	}
	f, err := frontier.Open(db, frontier.Options{SeenCacheEntries: c.seenEntries})
	if err != nil {
		return err
	}
	start, last := time.Now(), time.Now()
	var ok, skipped atomic.Int64
	lastCount := 0
	fmt.Printf("# %s n=%d hosts=%d batch=%d putters=%d dup-every=%d kv=%+v\n", start.UTC().Format(time.RFC3339), c.n, c.hosts, c.batch, c.putters, c.dupEvery, c.kv)
	fmt.Println("urls\tnew\tskipped\tinserts/s(interval)\tinserts/s(total)\telapsed_s\tdisk_bytes/url\trss_mb\theap_mb\tgo_mb\tnon_go_mb\tsstables\tblock_cache_mb\topen_tables\tcompact_debt_mb")
	// Batches are generated in order and handed to the putters; a report
	// line is printed every -report URLs.
	batches := make(chan []frontier.Item, c.putters)
	var wg sync.WaitGroup
	var putErr atomic.Pointer[error]
	for range c.putters {
		wg.Go(func() {
			for items := range batches {
				st, err := f.Put(ctx, items)
				if err != nil {
					putErr.CompareAndSwap(nil, &err)
					continue
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
	var buf []byte
	items := make([]frontier.Item, 0, c.batch)
	for i := 1; i <= c.n; i++ {
		j := i
		if c.dupEvery > 0 && i%c.dupEvery == 0 {
			j = i / 2 // an earlier URL: a seen-test hit
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: urlOf(buf, j, c.hosts), Depth: j % 6}})
		if len(items) == c.batch || i == c.n {
			batches <- items
			items = make([]frontier.Item, 0, c.batch)
			if stopCtx.Err() != nil && i < c.n {
				fmt.Printf("# stopped by signal at %d URLs\n", i)
				c.n = i
			}
		}
		if p := putErr.Load(); p != nil {
			close(batches)
			wg.Wait()
			return fmt.Errorf("put: %w", *p)
		}
		if i%c.report == 0 || i == c.n {
			now := time.Now()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m := db.Pebble().Metrics()
			// go_mb is what the Go runtime holds from the OS; the rest of
			// RSS (non_go_mb) is C memory: with cgo, Pebble's block cache
			// and memtables come from malloc.
			goMB := int64((ms.Sys - ms.HeapReleased) >> 20)
			rss := rssMB()
			fmt.Printf("%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", i, ok.Load(), skipped.Load(),
				float64(i-lastCount)/now.Sub(last).Seconds(), float64(i)/now.Sub(start).Seconds(), now.Sub(start).Seconds(),
				float64(diskUsage(c.dir))/float64(max(ok.Load(), 1)), rss, ms.HeapInuse>>20, goMB, rss-goMB,
				m.Total().TablesCount, m.BlockCache.Size>>20, m.FileCache.TableCount, m.Compact.EstimatedDebt>>20)
			last, lastCount = now, i
		}
	}
	close(batches)
	wg.Wait()
	if p := putErr.Load(); p != nil {
		return fmt.Errorf("put: %w", *p)
	}
	elapsed := time.Since(start)
	fmt.Printf("done: %d URLs offered, %d new, %d skipped in %s = %.0f inserts/s\n", c.n, ok.Load(), skipped.Load(),
		elapsed.Round(time.Millisecond), float64(c.n)/elapsed.Seconds())
	if err := f.Close(); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Printf("closed: disk %d bytes for %d URLs = %.1f bytes/URL; peak RSS %d MB\n", diskUsage(c.dir), ok.Load(),
		float64(diskUsage(c.dir))/float64(max(ok.Load(), 1)), peakRSSMB())
	return verify(ctx, c)
}

// verify reopens the store and checks the frontier at its new size.
func verify(ctx context.Context, c config) error {
	t0 := time.Now()
	db, err := kv.Open(c.dir, c.kv)
	if err != nil {
		return err
	}
	defer db.Close()
	f, err := frontier.Open(db, frontier.Options{SeenCacheEntries: c.seenEntries})
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Printf("reopened in %s; RSS %d MB\n", time.Since(t0).Round(time.Millisecond), rssMB())
	if c.sample <= 0 {
		return nil
	}
	// Inserted URLs: numbers not divisible by dup-every were all new, and
	// spread over the whole run. New ones: numbers past n.
	step := max(c.n/c.sample, 1)
	var buf []byte
	var known, unknown []frontier.Item
	for j := 1; j <= c.n && len(known) < c.sample; j += step {
		if c.dupEvery > 0 && j%c.dupEvery == 0 {
			continue
		}
		known = append(known, frontier.Item{Info: frontier.URLInfo{URL: urlOf(buf, j, c.hosts)}})
	}
	for j := c.n + 1; len(unknown) < c.sample; j++ {
		if c.dupEvery > 0 && j%c.dupEvery == 0 {
			continue
		}
		unknown = append(unknown, frontier.Item{Info: frontier.URLInfo{URL: urlOf(buf, j, c.hosts)}})
	}
	t0 = time.Now()
	for _, it := range known {
		if _, err := f.Lookup(ctx, "", it.Info.URL); err != nil {
			return fmt.Errorf("verify: inserted %s: %w", it.Info.URL, err)
		}
	}
	for _, it := range unknown {
		if _, err := f.Lookup(ctx, "", it.Info.URL); !errors.Is(err, frontier.ErrNotFound) {
			return fmt.Errorf("verify: new %s: want not found, got %v", it.Info.URL, err)
		}
	}
	fmt.Printf("verify: Lookup of %d inserted URLs found all, of %d new URLs found none (%s)\n", len(known), len(unknown), time.Since(t0).Round(time.Millisecond))
	// The seen-test through Put: known URLs are Skipped, new ones stored.
	t0 = time.Now()
	for _, tc := range []struct {
		name  string
		items []frontier.Item
		want  frontier.Status
	}{{"inserted", known, frontier.Skipped}, {"new", unknown, frontier.OK}} {
		for lo := 0; lo < len(tc.items); lo += c.batch {
			st, err := f.Put(ctx, tc.items[lo:min(lo+c.batch, len(tc.items))])
			if err != nil {
				return fmt.Errorf("verify: put %s: %w", tc.name, err)
			}
			for i, s := range st {
				if s != tc.want {
					return fmt.Errorf("verify: put %s %s: %v, want %v", tc.name, tc.items[lo+i].Info.URL, s, tc.want)
				}
			}
		}
	}
	fmt.Printf("verify: Put of the %d inserted URLs answered Skipped for all, of the %d new URLs OK for all (%s)\n", len(known), len(unknown), time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	leases, err := f.Get(ctx, frontier.GetParams{MaxQueues: 100, MaxURLsPerQueue: 3})
	if err != nil {
		return fmt.Errorf("verify: get: %w", err)
	}
	queues := map[string]int{}
	for _, l := range leases {
		queues[l.Key]++
	}
	if len(leases) == 0 {
		return errors.New("verify: get returned no URLs")
	}
	fmt.Printf("verify: Get returned %d URLs from %d queues (%s), e.g. %s\n", len(leases), len(queues), time.Since(t0).Round(time.Millisecond), leases[0].URL)
	st := f.Stats("", "")
	fmt.Printf("verify: stats %+v; RSS %d MB\n", st, rssMB())
	return nil
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
