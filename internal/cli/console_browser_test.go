package cli

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/courtesy-crawler/courtesy/internal/browsertest"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/testweb/report"
)

// TestCrawlConsoleBrowser drives the console of a real `courtesy crawl
// --console` of the synthetic web in Debian's chromium: every view loads
// without browser errors, the pages counter rises, pause holds it and
// resume restarts it, an action without the token is refused, the hosts
// table pages and sorts, and a delay changed in the UI for one host shows
// in the synthetic web's politeness report as that host's new minimum
// end-to-start gap. It fails when chromium is missing.
func TestCrawlConsoleBrowser(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 3, Sites: 60, PagesPerSite: 200, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	mem := &testweb.Memory{}
	srv := &http.Server{Handler: web.LoggedHandler(mem)}
	ln := listenLoopback(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	var seeds []string
	for _, s := range web.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	const token = "0123456789abcdef-browser"
	args := append([]string{"crawl", "--data", filepath.Join(t.TempDir(), "data"), "--console", "127.0.0.1:0",
		"--console-token", token, "--delay", "500ms", "--workers", "4", "--max-duration", "4m",
		"--resolve", "*.test=" + ln.Addr().String(), "--log-level", "warn"}, seeds...)
	base, _, _, _, done := startCmd(t, args...)

	b := browsertest.Start(t)
	errs := browsertest.ListenErrors(b)
	pages := func() int64 { return browsertest.Number(browsertest.Text(t, b, "#pages")) }

	// Every view loads without errors.
	for _, v := range []string{"overview", "hosts", "host/site-0001.test", "nodes", "proxy", "actions"} {
		view, _, _ := strings.Cut(v, "/")
		browsertest.Run(t, b, "load "+v, chromedp.Navigate(base+"/#"+v), chromedp.WaitVisible(chromedp.CSS(`body[data-view="`+view+`"]`)))
		if e := errs.Take(); len(e) > 0 {
			t.Errorf("view %s: browser errors: %q", v, e)
		}
	}

	// The pages counter rises.
	browsertest.Run(t, b, "overview", chromedp.Navigate(base+"/#overview"), chromedp.WaitVisible(chromedp.CSS(`body[data-view="overview"]`)))
	first := pages()
	browsertest.WaitFor(t, 30*time.Second, "the pages counter to rise", func() bool { return pages() > first && pages() > 0 })

	// An action without the token is refused, and the crawl goes on.
	browsertest.Run(t, b, "pause without token", chromedp.Click(chromedp.CSS("#pause")))
	browsertest.WaitFor(t, 10*time.Second, "the refusal", func() bool {
		return strings.Contains(browsertest.Text(t, b, "#msg"), "Refused (401)")
	})
	var o overview
	if code := call(t, "GET", base+"/api/overview", "", nil, &o); code != 200 || o.Paused {
		t.Fatalf("after an action without the token: %d %+v", code, o)
	}
	for _, e := range errs.Take() { // the browser logs the 401 itself
		if !strings.Contains(e, "401") {
			t.Errorf("browser error: %s", e)
		}
	}

	// Pause stops the counter; resume starts it again.
	browsertest.Run(t, b, "token", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS(`#token-form button`)))
	browsertest.Run(t, b, "pause", chromedp.Click(chromedp.CSS("#pause")))
	browsertest.WaitFor(t, 10*time.Second, "the pause", func() bool {
		return strings.Contains(browsertest.Text(t, b, "#state"), "paused")
	})
	held := waitFor(t, base, "paused, nothing in flight", func(o overview) bool { return o.Paused && o.InFlight == 0 })
	browsertest.WaitFor(t, 10*time.Second, "the page to show the paused count", func() bool { return pages() == held.Pages })
	requests := len(mem.Entries())
	time.Sleep(3 * time.Second) // three live updates while paused; a running crawl fetches about 20 pages meanwhile
	if got, now := pages(), waitFor(t, base, "overview", func(overview) bool { return true }); got != held.Pages || now.Pages != held.Pages {
		t.Fatalf("paused at %d pages, but the page shows %d and the crawl has %d", held.Pages, got, now.Pages)
	}
	if n := len(mem.Entries()); n != requests {
		t.Errorf("the synthetic web got %d requests while paused", n-requests)
	}
	select {
	case code := <-done:
		t.Fatalf("the crawl ended (exit %d) while paused", code)
	default:
	}
	browsertest.Run(t, b, "resume", chromedp.Click(chromedp.CSS("#resume")))
	browsertest.WaitFor(t, 30*time.Second, "the counter to rise after resume", func() bool { return pages() > held.Pages })

	// The hosts table pages and sorts.
	browsertest.Run(t, b, "hosts", chromedp.Navigate(base+"/#hosts"), chromedp.WaitVisible(chromedp.CSS("#hosts-table tbody tr td a")))
	if got := browsertest.Text(t, b, "#page-info"); !strings.HasPrefix(got, "Hosts 1–50 of ") {
		t.Errorf("page info %q", got)
	}
	firstHost := browsertest.Text(t, b, "#hosts-table tbody tr:first-child td:first-child")
	browsertest.Run(t, b, "next page", chromedp.Click(chromedp.CSS("#next-page")))
	browsertest.WaitFor(t, 10*time.Second, "the second page", func() bool {
		return strings.HasPrefix(browsertest.Text(t, b, "#page-info"), "Hosts 51–")
	})
	if h := browsertest.Text(t, b, "#hosts-table tbody tr:first-child td:first-child"); h <= firstHost {
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
	if len(queued) < 2 {
		t.Fatalf("sorted table has %d rows", len(queued))
	}
	for i := 1; i < len(queued); i++ {
		if browsertest.Number(queued[i]) > browsertest.Number(queued[i-1]) {
			t.Fatalf("queued column not descending: %v", queued)
		}
	}
	browsertest.Run(t, b, "search", chromedp.SendKeys(chromedp.CSS("#hosts-q"), "site-000"+kb.Enter))
	browsertest.WaitFor(t, 10*time.Second, "the search", func() bool { return browsertest.Text(t, b, "#page-info") == "Hosts 1–10 of 10" })

	// A delay changed in the UI for one host shows in the synthetic web's
	// report as that host's new minimum end-to-start gap.
	const host, delay = "site-0001.test", 2500 * time.Millisecond
	browsertest.Run(t, b, "host view", chromedp.Navigate(base+"/#host/"+host), chromedp.WaitVisible(chromedp.CSS(`body[data-view="host"]`)))
	browsertest.WaitFor(t, 5*time.Second, "the delay form", func() bool {
		v, _ := chromedp.Run(b, chromedp.Value(chromedp.CSS("#delay-key")))
		return v == host
	})
	changed := time.Now()
	browsertest.Run(t, b, "set delay", chromedp.SendKeys(chromedp.CSS("#delay-value"), "2500ms"), chromedp.Click(chromedp.CSS("#delay-set")))
	browsertest.WaitFor(t, 10*time.Second, "the delay to be set", func() bool {
		return strings.Contains(browsertest.Text(t, b, "#msg"), "Delay of "+host+" set")
	})
	// A fetch already under way when the delay changed may end up to a
	// second later; gaps are counted between fetches that start after.
	after := func() []testweb.Entry {
		var out []testweb.Entry
		for _, e := range mem.Entries() {
			if testweb.NormalizeHost(e.Host) == host && e.Start.After(changed.Add(time.Second)) {
				out = append(out, e)
			}
		}
		return out
	}
	browsertest.WaitFor(t, 40*time.Second, "three fetches of "+host+" after the change", func() bool { return len(after()) >= 3 })
	all := report.AnalyzeEntries(web, mem.Entries(), report.Options{})
	rep := report.AnalyzeEntries(web, after(), report.Options{})
	hs := rep.Host(host)
	if hs == nil || hs.Gaps < 2 || hs.MinGapEndToStart < delay {
		t.Errorf("testweb report for %s after the change: %+v, want gaps of %v or more", host, hs, delay)
	}
	// The change is what raised the gap: before it, the host's gap was the
	// crawl's --delay.
	if before := all.Host(host); before == nil || before.MinGapEndToStart >= delay {
		t.Errorf("testweb report for %s over the whole crawl: %+v, want a minimum gap under %v", host, before, delay)
	} else {
		t.Logf("%s: minimum end-to-start gap %v over the crawl, %v after the change", host, before.MinGapEndToStart, hs.MinGapEndToStart)
	}
	if e := errs.Take(); len(e) > 0 {
		t.Errorf("browser errors: %q", e)
	}
}
