// The encoding of the metadata records from which Open rebuilds the index.

package httpcache

import (
	"encoding/binary"
	"fmt"
)

// metaVersion is the layout of the metadata records: 2 added the data
// record number; 3 to 5 have the same layout, and mark caches written
// since the override was refused to requests with credentials
// (override.go), since a response to a request with cookies or
// credentials is a variant of them, and since a compressed response is a
// variant of the request's Accept-Encoding (implicitVary). Records of
// earlier versions are dropped at Open as corrupt, with their data
// records: those of version 1 had data keyed by variant key, those of
// versions 2 to 4 may hold a page fetched with one user's cookie or
// credentials that any other user would be served, or a compressed page
// that a client unable to read it would be served.
const metaVersion = 5

// encodeMeta serializes the index record of v (without its key).
func encodeMeta(v *variant) []byte { return appendMeta(nil, v) }

// appendMeta appends the index record of v to b.
func appendMeta(b []byte, v *variant) []byte {
	b = append(b, metaVersion)
	b = appendString(b, v.pk)
	b = appendString(b, v.mediaType)
	b = binary.AppendUvarint(b, uint64(v.size))
	b = binary.AppendVarint(b, v.storedAt)
	b = binary.AppendUvarint(b, v.seq)
	b = binary.AppendUvarint(b, uint64(len(v.varyNames)))
	for i := range v.varyNames {
		b = appendString(b, v.varyNames[i])
		b = appendString(b, v.varyValues[i])
	}
	return b
}

func decodeMeta(raw []byte) (*variant, error) {
	d := decoder{b: raw}
	if ver := d.byte(); ver != metaVersion {
		return nil, fmt.Errorf("%w: meta version %d", errCorrupt, ver)
	}
	v := &variant{}
	v.pk = d.string()
	v.mediaType = d.string()
	v.size = int64(d.uvarint(1 << 40))
	v.storedAt = d.varint()
	v.seq = d.uvarint(1<<64 - 1)
	n := int(d.uvarint(MaxVaryFields))
	for i := 0; i < n && d.err == nil; i++ {
		v.varyNames = append(v.varyNames, d.string())
		v.varyValues = append(v.varyValues, d.string())
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: meta trailing bytes", errCorrupt)
	}
	if d.err != nil {
		return nil, d.err
	}
	return v, nil
}
