package crawl

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cpuclock"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	dto "github.com/prometheus/client_model/go"
)

// recordingWeb serves fixed bodies by host and path on loopback and
// records every request as "host path".
type recordingWeb struct {
	pages map[string]string // "host path" → body
	mu    sync.Mutex
	log   []string
}

func (w *recordingWeb) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	k := host + " " + r.URL.Path
	w.mu.Lock()
	w.log = append(w.log, k)
	w.mu.Unlock()
	body, ok := w.pages[k]
	if !ok {
		http.NotFound(rw, r)
		return
	}
	switch {
	case r.URL.Path == "/robots.txt":
		rw.Header().Set("Content-Type", "text/plain")
	case len(r.URL.Path) > 4 && r.URL.Path[len(r.URL.Path)-4:] == ".xml":
		rw.Header().Set("Content-Type", "application/xml")
	default:
		rw.Header().Set("Content-Type", "text/html")
	}
	_, _ = rw.Write([]byte(body))
}

func (w *recordingWeb) requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.log)
}

// serveRecording serves w on loopback and returns a resolver sending
// every host there.
func serveRecording(t *testing.T, w *recordingWeb) *resolve.Resolver {
	t.Helper()
	return serveHandler(t, w)
}

// listenHandler serves h on a loopback port of its own until the test ends.
func listenHandler(t *testing.T, h http.Handler) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln
}

// serveHandler serves h on loopback and returns a resolver sending every
// host there.
func serveHandler(t *testing.T, h http.Handler) *resolve.Resolver {
	t.Helper()
	ln := listenHandler(t, h)
	r, err := resolve.New([]string{"*=" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCrawlRobotsRules: the crawler uses the gate's one reading of
// robots.txt: a site whose REGP Ip-disallow names the crawler's egress
// address gets its robots.txt fetched and nothing else, and a relative
// Sitemap line is resolved against the robots.txt URL, so that the page
// only the sitemap lists is crawled.
func TestCrawlRobotsRules(t *testing.T) {
	w := &recordingWeb{pages: map[string]string{
		"ipdeny.test /robots.txt": "Robot-version: 3.0\nUser-agent: *\nIp-disallow: 127.0.0.1\nAllow: /\n",
		"ipdeny.test /":           "<a href=/a>a</a>",
		"ipdeny.test /a":          "a",
		"relsm.test /robots.txt":  "User-agent: *\nAllow: /\nSitemap: /maps/s.xml\n",
		"relsm.test /":            "home",
		"relsm.test /maps/s.xml": `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
			`<url><loc>http://relsm.test/orphan</loc></url></urlset>`,
		"relsm.test /orphan": "only in the sitemap",
	}}
	r := serveRecording(t, w)
	cfg := Config{DataDir: t.TempDir(), Delay: 10 * time.Millisecond, MaxDuration: time.Minute, Workers: 4,
		UserAgent: "courtesy-test/1.0", EgressIPs: []string{"127.0.0.1"}}
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, []string{"http://ipdeny.test/", "http://relsm.test/"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := w.requests()
	for _, k := range reqs {
		if k[:len("ipdeny.test")] == "ipdeny.test" && k != "ipdeny.test /robots.txt" {
			t.Errorf("request %q to a site whose Ip-disallow names our address", k)
		}
	}
	for _, want := range []string{"ipdeny.test /robots.txt", "relsm.test /maps/s.xml", "relsm.test /orphan"} {
		if !slices.Contains(reqs, want) {
			t.Errorf("no request %q; requests %q", want, reqs)
		}
	}
	if sum.RobotsDenied == 0 || !sum.Finished {
		t.Errorf("summary %+v: want a robots refusal and a finished crawl", sum)
	}
}

// TestEgressIPs: the configured addresses win; otherwise the machine's
// non-loopback addresses, or loopback when it has no other.
func TestEgressIPs(t *testing.T) {
	ifaces := func(s ...string) []net.Addr {
		var out []net.Addr
		for _, a := range s {
			_, n, err := net.ParseCIDR(a)
			if err != nil {
				t.Fatal(err)
			}
			ip, _, _ := net.ParseCIDR(a)
			n.IP = ip
			out = append(out, n)
		}
		return out
	}
	cases := []struct {
		name   string
		list   []string
		ifaces []net.Addr
		want   []string
	}{
		{"configured", []string{"203.0.113.4"}, ifaces("10.0.0.2/8"), []string{"203.0.113.4"}},
		{"interfaces without loopback", nil, ifaces("127.0.0.1/8", "10.0.0.2/8", "fe80::1/64", "2001:db8::5/64"), []string{"10.0.0.2", "2001:db8::5"}},
		{"loopback only", nil, ifaces("127.0.0.1/8", "::1/128"), []string{"127.0.0.1", "::1"}},
		{"none", nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range egressIPs(tc.list, tc.ifaces) {
				got = append(got, a.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("egressIPs = %q, want %q", got, tc.want)
			}
		})
	}
	if err := (Config{EgressIPs: []string{"not an address"}}).Validate(); err == nil {
		t.Error("bad egress-ips accepted")
	}
}

// TestReturnedWithReason: a URL the worker cannot finish goes back to the
// frontier by one path that records why: here robots.txt answers 503, so
// the seed is given back ("robots-retry") until the host is retired after
// MaxHostFailures tries, and then completed with the robots prerequisite
// status.
func TestReturnedWithReason(t *testing.T) {
	w := &recordingWeb{pages: map[string]string{}}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.mu.Lock()
			w.log = append(w.log, r.URL.Path)
			w.mu.Unlock()
			http.Error(rw, "down", http.StatusServiceUnavailable)
			return
		}
		w.ServeHTTP(rw, r)
	})
	res := serveHandler(t, h)
	cfg := Config{DataDir: t.TempDir(), Delay: 10 * time.Millisecond, MaxDuration: time.Minute, Workers: 2, MaxHostFailures: 3}
	cfg.Politeness.Robots.RetryBase, cfg.Politeness.Robots.RetryMax = 10*time.Millisecond, 20*time.Millisecond
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, []string{"http://down.test/"})
	if err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	if err := c.metrics.returned.WithLabelValues(backRobotsRetry).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != float64(cfg.MaxHostFailures-1) {
		t.Errorf("returned for %s: %v, want %d", backRobotsRetry, got, cfg.MaxHostFailures-1)
	}
	if sum.Retired["down.test"] == "" || !sum.Finished || sum.Pages != 0 {
		t.Errorf("summary %+v: want down.test retired, no page, a finished crawl", sum)
	}
	for _, k := range w.requests() {
		if k != "/robots.txt" {
			t.Errorf("request %q to a host whose robots.txt is unavailable", k)
		}
	}
}

// TestPageErrorsKeepHost: a page's own 500 never retires its host: the
// URL is tried MaxRetries more times, its last answer is its final status
// in crawl.log, every other page of the host is crawled, and the crawl
// finishes and says how many URLs failed. While only the retry is left,
// the progress line says the crawl waits and until when.
func TestPageErrorsKeepHost(t *testing.T) {
	pages := map[string]string{"err.test /robots.txt": "User-agent: *\nAllow: /\n"}
	home := ""
	for i := range 8 {
		home += fmt.Sprintf(`<a href="/p%d">p</a> <a href="/bad%d">b</a>`, i, i)
		pages[fmt.Sprintf("err.test /p%d", i)] = "page"
	}
	pages["err.test /"] = home
	w := &recordingWeb{pages: pages}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/bad") {
			w.mu.Lock()
			w.log = append(w.log, "err.test "+r.URL.Path)
			w.mu.Unlock()
			http.Error(rw, "broken page", http.StatusInternalServerError)
			return
		}
		w.ServeHTTP(rw, r)
	})
	res := serveHandler(t, h)
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Delay: 10 * time.Millisecond, MaxDuration: time.Minute, Workers: 4,
		MaxHostFailures: 2, MaxRetries: 2, RetryDelay: 1500 * time.Millisecond, ProgressInterval: time.Millisecond}
	c, err := New(cfg, Options{Logger: logger, Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, []string{"http://err.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Finished || len(sum.Retired) != 0 || sum.Failed != 8 {
		t.Errorf("summary: finished %v, retired %v, failed %d; want finished, none retired, 8 failed", sum.Finished, sum.Retired, sum.Failed)
	}
	reqs := w.requests()
	for i := range 8 {
		if !slices.Contains(reqs, fmt.Sprintf("err.test /p%d", i)) {
			t.Errorf("page /p%d of a host with broken pages not fetched", i)
		}
		n := 0
		for _, k := range reqs {
			if k == fmt.Sprintf("err.test /bad%d", i) {
				n++
			}
		}
		if n != cfg.MaxRetries+1 {
			t.Errorf("/bad%d asked %d times, want %d", i, n, cfg.MaxRetries+1)
		}
	}
	clog, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		re := regexp.MustCompile(`(?m)^\S+ +500 .*http://err\.test/bad` + strconv.Itoa(i) + ` .*\b3t\b`)
		if !re.Match(clog) {
			t.Errorf("crawl.log: no final 500 line after 3 tries for /bad%d:\n%s", i, clog)
		}
	}
	if regexp.MustCompile(`\b3t,3t\b`).Match(clog) {
		t.Errorf("crawl.log: the tries annotated twice on one line:\n%s", clog)
	}
	if !regexp.MustCompile(`waiting: \d+ hosts in backoff, next at \d\d:\d\d:\d\d`).MatchString(logs.String()) {
		t.Errorf("no waiting line while only retries were left:\n%s", logs.String())
	}
	if cpuclock.Supported && !regexp.MustCompile(`cpu_cores=\d+(\.\d+)?\b`).MatchString(logs.String()) {
		t.Errorf("no cpu_cores in the progress lines:\n%s", logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRetryBackoff(t *testing.T) {
	for _, tc := range []struct {
		base, limit time.Duration
		tries       int
		want        time.Duration
	}{
		{30 * time.Second, 15 * time.Minute, 1, 30 * time.Second},
		{30 * time.Second, 15 * time.Minute, 2, time.Minute},
		{30 * time.Second, 15 * time.Minute, 5, 8 * time.Minute},
		{30 * time.Second, 15 * time.Minute, 6, 15 * time.Minute},
		{30 * time.Second, 15 * time.Minute, 60, 15 * time.Minute},
		{time.Hour, 15 * time.Minute, 1, 15 * time.Minute},
	} {
		if got := retryBackoff(tc.base, tc.limit, tc.tries); got != tc.want {
			t.Errorf("retryBackoff(%v, %v, %d) = %v, want %v", tc.base, tc.limit, tc.tries, got, tc.want)
		}
	}
	for _, s := range []int{500, 503, 599, 429} {
		if !transient(s) {
			t.Errorf("%d not retried", s)
		}
	}
	for _, s := range []int{200, 301, 404, 410, 403, 600, 999} {
		if transient(s) {
			t.Errorf("%d retried", s)
		}
	}
}

// TestRetryAfterHonoured: a page answering 503 with Retry-After is asked
// again once that time has passed, not after RetryDelay (an hour here),
// and not before.
func TestRetryAfterHonoured(t *testing.T) {
	var mu sync.Mutex
	var busy []time.Time // when /busy was asked
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(rw, "User-agent: *\nAllow: /\n")
		case "/":
			fmt.Fprint(rw, `<a href="/busy">busy</a>`)
		case "/busy":
			mu.Lock()
			busy = append(busy, time.Now())
			n := len(busy)
			mu.Unlock()
			if n == 1 {
				rw.Header().Set("Retry-After", "1")
				http.Error(rw, "busy", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(rw, "free now")
		default:
			http.NotFound(rw, r)
		}
	})
	res := serveHandler(t, h)
	cfg := Config{DataDir: t.TempDir(), Delay: 10 * time.Millisecond, MaxDuration: time.Minute, Workers: 2,
		MaxRetries: 2, RetryDelay: time.Hour, MaxRetryDelay: 2 * time.Hour}
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, []string{"http://busy.test/"})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sum.Finished || sum.Failed != 0 || len(busy) != 2 {
		t.Fatalf("finished %v, failed %d, /busy asked %d times; want finished, 0 failed, asked twice", sum.Finished, sum.Failed, len(busy))
	}
	if gap := busy[1].Sub(busy[0]); gap < time.Second {
		t.Errorf("/busy asked again %v after a Retry-After of 1 s", gap)
	}
}
