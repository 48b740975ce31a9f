package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

var consoleRE = regexp.MustCompile(`console on http://(\S+)/ \(token (\S+)\)`)

// startCmd runs a long-running command in-process until the test ends,
// and waits (bounded) for its console line.
func startCmd(t *testing.T, args ...string) (base, token string, out, errb *safeBuffer, done <-chan int) {
	t.Helper()
	out, errb = &safeBuffer{}, &safeBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan int, 1)
	go func() { ch <- Main(ctx, &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: errb}, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Errorf("%s did not stop", args[0])
		}
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if m := consoleRE.FindStringSubmatch(out.String()); m != nil {
			return "http://" + m[1], m[2], out, errb, ch
		}
		select {
		case code := <-ch:
			t.Fatalf("%s exited %d: %s %s", args[0], code, out.String(), errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s printed no console line: %s %s", args[0], out.String(), errb.String())
	return
}

// call sends a request to the console and decodes a JSON answer into v
// (when not nil); it returns the status.
func call(t *testing.T, method, u, token string, body any, v any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if v != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v: %s", method, u, err, b)
		}
	}
	return resp.StatusCode
}

// checkPage fetches the console page and one of its files.
func checkPage(t *testing.T, base string) {
	t.Helper()
	for _, p := range []string{"/", "/app.js"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) == 0 {
			t.Errorf("GET %s: %d, %d bytes", p, resp.StatusCode, len(b))
		}
		if p == "/" && !strings.Contains(string(b), "<html") {
			t.Errorf("GET /: not the console page: %.200s", b)
		}
	}
}

type overview struct {
	State    string `json:"state"`
	Pages    int64  `json:"pages"`
	InFlight int64  `json:"in_flight"`
	Paused   bool   `json:"paused"`
	Queued   int64  `json:"queued"`
	Status   map[string]int64
}

// waitFor polls the overview (bounded) until ok holds.
func waitFor(t *testing.T, base, what string, ok func(overview) bool) overview {
	t.Helper()
	var o overview
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		o = overview{}
		if call(t, "GET", base+"/api/overview", "", nil, &o) == 200 && ok(o) {
			return o
		}
	}
	t.Fatalf("%s: not within 30 s (last %+v)", what, o)
	return o
}

// TestCrawlConsole crawls the synthetic web with --console: the page and
// the API answer, /metrics and /health share the address, the pages
// counter rises, actions need the token, pause holds the crawl without
// ending it and resume restarts it, and an operator's block outlives the
// crawler's own blocks after fetches.
func TestCrawlConsole(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 3, Sites: 12, PagesPerSite: 400, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	// Slow pages: a host has a fetch under way much of the time, as the
	// block check below needs.
	h := web.Handler()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			time.Sleep(300 * time.Millisecond)
		}
		h.ServeHTTP(w, r)
	})}
	ln := listenLoopback(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var seeds []string
	for _, s := range web.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	dir := t.TempDir()
	args := append([]string{"crawl", "--data", filepath.Join(dir, "data"), "--console", "127.0.0.1:0",
		"--console-token", "0123456789abcdef-test", "--delay", "100ms", "--workers", "8", "--max-duration", "3m",
		"--resolve", "*.test=" + ln.Addr().String(), "--log-level", "warn"}, seeds...)
	base, token, _, _, done := startCmd(t, args...)
	if token != "0123456789abcdef-test" {
		t.Errorf("printed token %q, want the one given", token)
	}
	checkPage(t, base)
	first := waitFor(t, base, "first pages", func(o overview) bool { return o.Pages > 0 })
	waitFor(t, base, "pages rising", func(o overview) bool { return o.Pages > first.Pages+3 && o.Status["200"] > 0 })
	for p, want := range map[string]string{"/health": "ok", "/metrics": "courtesy_crawl_pages_total"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Errorf("GET %s lacks %q", p, want)
		}
	}

	// Actions need the token.
	if code := call(t, "POST", base+"/api/pause", "", struct{}{}, nil); code != 401 {
		t.Errorf("pause without token: %d, want 401", code)
	}
	if code := call(t, "POST", base+"/api/pause", "wrong-token-0123456789", struct{}{}, nil); code != 401 {
		t.Errorf("pause with a wrong token: %d, want 401", code)
	}
	if code := call(t, "POST", base+"/api/pause", token, struct{}{}, nil); code != 200 {
		t.Fatalf("pause with the token: %d", code)
	}
	// Paused: once the fetches under way end, the counter stands still
	// and the crawl goes on running.
	held := waitFor(t, base, "paused, nothing in flight", func(o overview) bool { return o.Paused && o.InFlight == 0 })
	time.Sleep(time.Second) // a running crawl fetches about 25 pages in this time
	again := waitFor(t, base, "overview", func(overview) bool { return true })
	if again.Pages != held.Pages {
		t.Errorf("pages rose from %d to %d while paused", held.Pages, again.Pages)
	}
	select {
	case code := <-done:
		t.Fatalf("the crawl ended (exit %d) while paused", code)
	default:
	}
	if code := call(t, "POST", base+"/api/resume", token, struct{}{}, nil); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	resumed := waitFor(t, base, "pages rising after resume", func(o overview) bool { return !o.Paused && o.Pages > again.Pages+3 })

	// Block a host with a fetch under way for an hour: when the fetch
	// ends the crawler blocks the queue until the host's next allowed
	// time, and the operator's later time must stay.
	type hostRow struct {
		Host         string    `json:"host"`
		Fetched      uint64    `json:"fetched"`
		InFlight     uint64    `json:"in_flight"`
		BlockedUntil time.Time `json:"blocked_until"`
	}
	var hosts struct {
		Rows []hostRow `json:"rows"`
	}
	if code := call(t, "GET", base+"/api/hosts?limit=100", "", nil, &hosts); code != 200 || len(hosts.Rows) == 0 {
		t.Fatalf("hosts: %d %+v", code, hosts)
	}
	// The table is a snapshot (up to seconds old): ask each host live.
	var busy hostRow
	for deadline := time.Now().Add(30 * time.Second); busy.Host == "" && time.Now().Before(deadline); {
		for _, h := range hosts.Rows {
			var r hostRow
			// Leased, and the crawler's block after the last fetch past:
			// this lease's fetch has not ended.
			if call(t, "GET", base+"/api/hosts/"+h.Host, "", nil, &r) == 200 && r.InFlight > 0 && r.BlockedUntil.Before(time.Now()) {
				busy = r
				break
			}
		}
	}
	if busy.Host == "" {
		t.Fatal("no host with a fetch under way")
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if code := call(t, "POST", base+"/api/block", token, map[string]string{"host": busy.Host, "until": until.Format(time.RFC3339)}, nil); code != 200 {
		t.Fatalf("block: %d", code)
	}
	var row hostRow
	for deadline := time.Now().Add(20 * time.Second); row.Fetched <= busy.Fetched && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		call(t, "GET", base+"/api/hosts/"+busy.Host, "", nil, &row)
	}
	if row.Fetched <= busy.Fetched {
		t.Fatalf("%s: the fetch under way did not end", busy.Host)
	}
	if row.BlockedUntil.Before(until) {
		t.Errorf("%s blocked until %v after its fetch, want the operator's %v", busy.Host, row.BlockedUntil, until)
	}
	waitFor(t, base, "other hosts crawled after the block", func(o overview) bool { return o.Pages > resumed.Pages+20 })
	call(t, "GET", base+"/api/hosts/"+busy.Host, "", nil, &row)
	if row.Fetched > busy.Fetched+1 {
		t.Errorf("%s: %d URLs completed after the block (at most the one under way)", busy.Host, row.Fetched-busy.Fetched)
	}

	// Seeds added in the console are normalized and queued.
	var added struct {
		Received int `json:"received"`
		Added    int `json:"added"`
	}
	newSeed := fmt.Sprintf("HTTP://%s/console-seed-%d", strings.ToUpper(web.Sites()[0].Host), 1)
	if code := call(t, "POST", base+"/api/seeds", token, map[string][]string{"urls": {newSeed, newSeed}}, &added); code != 200 || added.Received != 2 || added.Added != 1 {
		t.Errorf("seeds: %d %+v, want 2 received, 1 added", code, added)
	}
}

// TestServeConsole runs `courtesy serve` with --api-listen: the console is
// there with the politeness services, its overview shows the frontier,
// and pause needs the token.
func TestServeConsole(t *testing.T) {
	base, token, _, _, _ := startCmd(t, "serve", "--listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data", t.TempDir(), "--log-level", "warn")
	checkPage(t, base)
	var o overview
	if code := call(t, "GET", base+"/api/overview", "", nil, &o); code != 200 || o.Paused {
		t.Fatalf("overview: %d %+v", code, o)
	}
	// The services still answer on the same address.
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/health: %d", resp.StatusCode)
	}
	if code := call(t, "POST", base+"/api/pause", "", struct{}{}, nil); code != 401 {
		t.Errorf("pause without token: %d, want 401", code)
	}
	if code := call(t, "POST", base+"/api/pause", token, struct{}{}, nil); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	if code := call(t, "GET", base+"/api/overview", "", nil, &o); code != 200 || !o.Paused {
		t.Errorf("after pause: %d %+v", code, o)
	}
}

// TestProxyConsole runs `courtesy proxy` with --api-listen: the console is
// on the API address next to the services, it counts the proxied
// requests, and a delay change needs the token.
func TestProxyConsole(t *testing.T) {
	w := startWeb(t)
	p := startProxy(t, w, "--api-listen", "127.0.0.1:0", "--default-delay", "10ms")
	m := consoleRE.FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no console line: %s", p.stdout.String())
	}
	base, token := "http://"+m[1], m[2]
	if !strings.Contains(p.stdout.String(), "services on http://"+m[1]) {
		t.Errorf("console not on the API address: %s", p.stdout.String())
	}
	checkPage(t, base)
	host := w.Sites()[0].Host
	for i := range 3 {
		resp, err := p.client().Get(fmt.Sprintf("http://%s/?i=%d", host, i))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var ps struct {
		Requests int64            `json:"requests"`
		Clients  map[string]int64 `json:"clients"`
		Trace    []struct {
			URL string `json:"url"`
		} `json:"trace"`
	}
	if code := call(t, "GET", base+"/api/proxy", "", nil, &ps); code != 200 || ps.Requests < 3 || len(ps.Clients) == 0 || len(ps.Trace) < 3 {
		t.Errorf("proxy view: %d %+v", code, ps)
	}
	// The services share the address.
	if code, _, _ := getStatus(t, http.DefaultClient, base+"/health"); code != 200 {
		t.Errorf("/health: %d", code)
	}
	body := map[string]any{"key": host, "delay": "2s"}
	if code := call(t, "POST", base+"/api/delay", "", body, nil); code != 401 {
		t.Errorf("delay without token: %d, want 401", code)
	}
	if code := call(t, "POST", base+"/api/delay", token, body, nil); code != 200 {
		t.Fatalf("delay: %d", code)
	}
	// The admin API sees the delay set in the console.
	_, _, admin := getStatus(t, http.DefaultClient, base+"/admin/delays/"+host, "X-Courtesy-Token", p.token(t))
	if !strings.Contains(admin, "2000") && !strings.Contains(admin, `"2s"`) {
		t.Errorf("admin API after the console's delay: %s", admin)
	}
}

func TestConsoleAddr(t *testing.T) {
	for in, want := range map[string]string{"9090": "127.0.0.1:9090", ":9090": "127.0.0.1:9090", "0.0.0.0:9090": "0.0.0.0:9090",
		"localhost:1": "localhost:1", "": "", "[::1]:5": "[::1]:5"} {
		if got := consoleAddr(in); got != want {
			t.Errorf("consoleAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// The console flags' bad input is a usage error before anything starts;
// --metrics-addr is --console under another name.
func TestConsoleFlagsUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"crawl", "--data", dir, "--console", "127.0.0.1:0", "--console-token", "short", "http://a.test/"},
		{"crawl", "--data", dir, "--metrics-addr", "127.0.0.1:0", "--console-token", "short", "http://a.test/"},
		{"serve", "--data", dir, "--console-token", "short"},
		{"proxy", "--data", dir, "--console-token", "short"},
	} {
		code, _, errOut := run(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "--console-token") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	// The configuration's console.token, here from the environment.
	t.Setenv("COURTESY_CONSOLE__TOKEN", "short")
	for _, args := range [][]string{
		{"crawl", "--data", dir, "--console", "127.0.0.1:0", "http://a.test/"},
		{"proxy", "--data", dir},
	} {
		code, _, errOut := run(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "token shorter") {
			t.Errorf("%v with console.token %q: exit %d, stderr %q", args, "short", code, errOut)
		}
	}
}
