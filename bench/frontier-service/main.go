// Command frontier-service measures the URLFrontier gRPC service against
// the embedded frontier called directly, in one run and one process, so
// that the cost of gRPC shows as a ratio (docs/performance.md):
//
//	go run ./bench/frontier-service [-urls 300000] [-queues 10000] [-cycle 100000] [-clients 64] [-duration 8s]
//	go run ./bench/frontier-service -workloads put,cycle,latency,rss   # all four bars, about 15 minutes
//
// Four workloads, each on a fresh store with the store options and memory
// limit of courtesy serve, first direct then over gRPC (loopback TCP,
// plaintext HTTP/2, the client in the same process):
//
//	put     new URLs over -queues hosts, in batches of 1,000 from 8
//	        writers (PutDiscovered streams over gRPC): URLs/s
//	cycle   Get (100 queues × 10 URLs, leased) then acknowledge each URL
//	        completed (PutURLs known), 8 workers, over -queues queues
//	        holding -cycle URLs: URLs/s
//	latency -clients concurrent clients each looping Get (10 queues × 1
//	        URL) and acknowledging what it got as due again now (so the
//	        frontier never runs dry), for -duration: Get p50/p99
//	rss     (only when asked) -rss-urls new URLs (10 M) over -rss-queues
//	        hosts (1 M) as in put: the peak resident size of the process
//
// It prints a table of the four bars with their targets, whether each is
// met, and the gRPC / direct ratio. Each workload also logs the process's
// CPU time (user + system, clients included) per URL, and the latency
// workload its Get latency percentiles up to p99.9, the longest Get and the
// garbage collections during the run. -paths grpc measures one path only
// (for its profiles); -trace writes a runtime/trace of each latency run.
//
// Queue delays are 0 in every workload: the numbers are the frontier's
// throughput, not a politeness limit (with URLFrontier's default 1 s delay
// 10,000 queues serve at most 10,000 URLs/s).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/urlfrontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

var (
	nURLs         = flag.Int("urls", 300_000, "new URLs in the put workload")
	nQueues       = flag.Int("queues", 10_000, "queues (hosts)")
	nCycle        = flag.Int("cycle", 100_000, "URLs in the cycle workload")
	nClients      = flag.Int("clients", 64, "concurrent clients in the latency workload")
	duration      = flag.Duration("duration", 8*time.Second, "length of the latency workload")
	loadFracs     = flag.String("loads", "0.25,0.5,0.75", "after the closed-loop latency run, the same clients at these fractions of its Gets/s (an open loop; empty: none)")
	workloads     = flag.String("workloads", "put,cycle,latency", "comma-separated workloads to run: put, cycle, latency, rss (the long one: 10 M URLs, about 7 minutes each way on 2 cores)")
	rssURLs       = flag.Int("rss-urls", 10_000_000, "URLs in the rss workload")
	rssQueues     = flag.Int("rss-queues", 1_000_000, "queues (hosts) in the rss workload")
	cpuProf       = flag.String("cpuprofile", "", "write a CPU profile to `FILE` (of the whole run, or see -cpuprofile-latency)")
	cpuProfLat    = flag.Bool("cpuprofile-latency", false, "restrict -cpuprofile to the latency runs (not the puts that fill their stores); with both paths, the file holds the last one")
	memProf       = flag.String("memprofile", "", "write a heap profile to `FILE` at the end")
	mutexProf     = flag.String("mutexprofile", "", "write a mutex contention profile to `FILE` at the end")
	procs         = flag.Int("procs", 0, "GOMAXPROCS, as courtesy serve's --procs (0: the cores plus urlfrontier.ExtraProcs, or GOMAXPROCS when that is set)")
	memLimit      = flag.Int("memory-limit-mib", urlfrontier.DefaultMemoryLimitMiB, "Go memory limit in MiB, as courtesy serve's --memory-limit-mib (0: none)")
	readAheadMiB  = flag.Int("read-ahead-mib", urlfrontier.ReadAheadBytes>>20, "frontier read-ahead budget in MiB, as courtesy serve's (0: the frontier's default)")
	memtableMiB   = flag.Int("memtable-mib", 0, "Pebble memtable size in MiB (0: courtesy serve's)")
	pebbleMetrics = flag.Bool("pebble-metrics", false, "print the store's Pebble metrics at the end of each rss workload")
	blockProf     = flag.String("blockprofile", "", "write a blocking profile to `FILE` at the end")
	traceFile     = flag.String("trace", "", "write a runtime/trace of each latency run to `FILE`.direct and `FILE`.grpc")
	paths         = flag.String("paths", "direct,grpc", "comma-separated paths to measure: direct, grpc")
	settle        = flag.Bool("settle", false, "after each put workload and before each open-loop run, wait (at most 60 s) until the store's flushes and compactions are done (the put then also logs its CPU with them)")
	nConns        = flag.Int("conns", 1, "gRPC client connections; the workers of the cycle and latency workloads take them in turn (as that many crawler processes would)")
	writers       = 8
)

// store is a frontier on a fresh directory, optionally served over gRPC.
type store struct {
	dir   string
	db    *kv.DB
	f     *frontier.Frontier
	g     *grpc.Server
	conns []*grpc.ClientConn
	c     pb.URLFrontierClient   // the first connection's client
	cs    []pb.URLFrontierClient // one client per connection
	next  atomic.Int64           // the connection of the next worker
}

func open(serve bool) *store {
	dir, err := os.MkdirTemp("", "frontier-service-bench-")
	if err != nil {
		log.Fatal(err)
	}
	ko := urlfrontier.StoreOptions() // as courtesy serve
	if *memtableMiB > 0 {
		ko.MemTableBytes = int64(*memtableMiB) << 20
	}
	db, err := kv.Open(dir, ko)
	if err != nil {
		log.Fatal(err)
	}
	f, err := frontier.Open(db, frontier.Options{ReadAheadBytes: *readAheadMiB << 20})
	if err != nil {
		log.Fatal(err)
	}
	s := &store{dir: dir, db: db, f: f}
	if serve {
		srv, err := urlfrontier.NewServer(urlfrontier.Options{Frontier: f})
		if err != nil {
			log.Fatal(err)
		}
		// The service's side of each GetURLs, as a trace region.
		region := grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if !strings.HasSuffix(info.FullMethod, "/GetURLs") || !trace.IsEnabled() {
				return h(srv, ss)
			}
			defer trace.StartRegion(ss.Context(), "GetURLs handler").End()
			if md, ok := metadata.FromIncomingContext(ss.Context()); ok && len(md.Get("x-bench-get")) > 0 {
				id := md.Get("x-bench-get")[0]
				trace.Log(ss.Context(), "get-start", id)
				defer trace.Log(ss.Context(), "get-end", id)
			}
			return h(srv, ss)
		})
		s.g, _ = urlfrontier.NewGRPCServer(srv, region)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		go s.g.Serve(ln)
		for range max(*nConns, 1) {
			// One connection each: grpc.NewClient shares nothing between
			// ClientConns, so each gets its own HTTP/2 connection.
			conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				log.Fatal(err)
			}
			s.conns = append(s.conns, conn)
			s.cs = append(s.cs, pb.NewURLFrontierClient(conn))
		}
		s.c = s.cs[0]
	}
	return s
}

// client is the client of the next worker: the connections in turn.
func (s *store) client() pb.URLFrontierClient {
	return s.cs[int(s.next.Add(1)-1)%len(s.cs)]
}

func (s *store) close() {
	if s.g != nil {
		for _, c := range s.conns {
			c.Close()
		}
		s.g.Stop()
	}
	s.f.Close()
	s.db.Close()
	os.RemoveAll(s.dir)
}

// settle waits until the store has had no flush or compaction running for
// a second, at most 60 s. (Pebble's estimated compaction debt can stay
// above zero with nothing to pick, so it is not waited for.)
func (s *store) settle() {
	start := time.Now()
	quiet := time.Time{}
	for time.Since(start) < time.Minute {
		m := s.db.Pebble().Metrics()
		switch {
		case m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0:
			quiet = time.Time{}
		case quiet.IsZero():
			quiet = time.Now()
		case time.Since(quiet) >= time.Second:
			log.Printf("settle: %v", time.Since(start).Round(time.Millisecond))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	log.Printf("settle: gave up after %v", time.Since(start).Round(time.Millisecond))
}

// hosts is the number of queues of the workload running.
var hosts int

func url(i int) string { return fmt.Sprintf("http://host%05d.test/page/%d", i%hosts, i) }

// put stores n new URLs from the writers; it returns URLs/s.
func (s *store) put(n int) float64 { return s.putRange(0, n) }

// putRange stores URLs lo to hi from the writers; it returns URLs/s.
func (s *store) putRange(lo0, n int) float64 {
	ctx := context.Background()
	var next atomic.Int64
	next.Store(int64(lo0))
	var wg sync.WaitGroup
	start := time.Now()
	cpu0 := cpuTime()
	defer func() {
		logCPU("put", cpu0, n-lo0)
	}()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st pb.URLFrontier_PutDiscoveredClient
			acked := make(chan struct{})
			if s.c != nil {
				var err error
				if st, err = s.c.PutDiscovered(ctx); err != nil {
					log.Fatal(err)
				}
				go func() {
					defer close(acked)
					for {
						if _, err := st.Recv(); err != nil {
							if !errors.Is(err, io.EOF) {
								log.Fatal(err)
							}
							return
						}
					}
				}()
			}
			for {
				lo := int(next.Add(1000)) - 1000
				if lo >= n {
					break
				}
				hi := min(lo+1000, n)
				if s.c != nil {
					b := &pb.DiscoveredBatch{ID: fmt.Sprint(lo)}
					for i := lo; i < hi; i++ {
						b.Items = append(b.Items, &pb.URLInfo{Url: url(i)})
					}
					if err := st.Send(b); err != nil {
						log.Fatal(err)
					}
					continue
				}
				items := make([]frontier.Item, 0, hi-lo)
				for i := lo; i < hi; i++ {
					items = append(items, frontier.Item{Info: frontier.URLInfo{URL: url(i)}})
				}
				if _, err := s.f.Put(ctx, items); err != nil {
					log.Fatal(err)
				}
			}
			if st != nil {
				st.CloseSend()
				<-acked
			}
		}()
	}
	wg.Wait()
	return float64(n-lo0) / time.Since(start).Seconds()
}

// cycle serves and acknowledges n URLs; it returns URLs/s.
func (s *store) cycle(n int) float64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	cpu0 := cpuTime()
	defer func() { logCPU("cycle", cpu0, int(done.Load())) }()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := s.newWorker()
			defer w.close()
			for done.Load() < int64(n) {
				urls := w.get(100, 10)
				if len(urls) == 0 {
					if s.f.Stats("", "").Size == 0 {
						return
					}
					continue
				}
				w.ackAll(urls, false)
				done.Add(int64(len(urls)))
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}

// latency runs the clients for d and returns the Get latencies, sorted,
// and the URLs served per second. It logs the percentiles, the CPU time
// per URL served and the collections of the run.
//
// With every 0 the clients run a closed loop (each Get as soon as the
// previous cycle's acks came back): the service saturated, latency is
// mostly queueing. With every > 0 each client starts a Get every
// interval (an open loop at clients/every Gets per second, each client
// at its own phase), and a Get's latency counts from when it was due, so
// that a late start is counted too (no coordinated omission); its acks
// go out without being waited for (ackLater), so that the figure is the
// Get's alone.
func (s *store) latency(name string, clients int, d, every time.Duration) (lat []time.Duration, rate float64) {
	var mu sync.Mutex
	var served atomic.Int64
	var wg sync.WaitGroup
	if *traceFile != "" {
		defer record(*traceFile+"."+name, trace.Start, trace.Stop)()
	}
	if *cpuProf != "" && *cpuProfLat {
		defer record(*cpuProf, pprof.StartCPUProfile, pprof.StopCPUProfile)()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	start := time.Now()
	end := start.Add(d)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := s.newWorker()
			defer w.close()
			var mine []time.Duration
			due := start.Add(every * time.Duration(c) / time.Duration(clients))
			for time.Now().Before(end) {
				t := time.Now()
				if every > 0 {
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
					t, due = due, due.Add(every)
					if !t.Before(end) {
						break
					}
				}
				var urls []frontier.URLInfo
				// A region per Get, so that the trace's region view tells
				// where a slow one spent its time.
				trace.WithRegion(context.Background(), "Get", func() { urls = w.get(10, 1) })
				mine = append(mine, time.Since(t))
				if every > 0 {
					// The open loop measures GetURLs: the client does not
					// wait for its acks before its next Get.
					w.ackLater(urls)
				} else {
					w.ackAll(urls, true)
				}
				served.Add(int64(len(urls)))
			}
			w.wait()
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&ms1)
	logCPU(name+" latency", cpu0, int(served.Load()))
	slices.Sort(lat)
	if len(lat) == 0 {
		return nil, 0
	}
	log.Printf("%s latency: %d Gets, p50 %v p90 %v p99 %v p99.9 %v max %v; %d GCs (%.1f/s), %v of stop-the-world pauses", name, len(lat),
		pct(lat, 50), pct(lat, 90), pct(lat, 99), pct(lat, 99.9), lat[len(lat)-1],
		ms1.NumGC-ms0.NumGC, float64(ms1.NumGC-ms0.NumGC)/d.Seconds(), time.Duration(ms1.PauseTotalNs-ms0.PauseTotalNs))
	return lat, float64(served.Load()) / d.Seconds()
}

// loadResult is the latency of a run at a fixed rate of Gets.
type loadResult struct {
	serve    bool
	frac     float64 // of the closed loop's Gets/s
	gets     float64 // Gets/s done
	p50, p99 time.Duration
}

// judged is "yes" or "no" for a bar on the gRPC path, "-" when that path
// did not run (-paths direct).
func judged(ran, ok bool) string {
	switch {
	case !ran:
		return "-"
	case ok:
		return "yes"
	}
	return "no"
}

// parseLoads reads -loads: fractions of the closed loop's rate.
func parseLoads(v string) []float64 {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || x <= 0 || x > 1 {
			log.Fatalf("-loads: %q is not a fraction in (0, 1]", f)
		}
		out = append(out, x)
	}
	return out
}

// pct returns the p-th percentile of the sorted lat.
func pct(lat []time.Duration, p float64) time.Duration {
	return lat[min(int(float64(len(lat))*p/100), len(lat)-1)].Round(time.Microsecond)
}

// logCPU logs the process's CPU time since cpu0 per URL handled.
func logCPU(what string, cpu0 time.Duration, urls int) {
	cpu := cpuTime() - cpu0
	log.Printf("%s: %.2f CPU s for %d URLs, %.1f µs per URL", what, cpu.Seconds(), urls, float64(cpu.Microseconds())/float64(max(urls, 1)))
}

// procStatus returns a field of /proc/self/status in MiB (Linux).
func procStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return -1
}

// rss puts n URLs over the -rss-queues queues, directly or through the
// service (client and service in this process, so the figure bounds the
// service's own), and returns the peak RSS in MiB over the phase.
func rss(serve bool, n int) float64 {
	name := map[bool]string{false: "direct", true: "gRPC"}[serve]
	// Start the phase from a clean slate: the previous phase's memory
	// returned to the system and the peak (VmHWM) reset (Linux).
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		log.Printf("cannot reset the peak RSS (%v): the figure includes earlier phases", err)
	}
	hosts = *rssQueues
	defer func() { hosts = *nQueues }()
	s := open(serve)
	defer s.close()
	start := time.Now()
	step := max(n/10, 1)
	for done := 0; done < n; done += step {
		lo := done
		hi := min(done+step, n)
		s.putRange(lo, hi)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		log.Printf("%s rss: %d URLs over %d queues, %.0f s: RSS %.0f MiB (peak %.0f), Go heap in use %.0f MiB", name, hi, hosts, time.Since(start).Seconds(),
			procStatus("VmRSS"), procStatus("VmHWM"), float64(ms.HeapInuse)/(1<<20))
	}
	if *pebbleMetrics {
		fmt.Fprintln(os.Stderr, s.db.Pebble().Metrics())
	}
	if *memProf != "" && serve {
		writeProfile("heap", *memProf) // before the store closes
		*memProf = ""
	}
	st := s.f.Stats("", "")
	peak := procStatus("VmHWM")
	log.Printf("%s rss: %d URLs stored over %d queues in %.0f s (%.0f URLs/s): peak RSS %.0f MiB", name, st.Size, st.Queues,
		time.Since(start).Seconds(), float64(n)/time.Since(start).Seconds(), peak)
	return peak
}

// result is one workload's figure, direct and over gRPC.
type result struct {
	ran          bool
	direct, grpc float64
}

func main() {
	flag.Parse()
	defer profiles()()
	urlfrontier.ApplyProcs(*procs, false)
	if *memLimit > 0 {
		debug.SetMemoryLimit(int64(*memLimit) << 20)
	}
	steal0 := readSteal()
	hosts = *nQueues
	run := map[string]bool{}
	for _, w := range strings.Split(*workloads, ",") {
		switch w = strings.TrimSpace(w); w {
		case "put", "cycle", "latency", "rss":
			run[w] = true
		case "":
		default:
			log.Fatalf("-workloads: unknown workload %q (want put, cycle, latency, rss)", w)
		}
	}
	var put, cyc, rate, mem result
	var p50, p99 [2]time.Duration
	loads := parseLoads(*loadFracs)
	var atLoad []loadResult
	measure := map[bool]bool{}
	for _, p := range strings.Split(*paths, ",") {
		switch p = strings.TrimSpace(p); p {
		case "direct":
			measure[false] = true
		case "grpc":
			measure[true] = true
		case "":
		default:
			log.Fatalf("-paths: unknown path %q (want direct, grpc)", p)
		}
	}
	for i, serve := range []bool{false, true} {
		if !measure[serve] {
			continue
		}
		name := map[bool]string{false: "direct", true: "gRPC"}[serve]
		set := func(r *result, v float64) {
			r.ran = true
			if serve {
				r.grpc = v
			} else {
				r.direct = v
			}
		}
		if run["put"] {
			s := open(serve)
			cpu0 := cpuTime()
			r := s.put(*nURLs)
			log.Printf("%s put: %.0f URLs/s", name, r)
			if *settle {
				// The put's whole cost: the flushes and compactions it
				// left behind are paid for too.
				s.settle()
				logCPU("put and its compactions", cpu0, *nURLs)
			}
			s.close()
			set(&put, r)
		}
		if run["cycle"] {
			s := open(serve)
			s.put(*nCycle)
			c := s.cycle(*nCycle)
			log.Printf("%s cycle: %.0f URLs/s", name, c)
			s.close()
			set(&cyc, c)
		}
		if run["latency"] {
			s := open(serve)
			s.put(*nURLs)
			lat, r2 := s.latency(map[bool]string{false: "direct", true: "grpc"}[serve], *nClients, *duration, 0)
			if len(lat) > 0 {
				p50[i], p99[i] = pct(lat, 50), pct(lat, 99)
			}
			log.Printf("%s latency: p50 %v p99 %v, %.0f URLs/s", name, p50[i], p99[i], r2)
			s.close()
			set(&rate, r2)
			// The same clients at fixed rates below saturation, each on a
			// fresh store (the closed loop leaves compactions behind):
			// latency as a function of load.
			saturated := float64(len(lat)) / duration.Seconds()
			for _, f := range loads {
				gps := f * saturated
				if gps <= 0 {
					continue
				}
				every := time.Duration(float64(*nClients) / gps * float64(time.Second))
				s := open(serve)
				s.put(*nURLs)
				if *settle {
					s.settle()
				}
				ol, _ := s.latency(fmt.Sprintf("%s-%.0f%%", map[bool]string{false: "direct", true: "grpc"}[serve], 100*f), *nClients, *duration, every)
				s.close()
				if len(ol) > 0 {
					atLoad = append(atLoad, loadResult{serve: serve, frac: f, gets: float64(len(ol)) / duration.Seconds(), p50: pct(ol, 50), p99: pct(ol, 99)})
				}
			}
		}
		if run["rss"] {
			set(&mem, rss(serve, *rssURLs))
		}
	}
	la, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("GOMAXPROCS %d on %d cores, memory limit %d MiB, %d gRPC client connection(s), load average %s, %s\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), *memLimit, max(*nConns, 1), strings.Join(strings.Fields(string(la))[:min(3, len(strings.Fields(string(la))))], " "), steal0.since())
	fmt.Printf("| workload | direct | gRPC service | gRPC / direct | target | met |\n| --- | ---: | ---: | ---: | --- | --- |\n")
	if put.ran {
		fmt.Printf("| PutDiscovered, %d new URLs over %d queues | %.0f URLs/s | %.0f URLs/s | %.2f | ≥ 150,000 URLs/s | %s |\n", *nURLs, *nQueues,
			put.direct, put.grpc, put.grpc/put.direct, judged(put.grpc > 0, put.grpc >= 150_000))
	}
	if cyc.ran {
		fmt.Printf("| GetURLs + PutURLs ack cycle, %d URLs over %d queues | %.0f URLs/s | %.0f URLs/s | %.2f | ≥ 50,000 URLs/s | %s |\n", *nCycle, *nQueues,
			cyc.direct, cyc.grpc, cyc.grpc/cyc.direct, judged(cyc.grpc > 0, cyc.grpc >= 50_000))
	}
	if rate.ran {
		fmt.Printf("| GetURLs p50 / p99, %d clients | %v / %v | %v / %v | %.2f (p99) | p99 < 10 ms | %s |\n", *nClients, p50[0].Round(time.Microsecond), p99[0].Round(time.Microsecond),
			p50[1].Round(time.Microsecond), p99[1].Round(time.Microsecond), float64(p99[1])/float64(max(p99[0], 1)), judged(p99[1] > 0, p99[1] < 10*time.Millisecond))
		fmt.Printf("| URLs served in the latency run | %.0f URLs/s | %.0f URLs/s | %.2f | | |\n", rate.direct, rate.grpc, rate.grpc/max(rate.direct, 1))
	}
	for _, r := range atLoad {
		path := map[bool]string{false: "direct", true: "gRPC"}[r.serve]
		fmt.Printf("| %s GetURLs p50 / p99, %d clients at %.0f Gets/s (%.0f %% of that path's closed loop) | %v / %v | | | p99 < 10 ms | %s |\n",
			path, *nClients, r.gets, 100*r.frac, r.p50, r.p99, judged(true, r.p99 < 10*time.Millisecond))
	}
	if mem.ran {
		fmt.Printf("| peak RSS, %d URLs over %d queues | %.0f MiB | %.0f MiB | %.2f | < 1.5 GB (1,430 MiB) | %s |\n", *rssURLs, *rssQueues,
			mem.direct, mem.grpc, mem.grpc/max(mem.direct, 1), judged(mem.grpc > 0, mem.grpc*(1<<20) < 1.5e9))
	}
}

// profiles starts the profiles the flags ask for; the returned function
// writes them.
func profiles() func() {
	stopCPU := func() {}
	if *cpuProf != "" && !*cpuProfLat {
		stopCPU = record(*cpuProf, pprof.StartCPUProfile, pprof.StopCPUProfile)
	}
	if *mutexProf != "" {
		runtime.SetMutexProfileFraction(5)
	}
	if *blockProf != "" {
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
	}
	return func() {
		stopCPU()
		for _, p := range []struct{ name, file string }{{"heap", *memProf}, {"mutex", *mutexProf}, {"block", *blockProf}} {
			if p.file == "" {
				continue
			}
			writeProfile(p.name, p.file)
		}
	}
}

// record writes what start begins (a CPU profile, a trace) to file; the
// function it returns stops it and closes the file.
func record(file string, start func(io.Writer) error, stop func()) func() {
	fh, err := os.Create(file)
	if err != nil {
		log.Fatal(err)
	}
	if err := start(fh); err != nil {
		log.Fatal(err)
	}
	return func() {
		stop()
		if err := fh.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

func writeProfile(name, file string) {
	fh, err := os.Create(file)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup(name).WriteTo(fh, 0); err != nil {
		log.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		log.Fatal(err)
	}
}

// stealSample is the machine's CPU time from /proc/stat (Linux), in ticks:
// all of it, and what the hypervisor gave to other guests (steal). On a
// shared virtual machine the throughput figures move with the steal.
type stealSample struct{ total, steal uint64 }

func readSteal() stealSample {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return stealSample{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var s stealSample
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i < 8 { // user nice system idle iowait irq softirq steal
			s.total += n
		}
		if i == 7 {
			s.steal = n
		}
	}
	return s
}

// since describes the steal between s and now.
func (s stealSample) since() string {
	now := readSteal()
	if now.total <= s.total {
		return "CPU steal unknown"
	}
	return fmt.Sprintf("%.1f %% of the machine's CPU time stolen by the hypervisor during the run", 100*float64(now.steal-s.steal)/float64(now.total-s.total))
}
