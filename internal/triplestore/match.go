package triplestore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

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
	it, err := s.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: kv.PrefixEnd(prefix)})
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
	it, err := s.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: kv.PrefixEnd([]byte(prefix))})
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
