// Package triplestore keeps RDF quads on Courtesy's embedded Pebble store
// and answers triple patterns over them: the triple store of the structured-
// data indexer, which the search site browses.
//
// Every term is interned once to an integer ID; each quad is then written
// under three keys, one per access path, so that any pattern with some of
// subject, predicate and object bound is a prefix scan:
//
//	t/S s p o g   subject first    (s, sp, spo bound)
//	t/P p o s g   predicate first  (p, po bound)
//	t/O o s p g   object first     (o, os bound)
//
// IDs are unsigned varints, a prefix-free code, so a key prefix holding the
// bound IDs selects exactly the matching quads. The graph comes last in
// every key: it is kept (the page a triple came from) but filtered, not
// indexed. Counts of quads per predicate and per rdf:type object are kept
// as counters updated in the batch that adds the quads.
//
//	st, err := triplestore.Open(ctx, dir, triplestore.Options{})
//	b := st.NewBatch()
//	_, err = b.Add(quad)            // false when the quad was already there
//	err = b.Commit()
//	page, err := st.Match(ctx, triplestore.Pattern{S: subject}, "", 100)
//	// page.Quads; page.Next is the cursor of the next page ("" at the end)
package triplestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

// Key prefixes. The store owns "t/"; a client (the indexer) may keep its
// own keys in the same Pebble under another prefix, through DB.
const (
	prefixTermID  = "t/T" // term (N-Quads form) -> uvarint id
	prefixIDTerm  = "t/I" // uvarint id -> term (N-Quads form)
	prefixSPO     = "t/S"
	prefixPOS     = "t/P"
	prefixOSP     = "t/O"
	prefixPredCnt = "t/cp" // uvarint predicate id -> uvarint count
	prefixTypeCnt = "t/ct" // uvarint type id -> uvarint count
	keyNextID     = "t/m/next"
	keyQuads      = "t/m/quads"
)

// Defaults of Options.
const (
	DefaultTermCache = 200_000
	DefaultPageSize  = 100
	MaxPageSize      = 10_000
	// maxScan bounds the keys one Match call examines when a graph
	// filter rejects most of them; the page then comes back short, with
	// a cursor.
	maxScan = 100_000
)

// ErrCursor is wrapped by the error for a cursor this store did not make
// for that pattern.
var ErrCursor = errors.New("triplestore: bad cursor")

// Options tune Open. The zero value works.
type Options struct {
	// CacheBytes is Pebble's block cache; 0 means 96 MiB. Pebble
	// reserves its memtables (two of MemTableBytes) inside this budget,
	// so what is left for blocks is CacheBytes - 2*MemTableBytes: a cache
	// no larger than the memtables caches nothing, and every term lookup
	// then reads its Bloom filter from disk (ten times slower).
	CacheBytes int64
	// MemTableBytes is one Pebble memtable; 0 means 16 MiB.
	MemTableBytes int64
	// TermCache bounds the terms kept in memory in each direction
	// (term to ID and ID to term); 0 means DefaultTermCache. Memory is
	// about 150 bytes per entry plus the term.
	TermCache int
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	if o.CacheBytes < 0 || o.MemTableBytes < 0 || o.TermCache < 0 {
		return errors.New("triplestore: negative option")
	}
	return nil
}

// Store is an open triple store. It is safe for concurrent use; batches
// are committed one at a time.
type Store struct {
	db     *kv.DB
	ids    *cache[string, uint64] // N-Quads form -> id
	terms  *cache[uint64, rdf.Term]
	typeID atomic.Uint64 // id of rdf:type, 0 until interned
	// commitMu makes commits (ID allocation, counters) one at a time.
	commitMu sync.Mutex
	mu       struct {
		sync.Mutex
		next uint64 // next free term id; 0 is the default graph
	}
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = 96 << 20
	}
	if opts.MemTableBytes == 0 {
		opts.MemTableBytes = 16 << 20
	}
	if opts.CacheBytes < 3*opts.MemTableBytes {
		return nil, fmt.Errorf("triplestore: CacheBytes (%d) under three memtables (%d): Pebble reserves two memtables in the cache", opts.CacheBytes, 3*opts.MemTableBytes)
	}
	if opts.TermCache == 0 {
		opts.TermCache = DefaultTermCache
	}
	db, err := kv.Open(dir, kv.Options{
		CacheBytes: opts.CacheBytes, MemTableBytes: opts.MemTableBytes,
		TargetFileBytes: 8 << 20, MaxTargetFileBytes: 128 << 20, MaxOpenFiles: 500,
	})
	if err != nil {
		return nil, fmt.Errorf("triplestore: %w", err)
	}
	s := &Store{db: db, ids: newCache[string, uint64](opts.TermCache), terms: newCache[uint64, rdf.Term](opts.TermCache)}
	s.mu.next = 1
	if v, err := s.get([]byte(keyNextID)); err != nil {
		db.Close()
		return nil, err
	} else if v != nil {
		n, k := binary.Uvarint(v)
		if k <= 0 {
			db.Close()
			return nil, errors.New("triplestore: corrupt next-id counter")
		}
		s.mu.next = n
	}
	if id, ok, err := s.lookup(rdf.NewIRI(rdf.RDFType).String()); err != nil {
		db.Close()
		return nil, err
	} else if ok {
		s.typeID.Store(id)
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("triplestore: %w", err)
	}
	return nil
}

// DB returns the underlying store, for a client's own keys (outside "t/").
func (s *Store) DB() *kv.DB { return s.db }

// get returns a copy of the value under key, nil if absent.
func (s *Store) get(key []byte) ([]byte, error) {
	v, c, err := s.db.Pebble().Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("triplestore: get: %w", err)
	}
	out := bytes.Clone(v)
	_ = c.Close()
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// lookup returns the id of a term given in N-Quads form.
func (s *Store) lookup(nq string) (uint64, bool, error) {
	if id, ok := s.ids.get(nq); ok {
		return id, true, nil
	}
	v, err := s.get(append([]byte(prefixTermID), nq...))
	if err != nil || v == nil {
		return 0, false, err
	}
	id, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, false, fmt.Errorf("triplestore: corrupt id of term %s", nq)
	}
	s.ids.put(nq, id)
	return id, true, nil
}

// termOf returns the term with an id.
func (s *Store) termOf(id uint64) (rdf.Term, error) {
	if id == 0 {
		return rdf.Term{}, nil
	}
	if t, ok := s.terms.get(id); ok {
		return t, nil
	}
	v, err := s.get(binary.AppendUvarint([]byte(prefixIDTerm), id))
	if err != nil {
		return rdf.Term{}, err
	}
	if v == nil {
		return rdf.Term{}, fmt.Errorf("triplestore: no term with id %d", id)
	}
	t, err := rdf.ParseTerm(string(v))
	if err != nil {
		return rdf.Term{}, fmt.Errorf("triplestore: stored term %d: %w", id, err)
	}
	s.terms.put(id, t)
	return t, nil
}

// Stats returns the number of quads and of distinct terms.
func (s *Store) Stats() (quads, terms int64, err error) {
	v, err := s.get([]byte(keyQuads))
	if err != nil {
		return 0, 0, err
	}
	if v != nil {
		n, _ := binary.Uvarint(v)
		quads = int64(n)
	}
	s.mu.Lock()
	terms = int64(s.mu.next - 1)
	s.mu.Unlock()
	return quads, terms, nil
}

// Batch gathers quads (and a client's own writes) committed together. It
// is used by one goroutine.
type Batch struct {
	s        *Store
	b        *pebble.Batch
	newTerms map[string]uint64
	added    map[string]struct{} // SPO keys added by this batch
	preds    map[uint64]uint64
	types    map[uint64]uint64
	quads    uint64
	typeID   uint64
	key      []byte
}

// NewBatch returns an empty batch.
func (s *Store) NewBatch() *Batch {
	return &Batch{s: s, b: s.db.Pebble().NewBatch(), newTerms: map[string]uint64{},
		added: map[string]struct{}{}, preds: map[uint64]uint64{}, types: map[uint64]uint64{}, typeID: s.typeID.Load()}
}

// Len returns the number of quads added so far.
func (b *Batch) Len() int { return int(b.quads) }

// Bytes returns the batch's size in bytes.
func (b *Batch) Bytes() int { return b.b.Len() }

// Set queues a client's own key (which must not start with "t/").
func (b *Batch) Set(key, value []byte) error {
	if bytes.HasPrefix(key, []byte("t/")) {
		return fmt.Errorf("triplestore: key %q is in the store's namespace", key)
	}
	return b.b.Set(key, value, nil)
}

// Delete queues the deletion of a client's own key (which must not start
// with "t/").
func (b *Batch) Delete(key []byte) error {
	if bytes.HasPrefix(key, []byte("t/")) {
		return fmt.Errorf("triplestore: key %q is in the store's namespace", key)
	}
	return b.b.Delete(key, nil)
}

// intern returns the id of t, allocating one in the batch if it is new
// (fresh is then true).
func (b *Batch) intern(t rdf.Term) (id uint64, fresh bool, err error) {
	if t.IsZero() {
		return 0, false, nil
	}
	nq := t.String()
	if id, ok := b.newTerms[nq]; ok {
		return id, true, nil
	}
	id, ok, err := b.s.lookup(nq)
	if err != nil || ok {
		return id, false, err
	}
	b.s.mu.Lock()
	id = b.s.mu.next
	b.s.mu.next++
	b.s.mu.Unlock()
	b.newTerms[nq] = id
	var idb [binary.MaxVarintLen64]byte
	idv := idb[:binary.PutUvarint(idb[:], id)]
	_ = b.b.Set(append([]byte(prefixTermID), nq...), idv, nil)
	_ = b.b.Set(append([]byte(prefixIDTerm), idv...), []byte(nq), nil)
	if t.Kind == rdf.IRI && t.Value == rdf.RDFType {
		b.typeID = id
	}
	return id, true, nil
}

// appendKey appends prefix and ids.
func appendKey(dst []byte, prefix string, ids ...uint64) []byte {
	dst = append(dst, prefix...)
	for _, id := range ids {
		dst = binary.AppendUvarint(dst, id)
	}
	return dst
}

// Add queues q and reports whether it is new (neither stored nor already
// in the batch). The subject must be an IRI or blank node, the predicate
// an IRI, the graph an IRI, a blank node or zero.
func (b *Batch) Add(q rdf.Quad) (bool, error) {
	if err := check(q); err != nil {
		return false, err
	}
	var ids [4]uint64
	anyFresh := false
	for i, t := range []rdf.Term{q.S, q.P, q.O, q.G} {
		id, fresh, err := b.intern(t)
		if err != nil {
			return false, err
		}
		ids[i] = id
		anyFresh = anyFresh || fresh
	}
	s, p, o, g := ids[0], ids[1], ids[2], ids[3]
	b.key = appendKey(b.key[:0], prefixSPO, s, p, o, g)
	if _, ok := b.added[string(b.key)]; ok {
		return false, nil
	}
	// A quad with a term new to the store cannot be stored yet: the
	// common case (a new page is a new graph), which saves a lookup.
	if !anyFresh {
		if old, err := b.s.get(b.key); err != nil {
			return false, err
		} else if old != nil {
			return false, nil
		}
	}
	b.added[string(b.key)] = struct{}{}
	_ = b.b.Set(b.key, nil, nil)
	_ = b.b.Set(appendKey(b.key[:0], prefixPOS, p, o, s, g), nil, nil)
	_ = b.b.Set(appendKey(b.key[:0], prefixOSP, o, s, p, g), nil, nil)
	b.preds[p]++
	if p == b.typeID && q.O.Kind == rdf.IRI {
		b.types[o]++
	}
	b.quads++
	return true, nil
}

func check(q rdf.Quad) error {
	switch {
	case q.S.Kind != rdf.IRI && q.S.Kind != rdf.Blank:
		return errors.New("triplestore: subject is not an IRI or blank node")
	case q.P.Kind != rdf.IRI:
		return errors.New("triplestore: predicate is not an IRI")
	case q.O.IsZero():
		return errors.New("triplestore: no object")
	case q.G.Kind == rdf.Literal:
		return errors.New("triplestore: graph is a literal")
	}
	return nil
}

// Commit writes the batch (synced) and makes its terms and counts
// visible. The batch cannot be used after.
func (b *Batch) Commit() error {
	s := b.s
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	defer b.b.Close()
	add := func(key []byte, delta uint64) error {
		v, err := s.get(key)
		if err != nil {
			return err
		}
		var n uint64
		if v != nil {
			n, _ = binary.Uvarint(v)
		}
		return b.b.Set(key, binary.AppendUvarint(nil, n+delta), nil)
	}
	for id, d := range b.preds {
		if err := add(appendKey(nil, prefixPredCnt, id), d); err != nil {
			return err
		}
	}
	for id, d := range b.types {
		if err := add(appendKey(nil, prefixTypeCnt, id), d); err != nil {
			return err
		}
	}
	if b.quads > 0 {
		if err := add([]byte(keyQuads), b.quads); err != nil {
			return err
		}
	}
	if len(b.newTerms) > 0 {
		s.mu.Lock()
		next := s.mu.next
		s.mu.Unlock()
		_ = b.b.Set([]byte(keyNextID), binary.AppendUvarint(nil, next), nil)
	}
	if err := b.b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("triplestore: commit: %w", err)
	}
	for nq, id := range b.newTerms {
		s.ids.put(nq, id)
	}
	if b.typeID != 0 {
		s.typeID.Store(b.typeID)
	}
	return nil
}
