package search

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium is Debian's browser, installed by scripts/install-test-deps.
const chromium = "/usr/bin/chromium"

// TestBrowser drives the search site in a real headless Chromium: a
// product is found by name, the type filter narrows a search to people,
// the graph is browsed from a result to a subject page and on, and no page
// logs a console error. A missing browser fails the test: it is part of
// the suite, like Redis for the tests that need it.
func TestBrowser(t *testing.T) {
	_, hs := newTestServer(t)
	b := startBrowser(t, hs.URL)
	do, text, search := b.do, b.text, b.search

	// A product by its name.
	if got := search("Rocket Skates", ""); !slices.Contains(got, "http://shop.test/rocket-skates") {
		t.Fatalf("search for the product: %v", got)
	}
	title := text(`a.hit-title[href="http://shop.test/rocket-skates"]`)
	triples := text(`.triples`)
	if title != "Rocket Skates – Acme shop" || !strings.Contains(triples, "Acme Rocket Skates") {
		t.Fatalf("hit title %q, triples %q", title, triples)
	}

	// The type filter narrows "ada" from the person and the shop page
	// that mentions her to the person.
	if got := search("ada", ""); !slices.Equal(got, []string{"http://people.test/ada", "http://shop.test/"}) {
		t.Fatalf("unfiltered: %v", got)
	}
	if got := search("ada", "schema:Person"); !slices.Equal(got, []string{"http://people.test/ada"}) {
		t.Fatalf("filtered to people: %v", got)
	}
	// The filter alone lists every person.
	if got := search("", "schema:Person"); !slices.Equal(got, []string{"http://people.test/ada", "http://people.test/grace"}) {
		t.Fatalf("all people: %v", got)
	}

	// Browse: from a result's matching triple to its subject, then along
	// schema:knows to another person.
	search("Lovelace", "")
	do("open the subject page",
		chromedp.Click(chromedp.CSS(`.triples a`)),
		chromedp.WaitVisible(chromedp.ID("out-h")),
	)
	if h1 := text("h1"); h1 != "http://people.test/ada#me" {
		t.Fatalf("subject page of %q", h1)
	}
	do("follow schema:knows",
		chromedp.Click(chromedp.Search(`//td[text()="schema:knows"]/following-sibling::td/a`)),
		chromedp.WaitVisible(chromedp.ID("in-h")),
	)
	if h1 := text("h1"); h1 != "http://people.test/grace#me" {
		t.Fatalf("after following knows: %q", h1)
	}
	if body := text("main"); !strings.Contains(body, "Rear admiral") || !strings.Contains(body, "people.test/ada#me") {
		t.Fatalf("grace's page: %q", body)
	}

	b.checkConsole("anvil")
}

// browser is a headless Chromium on a search site, with its console
// watched.
type browser struct {
	ctx    context.Context
	do     func(what string, steps ...chromedp.Action[chromedp.Void])
	text   func(sel chromedp.CSS) string
	search func(q, typ string) []string
	// checkConsole runs one last search (q), then fails the test if any
	// page logged an error, a warning or an exception.
	checkConsole func(q string)
}

// startBrowser starts Chromium for the search site at base.
func startBrowser(t *testing.T, base string) *browser {
	t.Helper()
	if _, err := exec.LookPath(chromium); err != nil {
		t.Fatalf("search: %s not found (%v); install Debian's chromium package, e.g. with scripts/install-test-deps", chromium, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)

	// Collect the console: console API errors and warnings, uncaught
	// exceptions and browser log entries (a failed resource load, a
	// Content-Security-Policy violation).
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				mu.Unlock()
			}
		}
	}()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	hitURLs := func() []string {
		t.Helper()
		urls, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.hit .hit-title')].map(a => a.getAttribute('href'))`))
		if err != nil {
			t.Fatalf("read results: %v", err)
		}
		slices.Sort(urls)
		return urls
	}
	search := func(q, typ string) []string {
		t.Helper()
		do("search "+q,
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(chromedp.ID("q")),
			chromedp.SendKeys(chromedp.ID("q"), q),
			chromedp.SetValue(chromedp.ID("type"), typ),
			chromedp.Click(chromedp.ID("go")),
			chromedp.WaitVisible(chromedp.ID("results-heading")),
		)
		return hitURLs()
	}

	checkConsole := func(q string) {
		t.Helper()
		// Let late log entries arrive, then check the console stayed clean.
		do("settle", chromedp.Navigate(base+"/?q="+q), chromedp.WaitVisible(chromedp.ID("results-heading")))
		mu.Lock()
		defer mu.Unlock()
		if len(problems) > 0 {
			t.Fatalf("console errors:\n%s", strings.Join(problems, "\n"))
		}
	}
	return &browser{ctx: bctx, do: do, text: text, search: search, checkConsole: checkConsole}
}
