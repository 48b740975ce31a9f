// Package browsertest drives Debian's chromium through chromedp for the
// console's browser tests: it starts a headless browser with a fresh
// profile, collects what the page reports as errors, and bounds every
// step in time. It is test support (only tests import it) and a leaf: it
// imports nothing of the project.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's chromium (scripts/install-test-deps installs it).
const ChromiumPath = "/usr/bin/chromium"

// Start starts a headless chromium with a fresh profile and returns a tab
// context, closed when the test ends. It fails the test (never skips)
// when chromium is missing.
func Start(t testing.TB) context.Context {
	t.Helper()
	path := ChromiumPath
	if _, err := os.Stat(path); err != nil {
		p, err := exec.LookPath("chromium")
		if err != nil {
			t.Fatalf("browsertest: chromium not found at %s or on PATH (run scripts/install-test-deps): %v", ChromiumPath, err)
		}
		path = p
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	// The first run starts the browser: with the tab's own context, as a
	// timeout's end would close the browser with it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: starting chromium: %v", err)
	}
	return ctx
}

// Errors collects what the page reports as errors: console.error calls,
// uncaught exceptions, and failed loads the browser logs.
type Errors struct {
	mu   sync.Mutex
	msgs []string
}

// Take returns the errors collected since the last call and forgets them.
func (c *Errors) Take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs = nil
	return m
}

// ListenErrors subscribes to the tab's console messages now and collects
// the errors among them.
func ListenErrors(ctx context.Context) *Errors {
	ce := &Errors{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				ce.mu.Lock()
				ce.msgs = append(ce.msgs, string(m.Type)+": "+m.Text+" "+m.URL)
				ce.mu.Unlock()
			}
		}
	}()
	return ce
}

// WaitFor polls cond every 100 ms until it holds, and fails the test when
// limit passes first.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Text returns the trimmed text of the first element matching the CSS
// selector sel, waiting at most 30 s for it (a bound for a loaded machine
// running several browsers, not a timing assertion).
func Text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// Number reads a count as the console shows it, with grouping separators
// (commas, spaces, thin and no-break spaces); it is 0 when s is not a number.
func Number(s string) int64 {
	n, _ := strconv.ParseInt(strings.NewReplacer(",", "", " ", "", "\u202f", "", "\u00a0", "").Replace(s), 10, 64)
	return n
}

// Run runs actions in the tab within 60 s and fails the test on error: a
// bound generous enough for a first page load while other packages' tests
// (and their browsers) share two loaded cores, not a timing assertion.
func Run(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("%s: %v (page: %s)", what, err, pageState(ctx))
	}
}

// pageState describes the page for a failure message: its URL, the body's
// attributes and the text of its status line, read within a few seconds.
func pageState(ctx context.Context) string {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	state, err := chromedp.Run(sctx, chromedp.Evaluate[string](`location.href + " body=" + JSON.stringify(Object.assign({}, document.body && document.body.dataset)) + " status=" + ((document.querySelector('[role="status"]') || {}).textContent || "")`))
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return state
}
