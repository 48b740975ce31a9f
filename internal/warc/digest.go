package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Digest returns "sha1:" + the RFC 4648 base32 SHA-1 of b, the digest form
// Heritrix and warcio write in WARC-Block-Digest and WARC-Payload-Digest.
// SHA-1 is the interoperable choice here, not a security measure.
func Digest(b []byte) string {
	s := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// digest2 is Digest of a followed by b, without joining them.
func digest2(a, b []byte) string {
	if len(b) == 0 {
		return Digest(a)
	}
	h := sha1.New()
	h.Write(a)
	h.Write(b)
	var s [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(s[:0]))
}

// PayloadDigest returns the WARC-Payload-Digest of an HTTP message whose
// header (status or request line, fields, blank line) is header and whose
// body bytes as stored are body. The payload is the entity body with any
// transfer-encoding removed and content-encoding kept (WARC 1.1 §5.9, as
// Heritrix and warcio compute it): when header declares
// "Transfer-Encoding: chunked", body is dechunked first; if that fails
// (a truncated capture) the stored bytes are digested as they are.
func PayloadDigest(header, body []byte) string {
	if isChunked(header) {
		if d, err := dechunk(body, int64(len(body))); err == nil {
			return Digest(d)
		}
	}
	return Digest(body)
}

// isChunked reports whether an HTTP header block declares chunked
// transfer-coding as its final coding (RFC 9112 §6.1).
func isChunked(header []byte) bool {
	v := httpHeaderValue(header, "Transfer-Encoding")
	if v == "" {
		return false
	}
	codings := strings.Split(v, ",")
	return strings.EqualFold(strings.TrimSpace(codings[len(codings)-1]), "chunked")
}

// httpHeaderValue returns the comma-joined values of name in a raw HTTP
// header block (first line skipped), or "".
func httpHeaderValue(header []byte, name string) string {
	var vals []string
	lines := bytes.Split(header, []byte("\n"))
	for i, ln := range lines {
		if i == 0 {
			continue
		}
		ln = bytes.TrimRight(ln, "\r")
		if len(ln) == 0 {
			break
		}
		k, v, ok := bytes.Cut(ln, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(k)), name) {
			vals = append(vals, string(bytes.TrimSpace(v)))
		}
	}
	return strings.Join(vals, ", ")
}

// errChunk reports a malformed chunked body.
var errChunk = errors.New("warc: malformed chunked body")

// dechunk decodes a chunked body (RFC 9112 §7.1), returning at most max
// bytes. Trailers are discarded.
func dechunk(body []byte, max int64) ([]byte, error) {
	br := bufio.NewReader(bytes.NewReader(body))
	var out bytes.Buffer
	for range len(body) + 1 { // each chunk consumes at least one byte
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: chunk size line: %w", errChunk, err)
		}
		line = strings.TrimRight(line, "\r\n")
		if i := strings.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: chunk size %q", errChunk, line)
		}
		if n == 0 {
			return out.Bytes(), nil
		}
		if int64(out.Len())+n > max {
			return nil, fmt.Errorf("%w: chunk larger than body", errChunk)
		}
		if _, err := io.CopyN(&out, br, n); err != nil {
			return nil, fmt.Errorf("%w: chunk data: %w", errChunk, err)
		}
		if crlf, err := br.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, fmt.Errorf("%w: missing CRLF after chunk", errChunk)
		}
	}
	return nil, errChunk
}

// splitHTTP splits an application/http block into header (through the blank
// line) and body. ok is false when no blank line ends the header.
func splitHTTP(block []byte) (header, body []byte, ok bool) {
	if i := bytes.Index(block, []byte("\r\n\r\n")); i >= 0 {
		return block[:i+4], block[i+4:], true
	}
	if i := bytes.Index(block, []byte("\n\n")); i >= 0 {
		return block[:i+2], block[i+2:], true
	}
	return block, nil, false
}
