package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestCrawlAndProxyOneRedis: a crawl with its own frontier and a proxy
// share one politeness state through Redis (crawl --redis, proxy
// --redis): while the crawler crawls a site, a naive client fetches pages
// of the same site through the proxy, and the site never sees two
// requests closer than the delay, whoever sent them.
func TestCrawlAndProxyOneRedis(t *testing.T) {
	srv := redistest.Start(t)
	w := startWeb(t)
	const delay = 300 * time.Millisecond
	p := startProxy(t, w, "--redis", srv.Addr, "--default-delay", delay.String())
	data := filepath.Join(t.TempDir(), "crawl")
	var out, errb safeBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb},
			[]string{"crawl", "--redis", srv.Addr, "--data", data, "--delay", delay.String(), "--resolve", "*.test=" + w.addr,
				"--max-pages", "12", "--max-duration", "90s", "--address-policy", "allow", "http://site-0000.test/"})
	}()
	// The proxy's client, meanwhile: eight pages of the same site.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _, _ := getStatus(t, p.client(), fmt.Sprintf("http://site-0000.test/page-%d.html", 10+i)); code != 200 && code != 404 {
				t.Errorf("proxy request %d: %d", i, code)
			}
		}()
	}
	wg.Wait()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("crawl exit %d\n%s\n%s", code, out.String(), tail(errb.String(), 30))
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the crawl did not end within 2 minutes")
	}
	if !strings.Contains(errb.String(), "politeness state shared through Redis") {
		t.Errorf("the crawl did not say it shares its politeness state:\n%s", tail(errb.String(), 20))
	}
	crawler, proxied := 0, 0
	for _, e := range w.pages("site-0000.test") {
		if e.Proxy || !strings.HasPrefix(e.UserAgent, "courtesy/") {
			proxied++
		} else {
			crawler++
		}
	}
	if crawler < 5 || proxied < 8 {
		t.Errorf("the site saw %d of the crawler's requests and %d of the proxy's; want both at work", crawler, proxied)
	}
	checkGaps(t, w, "site-0000.test", delay)
}

// TestServePolitenessOneRedis: `courtesy serve --redis` answers its
// politeness services from the state a proxy keeps in the same Redis:
// after the proxy fetched a page of a host, the service says the host may
// not be asked yet, and it reads the robots.txt the proxy cached rather
// than fetching it again (without --redis it fetches its own).
func TestServePolitenessOneRedis(t *testing.T) {
	t.Setenv("COURTESY_ADMIN_TOKEN", "")
	srv := redistest.Start(t)
	w := startWeb(t)
	p := startProxy(t, w, "--redis", srv.Addr, "--default-delay", "3s")
	if code, _, _ := getStatus(t, p.client(), "http://site-0001.test/"); code != 200 {
		t.Fatalf("proxied GET: %d", code)
	}
	base, _, _, _, _ := startCmd(t, "serve", "--listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--log-level", "warn", "--allow-private", "--resolve", "*.test="+w.addr, "--redis", srv.Addr)
	resp, err := http.Post(base+"/politeness/verbose", "application/json", strings.NewReader(`["http://site-0001.test/page-1.html"]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got []struct {
		Allowed    bool  `json:"allowed"`
		RetryAfter int64 `json:"retryAfter"`
	}
	// The state holds when the proxy's request ended; each gate adds its
	// own delay (the service's is 1 s).
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 1 || got[0].Allowed || got[0].RetryAfter <= 0 {
		t.Errorf("politeness of a host the proxy has just asked: %s (%v); want not allowed yet", b, err)
	}
	robots := 0
	for _, e := range w.log.Entries() {
		if strings.HasPrefix(e.Host, "site-0001.test") && e.Target == "/robots.txt" {
			robots++
		}
	}
	if robots != 1 {
		t.Errorf("robots.txt of site-0001.test fetched %d times, want once (the service reads the proxy's copy)", robots)
	}
}

// TestCrawlRedisUsage: --redis with --redis-cluster is a usage error; an
// unreachable --redis is a runtime error.
func TestCrawlRedisUsage(t *testing.T) {
	code, _, errOut := run(t, "", "crawl", "--redis", "127.0.0.1:1", "--redis-cluster", "127.0.0.1:2", "--data", t.TempDir(), "http://a.test/")
	if code != 2 || !strings.Contains(errOut, "give --redis or --redis-cluster, not both") {
		t.Errorf("--redis and --redis-cluster: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, "", "crawl", "--redis", "127.0.0.1:1", "--data", t.TempDir(), "--log-level", "error", "http://a.test/")
	if code != 1 || !strings.Contains(errOut, "--redis") {
		t.Errorf("unreachable --redis: exit %d, stderr %q", code, errOut)
	}
}
