package cli

import (
	"context"
	"fmt"
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
