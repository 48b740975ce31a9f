package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// calendarPage is a day of an endless calendar: the same long text under
// every date, a link to the next day and to the site's two real pages.
func calendarPage(day int) string {
	var b strings.Builder
	b.WriteString("<html><head><title>Calendar</title></head><body><h1>Events</h1><p>")
	for i := range 60 {
		fmt.Fprintf(&b, "The club meets every week in the hall near the station word%d. ", i)
	}
	fmt.Fprintf(&b, "</p><p>Generated for day %d.</p><a href=\"/cal/%d\">next day</a> <a href=\"/about\">about</a></body></html>", day, day+1)
	return b.String()
}

// TestTrapStoppedSiteReported crawls a site whose calendar breeds copies
// of itself: the trap rule stops it, and the crawl says so in the
// summary (the site, example pairs), in DATA/reports/ and in the metrics,
// and the summary's trap cuts are crawl.log's trap lines.
func TestTrapStoppedSiteReported(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var day int
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, `<html><body><p>Home of a club with a calendar.</p><a href="/cal/1">calendar</a> <a href="/about">about</a></body></html>`)
		case r.URL.Path == "/about":
			fmt.Fprint(w, `<html><body><p>About the club: founded long ago, it meets on Tuesdays.</p></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/cal/"):
			if _, err := fmt.Sscanf(r.URL.Path, "/cal/%d", &day); err != nil || day > 500 {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, calendarPage(day))
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := resolve.New([]string{"club.test=" + strings.TrimPrefix(srv.URL, "http://")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Depth limits well above the calendar's few pages: the cut crawl.log
	// shows is the stopped site's (a depth cut gets no line).
	cfg := Config{DataDir: dir, Delay: -1, Workers: 4, MaxDuration: 2 * time.Minute, Traps: traps.Limits{MaxDuplicatesPerSite: 3, MaxDepth: 50, MaxNumberedDepth: 50}}
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, []string{"http://club.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Finished {
		t.Fatalf("crawl not finished: %+v", sum)
	}
	if len(sum.Stopped) != 1 || sum.Stopped[0].Site != "club.test" || sum.Stopped[0].Kind != traps.Duplicates {
		t.Fatalf("stopped sites %+v, want club.test by %q", sum.Stopped, traps.Duplicates)
	}
	if len(sum.Stopped[0].Examples) == 0 {
		t.Errorf("club.test stopped without example pairs")
	}
	if sum.Pages > 30 {
		t.Errorf("%d pages fetched from an endless calendar, want the trap rule to stop it early", sum.Pages)
	}
	p := filepath.Join(dir, "reports", traps.ReportName("club.test"))
	if !slices.Equal(sum.TrapReports, []string{p}) {
		t.Errorf("trap reports %v, want [%s]", sum.TrapReports, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "site: club.test") || !strings.Contains(string(b), "/cal/") {
		t.Errorf("report lacks the site or its example pages:\n%s", b)
	}
	if line := c.stoppedLine(); !strings.Contains(line, "club.test (duplicates)") {
		t.Errorf("progress note %q does not name the stopped site", line)
	}
	if v := gaugeValue(t, c, "courtesy_crawl_trap_stopped_site", map[string]string{"site": "club.test", "limit": string(traps.Duplicates)}); v != 1 {
		t.Errorf("courtesy_crawl_trap_stopped_site{site=club.test} = %v, want 1", v)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	var logged int64
	for _, ln := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if e, err := crawllog.Parse(ln); err == nil && e.Owner() != e.URL {
			logged++
		}
	}
	var cuts int64
	for _, n := range sum.TrapCuts {
		cuts += n
	}
	if cuts == 0 || cuts != logged {
		t.Errorf("summary counts %d trap cuts, crawl.log has %d trap lines; want the same, more than 0", cuts, logged)
	}
}

// gaugeValue returns the value of the gauge name with labels, or -1.
func gaugeValue(t *testing.T, c *Crawler, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := c.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue metric
				}
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
