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
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// Pattern selects quads: each zero term is unbound.
type Pattern struct {
	S, P, O, G rdf.Term
}

// Page is one page of a Match.
type Page struct {
	Quads []rdf.Quad
	// Next is the cursor of the next page, "" after the last.
	Next string
}

// Match returns up to limit quads matching p after the cursor ("" for
// the first page). limit 0 means DefaultPageSize; over MaxPageSize is an
// error. The order is the index's (by term ID), stable across pages.
func (s *Store) Match(p Pattern, cursor string, limit int) (Page, error) {
	switch {
	case limit == 0:
		limit = DefaultPageSize
	case limit < 0 || limit > MaxPageSize:
		return Page{}, fmt.Errorf("triplestore: page size %d out of 1..%d", limit, MaxPageSize)
	}
	// Resolve the bound terms; an unknown term matches nothing.
	var ids [4]uint64
	for i, t := range []rdf.Term{p.S, p.P, p.O, p.G} {
		if t.IsZero() {
			continue
		}
		id, ok, err := s.lookup(t.String())
		if err != nil {
			return Page{}, err
		}
		if !ok {
			if cursor != "" {
				return Page{}, fmt.Errorf("%w: it is not of this pattern", ErrCursor)
			}
			return Page{}, nil
		}
		ids[i] = id
	}
	sb, pb, ob := !p.S.IsZero(), !p.P.IsZero(), !p.O.IsZero()
	// Choose the index whose key starts with the bound terms; order
	// says where s, p, o sit in its key.
	var prefix []byte
	var order [3]int // positions of s, p, o in the key
	switch {
	case sb && pb && ob, sb && pb, sb && !ob:
		prefix = []byte(prefixSPO)
		order = [3]int{0, 1, 2}
		prefix = appendBound(prefix, []bool{sb, pb, ob}, ids[0], ids[1], ids[2])
	case sb && ob: // o s p
		prefix = appendKey([]byte(nil), prefixOSP, ids[2], ids[0])
		order = [3]int{1, 2, 0}
	case pb: // p, or p o
		prefix = []byte(prefixPOS)
		order = [3]int{2, 0, 1}
		prefix = appendBound(prefix, []bool{pb, ob}, ids[1], ids[2])
	case ob:
		prefix = appendKey([]byte(nil), prefixOSP, ids[2])
		order = [3]int{1, 2, 0}
	default:
		prefix = []byte(prefixSPO)
		order = [3]int{0, 1, 2}
	}
	lower := prefix
	if cursor != "" {
		c, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || !bytes.HasPrefix(c, prefix) {
			return Page{}, fmt.Errorf("%w: it is not of this pattern", ErrCursor)
		}
		lower = append(c, 0) // strictly after the last key returned
	}
	it, err := s.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upperBound(prefix)})
	if err != nil {
		return Page{}, fmt.Errorf("triplestore: %w", err)
	}
	defer it.Close()
	var out Page
	scanned := 0
	var last []byte
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		var kid [4]uint64
		rest := k[len(prefixSPO):]
		for i := range kid {
			v, n := binary.Uvarint(rest)
			if n <= 0 {
				return Page{}, fmt.Errorf("triplestore: corrupt key %q", k)
			}
			kid[i] = v
			rest = rest[n:]
		}
		scanned++
		last = append(last[:0], k...)
		sid, pid, oid, gid := kid[order[0]], kid[order[1]], kid[order[2]], kid[3]
		if !p.G.IsZero() && gid != ids[3] {
			if scanned >= maxScan {
				out.Next = base64.RawURLEncoding.EncodeToString(last)
				return out, nil
			}
			continue
		}
		var q rdf.Quad
		for i, id := range []uint64{sid, pid, oid, gid} {
			t, err := s.termOf(id)
			if err != nil {
				return Page{}, err
			}
			switch i {
			case 0:
				q.S = t
			case 1:
				q.P = t
			case 2:
				q.O = t
			case 3:
				q.G = t
			}
		}
		out.Quads = append(out.Quads, q)
		if len(out.Quads) == limit || scanned >= maxScan {
			if it.Next() {
				out.Next = base64.RawURLEncoding.EncodeToString(last)
			}
			break
		}
	}
	if err := it.Error(); err != nil {
		return Page{}, fmt.Errorf("triplestore: scan: %w", err)
	}
	return out, nil
}

// appendBound appends the leading bound ids (stopping at the first
// unbound one).
func appendBound(dst []byte, bound []bool, ids ...uint64) []byte {
	for i, b := range bound {
		if !b {
			break
		}
		dst = binary.AppendUvarint(dst, ids[i])
	}
	return dst
}

func upperBound(p []byte) []byte {
	u := bytes.Clone(p)
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] != 0xff {
			u[i]++
			return u[:i+1]
		}
	}
	return nil
}

// Count is a term with a number of quads.
type Count struct {
	Term rdf.Term
	N    int64
}

// CountsByPredicate returns the number of quads of every predicate, or of
// the first limit predicates by ID (0 means all, up to MaxPageSize).
func (s *Store) CountsByPredicate(limit int) ([]Count, error) {
	return s.counts(prefixPredCnt, limit)
}

// CountsByType returns, for every class, the number of quads
// (x rdf:type class g) in the store.
func (s *Store) CountsByType(limit int) ([]Count, error) {
	return s.counts(prefixTypeCnt, limit)
}

func (s *Store) counts(prefix string, limit int) ([]Count, error) {
	if limit <= 0 || limit > MaxPageSize {
		limit = MaxPageSize
	}
	it, err := s.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: upperBound([]byte(prefix))})
	if err != nil {
		return nil, fmt.Errorf("triplestore: %w", err)
	}
	defer it.Close()
	var out []Count
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		id, n := binary.Uvarint(it.Key()[len(prefix):])
		c, m := binary.Uvarint(it.Value())
		if n <= 0 || m <= 0 {
			return nil, fmt.Errorf("triplestore: corrupt counter %q", it.Key())
		}
		t, err := s.termOf(id)
		if err != nil {
			return nil, err
		}
		out = append(out, Count{Term: t, N: int64(c)})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("triplestore: scan: %w", err)
	}
	return out, nil
}

var _ io.Closer = (*Store)(nil)
