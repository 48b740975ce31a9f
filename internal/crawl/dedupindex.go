package crawl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

// loadDedupIndexes adds the payload digests of earlier crawls' CDXJ
// indexes (Config.DedupIndexes) to the digest store: a payload archived
// then is written now as a revisit record that points at that capture
// (its URL and date), as Heritrix does with an earlier crawl's index. A
// file is read once per crawl state: a mark (its path, size and
// modification time) says it was.
func (c *Crawler) loadDedupIndexes() error {
	if len(c.cfg.DedupIndexes) == 0 {
		return nil
	}
	marks := c.db.Bucket("C/dedupindex/")
	for _, path := range c.cfg.DedupIndexes {
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("crawl: dedup index %s: %w", path, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return fmt.Errorf("crawl: dedup index: %w", err)
		}
		mark := []byte(abs + " " + strconv.FormatInt(st.Size(), 10) + " " + strconv.FormatInt(st.ModTime().UnixNano(), 10))
		if _, err := marks.Get(mark); err == nil {
			continue // read by an earlier run of this crawl
		} else if !errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("crawl: dedup index %s: %w", path, err)
		}
		n, added, bad, err := c.loadDedupIndex(abs)
		if err != nil {
			return fmt.Errorf("crawl: dedup index %s: %w", path, err)
		}
		// Synced after the digests' own commit: once marked, they are
		// durable.
		if err := marks.Set(mark, []byte{1}); err != nil {
			return fmt.Errorf("crawl: dedup index %s: %w", path, err)
		}
		c.log.Info("dedup index read", "file", path, "entries", n, "digests_added", added, "bad_lines", bad)
	}
	return nil
}

// loadDedupIndex reads one CDXJ file: every 2xx capture that is not itself
// a revisit gives its payload digest, unless the store has it already
// (the first capture known is the one revisits point at). Bad lines are
// counted and skipped.
func (c *Crawler) loadDedupIndex(path string) (entries, added, bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	err = cdxj.Each(f, func(_ int, e cdxj.Entry, err error) error {
		if err != nil {
			bad++
			return nil
		}
		entries++
		if e.MIME == "warc/revisit" || e.Status < 200 || e.Status > 299 || e.URL == "" || !strings.HasPrefix(e.Digest, "sha1:") {
			return nil
		}
		at, err := time.Parse("20060102150405", e.Timestamp)
		if err != nil {
			bad++
			return nil
		}
		if c.digestsSeen.MayContain(e.Digest) {
			if _, err := c.digestLookup(e.Digest); err == nil {
				return nil
			}
		}
		// The record's ID is not in a CDXJ line: the revisit names the
		// capture by URL and date (WARC-Refers-To-Target-URI and -Date).
		if err := c.digestsW.Set([]byte(e.Digest), encodeRevisit(e.URL, at, "")); err != nil {
			return err
		}
		c.digestsSeen.Add(e.Digest)
		added++
		return nil
	})
	if err != nil {
		return entries, added, bad, err
	}
	return entries, added, bad, c.digestsW.Flush()
}
