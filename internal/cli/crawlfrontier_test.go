package cli

// Real processes: `courtesy serve` and two `courtesy crawl --frontier`
// children (this test binary, COURTESY_CLI_HELPER=1) share one crawl of a
// synthetic web served by the test.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// freeAddr returns a loopback address with a port free now (a restarted
// service must come back on the same one).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startServe runs `courtesy serve` on addr and dir and waits until it
// listens.
func startServe(t *testing.T, dir, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--listen", addr, "--data", dir, "--default-delay", "0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "COURTESY_CLI_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "URLFrontier gRPC on "+addr) {
				once.Do(func() { close(found) })
			}
		}
	}()
	select {
	case <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("courtesy serve did not start within 60 s")
	}
	return cmd
}

// crawlProc is one `courtesy crawl --frontier` child.
type crawlProc struct {
	cmd       *exec.Cmd
	data      string
	out, errb bytes.Buffer
	done      chan error
}

func startCrawl(t *testing.T, data, frontierAddr, webAddr string, seeds []string) *crawlProc {
	t.Helper()
	p := &crawlProc{data: data, done: make(chan error, 1)}
	args := append([]string{"crawl", "--frontier", frontierAddr, "--data", data, "--resolve", "*.test=" + webAddr,
		"--delay", "50ms", "--workers", "8", "--max-duration", "3m", "--log-level", "info"}, seeds...)
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), "COURTESY_CLI_HELPER=1")
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the crawl to end (at most d) and fails unless it
// finished the crawl.
func (p *crawlProc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case err := <-p.done:
		if err != nil || !strings.Contains(p.out.String(), "finished: nothing left to crawl") {
			t.Fatalf("crawl %s: %v\nstdout:\n%s\nstderr:\n%s", p.data, err, p.out.String(), tail(p.errb.String(), 40))
		}
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("crawl %s did not end within %s\nstderr:\n%s", p.data, d, tail(p.errb.String(), 40))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// sharedWeb serves a small plain synthetic web and returns it, its
// address, the request log and the seeds.
func sharedWeb(t *testing.T) (*testweb.Web, string, *testweb.Memory, []string) {
	t.Helper()
	web, err := testweb.New(testweb.Config{Sites: 4, PagesPerSite: 10, Plain: true, NoExternal: true})
	if err != nil {
		t.Fatal(err)
	}
	mem := &testweb.Memory{}
	srv := httptest.NewServer(web.LoggedHandler(mem))
	t.Cleanup(srv.Close)
	var seeds []string
	for _, s := range web.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	return web, strings.TrimPrefix(srv.URL, "http://"), mem, seeds
}

// fetchCounts counts the GET requests per URL the web received, robots.txt
// left out (each process reads it for itself).
func fetchCounts(mem *testweb.Memory) map[string]int {
	n := map[string]int{}
	for _, e := range mem.Entries() {
		if e.Method != "GET" || e.Target == "/robots.txt" {
			continue
		}
		n["http://"+hostOnly(e.Host)+e.Target]++
	}
	return n
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// overlaps lists, per host, page requests (robots.txt left out) that
// started before the host's previous request ended.
func overlaps(mem *testweb.Memory) []string {
	by := map[string][]testweb.Entry{}
	for _, e := range mem.Entries() {
		if e.Target == "/robots.txt" {
			continue
		}
		by[hostOnly(e.Host)] = append(by[hostOnly(e.Host)], e)
	}
	var out []string
	for _, es := range by {
		sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
		for i := 1; i < len(es); i++ {
			if es[i].Start.Before(es[i-1].End) {
				out = append(out, fmt.Sprintf("%s%s (from %s) during %s (from %s)", es[i].Host, es[i].Target, es[i].Client, es[i-1].Target, es[i-1].Client))
			}
		}
	}
	return out
}

// logged returns the URLs crawl.log (in data) lists with status 200, and
// the number of lines, robots.txt fetch lines left out.
func logged(t *testing.T, data string) (map[string]bool, int) {
	t.Helper()
	f, err := os.Open(filepath.Join(data, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ok, lines := map[string]bool{}, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		e, err := crawllog.Parse(sc.Text())
		if err != nil {
			t.Fatalf("%s crawl.log: %v", data, err)
		}
		if e.Prerequisite() {
			continue // a robots.txt fetch, not a URL of the crawl
		}
		lines++
		if e.Status == 200 {
			ok[e.URL] = true
		}
	}
	return ok, lines
}

// warcResponses reads every WARC file of a process (digests verified)
// and returns the target URIs of its response records.
func warcResponses(t *testing.T, data string) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("%s: no WARC file", data)
	}
	out := map[string]int{}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := warc.NewReader(f, warc.ReaderOptions{VerifyDigests: true})
		if err != nil {
			t.Fatal(err)
		}
		for {
			h, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatalf("%s: %s: %v", path, h.TargetURI(), err)
			}
			if h.Type() == warc.TypeResponse {
				out[h.TargetURI()]++
			}
		}
		f.Close()
	}
	return out
}

// checkShared checks what two crawlers of one crawl left: every reachable
// page fetched and logged 200 by one of them, each process's WARC files
// readable and holding its own pages, and at most maxDups URLs fetched
// more than once (it returns how many were).
func checkShared(t *testing.T, web *testweb.Web, mem *testweb.Memory, procs []*crawlProc, maxDups int) int {
	t.Helper()
	return checkCrawled(t, web, mem, procs, maxDups, true)
}

// checkCrawled is checkShared; shared false drops the demand that every
// process logged a URL (the test is about something else, and on four
// hosts one process can keep every queue it is served).
func checkCrawled(t *testing.T, web *testweb.Web, mem *testweb.Memory, procs []*crawlProc, maxDups int, shared bool) int {
	t.Helper()
	counts := fetchCounts(mem)
	union := map[string]bool{}
	var split []int
	for _, p := range procs {
		ok, lines := logged(t, p.data)
		split = append(split, lines)
		if lines == 0 && shared {
			t.Errorf("%s: crawl.log is empty: the work was not shared\nstderr:\n%s", p.data, tail(p.errb.String(), 60))
		}
		resp := warcResponses(t, p.data)
		for u := range ok {
			union[u] = true
			if resp[u] == 0 {
				t.Errorf("%s: %s logged 200 but not in its WARC files", p.data, u)
			}
		}
	}
	reachable := 0
	for _, s := range web.Sites() {
		for _, u := range web.Reachable(s) {
			reachable++
			if !union[u] {
				t.Errorf("reachable page %s in no crawl.log (fetched %d times)", u, counts[u])
			}
		}
	}
	var dups []string
	for u, n := range counts {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%s ×%d", u, n))
		}
	}
	sort.Strings(dups)
	if len(dups) > maxDups {
		t.Errorf("%d URLs fetched more than once (at most %d allowed): %v", len(dups), maxDups, dups)
	}
	t.Logf("%d reachable pages, %d URLs fetched, crawl.log lines per process %v, %d fetched twice or more %v", reachable, len(counts), split, len(dups), dups)
	return len(dups)
}

// TestCrawlFrontierShared: two crawler processes on one crawl of a
// `courtesy serve` process share the work: each URL is fetched once,
// every reachable page is in one of the two crawl.logs and WARC sets, and
// no host gets two page requests at once (the frontier serves a queue to
// one crawler at a time).
func TestCrawlFrontierShared(t *testing.T) {
	web, webAddr, mem, seeds := sharedWeb(t)
	addr := freeAddr(t)
	startServe(t, t.TempDir(), addr)
	a := startCrawl(t, filepath.Join(t.TempDir(), "a"), addr, webAddr, seeds)
	b := startCrawl(t, filepath.Join(t.TempDir(), "b"), addr, webAddr, seeds)
	a.wait(t, 3*time.Minute)
	b.wait(t, 3*time.Minute)
	checkShared(t, web, mem, []*crawlProc{a, b}, 0)
	if o := overlaps(mem); len(o) != 0 {
		t.Errorf("%d page requests overlapped another on the same host: %v", len(o), o)
	}
}

// TestCrawlFrontierServiceKilled: the service is killed with SIGKILL in
// the middle of the crawl and restarted on the same data a few seconds
// later; both crawlers say they wait, carry on, and finish the crawl
// without losing a URL. The leases the service held died with it, so at
// most one URL per host (the one in flight) is fetched twice.
func TestCrawlFrontierServiceKilled(t *testing.T) {
	web, webAddr, mem, seeds := sharedWeb(t)
	addr, dir := freeAddr(t), t.TempDir()
	srv := startServe(t, dir, addr)
	a := startCrawl(t, filepath.Join(t.TempDir(), "a"), addr, webAddr, seeds)
	b := startCrawl(t, filepath.Join(t.TempDir(), "b"), addr, webAddr, seeds)
	total := 0
	for _, s := range web.Sites() {
		total += len(web.Reachable(s))
	}
	deadline := time.Now().Add(time.Minute)
	for len(fetchCounts(mem)) < total/3 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pages fetched in a minute", len(fetchCounts(mem)), total)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	before := len(fetchCounts(mem))
	time.Sleep(3 * time.Second) // the crawlers run into the outage
	startServe(t, dir, addr)
	a.wait(t, 3*time.Minute)
	b.wait(t, 3*time.Minute)
	if before >= total {
		t.Fatalf("the crawl was over (%d of %d pages) before the service was killed", before, total)
	}
	// Sharing is TestCrawlFrontierShared's to check: here one crawler
	// took every queue after the restart in one CI run of many.
	checkCrawled(t, web, mem, []*crawlProc{a, b}, len(web.Sites()), false)
	said := regexp.MustCompile(`frontier service unreachable; retrying with backoff`)
	back := regexp.MustCompile(`frontier service reachable again`)
	for _, p := range []*crawlProc{a, b} {
		if !said.MatchString(p.errb.String()) || !back.MatchString(p.errb.String()) {
			t.Errorf("%s did not log the outage and its end:\n%s", p.data, tail(p.errb.String(), 30))
		}
	}
}

// TestCrawlFrontierUsage: a malformed --frontier address is a usage
// error, and an empty crawl in the service without seeds says so.
func TestCrawlFrontierUsage(t *testing.T) {
	code, _, errOut := run(t, "", "crawl", "--frontier", "no-port", "--data", t.TempDir(), "http://a.test/")
	if code != 2 || !strings.Contains(errOut, "want host:port") {
		t.Errorf("bad address: exit %d, stderr %q", code, errOut)
	}
	addr := freeAddr(t)
	startServe(t, t.TempDir(), addr)
	code, _, errOut = run(t, "", "crawl", "--frontier", addr, "--crawl-id", "empty", "--data", t.TempDir(), "--log-level", "error")
	if code != 2 || !strings.Contains(errOut, `crawl "empty" at `+addr+" holds no URL") {
		t.Errorf("empty crawl: exit %d, stderr %q", code, errOut)
	}
}
