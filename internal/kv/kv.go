// Package kv is Courtesy's embedded on-disk store: a thin layer over Pebble
// (a pure-Go LSM key-value store) shared by the components that persist
// state on one machine: the robots cache, the delay configuration, the proxy
// cache and the frontier. Each component owns a key prefix (a Bucket), so one
// data directory holds one store with one write-ahead log.
//
// Writes are durable (fsync) unless NoSync is used: "nothing lost" means a
// write acknowledged to a caller survives SIGKILL and power loss.
package kv

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("kv: not found")

// Options tunes Open. The zero value is ready to use; it suits small stores
// (caches, configuration). A store holding tens of millions of keys (a large
// frontier) wants bigger memtables and files and a block cache that holds
// its Bloom filters: see docs/frontier.md "Memory and scale".
type Options struct {
	// CacheBytes is the block cache size; 0 means 64 MiB. It comes on top
	// of the memtables (two of MemTableBytes), which Pebble charges to the
	// same cache.
	CacheBytes int64
	// Logf receives Pebble's informational messages; nil discards them.
	Logf func(format string, args ...any)
	// BloomBitsPerKey sizes the Bloom filter of every table; 0 means 10
	// (about 1 % false positives), negative means no filters.
	BloomBitsPerKey int
	// MemTableBytes is the size of one memtable (Pebble keeps up to two
	// while one flushes); 0 means 4 MiB (Pebble's default). Larger
	// memtables mean fewer, larger L0 files and less compaction for
	// write-heavy stores such as a large frontier.
	MemTableBytes int64
	// TargetFileBytes is the target size of the sstables written to L0;
	// each lower level doubles it up to MaxTargetFileBytes. 0 means 2 MiB
	// (Pebble's default). Fewer, larger files keep Pebble's per-file
	// memory (file metadata, open readers) small as the store grows.
	TargetFileBytes int64
	// MaxTargetFileBytes caps the doubling of TargetFileBytes per level;
	// 0 means no cap.
	MaxTargetFileBytes int64
	// MaxOpenFiles bounds the sstables Pebble keeps open (its table cache,
	// each entry holding a reader's metadata); 0 means 1000 (Pebble's
	// default).
	MaxOpenFiles int
}

// DB is an open store. It is safe for concurrent use.
type DB struct {
	db *pebble.DB
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*DB, error) {
	cache := opts.CacheBytes
	if cache <= 0 {
		cache = 64 << 20
	}
	// Pebble reserves each memtable's size in the block cache (up to
	// MemTableStopWritesThreshold, 2, of them): a cache no larger than two
	// memtables would keep no block at all, and every Bloom filter probe
	// would read its filter block from disk again. So the cache holds them
	// on top of CacheBytes.
	mem := opts.MemTableBytes
	if mem <= 0 {
		mem = 4 << 20
	}
	c := pebble.NewCache(cache + 2*mem)
	defer c.Unref()
	po := &pebble.Options{Cache: c, Logger: logger{opts.Logf}}
	// Bloom filters on every level: the frontier's seen-test and the caches
	// ask mostly for keys that are absent, and without filters each such
	// Get searches every level. Later levels inherit L0's policy.
	if bits := opts.BloomBitsPerKey; bits >= 0 {
		if bits == 0 {
			bits = 10
		}
		po.Levels[0].FilterPolicy = bloom.FilterPolicy(bits)
	}
	if opts.MemTableBytes > 0 {
		po.MemTableSize = uint64(opts.MemTableBytes)
		// L0 is compacted into Lbase about four flushed memtables at a
		// time (L0CompactionThreshold); an Lbase much smaller than that
		// would be rewritten whole by every L0 compaction.
		po.LBaseMaxBytes = max(64<<20, 4*opts.MemTableBytes)
	}
	if opts.TargetFileBytes > 0 {
		size := opts.TargetFileBytes
		for i := range po.TargetFileSizes {
			po.TargetFileSizes[i] = size
			if opts.MaxTargetFileBytes <= 0 || size*2 <= opts.MaxTargetFileBytes {
				size *= 2
			}
		}
	}
	if opts.MaxOpenFiles > 0 {
		po.MaxOpenFiles = opts.MaxOpenFiles
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("kv: open %s: %w", dir, err)
	}
	return &DB{db: db}, nil
}

// Close flushes and closes the store.
func (d *DB) Close() error {
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("kv: close: %w", err)
	}
	return nil
}

// Pebble returns the underlying Pebble database, for components (the
// frontier) that need batches, iterators and write options directly.
func (d *DB) Pebble() *pebble.DB { return d.db }

// Bucket returns a view of the keys starting with prefix. Bucket names must
// not be prefixes of each other; by convention they end in '/'.
func (d *DB) Bucket(prefix string) *Bucket {
	return &Bucket{db: d.db, prefix: []byte(prefix)}
}

// Bucket is a key namespace inside a DB.
type Bucket struct {
	db     *pebble.DB
	prefix []byte
}

func (b *Bucket) key(k []byte) []byte {
	out := make([]byte, 0, len(b.prefix)+len(k))
	return append(append(out, b.prefix...), k...)
}

// Get returns a copy of the value stored under key, or ErrNotFound.
func (b *Bucket) Get(key []byte) ([]byte, error) {
	v, closer, err := b.db.Get(b.key(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("kv: get: %w", err)
	}
	out := bytes.Clone(v)
	closer.Close()
	return out, nil
}

// Set stores value under key durably.
func (b *Bucket) Set(key, value []byte) error {
	if err := b.db.Set(b.key(key), value, pebble.Sync); err != nil {
		return fmt.Errorf("kv: set: %w", err)
	}
	return nil
}

// SetNoSync stores value under key without waiting for the disk: for data
// that can be lost in a crash (caches).
func (b *Bucket) SetNoSync(key, value []byte) error {
	if err := b.db.Set(b.key(key), value, pebble.NoSync); err != nil {
		return fmt.Errorf("kv: set: %w", err)
	}
	return nil
}

// Delete removes key durably; deleting a missing key is not an error.
func (b *Bucket) Delete(key []byte) error {
	if err := b.db.Delete(b.key(key), pebble.Sync); err != nil {
		return fmt.Errorf("kv: delete: %w", err)
	}
	return nil
}

// Scan calls fn for each key (without the bucket prefix) starting with
// prefix, in key order, until fn returns an error. The slices passed to fn
// are valid only during the call. An error from fn is returned unwrapped.
func (b *Bucket) Scan(prefix []byte, fn func(key, value []byte) error) error {
	lower := b.key(prefix)
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: PrefixEnd(lower)})
	if err != nil {
		return fmt.Errorf("kv: scan: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("kv: scan: %w", err)
		}
		if err := fn(it.Key()[len(b.prefix):], v); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("kv: scan: %w", err)
	}
	return nil
}

// PrefixEnd returns the smallest key greater than every key with prefix p,
// or nil when there is none (p is all 0xff): the UpperBound of an
// iterator over the prefix.
func PrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// logger adapts Pebble's logger to an optional printf function.
type logger struct{ logf func(string, ...any) }

func (l logger) Infof(format string, args ...any) {
	if l.logf != nil {
		l.logf(format, args...)
	}
}
func (l logger) Errorf(format string, args ...any) { l.Infof(format, args...) }
func (l logger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("kv: pebble fatal: "+format, args...))
}
