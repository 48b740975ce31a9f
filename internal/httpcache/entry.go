package httpcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Entry is one stored response variant. An Entry is immutable once
// returned by the Cache: the proxy writes Header and Body to many clients
// at once. Freshen replaces an entry rather than changing it.
type Entry struct {
	Method string // request method the entry answers ("GET")
	URL    string // absolute request URL as received
	Status int
	// Header holds the end-to-end response header fields as stored (hop-by-
	// hop fields are removed by the proxy before Store).
	Header http.Header
	Body   []byte

	RequestTime  time.Time // when the request that fetched it was sent
	ResponseTime time.Time // when the response was received

	// MediaType is the lower-cased Content-Type without parameters, "" if
	// none: the polite-proxy thesis §5.4 part of the key.
	MediaType string
	// VaryNames are the canonical names of the response's Vary fields and
	// VaryValues the request's normalized values of them (RFC 9111 §4.1).
	VaryNames  []string
	VaryValues []string

	// Derived when the entry is created or loaded, from Header and the
	// cache's Policy.
	Control    Directives    // response Cache-Control
	Overridden bool          // stored only thanks to the thesis override
	Lifetime   time.Duration // freshness lifetime (§4.2.1)
	InitialAge time.Duration // corrected initial age (§4.2.3)
}

// Age returns the current age of the entry at now (RFC 9111 §4.2.3).
func (e *Entry) Age(now time.Time) time.Duration {
	return e.InitialAge + max(0, now.Sub(e.ResponseTime))
}

// derive fills the fields computed from Header under p.
func (e *Entry) derive(p Policy) { e.deriveWith(p, ParseCacheControl(e.Header).forStatus(e.Status)) }

// deriveWith is derive with the response Cache-Control already parsed
// (Store has parsed it to decide storability).
func (e *Entry) deriveWith(p Policy, cc Directives) {
	e.Control = cc
	e.Overridden = Overridden(e.Control, p)
	e.Lifetime = Lifetime(e.Status, e.Header, e.Control, e.ResponseTime, p)
	e.InitialAge = InitialAge(e.Header, e.RequestTime, e.ResponseTime)
}

// Encoding limits: a record read back from disk must not make the decoder
// allocate without bound, whatever bytes it holds.
const (
	encVersion     = 1
	maxEncFields   = 1024
	maxEncString   = 1 << 20
	maxEncBodySize = 1 << 30
)

var errCorrupt = errors.New("httpcache: corrupt record")

// encodeEntry serializes e. The layout is version, strings and varints;
// see decodeEntry.
func encodeEntry(e *Entry) []byte {
	return appendEntry(make([]byte, 0, entrySize(e)), e)
}

// entrySize is len(encodeEntry(e)), computed without encoding, so that the
// index can account an entry on the request path while the writer
// goroutine encodes it later.
func entrySize(e *Entry) int {
	n := 1 + stringSize(e.Method) + stringSize(e.URL) + uvarintSize(uint64(e.Status)) +
		varintSize(e.RequestTime.UnixNano()) + varintSize(e.ResponseTime.UnixNano()) +
		stringSize(e.MediaType) + uvarintSize(uint64(len(e.VaryNames)))
	for i := range e.VaryNames {
		n += stringSize(e.VaryNames[i]) + stringSize(e.VaryValues[i])
	}
	n += uvarintSize(uint64(len(e.Header)))
	for k, vs := range e.Header {
		n += stringSize(k) + uvarintSize(uint64(len(vs)))
		for _, v := range vs {
			n += stringSize(v)
		}
	}
	return n + uvarintSize(uint64(len(e.Body))) + len(e.Body)
}

func uvarintSize(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// varintSize is the length of binary.AppendVarint's zig-zag encoding.
func varintSize(x int64) int {
	ux := uint64(x) << 1
	if x < 0 {
		ux = ^ux
	}
	return uvarintSize(ux)
}

func stringSize(s string) int { return uvarintSize(uint64(len(s))) + len(s) }

// appendEntry appends the encoding of e to b.
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, encVersion)
	b = appendString(b, e.Method)
	b = appendString(b, e.URL)
	b = binary.AppendUvarint(b, uint64(e.Status))
	b = binary.AppendVarint(b, e.RequestTime.UnixNano())
	b = binary.AppendVarint(b, e.ResponseTime.UnixNano())
	b = appendString(b, e.MediaType)
	b = binary.AppendUvarint(b, uint64(len(e.VaryNames)))
	for i := range e.VaryNames {
		b = appendString(b, e.VaryNames[i])
		b = appendString(b, e.VaryValues[i])
	}
	b = binary.AppendUvarint(b, uint64(len(e.Header)))
	for k, vs := range e.Header {
		b = appendString(b, k)
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = appendString(b, v)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(e.Body)))
	return append(b, e.Body...)
}

// decodeEntry parses a record written by encodeEntry and derives its
// freshness under p. Any inconsistency gives an error wrapping errCorrupt.
func decodeEntry(b []byte, p Policy) (*Entry, error) {
	d := decoder{b: b}
	if v := d.byte(); v != encVersion {
		return nil, fmt.Errorf("%w: version %d", errCorrupt, v)
	}
	e := &Entry{}
	e.Method = d.string()
	e.URL = d.string()
	e.Status = int(d.uvarint(999))
	e.RequestTime = time.Unix(0, d.varint())
	e.ResponseTime = time.Unix(0, d.varint())
	e.MediaType = d.string()
	nv := int(d.uvarint(maxEncFields))
	for i := 0; i < nv && d.err == nil; i++ {
		e.VaryNames = append(e.VaryNames, d.string())
		e.VaryValues = append(e.VaryValues, d.string())
	}
	nh := int(d.uvarint(maxEncFields))
	e.Header = make(http.Header, nh)
	for i := 0; i < nh && d.err == nil; i++ {
		k := d.string()
		nvals := int(d.uvarint(maxEncFields))
		vs := make([]string, 0, min(nvals, 16))
		for j := 0; j < nvals && d.err == nil; j++ {
			vs = append(vs, d.string())
		}
		e.Header[k] = vs
	}
	bl := int(d.uvarint(maxEncBodySize))
	e.Body = d.bytes(bl)
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	e.derive(p)
	return e, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads a record, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", errCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("version")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint(limit uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.fail("count")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("time")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail("length")
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) string() string {
	n := d.uvarint(maxEncString)
	return string(d.bytes(int(n)))
}
