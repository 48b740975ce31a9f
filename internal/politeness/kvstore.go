package politeness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// Buckets of the embedded store used by this package.
const (
	kvRobotsBucket = "politeness/robots/"
	kvDelaysBucket = "politeness/delays/"
)

// maxEntryBytes bounds a stored entry read back (two bodies of at most
// robots.MaxSize, base64 in JSON, plus fields), so a corrupt store cannot
// make us allocate without limit.
const maxEntryBytes = 3*robots.MaxSize + 64<<10

// KVRobotsStore is the embedded RobotsStore: robots.txt results survive a
// restart. Writes are not synced (it is a cache: a crash loses at most a
// refetch).
type KVRobotsStore struct {
	b *kv.Bucket
}

// NewKVRobotsStore returns a RobotsStore in db's "politeness/robots/"
// bucket.
func NewKVRobotsStore(db *kv.DB) *KVRobotsStore {
	return &KVRobotsStore{b: db.Bucket(kvRobotsBucket)}
}

// GetRobots implements RobotsStore.
func (s *KVRobotsStore) GetRobots(ctx context.Context, origin string) (RobotsEntry, error) {
	if err := ctx.Err(); err != nil {
		return RobotsEntry{}, err
	}
	v, err := s.b.Get([]byte(origin))
	if errors.Is(err, kv.ErrNotFound) {
		return RobotsEntry{}, ErrNotFound
	}
	if err != nil {
		return RobotsEntry{}, fmt.Errorf("politeness: robots store: %w", err)
	}
	return DecodeRobotsEntry(v)
}

// PutRobots implements RobotsStore.
func (s *KVRobotsStore) PutRobots(ctx context.Context, e RobotsEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := EncodeRobotsEntry(e)
	if err != nil {
		return err
	}
	if err := s.b.SetNoSync([]byte(e.Origin), v); err != nil {
		return fmt.Errorf("politeness: robots store: %w", err)
	}
	return nil
}

// DeleteRobots implements RobotsStore.
func (s *KVRobotsStore) DeleteRobots(ctx context.Context, origin string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.b.Delete([]byte(origin)); err != nil {
		return fmt.Errorf("politeness: robots store: %w", err)
	}
	return nil
}

// EncodeRobotsEntry encodes an entry for a store (JSON; bodies base64).
func EncodeRobotsEntry(e RobotsEntry) ([]byte, error) {
	if len(e.Body) > robots.MaxSize || len(e.Good) > robots.MaxSize {
		return nil, errors.New("politeness: robots entry body exceeds robots.MaxSize")
	}
	v, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("politeness: encoding robots entry: %w", err)
	}
	return v, nil
}

// EncodeDelayEntry encodes an entry for a store (JSON).
func EncodeDelayEntry(e DelayEntry) ([]byte, error) {
	v, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("politeness: encoding delay entry: %w", err)
	}
	return v, nil
}

// DecodeRobotsEntry decodes an entry stored by the kv or Redis store.
func DecodeRobotsEntry(v []byte) (RobotsEntry, error) {
	var e RobotsEntry
	if len(v) > maxEntryBytes {
		return e, fmt.Errorf("politeness: stored robots entry of %d bytes exceeds %d", len(v), maxEntryBytes)
	}
	if err := json.Unmarshal(v, &e); err != nil {
		return RobotsEntry{}, fmt.Errorf("politeness: decoding stored robots entry: %w", err)
	}
	if len(e.Body) > robots.MaxSize || len(e.Good) > robots.MaxSize || e.Failures < 0 {
		return RobotsEntry{}, errors.New("politeness: stored robots entry out of bounds")
	}
	return e, nil
}

// DecodeDelayEntry decodes an entry stored by the kv or Redis store.
func DecodeDelayEntry(v []byte) (DelayEntry, error) {
	var e DelayEntry
	if len(v) > 64<<10 {
		return e, fmt.Errorf("politeness: stored delay entry of %d bytes is too large", len(v))
	}
	if err := json.Unmarshal(v, &e); err != nil {
		return DelayEntry{}, fmt.Errorf("politeness: decoding stored delay entry: %w", err)
	}
	return e, nil
}

// KVDelayStore is the embedded DelayStore (durable writes: the operator's
// delays must survive a crash).
type KVDelayStore struct {
	db *kv.DB
	b  *kv.Bucket
}

// NewKVDelayStore returns a DelayStore in db's "politeness/delays/"
// bucket.
func NewKVDelayStore(db *kv.DB) *KVDelayStore {
	return &KVDelayStore{db: db, b: db.Bucket(kvDelaysBucket)}
}

// GetDelay implements DelayStore.
func (s *KVDelayStore) GetDelay(ctx context.Context, key string) (DelayEntry, error) {
	if err := ctx.Err(); err != nil {
		return DelayEntry{}, err
	}
	v, err := s.b.Get([]byte(key))
	if errors.Is(err, kv.ErrNotFound) {
		return DelayEntry{}, ErrNotFound
	}
	if err != nil {
		return DelayEntry{}, fmt.Errorf("politeness: delay store: %w", err)
	}
	return DecodeDelayEntry(v)
}

// PutDelay implements DelayStore.
func (s *KVDelayStore) PutDelay(ctx context.Context, e DelayEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := EncodeDelayEntry(e)
	if err != nil {
		return err
	}
	if err := s.b.Set([]byte(e.Key), v); err != nil {
		return fmt.Errorf("politeness: delay store: %w", err)
	}
	return nil
}

// DeleteDelay implements DelayStore.
func (s *KVDelayStore) DeleteDelay(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.b.Delete([]byte(key)); err != nil {
		return fmt.Errorf("politeness: delay store: %w", err)
	}
	return nil
}

// ListDelays implements DelayStore. It seeks straight to after (kv.Bucket
// can only scan whole prefixes, so this uses Pebble's iterator).
func (s *KVDelayStore) ListDelays(ctx context.Context, after string, limit int) ([]DelayEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit = ListLimit(limit)
	prefix := []byte(kvDelaysBucket)
	lower := append(append(bytes.Clone(prefix), after...), 0)
	if after == "" {
		lower = prefix
	}
	upper := append(bytes.Clone(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1)
	it, err := s.db.Pebble().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("politeness: delay store: %w", err)
	}
	var out []DelayEntry
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("politeness: delay store: %w", err)
		}
		e, err := DecodeDelayEntry(v)
		if err != nil {
			it.Close()
			return nil, err
		}
		out = append(out, e)
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("politeness: delay store: %w", err)
	}
	return out, nil
}
