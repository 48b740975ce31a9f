package frontier

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Key layout; see doc.go.
const (
	prefixCrawl = "F/c/"
	prefixQueue = "F/k/"
	prefixURL   = "F/u/"
	prefixEntry = "F/q/"
	prefixDone  = "F/d/"
)

// hashLen is the size of a URL hash: 128 bits keep the collision odds for
// 100 M URLs near 10⁻²³ while keeping the seen-test key at 20 bytes.
const hashLen = 16

type urlHash [hashLen]byte

// hashURL returns the 128-bit hash of a URL. SHA-256 (truncated) rather than
// a fast non-cryptographic hash because URLs come from strangers, who could
// otherwise craft collisions that hide pages from the crawl.
func hashURL(u string) urlHash {
	sum := sha256.Sum256([]byte(u))
	var h urlHash
	copy(h[:], sum[:hashLen])
	return h
}

var errCorrupt = errors.New("frontier: corrupt record")

func crawlKey(name string) []byte {
	return append([]byte(prefixCrawl), name...)
}

func queueKey(cid uint32, key string) []byte {
	b := make([]byte, 0, len(prefixQueue)+4+len(key))
	b = append(b, prefixQueue...)
	b = binary.BigEndian.AppendUint32(b, cid)
	return append(b, key...)
}

func urlKey(cid uint32, h urlHash) []byte {
	b := make([]byte, 0, len(prefixURL)+4+hashLen)
	b = append(b, prefixURL...)
	b = binary.BigEndian.AppendUint32(b, cid)
	return append(b, h[:]...)
}

// doneKey is the key of a completed URL's entry (URL and metadata, for
// ListURLs): F/d/<crawl id><queue id><hash>.
func doneKey(cid, qid uint32, h urlHash) []byte {
	return append(donePrefix(cid, qid), h[:]...)
}

func donePrefix(cid, qid uint32) []byte {
	b := make([]byte, 0, len(prefixDone)+8+hashLen)
	b = append(b, prefixDone...)
	b = binary.BigEndian.AppendUint32(b, cid)
	return binary.BigEndian.AppendUint32(b, qid)
}

// entryPos is where a queued URL sits in its queue: the sort key.
type entryPos struct {
	due   int64 // unix nanoseconds; 0 = as soon as possible
	prio  int8  // higher first
	depth uint16
	seq   uint64
}

func entryPrefix(cid, qid uint32) []byte {
	b := make([]byte, 0, len(prefixEntry)+8)
	b = append(b, prefixEntry...)
	b = binary.BigEndian.AppendUint32(b, cid)
	return binary.BigEndian.AppendUint32(b, qid)
}

const entryKeyLen = len(prefixEntry) + 4 + 4 + 8 + 1 + 2 + 8

func entryKey(cid, qid uint32, p entryPos) []byte {
	b := make([]byte, 0, entryKeyLen)
	b = append(b, prefixEntry...)
	b = binary.BigEndian.AppendUint32(b, cid)
	b = binary.BigEndian.AppendUint32(b, qid)
	b = binary.BigEndian.AppendUint64(b, uint64(max(p.due, 0)))
	b = append(b, byte(127-int(p.prio)))
	b = binary.BigEndian.AppendUint16(b, p.depth)
	return binary.BigEndian.AppendUint64(b, p.seq)
}

func decodeEntryKey(k []byte) (entryPos, error) {
	if len(k) != entryKeyLen {
		return entryPos{}, errCorrupt
	}
	k = k[len(prefixEntry)+8:]
	return entryPos{
		due:   int64(binary.BigEndian.Uint64(k[0:8])),
		prio:  int8(127 - int(k[8])),
		depth: binary.BigEndian.Uint16(k[9:11]),
		seq:   binary.BigEndian.Uint64(k[11:19]),
	}, nil
}

// URL states stored in the URL record.
const (
	stateQueued    = 1
	stateCompleted = 2
)

// urlRecord is the value under F/u/. It does not hold the URL: whoever
// asks about a URL (Lookup, Put) knows it, and the queue entry holds it for
// Get. Leaving it out halves the bytes the seen-test keys carry through
// every compaction. Format 1 (before 2026-11-22) appended the URL; it is
// still read, the URL ignored.
type urlRecord struct {
	state   byte
	qid     uint32
	pos     entryPos // meaningful when queued
	created int64    // unix seconds
}

// urlRecordVersion is the format written.
const urlRecordVersion = 2

func (r *urlRecord) encode() []byte {
	b := make([]byte, 0, 32)
	b = append(b, urlRecordVersion, r.state)
	b = binary.AppendUvarint(b, uint64(r.qid))
	b = binary.AppendVarint(b, r.pos.due)
	b = append(b, byte(r.pos.prio))
	b = binary.AppendUvarint(b, uint64(r.pos.depth))
	b = binary.AppendUvarint(b, r.pos.seq)
	return binary.AppendVarint(b, r.created)
}

func decodeURLRecord(b []byte) (urlRecord, error) {
	var r urlRecord
	d := decoder{b: b}
	version := d.byte()
	if version != 1 && version != urlRecordVersion {
		return r, errCorrupt
	}
	r.state = d.byte()
	r.qid = uint32(d.uvarint(math.MaxUint32))
	r.pos.due = d.varint()
	r.pos.prio = int8(d.byte())
	r.pos.depth = uint16(d.uvarint(math.MaxUint16))
	r.pos.seq = d.uvarint(math.MaxUint64)
	r.created = d.varint()
	if version == 1 {
		d.rest() // the URL of format 1
	}
	if d.err != nil || len(d.b) != 0 || (r.state != stateQueued && r.state != stateCompleted) {
		return urlRecord{}, errCorrupt
	}
	return r, nil
}

// entry is a decoded queue entry (the value under F/q/).
type entry struct {
	hash urlHash
	url  string
	md   map[string][]string
	// created is the URL's creation time (unix seconds), a copy of the
	// URL record's, valid when hasCreated is set. With it and the entry's
	// key, a lease knows the URL record without reading it, so the ack of
	// a leased URL costs no lookup (see commitGroup). Entries written
	// before 2026-11-22 do not carry it.
	created    int64
	hasCreated bool
}

// entryTagCreated starts the optional trailer of a queue entry that holds
// the URL's creation time. An entry written by an older build ends right
// after its metadata; any other trailer is corrupt.
const entryTagCreated = 1

// encodeEntry encodes the value under F/q/: hash, URL, metadata, then the
// trailer with the creation time (unix seconds).
func encodeEntry(h urlHash, url string, md map[string][]string, created int64) []byte {
	n := hashLen + 8 + len(url) + 1 + binary.MaxVarintLen64
	for k, vs := range md {
		n += len(k) + 4
		for _, v := range vs {
			n += len(v) + 2
		}
	}
	b := make([]byte, 0, n)
	b = append(b, h[:]...)
	b = binary.AppendUvarint(b, uint64(len(url)))
	b = append(b, url...)
	b = appendMetadata(b, md)
	b = append(b, entryTagCreated)
	return binary.AppendVarint(b, created)
}

// decodeEntry decodes a queue entry of either format: with the created
// trailer (written since 2026-11-22) or without (older builds).
func decodeEntry(b []byte) (entry, error) {
	var e entry
	if len(b) < hashLen {
		return entry{}, errCorrupt
	}
	copy(e.hash[:], b)
	d := decoder{b: b[hashLen:]}
	e.url = string(d.bytes())
	e.md = d.metadata()
	if d.err == nil && len(d.b) > 0 {
		if d.byte() != entryTagCreated {
			d.fail()
		}
		e.created = d.varint()
		e.hasCreated = true
	}
	if d.err != nil || len(d.b) != 0 {
		return entry{}, errCorrupt
	}
	return e, nil
}

// checkEntry checks a queue entry as decodeEntry does, without
// allocating, and returns its creation time (Get checks under the lock,
// and decodes after it).
func checkEntry(b []byte) (created int64, hasCreated bool, err error) {
	if len(b) < hashLen {
		return 0, false, errCorrupt
	}
	d := decoder{b: b[hashLen:]}
	d.bytes()
	d.skipMetadata()
	if d.err == nil && len(d.b) > 0 {
		if d.byte() != entryTagCreated {
			d.fail()
		}
		created = d.varint()
		hasCreated = true
	}
	if d.err != nil || len(d.b) != 0 {
		return 0, false, errCorrupt
	}
	return created, hasCreated, nil
}

func appendMetadata(b []byte, md map[string][]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(md)))
	for k, vs := range md {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	return b
}

func metadataSize(md map[string][]string) int {
	n := 0
	for k, vs := range md {
		n += len(k) + 2
		for _, v := range vs {
			n += len(v) + 2
		}
	}
	return n
}

// queueRecord is the value under F/k/.
type queueRecord struct {
	qid       uint32
	queued    uint64 // non-completed URLs (including leased)
	completed uint64
	delay     int64 // nanoseconds; -1 = use the default
	blocked   int64 // unix nanoseconds
	limit     uint64
	retired   string // non-empty: reason the queue was retired
}

func (r *queueRecord) encode() []byte {
	b := make([]byte, 0, 48+len(r.retired))
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(r.qid))
	b = binary.AppendUvarint(b, r.queued)
	b = binary.AppendUvarint(b, r.completed)
	b = binary.AppendVarint(b, r.delay)
	b = binary.AppendVarint(b, r.blocked)
	b = binary.AppendUvarint(b, r.limit)
	return append(b, r.retired...)
}

func decodeQueueRecord(b []byte) (queueRecord, error) {
	var r queueRecord
	d := decoder{b: b}
	if d.byte() != 1 {
		return r, errCorrupt
	}
	r.qid = uint32(d.uvarint(math.MaxUint32))
	r.queued = d.uvarint(math.MaxUint64)
	r.completed = d.uvarint(math.MaxUint64)
	r.delay = d.varint()
	r.blocked = d.varint()
	r.limit = d.uvarint(math.MaxUint64)
	r.retired = string(d.rest())
	if d.err != nil {
		return queueRecord{}, errCorrupt
	}
	return r, nil
}

// crawlRecord is the value under F/c/.
type crawlRecord struct {
	cid     uint32
	nextQID uint32
}

func (r crawlRecord) encode() []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(r.cid))
	return binary.AppendUvarint(b, uint64(r.nextQID))
}

func decodeCrawlRecord(b []byte) (crawlRecord, error) {
	d := decoder{b: b}
	if d.byte() != 1 {
		return crawlRecord{}, errCorrupt
	}
	r := crawlRecord{cid: uint32(d.uvarint(math.MaxUint32)), nextQID: uint32(d.uvarint(math.MaxUint32))}
	if d.err != nil || len(d.b) != 0 {
		return crawlRecord{}, errCorrupt
	}
	return r, nil
}

// decoder reads the formats above; the first error sticks and later reads
// return zero values, so callers check err once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint(uint64(len(d.b)))
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) rest() []byte {
	v := d.b
	d.b = nil
	return v
}

// maxMetadataEntries bounds what a corrupt or hostile record can make the
// decoder allocate.
const maxMetadataEntries = 4096

func (d *decoder) metadata() map[string][]string {
	n := d.uvarint(maxMetadataEntries)
	if d.err != nil || n == 0 {
		return nil
	}
	md := make(map[string][]string, n)
	for range n {
		k := string(d.bytes())
		nv := d.uvarint(maxMetadataEntries)
		if d.err != nil {
			return nil
		}
		vs := make([]string, 0, nv)
		for range nv {
			vs = append(vs, string(d.bytes()))
		}
		if d.err != nil {
			return nil
		}
		md[k] = vs
	}
	return md
}

// skipMetadata reads past what metadata would decode, failing where it
// would.
func (d *decoder) skipMetadata() {
	n := d.uvarint(maxMetadataEntries)
	for i := uint64(0); i < n && d.err == nil; i++ {
		d.bytes()
		nv := d.uvarint(maxMetadataEntries)
		for j := uint64(0); j < nv && d.err == nil; j++ {
			d.bytes()
		}
	}
}

func corrupt(what string, err error) error {
	return fmt.Errorf("frontier: %s: %w", what, err)
}
