package dedup

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// storePrefix is the kv bucket of the near-duplicate index. A key is
// storePrefix + site + 0x00 + slot (4 bytes, big endian), the slot being
// the hash's sequence number modulo MaxPerSite; the value is the hash and
// its sequence number (8 bytes each, big endian). Writing slot seq %
// MaxPerSite overwrites the hash that fell out of the site's window, so a
// site holds at most MaxPerSite keys on disk, as in memory, with one Set
// per hash and no delete.
const storePrefix = "dedup/near/"

// store persists the index. Writes are gathered (kv.Deferred) and
// committed without an fsync by Index.Flush, which the crawler calls right
// before each synced frontier commit: that commit goes through the same
// write-ahead log and makes them durable, as package traps does for its
// counters. A crash loses at most the hashes of the pages in flight, which
// are fetched again anyway. Whoever closes the kv store flushes first.
type store struct {
	db *pebble.DB
	// w gathers the writes until Index.Flush (or a site's load) commits
	// them: one commit per crawler acknowledgement group instead of one
	// per page.
	w *kv.Deferred
}

// errBadSite: a site name with a NUL byte would break the key layout;
// such a site is kept in memory only. Host names never hold one.
var errBadSite = errors.New("dedup: site name holds a NUL byte; not stored")

func siteKey(site string) []byte {
	k := make([]byte, 0, len(storePrefix)+len(site)+5)
	k = append(k, storePrefix...)
	k = append(k, site...)
	return append(k, 0)
}

// append writes hash h of site, sequence number seq, over the slot of the
// hash limit positions older.
func (s *store) append(site string, seq, h uint64, limit int) error {
	if strings.IndexByte(site, 0) >= 0 {
		return errBadSite
	}
	slot := seq
	if limit > 0 {
		slot = seq % uint64(limit)
	}
	var v [16]byte
	binary.BigEndian.PutUint64(v[:8], h)
	binary.BigEndian.PutUint64(v[8:], seq)
	key := binary.BigEndian.AppendUint32(siteKey(site), uint32(slot))
	if err := s.w.Set(key[len(storePrefix):], v[:]); err != nil {
		return fmt.Errorf("dedup: store: %w", err)
	}
	return nil
}

// loadFlushed commits the queued writes and then loads site.
func (s *store) loadFlushed(site string, limit int) ([]uint64, uint64, error) {
	if err := s.w.Flush(); err != nil {
		return nil, 0, fmt.Errorf("dedup: store: %w", err)
	}
	return s.load(site, limit)
}

// load returns the newest limit hashes of site, oldest first, and the
// sequence number the next hash gets. Values of another shape are
// skipped; slots beyond limit (a run with a larger MaxPerSite wrote them)
// count by their sequence number like the others.
func (s *store) load(site string, limit int) (hashes []uint64, next uint64, err error) {
	if strings.IndexByte(site, 0) >= 0 {
		return nil, 0, errBadSite
	}
	lower := siteKey(site)
	upper := bytes.Clone(lower)
	upper[len(upper)-1] = 1 // site + 0x01: just past every site + 0x00 + slot key
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, 0, fmt.Errorf("dedup: load %s: %w", site, err)
	}
	type entry struct{ seq, h uint64 }
	var all []entry
	for ok := it.First(); ok; ok = it.Next() {
		if len(it.Key()) != len(lower)+4 {
			continue
		}
		v, verr := it.ValueAndErr()
		if verr != nil {
			it.Close()
			return nil, 0, fmt.Errorf("dedup: load %s: %w", site, verr)
		}
		if len(v) != 16 {
			continue
		}
		e := entry{h: binary.BigEndian.Uint64(v[:8]), seq: binary.BigEndian.Uint64(v[8:])}
		next = max(next, e.seq+1)
		all = append(all, e)
	}
	if err := it.Close(); err != nil {
		return nil, 0, fmt.Errorf("dedup: load %s: %w", site, err)
	}
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	if limit > 0 && len(all) > limit {
		all = all[len(all)-limit:]
	}
	hashes = make([]uint64, len(all))
	for i, e := range all {
		hashes[i] = e.h
	}
	return hashes, next, nil
}
