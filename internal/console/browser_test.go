package console

import (
	"context"
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/courtesy-crawler/courtesy/internal/browsertest"
	"github.com/courtesy-crawler/courtesy/internal/proxy"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
)

var update = flag.Bool("update", false, "rewrite docs/console.png from the browser test")

// TestBrowser drives the console in Debian's chromium during a small real
// crawl of the synthetic web.
func TestBrowser(t *testing.T) {
	crawl := newLiveCrawl(t, testweb.Config{Seed: 3, Sites: 60, PagesPerSite: 100, Plain: true}, 500*time.Millisecond)
	// A proxy's counters beside the crawl, so that the proxy view has
	// something to show.
	tally := &ProxyTally{Trace: func() []proxy.TraceEntry {
		return []proxy.TraceEntry{{Time: time.Now(), Client: "127.0.0.1:40000", Method: "GET", URL: "http://site-0003.test/", Status: 429, Outcome: "delay"}}
	}}
	tally.Observe(proxy.TraceEntry{Client: "127.0.0.1:40000", Status: 200, Cache: "HIT"})
	tally.Observe(proxy.TraceEntry{Client: "127.0.0.1:40000", Status: 429, Outcome: "delay"})
	s := crawl.consoleWith(t, Config{Token: testToken}, tally)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Handler()}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	wg.Go(func() { crawl.run(ctx, 4) })
	t.Cleanup(func() {
		cancel()
		srv.Close()
		wg.Wait()
	})

	b := browsertest.Start(t)
	errs := browsertest.ListenErrors(b)
	pages := func() int64 { return browsertest.Number(browsertest.Text(t, b, "#pages")) }

	// Every view loads without errors.
	for _, v := range []string{"overview", "hosts", "host/site-0001.test", "nodes", "proxy", "actions"} {
		view := strings.SplitN(v, "/", 2)[0]
		browsertest.Run(t, b, "load "+v, chromedp.Navigate(base+"/#"+v), chromedp.WaitVisible(`body[data-view="`+view+`"]`))
		if e := errs.Take(); len(e) > 0 {
			t.Errorf("view %s: browser errors: %q", v, e)
		}
	}

	// The proxy view shows the proxy's counters and trace.
	browsertest.Run(t, b, "proxy view", chromedp.Navigate(base+"/#proxy"), chromedp.WaitVisible(chromedp.CSS("#trace-table tbody tr td")))
	if got := browsertest.Text(t, b, "#proxy-stats"); !strings.Contains(got, "Cache hit ratio") || !strings.Contains(got, "100 %") {
		t.Errorf("proxy stats %q", got)
	}
	if got := browsertest.Text(t, b, "#trace-table tbody"); !strings.Contains(got, "http://site-0003.test/") {
		t.Errorf("proxy trace %q", got)
	}

	// Every form control has a label.
	unlabeled, err := chromedp.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("input, select, textarea")]
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label")).map(e => e.id)`))
	if err != nil || len(unlabeled) > 0 {
		t.Errorf("controls without a label: %v (%v)", unlabeled, err)
	}

	// On a phone-sized screen nothing but the tables' own scrollers is
	// wider than the screen.
	for _, v := range []string{"overview", "hosts", "host/site-0002.test"} {
		view := strings.SplitN(v, "/", 2)[0]
		browsertest.Run(t, b, "phone "+v, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/#"+v),
			chromedp.WaitVisible(chromedp.CSS(`body[data-view="`+view+`"]`)))
		fits, err := chromedp.Run(b, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= document.documentElement.clientWidth`))
		if err != nil || !fits {
			t.Errorf("view %s is wider than a 390 px screen (%v)", v, err)
		}
	}
	browsertest.Run(t, b, "laptop", chromedp.EmulateViewport(1280, 1000))

	// The pages counter rises.
	browsertest.Run(t, b, "overview", chromedp.Navigate(base+"/#overview"), chromedp.WaitVisible(chromedp.CSS(`body[data-view="overview"]`)))
	first := pages()
	browsertest.WaitFor(t, 20*time.Second, "the pages counter to rise", func() bool { return pages() > first && pages() > 0 })

	// An action without the token is refused.
	browsertest.Run(t, b, "pause without token", chromedp.Click(chromedp.CSS("#pause")))
	browsertest.WaitFor(t, 10*time.Second, "the refusal", func() bool { return strings.Contains(browsertest.Text(t, b, "#msg"), "Refused (401)") })
	if !crawl.fr.Active() {
		t.Fatal("the crawl paused on an action without the token")
	}
	for _, e := range errs.Take() { // the browser logs the 401 itself
		if !strings.Contains(e, "401") {
			t.Errorf("browser error: %s", e)
		}
	}

	// Pause stops the counter; resume starts it again.
	browsertest.Run(t, b, "token", chromedp.SendKeys(chromedp.CSS("#token"), testToken), chromedp.Click(chromedp.CSS(`#token-form button`)))
	browsertest.Run(t, b, "pause", chromedp.Click(chromedp.CSS("#pause")))
	browsertest.WaitFor(t, 10*time.Second, "the pause", func() bool { return !crawl.fr.Active() && strings.Contains(browsertest.Text(t, b, "#state"), "paused") })
	browsertest.WaitFor(t, 15*time.Second, "fetches under way to end", func() bool { return crawl.inFlight.Load() == 0 })
	paused := crawl.pages.Load()
	browsertest.WaitFor(t, 10*time.Second, "the page to show the paused count", func() bool { return pages() == paused })
	time.Sleep(3 * time.Second) // three live updates while paused
	if got := pages(); got != paused || crawl.pages.Load() != paused {
		t.Fatalf("paused at %d pages, but the page shows %d and the crawl has %d", paused, got, crawl.pages.Load())
	}
	browsertest.Run(t, b, "resume", chromedp.Click(chromedp.CSS("#resume")))
	browsertest.WaitFor(t, 20*time.Second, "the counter to rise after resume", func() bool { return pages() > paused })

	// The hosts table pages and sorts.
	browsertest.Run(t, b, "hosts", chromedp.Navigate(base+"/#hosts"), chromedp.WaitVisible(chromedp.CSS("#hosts-table tbody tr td a")))
	if got := browsertest.Text(t, b, "#page-info"); !strings.HasPrefix(got, "Hosts 1–50 of ") {
		t.Errorf("page info %q", got)
	}
	firstHost := browsertest.Text(t, b, "#hosts-table tbody tr:first-child td:first-child")
	browsertest.Run(t, b, "next page", chromedp.Click(chromedp.CSS("#next-page")))
	browsertest.WaitFor(t, 10*time.Second, "the second page", func() bool { return strings.HasPrefix(browsertest.Text(t, b, "#page-info"), "Hosts 51–") })
	if h := browsertest.Text(t, b, "#hosts-table tbody tr:first-child td:first-child"); h == firstHost || h <= firstHost {
		t.Errorf("second page starts at %q, first at %q", h, firstHost)
	}
	browsertest.Run(t, b, "sort by queued", chromedp.Click(chromedp.CSS(`button[data-sort="queued"]`)))
	browsertest.WaitFor(t, 10*time.Second, "the sort", func() bool {
		a, _ := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(`#hosts-table th:nth-child(2)`), "aria-sort"))
		return a.Value == "descending" && strings.HasPrefix(browsertest.Text(t, b, "#page-info"), "Hosts 1–")
	})
	queued, err := chromedp.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#hosts-table tbody tr td:nth-child(2)")].map(td => td.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(queued); i++ {
		if browsertest.Number(queued[i]) > browsertest.Number(queued[i-1]) {
			t.Fatalf("queued column not descending: %v", queued)
		}
	}
	if len(queued) < 2 {
		t.Fatalf("sorted table has %d rows", len(queued))
	}

	// Searching works from the keyboard alone: type, then Enter.
	browsertest.Run(t, b, "search", chromedp.SendKeys(chromedp.CSS("#hosts-q"), "site-000"+kb.Enter))
	browsertest.WaitFor(t, 10*time.Second, "the search", func() bool { return browsertest.Text(t, b, "#page-info") == "Hosts 1–10 of 10" })

	// A delay changed in the UI reaches the gate and shows as the new gap.
	const host = "site-0001.test"
	browsertest.Run(t, b, "host view", chromedp.Navigate(base+"/#host/"+host), chromedp.WaitVisible(chromedp.CSS(`body[data-view="host"]`)))
	browsertest.WaitFor(t, 5*time.Second, "the delay form", func() bool {
		v, _ := chromedp.Run(b, chromedp.Value(chromedp.CSS("#delay-key")))
		return v == host
	})
	changed := time.Now()
	browsertest.Run(t, b, "set delay", chromedp.SendKeys(chromedp.CSS("#delay-value"), "2500ms"), chromedp.Click(chromedp.CSS("#delay-set")))
	browsertest.WaitFor(t, 10*time.Second, "the delay to be set", func() bool { return strings.Contains(browsertest.Text(t, b, "#msg"), "Delay of "+host+" set") })
	st, err := crawl.gate.Status(context.Background(), host, "")
	if err != nil || st.Delays.Configured != 2500*time.Millisecond {
		t.Fatalf("gate delay of %s = %+v, %v; want 2.5s", host, st.Delays, err)
	}
	after := func() []testweb.Entry {
		var out []testweb.Entry
		for _, e := range crawl.mem.Entries() {
			if testweb.NormalizeHost(e.Host) == host && e.Start.After(changed.Add(time.Second)) {
				out = append(out, e)
			}
		}
		return out
	}
	browsertest.WaitFor(t, 30*time.Second, "three fetches of "+host+" after the change", func() bool { return len(after()) >= 3 })
	rep := report.AnalyzeEntries(crawl.web, after(), report.Options{})
	hs := rep.Host(host)
	if hs == nil || hs.Gaps < 2 || hs.MinGapEndToStart < 2500*time.Millisecond {
		t.Errorf("testweb report for %s after the change: %+v, want gaps of 2.5 s or more", host, hs)
	}
	before := report.AnalyzeEntries(crawl.web, crawl.mem.Entries(), report.Options{})
	t.Logf("min end-to-start gap over all hosts %v; of %s after the change %v", before.MinGapEndToStart, host, hs.MinGapEndToStart)

	if e := errs.Take(); len(e) > 0 {
		t.Errorf("browser errors: %q", e)
	}

	// The screenshot of the overview for the docs.
	if *update {
		browsertest.Run(t, b, "overview for the screenshot", chromedp.Navigate(base+"/#overview"), chromedp.WaitVisible(chromedp.CSS(`body[data-view="overview"]`)),
			chromedp.Sleep(3*time.Second))
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "console.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
}
