package warc

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Type is a record's WARC-Type (WARC 1.1 §6).
type Type string

// Record types this package writes. Reader accepts any type.
const (
	TypeWarcinfo     Type = "warcinfo"
	TypeRequest      Type = "request"
	TypeResponse     Type = "response"
	TypeMetadata     Type = "metadata"
	TypeRevisit      Type = "revisit"
	TypeResource     Type = "resource"
	TypeConversion   Type = "conversion"
	TypeContinuation Type = "continuation"
)

// WARC-Truncated reasons (WARC 1.1 §5.13).
const (
	TruncatedLength      = "length"      // the fetcher's size cap was hit
	TruncatedTime        = "time"        // the fetcher's time limit was hit
	TruncatedDisconnect  = "disconnect"  // the server closed the connection early
	TruncatedUnspecified = "unspecified" // some other reason
)

// ProfileIdenticalPayload is the revisit profile of a record whose payload
// equals one already archived (WARC 1.1 §6.7.2).
const ProfileIdenticalPayload = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"

// Content types of the blocks this package writes.
const (
	ContentTypeRequest  = "application/http;msgtype=request"
	ContentTypeResponse = "application/http;msgtype=response"
	ContentTypeFields   = "application/warc-fields"
)

// Named header fields (WARC 1.1 §5).
const (
	HeaderType           = "WARC-Type"
	HeaderRecordID       = "WARC-Record-ID"
	HeaderDate           = "WARC-Date"
	HeaderContentLength  = "Content-Length"
	HeaderContentType    = "Content-Type"
	HeaderTargetURI      = "WARC-Target-URI"
	HeaderIPAddress      = "WARC-IP-Address"
	HeaderConcurrentTo   = "WARC-Concurrent-To"
	HeaderWarcinfoID     = "WARC-Warcinfo-ID"
	HeaderBlockDigest    = "WARC-Block-Digest"
	HeaderPayloadDigest  = "WARC-Payload-Digest"
	HeaderTruncated      = "WARC-Truncated"
	HeaderProfile        = "WARC-Profile"
	HeaderRefersTo       = "WARC-Refers-To"
	HeaderRefersToURI    = "WARC-Refers-To-Target-URI"
	HeaderRefersToDate   = "WARC-Refers-To-Date"
	HeaderFilename       = "WARC-Filename"
	HeaderIdentifiedType = "WARC-Identified-Payload-Type"
	HeaderSegmentNumber  = "WARC-Segment-Number"
)

// Field is one named field of a WARC header or of an application/warc-fields
// block.
type Field struct {
	Name  string
	Value string
}

// Header is a record's named fields in order. Names compare
// case-insensitively (WARC 1.1 §4). The zero value is empty and usable.
type Header struct {
	// Version is the version line without "WARC/" ("1.1", "1.0"); empty
	// means 1.1 when writing.
	Version string
	// Fields in the order they are written or were read.
	Fields []Field
}

// Get returns the first value of name, or "".
func (h *Header) Get(name string) string {
	for _, f := range h.Fields {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Has reports whether name is present.
func (h *Header) Has(name string) bool {
	for _, f := range h.Fields {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// Set replaces every value of name with value, keeping the position of the
// first one, or appends it.
func (h *Header) Set(name, value string) {
	out := h.Fields[:0]
	done := false
	for _, f := range h.Fields {
		if strings.EqualFold(f.Name, name) {
			if done {
				continue
			}
			f.Value, done = value, true
		}
		out = append(out, f)
	}
	h.Fields = out
	if !done {
		h.Fields = append(h.Fields, Field{Name: name, Value: value})
	}
}

// Add appends a field, keeping existing ones (WARC-Concurrent-To may repeat).
func (h *Header) Add(name, value string) {
	h.Fields = append(h.Fields, Field{Name: name, Value: value})
}

// Del removes every value of name.
func (h *Header) Del(name string) {
	out := h.Fields[:0]
	for _, f := range h.Fields {
		if !strings.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	h.Fields = out
}

// Type returns WARC-Type.
func (h *Header) Type() Type { return Type(h.Get(HeaderType)) }

// RecordID returns WARC-Record-ID, angle brackets included.
func (h *Header) RecordID() string { return h.Get(HeaderRecordID) }

// TargetURI returns WARC-Target-URI.
func (h *Header) TargetURI() string { return h.Get(HeaderTargetURI) }

// Date parses WARC-Date.
func (h *Header) Date() (time.Time, error) { return ParseDate(h.Get(HeaderDate)) }

// Record is one WARC record with its block in memory. The fetcher caps
// bodies (the Viuva Negra report §6: 2 MB by default), so records fit in memory.
type Record struct {
	Header Header
	// Block is the content block; Content-Length is its length.
	Block []byte
	// tail, when set, is the rest of the content block after Block
	// (WriteExchange's response body after its HTTP header: written
	// without first copying both into one slice).
	tail []byte
}

// errBadField rejects field names and values that would corrupt the header.
var errBadField = errors.New("warc: field name or value contains CR, LF or an invalid name")

// appendHeader appends the serialized header (version line, fields,
// blank line) to dst.
func appendHeader(dst []byte, h *Header) ([]byte, error) {
	v := h.Version
	if v == "" {
		v = "1.1"
	}
	dst = append(append(append(dst, "WARC/"...), v...), "\r\n"...)
	for _, f := range h.Fields {
		if !validName(f.Name) || strings.ContainsAny(f.Value, "\r\n") {
			return dst, fmt.Errorf("%w: %q", errBadField, f.Name)
		}
		dst = append(append(append(append(dst, f.Name...), ": "...), f.Value...), "\r\n"...)
	}
	return append(dst, "\r\n"...), nil
}

// validName reports whether s is an RFC 9110 token, as WARC 1.1 §4 requires
// for field names.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenChar[s[i]] {
			return false
		}
	}
	return true
}

// tokenChar marks the RFC 9110 tchar bytes: visible ASCII but the
// delimiters. A table, because every field of every record is checked.
var tokenChar = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = strings.IndexByte("()<>@,;:\\\"/[]?={}", byte(c)) < 0
	}
	return t
}()

// NewRecordID returns a fresh "<urn:uuid:...>" with a random (version 4)
// UUID from crypto/rand (RFC 9562 §5.4).
func NewRecordID() string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		// crypto/rand.Read never fails on supported platforms (Go 1.24+).
		panic("warc: crypto/rand: " + err.Error())
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	// Formatted by hand (three per page): fmt's %x costs more than the
	// random bytes.
	const hexDigits = "0123456789abcdef"
	b := make([]byte, 0, len("<urn:uuid:>")+36)
	b = append(b, "<urn:uuid:"...)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0x0f])
	}
	b = append(b, '>')
	return string(b)
}

// FormatDate formats t as WARC-Date: UTC, W3C-ISO8601 with microseconds when
// t has a sub-second part (WARC 1.1 §5.4 allows finer than seconds; readers
// of 1.0 files expect seconds, hence no fraction when there is none).
func FormatDate(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// ParseDate parses a WARC-Date with or without fractional seconds.
func ParseDate(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("warc: bad WARC-Date %q", s)
}

// Timestamp14 formats t as the 14-digit yyyyMMddHHmmss of CDX indexes.
func Timestamp14(t time.Time) string { return t.UTC().Format("20060102150405") }
