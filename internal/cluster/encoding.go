package cluster

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// hashLen is the length of a URL hash: 128 bits, so that a billion URLs
// in one queue still collide with probability below 10^-20.
const hashLen = 16

func hashURL(u string) string {
	s := sha256.Sum256([]byte(u))
	return string(s[:hashLen])
}

// Limits of decodeData, so that a corrupt record cannot make it allocate
// without bound.
const (
	maxDataURL      = 1 << 20
	maxDataEntries  = 4096
	maxDataValueLen = 1 << 20
)

var errData = errors.New("cluster: corrupt URL data")

// encodeData encodes a URL and its metadata (the opaque tail of a URL
// record): uvarint length and bytes of the URL, uvarint count of keys,
// then per key its length and bytes, uvarint count of values and each
// value's length and bytes. Keys are written in sorted order.
func encodeData(url string, md map[string][]string) []byte {
	b := make([]byte, 0, len(url)+8)
	b = binary.AppendUvarint(b, uint64(len(url)))
	b = append(b, url...)
	b = binary.AppendUvarint(b, uint64(len(md)))
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		vs := md[k]
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	return b
}

// decodeData reverses encodeData; bad input is an error, never a panic.
func decodeData(b []byte) (string, map[string][]string, error) {
	d := decoder{b: b}
	url := d.str(maxDataURL)
	n := d.uvarint(maxDataEntries)
	var md map[string][]string
	if n > 0 && d.err == nil {
		md = make(map[string][]string, n)
	}
	total := 0
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.str(maxDataValueLen)
		nv := d.uvarint(maxDataEntries)
		total += int(nv)
		if total > maxDataEntries {
			d.err = fmt.Errorf("%w: more than %d metadata values", errData, maxDataEntries)
			break
		}
		vs := make([]string, 0, min(nv, 64))
		for j := uint64(0); j < nv && d.err == nil; j++ {
			vs = append(vs, d.str(maxDataValueLen))
		}
		md[k] = vs
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errData, len(d.b))
	}
	if d.err != nil {
		return "", nil, d.err
	}
	return url, md, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint(limit uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", errData)
		return 0
	}
	if v > limit {
		d.err = fmt.Errorf("%w: %d over the limit %d", errData, v, limit)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str(limit uint64) string {
	n := d.uvarint(limit)
	if d.err != nil {
		return ""
	}
	if uint64(len(d.b)) < n {
		d.err = fmt.Errorf("%w: string of %d bytes, %d left", errData, n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// tagEscape makes s safe inside a Redis Cluster hash tag: the tag ends at
// the first '}', so '}' and the escape character itself are
// percent-encoded, and so is the field separator.
func tagEscape(s string) string {
	if !strings.ContainsAny(s, "%}\x1f") {
		return s
	}
	r := strings.NewReplacer("%", "%25", "}", "%7D", "\x1f", "%1F")
	return r.Replace(s)
}

// metadataSize is the encoded size of md without the URL.
func metadataSize(md map[string][]string) int {
	n := 0
	for k, vs := range md {
		n += len(k) + 10
		for _, v := range vs {
			n += len(v) + 5
		}
	}
	return n
}
