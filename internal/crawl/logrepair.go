package crawl

// crawl.log on start: made to agree with the frontier after a crash.

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// repairLog makes the crawl log at path hold exactly one line per URL the
// frontier acknowledged (plus the trap cuts logged while those pages were
// processed), whatever a crash (kill -9, power loss) left: lines of URLs
// not acknowledged are dropped (the crawl does them again and logs them
// then), repeated lines dropped, a torn tail cut. An acknowledged URL
// without a line gets a rebuilt one (status 0, annotation "log:rebuilt")
// from what the frontier stored of it; the acker writes and fsyncs lines
// before it commits, so that happens only for logs of an older build. A
// missing log is left missing when the frontier has nothing completed.
func (c *Crawler) repairLog(ctx context.Context, path string) error {
	_, statErr := os.Stat(path)
	if errors.Is(statErr, os.ErrNotExist) && c.fr.Stats(c.cfg.CrawlID, "").Completed == 0 {
		return nil
	}
	if c.ownFr == nil {
		// A remote frontier holds every process's acknowledgements, not
		// this log's: keep the lines, drop repeats and a torn tail.
		if errors.Is(statErr, os.ErrNotExist) {
			return nil
		}
		r, err := crawllog.OpenRepair(path, func(string) bool { return true })
		if err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		c.robotsArc.seed(r.Prerequisites())
		_, err = r.Commit()
		if err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		return nil
	}
	acked := func(u string) bool {
		st, err := c.ownFr.Lookup(ctx, c.cfg.CrawlID, u)
		return err == nil && st.Completed
	}
	r, err := crawllog.OpenRepair(path, acked)
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	c.robotsArc.seed(r.Prerequisites())
	err = c.ownFr.ListURLs(ctx, frontier.ListParams{CrawlID: c.cfg.CrawlID}, func(e frontier.URLEntry) error {
		if !e.Completed || r.Has(e.URL) {
			return nil
		}
		line := crawllog.Entry{Status: crawllog.StatusUnattempted, Size: -1, URL: e.URL,
			Path: md1(e.Metadata, mdPath), Via: md1(e.Metadata, mdVia)}
		if md1(e.Metadata, mdSource) == "seed" {
			line.Source = "seed"
		}
		if err := r.Add(line); err != nil {
			line.Path, line.Via = "", "" // a stored path the log cannot hold
			return r.Add(line)
		}
		return nil
	})
	if err != nil {
		r.Abort()
		return fmt.Errorf("crawl: repair crawl.log: %w", err)
	}
	st, err := r.Commit()
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	if st.Unacked+st.Duplicates+st.Malformed+st.Added > 0 || st.TornBytes > 0 {
		c.log.Info("crawl.log repaired after an unclean stop", "path", path, "repair", st.String())
	} else {
		c.log.Debug("crawl.log checked", "path", path, "lines", st.Kept)
	}
	return nil
}
