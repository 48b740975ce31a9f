// Options: the cache's bounds and policy.

package httpcache

import "errors"

// DefaultPrefix is the kv key prefix (bucket) the cache uses by default.
const DefaultPrefix = "httpcache/"

// MaxVaryFields is how many Vary field names a storable response may list.
const MaxVaryFields = 16

// Options tunes a Cache. The zero value is ready to use.
type Options struct {
	// Policy is the RFC 9111 policy; its zero value includes the thesis
	// override (the polite-proxy thesis §4.6).
	Policy Policy
	// MaxBytes bounds the stored entries (encoded size, bytes); past it the
	// least recently used are evicted. 0 means 256 MiB.
	MaxBytes int64
	// MemoryBytes bounds the in-memory tier of hot entries (bytes); 0 means
	// 32 MiB, negative disables it.
	MemoryBytes int64
	// MaxEntryBytes is the largest body stored (bytes); larger responses are
	// passed through uncached. 0 means 8 MiB.
	MaxEntryBytes int64
	// MaxVariants bounds the variants kept per method and URL (different
	// Vary values or content types); the oldest is dropped. 0 means 4.
	MaxVariants int
	// Prefix is the kv key prefix; "" means DefaultPrefix.
	Prefix string
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	switch {
	case o.MaxBytes < 0:
		return errors.New("httpcache: MaxBytes must not be negative")
	case o.MaxEntryBytes < 0:
		return errors.New("httpcache: MaxEntryBytes must not be negative")
	case o.MaxVariants < 0:
		return errors.New("httpcache: MaxVariants must not be negative")
	case o.Policy.OverrideLifetime < 0 || o.Policy.HeuristicMax < 0 || o.Policy.HeuristicDefault < 0:
		return errors.New("httpcache: lifetimes must not be negative")
	case o.Policy.HeuristicFraction > 1:
		return errors.New("httpcache: HeuristicFraction must be at most 1")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxBytes == 0 {
		o.MaxBytes = 256 << 20
	}
	if o.MemoryBytes == 0 {
		o.MemoryBytes = 32 << 20
	}
	if o.MaxEntryBytes == 0 {
		o.MaxEntryBytes = 8 << 20
	}
	if o.MaxVariants == 0 {
		o.MaxVariants = 4
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	return o
}
