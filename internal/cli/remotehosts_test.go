package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/poll"
)

// TestCrawlFrontierConsoleHosts: the console of a crawl with --frontier
// shows the service's queues for the crawl: the web's 4 hosts with their
// counts, one host's page with its queue head, 404 for a host the crawl
// does not have, and the crawl's totals; pausing from the console pauses
// the service.
func TestCrawlFrontierConsoleHosts(t *testing.T) {
	_, webAddr, _, seeds := sharedWeb(t)
	_, addr := serveProcess(t, t.TempDir())
	base, token, _, _, _ := startCmd(t, "crawl", "--frontier", addr, "--data", filepath.Join(t.TempDir(), "a"),
		"--resolve", "*.test="+webAddr, "--delay", "700ms", "--workers", "4", "--max-duration", "2m",
		"--console", "127.0.0.1:0", "--log-level", "warn", seeds[0], seeds[1], seeds[2], seeds[3])
	hosts := waitHosts(t, base, "the console", 4)
	queued := false
	for _, r := range hosts.Rows {
		if !strings.HasSuffix(r.Host, ".test") || r.Queued+r.InFlight+r.Fetched == 0 {
			t.Errorf("hosts row %+v", r)
		}
		queued = queued || r.Queued > 0
	}
	if !queued {
		t.Errorf("no host has URLs queued: %+v", hosts.Rows)
	}
	var one struct {
		Host  string `json:"host"`
		Queue []struct {
			URL string `json:"url"`
		} `json:"queue"`
	}
	if code := call(t, "GET", base+"/api/hosts/"+hosts.Rows[0].Host, "", nil, &one); code != 200 || one.Host != hosts.Rows[0].Host {
		t.Errorf("host %s: %d %+v", hosts.Rows[0].Host, code, one)
	}
	if code := call(t, "GET", base+"/api/hosts/nowhere.test", "", nil, nil); code != 404 {
		t.Errorf("unknown host: %d, want 404", code)
	}
	var pause map[string]any
	if code := call(t, "POST", base+"/api/pause", token, map[string]any{}, &pause); code != 200 {
		t.Errorf("pause: %d %v", code, pause)
	}
	if out, code := frontierCmd(t, addr, "active"); code != 0 || !strings.Contains(out, "off") && !strings.Contains(out, "false") {
		t.Errorf("the service after a pause from the console: %q (exit %d); want not active", out, code)
	}
}

// hostsPage is a page of a console's hosts table (GET /api/hosts).
type hostsPage struct {
	Total int `json:"total"`
	Rows  []struct {
		Host                      string
		Queued, InFlight, Fetched uint64
	} `json:"rows"`
}

// waitHosts waits (at most 30 s) until the console at base lists n hosts,
// and returns the table sorted by host.
func waitHosts(t *testing.T, base, who string, n int) hostsPage {
	t.Helper()
	var hosts hostsPage
	poll.Until(t, 30*time.Second, fmt.Sprintf("%s lists the crawl's %d hosts", who, n), func() bool {
		return call(t, "GET", base+"/api/hosts?sort=host", "", nil, &hosts) == 200 && hosts.Total == n
	})
	return hosts
}
