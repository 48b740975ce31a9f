package politeness_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// fixture is a gate on a manual clock with robots.txt seeded for
// http://h.example.
type fixture struct {
	g      *politeness.Gate
	clock  *clock
	robots *politeness.MemoryRobotsStore
}

func newFixture(t *testing.T, cfg politeness.Config, robotsBody string) *fixture {
	t.Helper()
	c := newClock()
	rs := politeness.NewMemoryRobotsStore()
	seedRobots(t, rs, "http://h.example", robotsBody, c.Now())
	g := newGate(t, cfg, politeness.Backend{Robots: rs, Now: c.Now})
	return &fixture{g: g, clock: c, robots: rs}
}

func TestEffectiveDelay(t *testing.T) {
	cases := []struct {
		name     string
		cfg      politeness.Config
		robots   string
		manual   time.Duration
		override bool
		setMan   bool
		took     time.Duration // duration of the fetch reported to Done
		want     time.Duration
		wantPart func(politeness.Delays) bool
	}{
		{name: "default 1s", want: time.Second},
		{name: "configured default", cfg: politeness.Config{DefaultDelay: 3 * time.Second}, want: 3 * time.Second},
		{name: "negative default means none", cfg: politeness.Config{DefaultDelay: -1}, want: 0},
		{name: "crawl-delay larger", robots: "User-agent: *\nCrawl-delay: 5\n", want: 5 * time.Second,
			wantPart: func(d politeness.Delays) bool { return d.Robots == 5*time.Second }},
		{name: "decimal crawl-delay", robots: "User-agent: *\nCrawl-delay: 2.5\n", want: 2500 * time.Millisecond},
		{name: "crawl-delay smaller than default", robots: "User-agent: *\nCrawl-delay: 0.2\n", want: time.Second},
		{name: "crawl-delay capped", robots: "User-agent: *\nCrawl-delay: 3600\n", want: 30 * time.Second},
		{name: "crawl-delay custom cap", cfg: politeness.Config{MaxCrawlDelay: 10 * time.Second},
			robots: "User-agent: *\nCrawl-delay: 3600\n", want: 10 * time.Second},
		{name: "crawl-delay of another agent ignored", robots: "User-agent: other\nCrawl-delay: 9\n", want: time.Second},
		{name: "request-rate", robots: "User-agent: *\nRequest-rate: 1/10s\n", want: 10 * time.Second,
			wantPart: func(d politeness.Delays) bool { return d.Rate == 10*time.Second }},
		{name: "request-rate per hour", robots: "User-agent: *\nRequest-rate: 500/h\n", want: 7200 * time.Millisecond},
		{name: "request-rate and crawl-delay: largest", robots: "User-agent: *\nRequest-rate: 1/3s\nCrawl-delay: 4\n", want: 4 * time.Second},
		{name: "REGP ip-delay", robots: "Robot-version: 3.0\nUser-agent: *\nIp-delay: 3\n", want: 3 * time.Second,
			wantPart: func(d politeness.Delays) bool { return d.Rate == 3*time.Second }},
		{name: "REGP ip-rate", robots: "Robot-version: 3.0\nUser-agent: *\nIp-rate: 6/m\n", want: 10 * time.Second},
		{name: "REGP ip-delay smaller than crawl-delay", robots: "Robot-version: 3.0\nUser-agent: *\nCrawl-delay: 4\nIp-delay: 2\n", want: 4 * time.Second},
		{name: "manual larger than robots", robots: "User-agent: *\nCrawl-delay: 2\n", setMan: true, manual: 5 * time.Second, want: 5 * time.Second,
			wantPart: func(d politeness.Delays) bool { return d.Manual && d.Configured == 5*time.Second }},
		{name: "manual smaller loses to robots", robots: "User-agent: *\nCrawl-delay: 4\n", setMan: true, manual: 500 * time.Millisecond, want: 4 * time.Second},
		{name: "manual zero loses to robots", robots: "User-agent: *\nCrawl-delay: 2\n", setMan: true, want: 2 * time.Second},
		{name: "override wins even when smaller", robots: "User-agent: *\nCrawl-delay: 4\nRequest-rate: 1/8s\n", setMan: true, manual: 500 * time.Millisecond, override: true, want: 500 * time.Millisecond,
			wantPart: func(d politeness.Delays) bool { return d.Override && d.Robots == 4*time.Second }},
		{name: "adaptive", cfg: politeness.Config{AdaptiveFactor: 2}, took: 3 * time.Second, want: 6 * time.Second,
			wantPart: func(d politeness.Delays) bool { return d.Adaptive == 6*time.Second }},
		{name: "adaptive capped", cfg: politeness.Config{AdaptiveFactor: 10, MaxAdaptiveDelay: 20 * time.Second}, took: 3 * time.Second, want: 20 * time.Second},
		{name: "adaptive smaller than default", cfg: politeness.Config{AdaptiveFactor: 0.1}, took: 3 * time.Second, want: time.Second},
		{name: "adaptive off by default", took: 30 * time.Second, want: time.Second},
		{name: "override beats adaptive", cfg: politeness.Config{AdaptiveFactor: 10}, took: time.Second, setMan: true, manual: 2 * time.Second, override: true, want: 2 * time.Second},
		{name: "config file delay", cfg: politeness.Config{Delays: []politeness.DelayRule{{Key: "H.example", Delay: 7 * time.Second}}}, want: 7 * time.Second},
		{name: "admin delay wins over file", cfg: politeness.Config{Delays: []politeness.DelayRule{{Key: "h.example", Delay: 7 * time.Second}}}, setMan: true, manual: 2 * time.Second, want: 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg, tc.robots)
			ctx := context.Background()
			if tc.setMan {
				if err := f.g.SetDelay(ctx, "h.example", tc.manual, tc.override); err != nil {
					t.Fatal(err)
				}
			}
			p := tryGranted(t, f.g, "http://h.example/a")
			f.clock.Advance(tc.took)
			if err := p.Done(politeness.Outcome{Status: 200, Duration: tc.took}); err != nil {
				t.Fatal(err)
			}
			if tc.want == 0 {
				tryGranted(t, f.g, "http://h.example/b")
				return
			}
			d := tryRefused(t, f.g, "http://h.example/b")
			if d.Reason != politeness.ReasonDelay || d.RetryAfter != tc.want || d.Delays.Effective != tc.want {
				t.Fatalf("decision = %+v, want delay %v", d, tc.want)
			}
			if tc.wantPart != nil && !tc.wantPart(d.Delays) {
				t.Fatalf("delay breakdown %+v not as expected", d.Delays)
			}
			if got := d.RetryAfterMillis(); got != tc.want.Milliseconds() {
				t.Fatalf("RetryAfterMillis = %d, want %d", got, tc.want.Milliseconds())
			}
			f.clock.Advance(tc.want - time.Millisecond)
			tryRefused(t, f.g, "http://h.example/b")
			f.clock.Advance(time.Millisecond)
			tryGranted(t, f.g, "http://h.example/b")
		})
	}
}

func TestDelayCountsFromEndOfFetch(t *testing.T) {
	f := newFixture(t, politeness.Config{}, "")
	p := tryGranted(t, f.g, "http://h.example/")
	f.clock.Advance(10 * time.Second) // a slow fetch
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonConcurrency {
		t.Fatalf("during the fetch: %+v, want concurrency", d)
	}
	if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonDelay || d.RetryAfter != time.Second {
		t.Fatalf("after the fetch: %+v, want a full 1s delay from its end", d)
	}
}

func TestBackoff(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		outcomes []politeness.Outcome
		want     time.Duration
		reason   politeness.Reason
	}{
		{"429 with Retry-After seconds", []politeness.Outcome{{Status: 429, RetryAfter: 120 * time.Second}}, 120 * time.Second, politeness.ReasonBackoff},
		{"503 with Retry-After date", []politeness.Outcome{{Status: 503,
			RetryAfter: politeness.RetryAfter(http.Header{"Retry-After": {at.Add(90 * time.Second).Format(http.TimeFormat)}}, at)}}, 90 * time.Second, politeness.ReasonBackoff},
		{"429 exponential", []politeness.Outcome{{Status: 429}}, 5 * time.Second, politeness.ReasonBackoff},
		{"503 twice doubles", []politeness.Outcome{{Status: 503}, {Status: 503}}, 10 * time.Second, politeness.ReasonBackoff},
		{"three times", []politeness.Outcome{{Status: 503}, {Status: 429}, {Status: 503}}, 20 * time.Second, politeness.ReasonBackoff},
		{"Retry-After capped", []politeness.Outcome{{Status: 429, RetryAfter: 1000 * time.Hour}}, 24 * time.Hour, politeness.ReasonBackoff},
		{"reset on success", []politeness.Outcome{{Status: 503}, {Status: 503}, {Status: 200}}, time.Second, politeness.ReasonDelay},
		{"404 resets too", []politeness.Outcome{{Status: 429}, {Status: 404}}, time.Second, politeness.ReasonDelay},
		{"network error keeps level", []politeness.Outcome{{Status: 503}, {Err: errors.New("reset")}, {Status: 503}}, 10 * time.Second, politeness.ReasonBackoff},
		{"Retry-After ignored on 200", []politeness.Outcome{{Status: 200, RetryAfter: time.Hour}}, time.Second, politeness.ReasonDelay},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, politeness.Config{}, "")
			for i, o := range tc.outcomes {
				p, d, err := f.g.Try(context.Background(), mustURL(t, "http://h.example/"))
				if err != nil {
					t.Fatal(err)
				}
				if p == nil {
					f.clock.Advance(d.RetryAfter)
					p = tryGranted(t, f.g, "http://h.example/")
				}
				if err := p.Done(o); err != nil {
					t.Fatalf("outcome %d: %v", i, err)
				}
			}
			d := tryRefused(t, f.g, "http://h.example/")
			if d.Reason != tc.reason || d.RetryAfter != tc.want {
				t.Fatalf("decision = %v %v (%s), want %v %v", d.Reason, d.RetryAfter, d.Detail, tc.reason, tc.want)
			}
			if tc.reason == politeness.ReasonBackoff && d.Delays.Backoff != tc.want {
				t.Fatalf("Delays.Backoff = %v, want %v", d.Delays.Backoff, tc.want)
			}
			f.clock.Advance(tc.want)
			tryGranted(t, f.g, "http://h.example/")
		})
	}
}

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"seconds", "120", 120 * time.Second, true},
		{"zero", "0", 0, true},
		{"spaces", "  7 ", 7 * time.Second, true},
		{"IMF-fixdate", "Sun, 22 Nov 2026 09:01:30 GMT", 90 * time.Second, true},
		{"RFC 850 date", "Sunday, 22-Nov-26 09:00:10 GMT", 10 * time.Second, true},
		{"asctime date", "Sun Nov 22 09:00:05 2026", 5 * time.Second, true},
		{"date in the past", "Sun, 22 Nov 2026 08:00:00 GMT", 0, true},
		{"huge seconds", "99999999999999999999999", 100 * 365 * 24 * time.Hour, true},
		{"negative", "-5", 0, false},
		{"fraction", "1.5", 0, false},
		{"garbage", "soon", 0, false},
		{"empty", "", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := politeness.ParseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Sun, 22 Nov 2026 09:01:30 GMT", "Sunday, 22-Nov-26 09:00:10 GMT", "Sun Nov 22 09:00:05 2026", "-1", "1e9", "99999999999999999999", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := politeness.ParseRetryAfter(s, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, negative", s, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v with ok=false", s, d)
		}
	})
}

func TestWindows(t *testing.T) {
	// The fixture clock starts at 05:00 UTC.
	cases := []struct {
		name   string
		robots string
		want   time.Duration // 0: open now
	}{
		{"no window", "User-agent: *\nDisallow:\n", 0},
		{"inside visit-time", "User-agent: *\nVisit-time: 0400-0600\n", 0},
		{"before visit-time", "User-agent: *\nVisit-time: 0700-0800\n", 2 * time.Hour},
		{"after visit-time waits for tomorrow", "User-agent: *\nVisit-time: 0100-0200\n", 20 * time.Hour},
		{"visit-time with zone", "User-agent: *\nVisit-time: 21:00 +0800-23:00 +0800\n", 8 * time.Hour},
		{"inside time-forbidden", "Robot-version: 3.0\nUser-agent: *\nTime-forbidden: 0430-0530\n", 30 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, politeness.Config{}, tc.robots)
			if tc.want == 0 {
				tryGranted(t, f.g, "http://h.example/")
				return
			}
			d := tryRefused(t, f.g, "http://h.example/")
			if d.Reason != politeness.ReasonWindow || d.RetryAfter != tc.want {
				t.Fatalf("decision = %v %v (%s), want window %v", d.Reason, d.RetryAfter, d.Detail, tc.want)
			}
			f.clock.Advance(tc.want)
			tryGranted(t, f.g, "http://h.example/")
		})
	}
}

// TestConcurrencyRetryAfter: a busy key's RetryAfter is the earliest it
// can be asked again (one delay after the fetch in flight ends, at least
// the poll interval), not the end of the lease in flight (minutes).
func TestConcurrencyRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  politeness.Config
		want time.Duration
	}{
		{"delay", politeness.Config{DefaultDelay: 3 * time.Second}, 3 * time.Second},
		{"no delay: poll interval", politeness.Config{DefaultDelay: -1, PollInterval: 250 * time.Millisecond}, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg, "")
			p := tryGranted(t, f.g, "http://h.example/")
			defer p.Release()
			d := tryRefused(t, f.g, "http://h.example/")
			if d.Reason != politeness.ReasonConcurrency || d.RetryAfter != tc.want {
				t.Fatalf("%+v, want concurrency, retry after %v", d, tc.want)
			}
		})
	}
}

func TestConcurrencyN(t *testing.T) {
	f := newFixture(t, politeness.Config{MaxInFlight: 3, DefaultDelay: -1}, "")
	var ps []*politeness.Permit
	for range 3 {
		ps = append(ps, tryGranted(t, f.g, "http://h.example/"))
	}
	d := tryRefused(t, f.g, "http://h.example/")
	if d.Reason != politeness.ReasonConcurrency || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("4th: %+v, want concurrency, retry after the poll interval (no delay; the leases end in 2m)", d)
	}
	// Another key is independent.
	seedRobots(t, f.robots, "http://other.example", "", f.clock.Now())
	tryGranted(t, f.g, "http://other.example/")
	if err := ps[1].Release(); err != nil {
		t.Fatal(err)
	}
	tryGranted(t, f.g, "http://h.example/")
}

func TestLeaseExpiry(t *testing.T) {
	f := newFixture(t, politeness.Config{}, "")
	p, _, err := f.g.Try(context.Background(), mustURL(t, "http://h.example/"), politeness.WithLease(5*time.Second))
	if err != nil || p == nil {
		t.Fatalf("Try: %v %v", p, err)
	}
	if want := f.clock.Now().Add(5 * time.Second); !p.Deadline().Equal(want) {
		t.Fatalf("Deadline = %v, want %v", p.Deadline(), want)
	}
	f.clock.Advance(5*time.Second - time.Millisecond)
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonConcurrency {
		t.Fatalf("before expiry: %+v", d)
	}
	f.clock.Advance(time.Millisecond)
	// The expired lease counts as a fetch that ended at expiry.
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonDelay || d.RetryAfter != time.Second {
		t.Fatalf("at expiry: %+v, want a 1s delay", d)
	}
	f.clock.Advance(time.Second)
	p2 := tryGranted(t, f.g, "http://h.example/")
	// The dead holder's late Done must not free the new holder's slot.
	if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonConcurrency {
		t.Fatalf("after the late Done: %+v, want concurrency (p2 holds the slot)", d)
	}
	if err := p2.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestReleaseAndDoneOnce(t *testing.T) {
	f := newFixture(t, politeness.Config{}, "")
	p := tryGranted(t, f.g, "http://h.example/")
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	// Released unused: no gap.
	p2 := tryGranted(t, f.g, "http://h.example/")
	// A second end of p has no effect on p2's slot.
	if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonConcurrency {
		t.Fatalf("%+v, want concurrency", d)
	}
	if err := p2.Done(politeness.Outcome{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if d := tryRefused(t, f.g, "http://h.example/"); d.Reason != politeness.ReasonDelay {
		t.Fatalf("%+v, want delay", d)
	}
}

func TestRobotsDisallow(t *testing.T) {
	f := newFixture(t, politeness.Config{}, "User-agent: *\nDisallow: /private\n\nUser-agent: courtesy\nDisallow: /mine\n")
	d := tryRefused(t, f.g, "http://h.example/mine/x")
	if d.Reason != politeness.ReasonRobots || d.RetryAfter != politeness.Never || d.RetryAfterMillis() != -1 {
		t.Fatalf("%+v, want robots, never", d)
	}
	// The courtesy group replaces the * group.
	tryGranted(t, f.g, "http://h.example/private")
	// Peek says the same without taking the slot.
	pd, err := f.g.Peek(context.Background(), mustURL(t, "http://h.example/mine"))
	if err != nil || pd.Reason != politeness.ReasonRobots {
		t.Fatalf("Peek = %+v, %v", pd, err)
	}
	// Wait returns a DeniedError instead of waiting.
	_, err = f.g.Wait(context.Background(), mustURL(t, "http://h.example/mine"))
	if dd, ok := politeness.Denied(err); !ok || dd.Reason != politeness.ReasonRobots {
		t.Fatalf("Wait error = %v, want DeniedError for robots", err)
	}
}

func TestPeekTakesNoSlot(t *testing.T) {
	f := newFixture(t, politeness.Config{}, "")
	for range 3 {
		d, err := f.g.Peek(context.Background(), mustURL(t, "http://h.example/"))
		if err != nil || !d.Allowed || d.RetryAfterMillis() != -1 {
			t.Fatalf("Peek = %+v, %v; want allowed", d, err)
		}
	}
	p := tryGranted(t, f.g, "http://h.example/")
	d, err := f.g.Peek(context.Background(), mustURL(t, "http://h.example/"))
	if err != nil || d.Allowed || d.Reason != politeness.ReasonConcurrency {
		t.Fatalf("Peek while held = %+v, %v", d, err)
	}
	_ = p.Done(politeness.Outcome{Status: 200})
	st, err := f.g.Status(context.Background(), "h.example", "http://h.example")
	if err != nil {
		t.Fatal(err)
	}
	if st.Open || st.Reason != politeness.ReasonDelay || !st.NextAllowed.Equal(f.clock.Now().Add(time.Second)) || st.InFlight != 0 {
		t.Fatalf("Status = %+v", st)
	}
}

func TestBadURLs(t *testing.T) {
	g := newGate(t, politeness.Config{}, politeness.Backend{})
	for _, s := range []string{"ftp://h.example/", "/relative", "http:///nohost", "mailto:a@b"} {
		if _, _, err := g.Try(context.Background(), mustURL(t, s)); err == nil {
			t.Errorf("Try(%q): no error", s)
		}
	}
	if _, _, err := g.Try(context.Background(), nil); err == nil {
		t.Error("Try(nil): no error")
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  politeness.Config
		ok   bool
	}{
		{"zero", politeness.Config{}, true},
		{"negative default delay", politeness.Config{DefaultDelay: -1}, true},
		{"huge delay", politeness.Config{DefaultDelay: 48 * time.Hour}, false},
		{"negative in flight", politeness.Config{MaxInFlight: -1}, false},
		{"negative lease", politeness.Config{Lease: -time.Second}, false},
		{"bad unauthorized", politeness.Config{Robots: politeness.RobotsConfig{Unauthorized: "maybe"}}, false},
		{"allow unauthorized", politeness.Config{Robots: politeness.RobotsConfig{Unauthorized: "Allow"}}, true},
		{"empty rule key", politeness.Config{Delays: []politeness.DelayRule{{Delay: time.Second}}}, false},
		{"negative adaptive", politeness.Config{AdaptiveFactor: -1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if _, nerr := politeness.New(tc.cfg, politeness.Backend{}); (nerr == nil) != tc.ok {
				t.Fatalf("New() = %v, want ok=%v", nerr, tc.ok)
			}
		})
	}
}

// TestWaitSerializes runs Wait callers in a synctest bubble: never two
// permits at once, and every start at least one delay after the previous
// end.
func TestWaitSerializes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := politeness.NewMemoryRobotsStore()
		seedRobots(t, rs, "http://h.example", "User-agent: *\nCrawl-delay: 2\n", time.Now())
		g := newGate(t, politeness.Config{}, politeness.Backend{Robots: rs})
		var mu sync.Mutex
		var inFlight int
		var lastEnd time.Time
		var starts int
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 3 {
					p, err := g.Wait(context.Background(), mustURL(t, "http://h.example/page"))
					if err != nil {
						t.Errorf("worker %d: Wait: %v", w, err)
						return
					}
					mu.Lock()
					inFlight++
					starts++
					if inFlight > 1 {
						t.Errorf("worker %d fetch %d: %d permits at once", w, i, inFlight)
					}
					if !lastEnd.IsZero() && time.Since(lastEnd) < 2*time.Second {
						t.Errorf("worker %d fetch %d: started %v after the previous end, want >= 2s", w, i, time.Since(lastEnd))
					}
					mu.Unlock()
					time.Sleep(300 * time.Millisecond) // the fetch
					mu.Lock()
					inFlight--
					lastEnd = time.Now()
					mu.Unlock()
					if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if starts != 12 {
			t.Fatalf("%d fetches, want 12", starts)
		}
	})
}

func TestWaitTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := politeness.NewMemoryRobotsStore()
		seedRobots(t, rs, "http://h.example", "", time.Now())
		g := newGate(t, politeness.Config{DefaultDelay: time.Hour}, politeness.Backend{Robots: rs})
		p, err := g.Wait(context.Background(), mustURL(t, "http://h.example/"))
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Done(politeness.Outcome{Status: 200})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err = g.Wait(ctx, mustURL(t, "http://h.example/"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v, want deadline exceeded", err)
		}
		if got := time.Since(start); got != time.Minute {
			t.Fatalf("Wait returned after %v, want 1m", got)
		}
	})
}

func TestKeyModes(t *testing.T) {
	c := newClock()
	rs := politeness.NewMemoryRobotsStore()
	for _, o := range []string{"http://a.example.co.uk", "http://b.example.co.uk", "http://www.example.org:8080", "http://www.example.org"} {
		seedRobots(t, rs, o, "", c.Now())
	}
	cases := []struct {
		name   string
		mode   urlnorm.KeyMode
		first  string
		second string
		shared bool
		key    string
	}{
		{"host: two hosts", urlnorm.ByHost, "http://a.example.co.uk/", "http://b.example.co.uk/", false, "a.example.co.uk"},
		{"host: port ignored", urlnorm.ByHost, "http://www.example.org:8080/", "http://WWW.example.org/", true, "www.example.org"},
		{"domain: one registrable domain", urlnorm.ByDomain, "http://a.example.co.uk/", "http://b.example.co.uk/", true, "example.co.uk"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(t, politeness.Config{KeyMode: tc.mode}, politeness.Backend{Robots: rs, Now: c.Now, State: politeness.NewMemoryState(c.Now)})
			p := tryGranted(t, g, tc.first)
			if p.Key() != tc.key {
				t.Fatalf("Key = %q, want %q", p.Key(), tc.key)
			}
			_, d, err := g.Try(context.Background(), mustURL(t, tc.second))
			if err != nil {
				t.Fatal(err)
			}
			if shared := d.Reason == politeness.ReasonConcurrency; shared != tc.shared {
				t.Fatalf("second: %+v, want shared=%v", d, tc.shared)
			}
		})
	}
}
