package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
)

// maxCodings bounds the codings of one Content-Encoding header (RFC 9110
// §8.4 allows a list; more than a few is an attack, not a use).
const maxCodings = 4

// errDecodeLimit is returned by decode when the decoded content reached
// the limit.
var errDecodeLimit = errors.New("fetch: decoded body exceeds the size limit")

// gzipMagic starts every gzip member (RFC 1952 §2.3.1).
var gzipMagic = []byte{0x1f, 0x8b}

// decode undoes the content codings of contentEncoding (RFC 9110 §8.4:
// listed in the order applied, so undone from the last) on raw, and
// returns at most limit bytes. gzip and x-gzip, deflate (zlib-wrapped as
// RFC 9110 says, or raw DEFLATE as some servers send it), br and identity
// are known. A body labelled gzip that does not start with gzip's magic
// bytes is taken as it is. On an error the bytes decoded so far are
// returned with it.
func decode(raw []byte, contentEncoding string, limit int64) ([]byte, error) {
	codings := parseCodings(contentEncoding)
	if len(codings) > maxCodings {
		return nil, fmt.Errorf("fetch: %d content codings, at most %d", len(codings), maxCodings)
	}
	if len(codings) == 0 {
		if int64(len(raw)) > limit {
			return raw[:limit], errDecodeLimit
		}
		return raw, nil
	}
	var out []byte
	for i := len(codings) - 1; i >= 0; i-- {
		var err error
		out, err = decodeOne(raw, codings[i], limit)
		if err != nil {
			return out, err
		}
		raw = out
	}
	return out, nil
}

func parseCodings(h string) []string {
	var cs []string
	for c := range strings.SplitSeq(h, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && c != "identity" {
			cs = append(cs, c)
		}
	}
	return cs
}

func decodeOne(raw []byte, coding string, limit int64) ([]byte, error) {
	switch coding {
	case "gzip", "x-gzip":
		if !bytes.HasPrefix(raw, gzipMagic) {
			// Not gzip at all: a server or proxy that sent the body as
			// it is but kept (or added) the header. Heritrix reads such
			// a body raw too ("gzip problem; using raw entity
			// instead"); browsers fail the page. Links are found.
			return readLimited(bytes.NewReader(raw), limit, "gzip")
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("fetch: gzip: %w", err)
		}
		// One member only: concatenated members are legal but rare, and
		// multistream reading would let trailing junk decide errors.
		zr.Multistream(false)
		return readLimited(zr, limit, "gzip")
	case "deflate":
		if len(raw) >= 2 && (uint16(raw[0])<<8|uint16(raw[1]))%31 == 0 && raw[0]&0x0f == 8 {
			zr, err := zlib.NewReader(bytes.NewReader(raw))
			if err == nil {
				out, err := readLimited(zr, limit, "deflate")
				if err == nil || errors.Is(err, errDecodeLimit) {
					return out, err
				}
			}
		}
		// Raw DEFLATE without the zlib wrapper, as IIS and others send.
		return readLimited(flate.NewReader(bytes.NewReader(raw)), limit, "deflate")
	case "br":
		return readLimited(brotli.NewReader(bytes.NewReader(raw)), limit, "br")
	}
	return nil, fmt.Errorf("fetch: unsupported content coding %q", coding)
}

// readLimited reads r to the end, keeping at most limit bytes; reaching
// the limit returns errDecodeLimit with the first limit bytes.
func readLimited(r io.Reader, limit int64, name string) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
	if n > limit {
		return buf.Bytes()[:limit], errDecodeLimit
	}
	if err != nil {
		return buf.Bytes(), fmt.Errorf("fetch: %s: %w", name, err)
	}
	return buf.Bytes(), nil
}
