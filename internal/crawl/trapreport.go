package crawl

// Sites stopped by a trap limit: a notable event, for the progress line,
// the metrics, the summary and DATA/reports/.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// maxStoppedNames bounds the stopped sites the crawler names in the
// progress line and in the metrics' labels (the reports hold them all).
const maxStoppedNames = 1000

// onTrap is told by the trap checker when a site-level limit stops a site.
func (c *Crawler) onTrap(site string, k traps.Kind, detail string) {
	c.log.Warn("site stopped by a trap limit", "site", site, "limit", string(k), "detail", detail,
		"report", filepath.Join(c.reportsDir(), traps.ReportName(site)))
	c.metrics.trapSites.WithLabelValues(string(k)).Inc()
	c.stoppedMu.Lock()
	c.nStopped++
	named := len(c.stopped) < maxStoppedNames
	if named {
		c.stopped = append(c.stopped, site+" ("+string(k)+")")
	}
	c.stoppedMu.Unlock()
	if named {
		c.metrics.trapStopped.WithLabelValues(site, string(k)).Set(1)
	}
}

// stoppedLine returns the progress line's note on stopped sites ("" when
// none): how many this run, and the last few by name.
func (c *Crawler) stoppedLine() string {
	c.stoppedMu.Lock()
	defer c.stoppedMu.Unlock()
	if c.nStopped == 0 {
		return ""
	}
	names := c.stopped[max(0, len(c.stopped)-3):]
	more := ""
	if c.nStopped > len(names) {
		more = ", ..."
	}
	return fmt.Sprintf("trap-stopped: %d sites (%s%s)", c.nStopped, strings.Join(names, ", "), more)
}

func (c *Crawler) reportsDir() string { return filepath.Join(c.cfg.DataDir, "reports") }

// writeTrapReports writes one report per stopped site (all runs) into
// DATA/reports/, each replaced whole (written beside it, then renamed),
// and returns their paths.
func (c *Crawler) writeTrapReports(sites []traps.StoppedSite) ([]string, error) {
	if len(sites) == 0 {
		return nil, nil
	}
	dir := c.reportsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("crawl: trap reports: %w", err)
	}
	var paths []string
	for _, s := range sites {
		p := filepath.Join(dir, traps.ReportName(s.Site))
		f, err := os.CreateTemp(dir, ".report-*")
		if err != nil {
			return paths, fmt.Errorf("crawl: trap reports: %w", err)
		}
		err = traps.WriteReport(f, s)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(f.Name(), p)
		}
		if err != nil {
			os.Remove(f.Name())
			return paths, fmt.Errorf("crawl: trap report of %s: %w", s.Site, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
