package fetch

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/courtesy-crawler/courtesy/internal/addrpolicy"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// dnsCache is a size-bounded LRU of lookups with a TTL, and a negative TTL
// for failures. Concurrent lookups of one name share one query.
type dnsCache struct {
	lookup LookupFunc
	ttl    time.Duration // <= 0: no caching of answers
	negTTL time.Duration // <= 0: no caching of failures
	size   int
	now    func() time.Time // time.Now; tests inject a clock
	group  singleflight.Group

	mu struct {
		sync.Mutex
		lru     *list.List // of *dnsEntry, most recent first
		entries map[string]*list.Element
		hits    uint64
		misses  uint64
	}
}

type dnsEntry struct {
	host    string
	addrs   []netip.Addr
	err     error
	expires time.Time
}

func newDNSCache(lookup LookupFunc, ttl, negTTL time.Duration, size int) *dnsCache {
	c := &dnsCache{lookup: lookup, ttl: ttl, negTTL: negTTL, size: size, now: time.Now}
	c.mu.lru = list.New()
	c.mu.entries = make(map[string]*list.Element)
	return c
}

// Lookup returns the addresses of host, from the cache when fresh.
func (c *dnsCache) Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if addrs, err, ok := c.get(host); ok {
		return addrs, err
	}
	// The shared query must not die with the first caller's context, but
	// it must not outlive every caller either: it runs under a context
	// without cancellation but with the first caller's deadline.
	v, err, _ := c.group.Do(host, func() (any, error) {
		lctx := context.WithoutCancel(ctx)
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			lctx, cancel = context.WithDeadline(lctx, d)
			defer cancel()
		}
		addrs, err := c.lookup(lctx, host)
		if err == nil && len(addrs) == 0 {
			err = errors.New("no addresses")
		}
		c.put(host, addrs, err)
		return addrs, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]netip.Addr), nil
}

func (c *dnsCache) get(host string) ([]netip.Addr, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.mu.entries[host]
	if !ok {
		c.mu.misses++
		return nil, nil, false
	}
	e := el.Value.(*dnsEntry)
	if !c.now().Before(e.expires) {
		c.mu.lru.Remove(el)
		delete(c.mu.entries, host)
		c.mu.misses++
		return nil, nil, false
	}
	c.mu.lru.MoveToFront(el)
	c.mu.hits++
	return e.addrs, e.err, true
}

func (c *dnsCache) put(host string, addrs []netip.Addr, err error) {
	ttl := c.ttl
	if err != nil {
		ttl = c.negTTL
		var de *net.DNSError
		if errors.As(err, &de) && de.IsTimeout || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return // a slow or abandoned query says nothing about the name
		}
	}
	if ttl <= 0 || c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &dnsEntry{host: host, addrs: addrs, err: err, expires: c.now().Add(ttl)}
	if el, ok := c.mu.entries[host]; ok {
		el.Value = e
		c.mu.lru.MoveToFront(el)
		return
	}
	c.mu.entries[host] = c.mu.lru.PushFront(e)
	for c.mu.lru.Len() > c.size {
		old := c.mu.lru.Back()
		c.mu.lru.Remove(old)
		delete(c.mu.entries, old.Value.(*dnsEntry).host)
	}
}

// stats returns the hit and miss counts.
func (c *dnsCache) stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.hits, c.mu.misses
}

// dialer connects to "host:port": --resolve rules first, then the DNS
// cache, then each address the policy allows in turn until one connects.
type dialer struct {
	net      net.Dialer
	resolver *resolve.Resolver
	cache    *dnsCache
	policy   addrpolicy.Policy
}

func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	policy := d.policy
	if to, ok := d.resolver.Lookup(addr); ok {
		addr, policy = to, addrpolicy.All
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &dialError{err}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := policy.Check(ip); err != nil {
			return nil, err
		}
		return d.dial(ctx, network, netip.AddrPortFrom(ip, 0), port)
	}
	// One deadline for lookup and connect together.
	ctx, cancel := context.WithTimeout(ctx, d.net.Timeout)
	defer cancel()
	addrs, err := d.cache.Lookup(ctx, host)
	if err != nil {
		return nil, &dnsError{host: host, err: err}
	}
	var first error
	for _, a := range addrs {
		if err := policy.Check(a); err != nil {
			if first == nil {
				first = fmt.Errorf("%s: %w", host, err)
			}
			continue
		}
		c, err := d.dial(ctx, network, netip.AddrPortFrom(a, 0), port)
		if err == nil {
			return c, nil
		}
		if first == nil || errors.Is(first, addrpolicy.ErrRefused) {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

func (d *dialer) dial(ctx context.Context, network string, ap netip.AddrPort, port string) (net.Conn, error) {
	c, err := d.net.DialContext(ctx, network, net.JoinHostPort(ap.Addr().Unmap().String(), port))
	if err != nil {
		return nil, &dialError{err}
	}
	return c, nil
}
