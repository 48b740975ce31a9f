package frontier

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The callers' side of the committer: Put and Ack hand their items to
// it and wait for the group's fsync; the seen-test they share.

// Put stores discovered URLs (if unknown in their crawl) and updates known
// ones, returning one status per item. It returns after the items are on
// disk (fsync, shared with concurrent callers). Items without a host, with a
// key over MaxKeyLength, or over the size limits are Skipped.
func (f *Frontier) Put(ctx context.Context, items []Item) ([]Status, error) {
	statuses := make([]Status, len(items))
	norm := make([]normItem, len(items))
	pending := 0
	if f.closed.Load() {
		return nil, ErrClosed
	}
	// Validation and hashing need no lock; the crawl ids are a snapshot
	// (a crawl created or deleted meanwhile is the committer's to sort
	// out, as for a Put that raced with it before taking any lock).
	cids := *f.cids.Load()
	for i := range items {
		it := &items[i]
		n := &norm[i]
		n.crawl = normCrawl(it.Info.CrawlID)
		n.key = it.Info.Key
		if n.key == "" {
			n.key = DefaultKey(it.Info.URL)
		}
		if n.key == "" || len(n.key) > MaxKeyLength || it.Info.URL == "" || len(it.Info.URL) > f.opts.MaxURLLength ||
			metadataSize(it.Info.Metadata) > f.opts.MaxMetadataBytes {
			n.skip = true
			statuses[i] = Skipped
			continue
		}
		n.hash = hashURL(it.Info.URL)
	}
	// The seen-test for discovered URLs, outside any lock: most links point
	// at known pages, and those need not reach the committer.
	gen := f.gen.Load()
	// check lists the items the seen cache does not answer, for the store.
	var check []storeCheck
	for i := range items {
		n := &norm[i]
		if n.skip {
			continue
		}
		n.gen = gen
		if !items[i].Known {
			if cid, ok := cids[n.crawl]; ok {
				if f.seen.contains(fingerprint(cid, n.hash)) {
					n.skip = true
					statuses[i] = Skipped
					continue
				}
				if !f.absent(cid, n.hash) {
					check = append(check, storeCheck{cid: cid, hi: binary.BigEndian.Uint64(n.hash[:8]), i: i})
				}
			}
		}
		pending++
	}
	// Look them up in key order: each seek then starts from where the
	// last one ended (Pebble tries the next keys before seeking again, and
	// keeps the blocks it is in) instead of from the top of every level
	// and memtable, which cut the seen-test's time by about a tenth.
	slices.SortFunc(check, func(a, b storeCheck) int {
		if c := cmp.Compare(a.cid, b.cid); c != 0 {
			return c
		}
		return cmp.Compare(a.hi, b.hi)
	})
	var sc seenChecker
	defer sc.close()
	for _, c := range check {
		n := &norm[c.i]
		found, err := sc.known(f.db, c.cid, n.hash)
		if err != nil {
			return nil, err
		}
		if found {
			f.seen.add(fingerprint(c.cid, n.hash))
			n.skip = true
			statuses[c.i] = Skipped
			pending--
		}
	}
	sc.close()
	if pending == 0 {
		return statuses, nil
	}
	o := &op{items: items, statuses: statuses, norm: norm, done: make(chan error, 1)}
	if err := f.submit(ctx, o); err != nil {
		return nil, err
	}
	return statuses, nil
}

// storeCheck is a discovered item of a Put whose seen-test reads the
// store: its crawl id and the first 64 bits of its hash (the order of its
// key, near enough), and its index.
type storeCheck struct {
	cid uint32
	hi  uint64
	i   int
}

// Ack acknowledges a leased URL: refetchFrom zero marks it completed,
// otherwise it is queued again for that time (a transient error, a
// refetch). It is Put with one Known item.
func (f *Frontier) Ack(ctx context.Context, info URLInfo, refetchFrom time.Time) error {
	_, err := f.Put(ctx, []Item{{Info: info, Known: true, RefetchFrom: refetchFrom}})
	return err
}

// seenChecker answers the on-disk seen-test for the URLs of one Put through
// one Pebble iterator. Unlike DB.Get, the iterator may consult the Bloom
// filters of the last level (UseL6Filters), where most URL records live once
// the frontier is large: a new URL, the common case on insert, then costs a
// filter probe per level instead of reading and decompressing a data block
// of the last level. The filter blocks live in the block cache (about 1.25
// bytes per URL at 10 bits per key), so it pays while the cache holds them.
type seenChecker struct {
	it  *pebble.Iterator
	key []byte
}

// known reports whether the URL record (cid, h) exists.
func (c *seenChecker) known(db *pebble.DB, cid uint32, h urlHash) (bool, error) {
	if c.it == nil {
		it, err := db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return false, fmt.Errorf("frontier: seen-test: %w", err)
		}
		c.it = it
		c.key = make([]byte, 0, len(prefixURL)+4+hashLen)
	}
	c.key = append(binary.BigEndian.AppendUint32(append(c.key[:0], prefixURL...), cid), h[:]...)
	if c.it.SeekPrefixGE(c.key) && bytes.Equal(c.it.Key(), c.key) {
		return true, nil
	}
	if err := c.it.Error(); err != nil {
		return false, fmt.Errorf("frontier: seen-test: %w", err)
	}
	return false, nil
}

func (c *seenChecker) close() {
	if c.it != nil {
		c.it.Close()
		c.it = nil
	}
}
