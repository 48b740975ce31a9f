package console

import (
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// liveCrawl is a small real crawl the browser test and the CPU benchmark
// drive: a testweb served on loopback, a real frontier and a real
// politeness gate, and workers that lease, ask the gate, fetch, extract
// links and acknowledge, as the crawler does (without WARC and traps).
type liveCrawl struct {
	web    *testweb.Web
	mem    *testweb.Memory
	fr     *frontier.Frontier
	gate   *politeness.Gate
	robots *politeness.MemoryRobotsStore
	client *http.Client
	start  time.Time

	pages, bytes, errs, denied, inFlight atomic.Int64
	mu                                   sync.Mutex
	status, mimes                        map[string]int64
}

type tb interface {
	Helper()
	Fatal(...any)
	TempDir() string
	Cleanup(func())
}

func newLiveCrawl(t tb, webCfg testweb.Config, delay time.Duration) *liveCrawl {
	t.Helper()
	web, err := testweb.New(webCfg)
	if err != nil {
		t.Fatal(err)
	}
	mem := &testweb.Memory{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: web.LoggedHandler(mem)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	res, err := resolve.New([]string{"*.test=" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: res.Dial(d.DialContext), MaxIdleConnsPerHost: 2}}
	db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := frontier.Open(db, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fr.Close(); db.Close() })
	rs := politeness.NewMemoryRobotsStore()
	gate, err := politeness.New(politeness.Config{DefaultDelay: delay, ConfigCacheTTL: time.Millisecond}, politeness.Backend{Robots: rs, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	c := &liveCrawl{web: web, mem: mem, fr: fr, gate: gate, robots: rs, client: client, status: map[string]int64{}, mimes: map[string]int64{}}
	var items []frontier.Item
	for _, s := range web.Sites() {
		for _, p := range s.SeedPages {
			items = append(items, frontier.Item{Info: frontier.URLInfo{URL: p, Priority: 2}})
		}
	}
	if _, err := fr.Put(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	return c
}

// Progress implements Crawl.
func (c *liveCrawl) Progress() Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := Progress{Start: c.start, Pages: c.pages.Load(), Bytes: c.bytes.Load(), Errors: c.errs.Load(), RobotsDenied: c.denied.Load(),
		InFlight: c.inFlight.Load(), Status: make(map[string]int64, len(c.status)), MIME: make(map[string]int64, len(c.mimes))}
	for k, v := range c.status {
		p.Status[k] = v
	}
	for k, v := range c.mimes {
		p.MIME[k] = v
	}
	return p
}

// run crawls with workers until ctx is done.
func (c *liveCrawl) run(ctx context.Context, workers int) {
	c.mu.Lock()
	c.start = time.Now()
	c.mu.Unlock()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				leases, err := c.fr.Get(ctx, frontier.GetParams{MaxQueues: 1, MaxURLsPerQueue: 1, Lease: time.Minute})
				if err != nil || len(leases) == 0 {
					c.fr.WaitReady(ctx, 200*time.Millisecond)
					continue
				}
				// In flight from the lease to the ack, as in the crawler: a
				// lease waiting at the gate is in flight too.
				c.inFlight.Add(int64(len(leases)))
				for _, l := range leases {
					c.fetch(ctx, l.URLInfo)
					c.inFlight.Add(-1)
				}
			}
		})
	}
	wg.Wait()
}

func (c *liveCrawl) fetch(ctx context.Context, info frontier.URLInfo) {
	u, err := url.Parse(info.URL)
	if err != nil {
		c.ack(info)
		return
	}
	p, err := c.gate.Wait(ctx, u)
	if _, denied := politeness.Denied(err); denied {
		c.denied.Add(1)
		c.ack(info)
		return
	}
	if err != nil {
		c.fr.Release(info) // ctx done
		return
	}
	o := politeness.Outcome{}
	var body []byte
	var ctype string
	req, _ := http.NewRequestWithContext(ctx, "GET", info.URL, nil)
	req.Header.Set("User-Agent", "courtesy-console-test/1.0")
	resp, err := c.client.Do(req)
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		o.Status, o.Bytes = resp.StatusCode, int64(len(body))
		ctype = resp.Header.Get("Content-Type")
	}
	o.Err = err
	p.Done(o)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			c.fr.Release(info)
			return
		}
		c.errs.Add(1)
		c.ack(info)
		return
	}
	c.pages.Add(1)
	c.bytes.Add(int64(len(body)))
	mt, _, _ := mime.ParseMediaType(ctype)
	c.mu.Lock()
	c.status[strconv.Itoa(o.Status)]++
	if mt != "" {
		c.mimes[mt]++
	}
	c.mu.Unlock()
	if mt == "text/html" {
		if page, err := extract.HTML(u, body, ctype, extract.Options{}); err == nil {
			var items []frontier.Item
			for _, l := range page.Links {
				if strings.HasSuffix(l.URL.Hostname(), ".test") {
					items = append(items, frontier.Item{Info: frontier.URLInfo{URL: l.Abs, Depth: info.Depth + 1}})
				}
			}
			c.fr.Put(ctx, items)
		}
	}
	c.ack(info)
}

func (c *liveCrawl) ack(info frontier.URLInfo) {
	c.fr.Put(context.Background(), []frontier.Item{{Info: info, Known: true}})
}

// console returns a console over the crawl.
func (c *liveCrawl) console(t tb, cfg Config) *Server {
	return c.consoleWith(t, cfg, nil)
}

// consoleWith returns a console over the crawl and px (nil: no proxy).
func (c *liveCrawl) consoleWith(t tb, cfg Config, px Proxy) *Server {
	t.Helper()
	s, err := New(cfg, Sources{Crawl: c, Frontier: FrontierSource(c.fr, ""), Politeness: PolitenessSource(c.gate, c.robots),
		Nodes: &LocalNode{Crawl: c}, Proxy: px})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var _ testing.TB = (*testing.T)(nil)
