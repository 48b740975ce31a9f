// Command load is the proxy benchmark's load driver (bench/proxy/run.sh,
// docs/performance.md): N concurrent keep-alive clients send GET requests
// through a forward proxy (or straight to the origin) for a fixed time and
// it reports requests/s, latency percentiles, how many requests reached the
// origin, and the CPU seconds the proxy process spent meanwhile.
//
//	load -peer NAME -scenario NAME -origin ADDR [-proxy URL] [-pid PID]
//	     [-clients 64] [-hosts 1] [-mode miss|hit] [-hit-urls 1000]
//	     [-duration 8s] [-max-requests 0] [-o FILE]
//	load table FILE...        # print the side-by-side table of JSON results
//
// URLs are http://site-NNNN.test:PORT/... with PORT the origin's: the names
// are not in DNS, so every peer maps *.test to the origin (the direct client
// dials -origin, httputilproxy and courtesy take a resolve rule, Squid a
// hosts_file), and the port lets Squid connect to the right place.
//
// Modes:
//   - miss: every request asks for a URL never asked before (the run id
//     and a counter are in the path), spread round-robin over -hosts host
//     names, so a caching proxy must forward each one. Before the timed
//     phase each host is asked once (robots.txt, connections, DNS warm).
//   - hit: the same -hit-urls URLs over and over. Before the timed phase
//     each is fetched twice, so a caching proxy holds them all; the origin
//     request count during the timed phase shows whether it really did.
//
// The proxy's CPU is utime+stime from /proc/PID/stat before and after the
// timed phase (clock ticks of 1/100 s, Linux's USER_HZ).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one scenario's measurement for one peer, written as a JSON line.
type Result struct {
	Peer     string `json:"peer"`
	Scenario string `json:"scenario"`
	Mode     string `json:"mode"`
	Clients  int    `json:"clients"`
	Hosts    int    `json:"hosts"`
	// Requests answered 200 with the full body in the timed phase.
	Requests int64 `json:"requests"`
	// Errors: transport errors, other statuses and short bodies.
	Errors       int64   `json:"errors"`
	FirstError   string  `json:"first_error,omitempty"`
	Seconds      float64 `json:"seconds"`
	RequestsPerS float64 `json:"requests_per_second"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
	MeanMs       float64 `json:"mean_ms"`
	// OriginRequests is how many requests the origin served in the timed
	// phase (-1: unknown).
	OriginRequests int64 `json:"origin_requests"`
	// ProxyCPUSeconds is the proxy process's user+system CPU in the timed
	// phase (-1: no -pid).
	ProxyCPUSeconds float64 `json:"proxy_cpu_seconds"`
	// ProxyCPUPer10k is ProxyCPUSeconds per 10,000 requests (-1: no -pid).
	ProxyCPUPer10k float64 `json:"proxy_cpu_seconds_per_10k"`
	Time           string  `json:"time"`
}

// Bounds on what the flags may ask for.
const (
	maxClients = 4096
	maxHosts   = 100_000
	maxHitURLs = 1_000_000
	maxSamples = 4_000_000 // latency samples kept (32 MB)
	maxBody    = 64 << 20
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "table" {
		if err := table(os.Stdout, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	peer, scenario, mode string
	origin               string
	proxy                *url.URL
	pid                  int
	clients, hosts       int
	hitURLs              int
	duration             time.Duration
	maxRequests          int64
	out                  string
	runID                string
	expectBytes          int64
}

func parse(args []string) (*config, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	c := &config{}
	var proxy string
	fs.StringVar(&c.peer, "peer", "", "peer `NAME` for the table (direct, squid, ...)")
	fs.StringVar(&c.scenario, "scenario", "", "scenario `NAME` for the table")
	fs.StringVar(&c.origin, "origin", "", "the origin's `ADDR:PORT` (dialled directly without -proxy; its port goes into every URL)")
	fs.StringVar(&proxy, "proxy", "", "forward proxy `URL` (empty: direct)")
	fs.IntVar(&c.pid, "pid", 0, "proxy process `PID` whose CPU to measure (0: none)")
	fs.IntVar(&c.clients, "clients", 64, "concurrent keep-alive clients")
	fs.IntVar(&c.hosts, "hosts", 1, "host names to spread requests over")
	fs.StringVar(&c.mode, "mode", "miss", "miss (unique URLs) or hit (repeated URLs)")
	fs.IntVar(&c.hitURLs, "hit-urls", 1000, "distinct URLs in hit mode")
	fs.DurationVar(&c.duration, "duration", 8*time.Second, "length of the timed phase")
	fs.Int64Var(&c.maxRequests, "max-requests", 0, "end the timed phase after N requests (0: no cap)")
	fs.Int64Var(&c.expectBytes, "bytes", 1024, "expected body size in `BYTES` (a different size counts as an error; -1: any)")
	fs.StringVar(&c.out, "o", "", "append the JSON result to `FILE` (default standard output)")
	fs.StringVar(&c.runID, "run-id", strconv.FormatInt(time.Now().UnixNano(), 36), "makes this run's URLs unique")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case c.peer == "" || c.scenario == "":
		return nil, errors.New("-peer and -scenario are required")
	case c.origin == "":
		return nil, errors.New("-origin is required")
	case c.clients < 1 || c.clients > maxClients:
		return nil, fmt.Errorf("-clients %d: want 1..%d", c.clients, maxClients)
	case c.hosts < 1 || c.hosts > maxHosts:
		return nil, fmt.Errorf("-hosts %d: want 1..%d", c.hosts, maxHosts)
	case c.mode != "miss" && c.mode != "hit":
		return nil, fmt.Errorf("-mode %q: want miss or hit", c.mode)
	case c.hitURLs < 1 || c.hitURLs > maxHitURLs:
		return nil, fmt.Errorf("-hit-urls %d: want 1..%d", c.hitURLs, maxHitURLs)
	case c.duration <= 0 || c.duration > 10*time.Minute:
		return nil, fmt.Errorf("-duration %v: want (0, 10m]", c.duration)
	case strings.ContainsAny(c.runID, "/?#% "):
		return nil, fmt.Errorf("-run-id %q: no URL delimiters", c.runID)
	}
	if _, _, err := net.SplitHostPort(c.origin); err != nil {
		return nil, fmt.Errorf("-origin: %w", err)
	}
	if proxy != "" {
		u, err := url.Parse(proxy)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("-proxy %q: want http://HOST:PORT", proxy)
		}
		c.proxy = u
	}
	return c, nil
}

// urls makes the URLs of a run: hostName(i) and pageURL(i).
type urls struct {
	port  string
	hosts int
	runID string
	mode  string
	hit   int
}

func (u urls) host(i int) string { return fmt.Sprintf("site-%04d.test:%s", i%u.hosts, u.port) }

// page returns the i-th URL of the timed phase.
func (u urls) page(i int64) string {
	if u.mode == "hit" {
		j := int(i % int64(u.hit))
		return fmt.Sprintf("http://%s/hit/%s/%d", u.host(j), u.runID, j)
	}
	return fmt.Sprintf("http://%s/miss/%s/%d", u.host(int(i%int64(u.hosts))), u.runID, i)
}

func run(args []string) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(c.origin)
	u := urls{port: port, hosts: c.hosts, runID: c.runID, mode: c.mode, hit: c.hitURLs}
	client := newClient(c)
	ctx := context.Background()

	// Warm-up: connections, robots.txt, and in hit mode the cache.
	var warm []string
	if c.mode == "hit" {
		for pass := 0; pass < 2; pass++ {
			for i := 0; i < c.hitURLs; i++ {
				warm = append(warm, u.page(int64(i)))
			}
		}
	} else {
		for i := 0; i < c.hosts; i++ {
			warm = append(warm, fmt.Sprintf("http://%s/warm/%s/%d", u.host(i), c.runID, i))
		}
	}
	if err := warmUp(ctx, client, warm, min(c.clients, 16), c.expectBytes); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}

	origin0 := originCount(c.origin)
	cpu0, cpuErr := procCPU(c.pid)
	res := measure(ctx, client, c, u)
	cpu1, cpuErr1 := procCPU(c.pid)
	origin1 := originCount(c.origin)

	res.OriginRequests = -1
	if origin0 >= 0 && origin1 >= 0 {
		res.OriginRequests = origin1 - origin0
	}
	res.ProxyCPUSeconds, res.ProxyCPUPer10k = -1, -1
	if c.pid > 0 {
		if cpuErr != nil || cpuErr1 != nil {
			return fmt.Errorf("proxy cpu: %w", errors.Join(cpuErr, cpuErr1))
		}
		res.ProxyCPUSeconds = cpu1 - cpu0
		if res.Requests > 0 {
			res.ProxyCPUPer10k = res.ProxyCPUSeconds * 10000 / float64(res.Requests)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if c.out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	f, err := os.OpenFile(c.out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// newClient builds the clients' shared transport: keep-alive, one idle
// connection kept per client, no compression (the bodies are 1 KB).
func newClient(c *config) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   c.clients + 16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
	}
	if c.proxy != nil {
		tr.Proxy = http.ProxyURL(c.proxy)
		tr.DialContext = dialer.DialContext
	} else {
		origin := c.origin
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, origin)
		}
	}
	return &http.Client{
		Transport: tr,
		Timeout:   60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// get fetches one URL and checks the answer: 200 and, unless want < 0,
// a body of want bytes.
func get(ctx context.Context, client *http.Client, u string, want int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%s: body: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	if want >= 0 && n != want {
		return fmt.Errorf("%s: body %d bytes, want %d", u, n, want)
	}
	return nil
}

// warmUp fetches every URL once with n workers, in order within each
// worker; the first error stops it.
func warmUp(ctx context.Context, client *http.Client, list []string, n int, want int64) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(list)) {
					return
				}
				if err := get(ctx, client, list[i], want); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(len(list))) // stop the others
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// measure runs the timed phase.
func measure(ctx context.Context, client *http.Client, c *config, u urls) Result {
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	var next, ok, bad atomic.Int64
	var errOnce sync.Once
	var firstErr string
	lat := make([][]time.Duration, c.clients)
	perClient := maxSamples / c.clients
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			samples := make([]time.Duration, 0, min(perClient, 1<<16))
			defer func() { lat[w] = samples }()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if c.maxRequests > 0 && i >= c.maxRequests {
					return
				}
				t0 := time.Now()
				err := get(ctx, client, u.page(i), c.expectBytes)
				d := time.Since(t0)
				if ctx.Err() != nil {
					return // cut by the end of the phase: not counted
				}
				if err != nil {
					bad.Add(1)
					errOnce.Do(func() { firstErr = err.Error() })
					continue
				}
				ok.Add(1)
				if len(samples) < perClient {
					samples = append(samples, d)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, s := range lat {
		all = append(all, s...)
	}
	p50, p99, mean := percentiles(all)
	return Result{
		Peer: c.peer, Scenario: c.scenario, Mode: c.mode, Clients: c.clients, Hosts: c.hosts,
		Requests: ok.Load(), Errors: bad.Load(), FirstError: firstErr,
		Seconds: elapsed.Seconds(), RequestsPerS: float64(ok.Load()) / elapsed.Seconds(),
		P50Ms: ms(p50), P99Ms: ms(p99), MeanMs: ms(mean),
		Time: start.UTC().Format(time.RFC3339),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentiles returns the 50th and 99th percentiles (nearest rank) and the
// mean of d, sorting it; zeros when d is empty.
func percentiles(d []time.Duration) (p50, p99, mean time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	rank := func(p float64) time.Duration {
		// nearest rank: the smallest value with at least p of the samples
		// at or below it.
		k := int(p*float64(len(d))+0.999999999) - 1
		k = max(0, min(k, len(d)-1))
		return d[k]
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return rank(0.50), rank(0.99), sum / time.Duration(len(d))
}

// originCount asks the origin how many requests it has served (-1 if it
// cannot tell). It always goes straight to the origin.
func originCount(origin string) int64 {
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := cl.Get("http://" + origin + "/_origin/stats")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var s struct {
		Requests int64 `json:"requests"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&s); err != nil {
		return -1
	}
	return s.Requests
}

// procCPU returns utime+stime of process pid in seconds (0 for pid 0).
func procCPU(pid int) (float64, error) {
	if pid <= 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// userHZ is Linux's clock tick for /proc/PID/stat (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// parseStatCPU reads utime and stime (fields 14 and 15, proc(5)) from a
// /proc/PID/stat line. The command name (field 2) is in parentheses and may
// hold spaces and parentheses, so fields are counted after its last ')'.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("load: /proc stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("load: /proc stat: %d fields after the name, want >= 13", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("load: /proc stat: %w", err)
	}
	return float64(ut+st) / userHZ, nil
}

// table reads JSON results from files and prints one markdown table per
// scenario: peers side by side, latency overhead against "direct" and
// throughput ratio against "squid".
func table(w io.Writer, files []string) error {
	var results []Result
	for _, name := range files {
		rs, err := readResults(name)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	if len(results) == 0 {
		return errors.New("table: no results")
	}
	var order []string
	by := map[string][]Result{}
	for _, r := range results {
		if _, ok := by[r.Scenario]; !ok {
			order = append(order, r.Scenario)
		}
		by[r.Scenario] = append(by[r.Scenario], r)
	}
	for _, sc := range order {
		rs := by[sc]
		var direct, squid *Result
		for i := range rs {
			switch rs[i].Peer {
			case "direct":
				direct = &rs[i]
			case "squid":
				squid = &rs[i]
			}
		}
		fmt.Fprintf(w, "\n%s (%s, %d clients, %d hosts)\n\n", sc, rs[0].Mode, rs[0].Clients, rs[0].Hosts)
		fmt.Fprintln(w, "| peer | req/s | x squid | p50 ms | p99 ms | p50 over direct ms | p99 over direct ms | errors | origin requests | proxy CPU s | CPU s / 10k req |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, r := range rs {
			xs, d50, d99 := "", "", ""
			if squid != nil && squid.RequestsPerS > 0 {
				xs = fmt.Sprintf("%.2f", r.RequestsPerS/squid.RequestsPerS)
			}
			if direct != nil && r.Peer != "direct" {
				d50 = fmt.Sprintf("%+.3f", r.P50Ms-direct.P50Ms)
				d99 = fmt.Sprintf("%+.3f", r.P99Ms-direct.P99Ms)
			}
			cpu, per := "", ""
			if r.ProxyCPUSeconds >= 0 {
				cpu = fmt.Sprintf("%.2f", r.ProxyCPUSeconds)
				per = fmt.Sprintf("%.3f", r.ProxyCPUPer10k)
			}
			origin := ""
			if r.OriginRequests >= 0 {
				origin = strconv.FormatInt(r.OriginRequests, 10)
			}
			fmt.Fprintf(w, "| %s | %.0f | %s | %.3f | %.3f | %s | %s | %d | %s | %s | %s |\n",
				r.Peer, r.RequestsPerS, xs, r.P50Ms, r.P99Ms, d50, d99, r.Errors, origin, cpu, per)
		}
	}
	return nil
}

func readResults(name string) ([]Result, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
