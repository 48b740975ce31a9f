package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

func analyzeFixture(t *testing.T, opts Options) *Report {
	t.Helper()
	web, err := testweb.New(testweb.Config{Sites: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/crawl.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Analyze(web, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// testdata/crawl.jsonl is a 28-request crawl written by hand; the comments
// give the requests (by line number) each number comes from.
func TestAnalyzeHandComputed(t *testing.T) {
	ms := time.Millisecond
	rep := analyzeFixture(t, Options{MinDelay: 500 * ms})
	tests := []struct {
		name      string
		got, want any
	}{
		{"requests", rep.Requests, 28},
		// 2xx and not robots.txt: 18 lines, line 13 repeats line 12.
		{"pages", rep.Pages, 17},
		{"bytes", rep.Bytes, int64(2800)},
		{"duration", rep.Duration, 4005 * ms},
		{"hosts", rep.HostsRequested, 11},
		// site-0000: lines 5 and 6 start 10 ms apart, 6 starts 40 ms
		// before 5 ends.
		{"min gap start-to-start", rep.MinGapStartToStart, 10 * ms},
		{"min gap end-to-start", rep.MinGapEndToStart, -40 * ms},
		{"overlaps", rep.Overlaps, 1},
		// Line 2 (20 ms after robots.txt, Crawl-delay 1) and line 27 (300
		// ms, Request-rate 2/1s).
		{"delay violations", rep.DelayViolations, 2},
		// Lines 2 (20 ms), 6 (10 ms), 27 (300 ms).
		{"min delay violations", rep.MinDelayViolations, 3},
		// Line 4 (/private/) and line 25 (BadBot: Disallow /).
		{"disallowed", rep.Disallowed, 2},
		// Line 5 (robots.txt still in flight), lines 15 and 16 (never).
		{"before robots", rep.BeforeRobots, 3},
		{"robots 5xx", rep.Robots5xx, 1},
		{"robots 401/403", rep.Robots401403, 0},
		{"calendar trap URLs", rep.Traps[testweb.TrapCalendar], 2},
		{"session trap URLs", rep.Traps[testweb.TrapSession], 0},
		{"trap kinds", len(rep.Traps), len(testweb.Traps)},
		{"orphans found", rep.OrphansFound, 2},
		{"orphans total", rep.OrphansTotal, 21},
		{"nofollow", rep.NofollowFetched, 1},
		{"private", rep.PrivateFetched, 1},
		{"duplicate groups", len(rep.DuplicateHosts), 1},
		{"unknown hosts", rep.UnknownHostRequests, 1},
		{"testbot requests", rep.UserAgents["testbot/1.0"], 26},
		{"BadBot requests", rep.UserAgents["BadBot/2.0"], 2},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// Both names served their home page: one page more than one name's.
	if d := rep.DuplicateHosts; len(d) == 1 && (strings.Join(d[0].Hosts, " ") != "dup.test www.dup.test" || d[0].ExtraPages != 1) {
		t.Errorf("duplicate hosts %v", d)
	}
	cd := rep.Host("Crawl-Delay.test:80")
	if cd == nil {
		t.Fatal("no stats for crawl-delay.test")
	}
	want := HostStats{Host: "crawl-delay.test", Requests: 4, Gaps: 3, MinGapStartToStart: 20 * ms, MinGapEndToStart: 10 * ms,
		Delay: time.Second, DelayViolations: 1, MinDelayViolations: 1, Disallowed: 1, RobotsRequests: 1, RobotsStatus: 200}
	if *cd != want {
		t.Errorf("crawl-delay.test: %+v\nwant %+v", *cd, want)
	}
	if rr := rep.Host("request-rate.test"); rr == nil || rr.Delay != 500*ms || rr.DelayViolations != 1 {
		t.Errorf("request-rate.test: %+v", rr)
	}
	if s := rep.Host("site-0000.test"); s == nil || s.Requests != 3 || s.Overlaps != 1 || s.BeforeRobots != 1 || s.RobotsRequests != 1 {
		t.Errorf("site-0000.test: %+v", s)
	}
	if rep.Host("never.test") != nil {
		t.Error("stats for a host never requested")
	}
}

func TestAnalyzeOptions(t *testing.T) {
	tests := []struct {
		name                  string
		opts                  Options
		disallowed, delayViol int
	}{
		// As BadBot, robots-agents.test's / (its BadBot group) and
		// crawl-delay.test's /private/ (the * group) are disallowed.
		{"agent BadBot", Options{Agent: "BadBot"}, 2, 2},
		// As testbot robots-agents.test allows / but crawl-delay.test
		// still disallows /private/.
		{"agent testbot", Options{Agent: "testbot"}, 1, 2},
		// A tolerance of 250 ms forgives the 300 ms gap under a 500 ms
		// Request-rate interval, not the 20 ms one under Crawl-delay 1.
		{"tolerance", Options{Tolerance: 250 * time.Millisecond}, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := analyzeFixture(t, tc.opts)
			if rep.Disallowed != tc.disallowed || rep.DelayViolations != tc.delayViol {
				t.Errorf("disallowed %d, delay violations %d; want %d, %d", rep.Disallowed, rep.DelayViolations, tc.disallowed, tc.delayViol)
			}
			if rep.MinDelayViolations != 0 {
				t.Errorf("min delay violations %d without MinDelay", rep.MinDelayViolations)
			}
		})
	}
}

// regp-window.test admits robots from 00:00 to 12:00 UTC only.
func TestOutsideVisitTime(t *testing.T) {
	web, err := testweb.New(testweb.Config{Sites: 1})
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int, target string) testweb.Entry {
		s := time.Date(2026, 11, 22, h, m, 0, 0, time.UTC)
		return testweb.Entry{Start: s, End: s.Add(time.Millisecond), Host: "regp-window.test", Target: target, Status: 200, UserAgent: "testbot/1"}
	}
	entries := []testweb.Entry{
		at(9, 0, "/robots.txt"), // robots.txt itself is never judged
		at(9, 1, "/"),
		at(11, 59, "/docs/a/page-1.html"),
		at(12, 30, "/about/a/page-2.html"), // outside
		at(23, 0, "/"),                     // outside
	}
	rep := AnalyzeEntries(web, entries, Options{})
	if rep.OutsideVisitTime != 2 || rep.Host("regp-window.test").OutsideVisitTime != 2 {
		t.Errorf("outside visit time: %d, want 2", rep.OutsideVisitTime)
	}
	if rep.BeforeRobots != 0 || rep.Disallowed != 0 {
		t.Errorf("before robots %d, disallowed %d", rep.BeforeRobots, rep.Disallowed)
	}
}

func TestProductToken(t *testing.T) {
	for ua, want := range map[string]string{
		"courtesy/0.1 (+http://x.test/)": "courtesy",
		"Mozilla/5.0 (X11)":              "Mozilla",
		"plainbot":                       "plainbot",
		"spaced bot":                     "spaced",
		"":                               "",
	} {
		if got := ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestEmptyAndBadLogs(t *testing.T) {
	web, _ := testweb.New(testweb.Config{Sites: 1, Plain: true})
	rep, err := Analyze(web, strings.NewReader(""), Options{})
	if err != nil || rep.Requests != 0 || rep.HasGaps || rep.PagesPerSecond != 0 {
		t.Errorf("empty log: %+v, %v", rep, err)
	}
	if _, err := Analyze(web, strings.NewReader("{\"start\":1}\n"), Options{}); err == nil || !strings.HasPrefix(err.Error(), "report: ") {
		t.Errorf("bad log: %v", err)
	}
}

func TestOutputs(t *testing.T) {
	rep := analyzeFixture(t, Options{MinDelay: 500 * time.Millisecond})
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requests", "28", "crawl-delay.test", "before-robots", "orphan sitemap pages found", "2 of 21", "dup.test+www.dup.test"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "meta-robots.test  ") {
		t.Error("a host without problem or delay is listed")
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["requests"] != 28.0 || back["delay_violations"] != 2.0 {
		t.Errorf("JSON report: %s", b)
	}
}

// Crawls through the real logged handler on a fake clock: a client that
// waits the Crawl-delay between requests gets a clean report, one that
// does not gets a violation per gap.
func TestAnalyzeLiveLog(t *testing.T) {
	tests := []struct {
		name           string
		wait           time.Duration
		violations     int
		minGapStartEnd time.Duration
	}{
		{"polite", time.Second, 0, time.Second},
		{"impolite", 100 * time.Millisecond, 3, 100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web, err := testweb.New(testweb.Config{Sites: 1, PagesPerSite: 3})
				if err != nil {
					t.Fatal(err)
				}
				var mem testweb.Memory
				h := web.LoggedHandler(&mem)
				for i, p := range []string{"/robots.txt", "/", "/docs/a/page-1.html", "/about/a/page-2.html"} {
					if i > 0 {
						time.Sleep(tc.wait)
					}
					req := httptest.NewRequest("GET", "http://crawl-delay.test"+p, nil)
					req.Header.Set("User-Agent", "testbot/1.0")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != 200 {
						t.Fatalf("%s: %d", p, rec.Code)
					}
				}
				rep := AnalyzeEntries(web, mem.Entries(), Options{})
				hs := rep.Host("crawl-delay.test")
				if hs == nil || hs.DelayViolations != tc.violations || hs.MinGapStartToStart != tc.minGapStartEnd ||
					hs.Delay != time.Second || hs.BeforeRobots != 0 || rep.Pages != 3 {
					t.Errorf("report: %+v, host %+v", rep, hs)
				}
			})
		})
	}
}

// Any log the reader accepts is analyzed without panicking, and the
// counts stay consistent.
func FuzzAnalyze(f *testing.F) {
	fixture, err := os.ReadFile("testdata/crawl.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	f.Add([]byte(`{"start":"2026-11-22T10:00:00Z","end":"2026-11-22T10:00:01Z","host":"x.wild.test","target":"/","status":200}` + "\n"))
	f.Add([]byte(`{"start":"2026-11-22T10:00:00Z","end":"2026-11-22T10:00:00Z","host":"","target":"","status":-1,"bytes":-5}` + "\n"))
	web, err := testweb.New(testweb.Config{Sites: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		rep, err := Analyze(web, bytes.NewReader(log), Options{MinDelay: time.Second})
		if err != nil {
			return
		}
		sum := 0
		for _, h := range rep.Hosts {
			sum += h.Requests
			if h.Overlaps > h.Gaps || h.DelayViolations > h.Gaps {
				t.Fatalf("host %+v: more overlaps or violations than gaps", h)
			}
		}
		if sum != rep.Requests || rep.Pages > rep.Requests || rep.OrphansFound > rep.OrphansTotal {
			t.Fatalf("inconsistent report: %+v", rep)
		}
	})
}

// TestNonCanonicalAndMirrors: requests past robots.txt to the names whose
// robots.txt sends crawlers elsewhere are counted; the load on declared
// mirrors is shown, with paths fetched from both.
func TestNonCanonicalAndMirrors(t *testing.T) {
	web, err := testweb.New(testweb.Config{Sites: 2})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	n := 0
	req := func(host, target string, status int) testweb.Entry {
		n++
		s := t0.Add(time.Duration(n) * 2 * time.Second)
		return testweb.Entry{Start: s, End: s.Add(time.Millisecond), Host: host, Target: target, Status: status, UserAgent: "testbot/1"}
	}
	entries := []testweb.Entry{
		req("www.canonical.test", "/robots.txt", 200), // robots.txt: fine
		req("www.canonical.test", "/", 200),           // 1
		req("canonical.test", "/robots.txt", 200),
		req("canonical.test", "/", 200),
		req("mirrored.test", "/robots.txt", 200),
		req("mirrored.test", "/docs/", 404), // 2 (any status)
		req("m1.mirrored.test", "/robots.txt", 200),
		req("m1.mirrored.test", "/", 200),
		req("m1.mirrored.test", "/a.html", 200),
		req("m2.mirrored.test", "/robots.txt", 200),
		req("m2.mirrored.test", "/b.html", 200),
		req("m2.mirrored.test", "/a.html", 200), // on both mirrors
		req("m2.mirrored.test", "/missing", 404),
	}
	rep := AnalyzeEntries(web, entries, Options{})
	if rep.NonCanonical != 2 {
		t.Errorf("non-canonical requests %d, want 2", rep.NonCanonical)
	}
	want := `[{mirrored.test [2 2] [m1.mirrored.test m2.mirrored.test] 1}]`
	if got := fmt.Sprint(rep.MirrorLoad); got != want {
		t.Errorf("mirror load %s, want %s", got, want)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"requests to non-canonical hosts (robots Host, Mirror-site)  2",
		"pages per mirror of mirrored.test", "m1.mirrored.test 2, m2.mirrored.test 2 (1 paths on several)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, b.String())
		}
	}
}

// Coverage counts the reachable pages of generic sites that answered 2xx,
// over all sites and over those visited, and names the ones missed.
func TestCoverage(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 2, Sites: 3, PagesPerSite: 60, Plain: true, Profile: testweb.ProfileRealistic})
	if err != nil {
		t.Fatal(err)
	}
	s := web.Sites()[1]
	reach := web.Reachable(s)
	if len(reach) < 40 {
		t.Fatalf("only %d reachable pages", len(reach))
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var entries []testweb.Entry
	for i, u := range reach {
		status := 200
		if i == 3 {
			status = 503 // answered only with an error: missed
		}
		target := strings.TrimPrefix(u, "http://"+s.Host)
		entries = append(entries, testweb.Entry{Start: t0, End: t0, Method: "GET", Host: s.Host, Target: target, Status: status})
	}
	total := 0
	for _, o := range web.Sites() {
		total += len(web.Reachable(o))
	}
	rep := AnalyzeEntries(web, entries, Options{Coverage: true})
	c := rep.Coverage
	if c == nil {
		t.Fatal("no coverage")
	}
	want := Coverage{Sites: 3, SitesVisited: 1, Reachable: total, Fetched: len(reach) - 1,
		ReachableVisited: len(reach), FetchedVisited: len(reach) - 1, Missed: []string{reach[3]}}
	if fmt.Sprint(*c) != fmt.Sprint(want) {
		t.Errorf("coverage %+v\nwant %+v", *c, want)
	}
	if rep2 := AnalyzeEntries(web, entries, Options{}); rep2.Coverage != nil {
		t.Error("coverage computed without Options.Coverage")
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf, false); err != nil || !strings.Contains(buf.String(), "coverage: missed") {
		t.Errorf("text report lacks the missed page (err %v)", err)
	}
}
