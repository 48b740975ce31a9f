package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Errors the Reader wraps; test with errors.Is.
var (
	// ErrTruncated: the stream ended inside a record or gzip member.
	ErrTruncated = errors.New("warc: truncated record")
	// ErrFormat: the bytes are not a WARC record.
	ErrFormat = errors.New("warc: malformed record")
	// ErrDigest: a block or payload digest does not match the content.
	ErrDigest = errors.New("warc: digest mismatch")
	// ErrTooLarge: a line, header or block exceeds a ReaderOptions bound.
	ErrTooLarge = errors.New("warc: size limit exceeded")
)

// Defaults of ReaderOptions.
const (
	DefaultMaxLineBytes     = 64 << 10
	DefaultMaxHeaderFields  = 256
	DefaultMaxHeaderBytes   = 1 << 20
	DefaultMaxContentLength = 1 << 40 // 1 TiB: only rejects absurd values
	DefaultMaxBlockBytes    = 64 << 20
)

// maxBlankLines bounds the empty lines tolerated between records (some
// writers add extra CRLFs).
const maxBlankLines = 64

// ReaderOptions bound what a Reader accepts. The zero value uses the
// defaults.
type ReaderOptions struct {
	// MaxLineBytes caps one header line; default 64 KiB.
	MaxLineBytes int
	// MaxHeaderFields caps the fields of one record header; default 256.
	MaxHeaderFields int
	// MaxHeaderBytes caps one record header in total; default 1 MiB.
	MaxHeaderBytes int
	// MaxContentLength rejects records declaring a longer block; default
	// 1 TiB (blocks are streamed, so this is a sanity check only).
	MaxContentLength int64
	// MaxBlockBytes caps the block ReadRecord holds in memory; default
	// 64 MiB. Next and Read stream any length up to MaxContentLength.
	MaxBlockBytes int64
	// VerifyDigests makes Read fail with ErrDigest at the end of a block
	// whose WARC-Block-Digest (sha1 or sha256, base32 or hex) differs,
	// and ReadRecord also check WARC-Payload-Digest.
	VerifyDigests bool
}

func (o *ReaderOptions) setDefaults() {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxHeaderFields <= 0 {
		o.MaxHeaderFields = DefaultMaxHeaderFields
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MaxContentLength <= 0 {
		o.MaxContentLength = DefaultMaxContentLength
	}
	if o.MaxBlockBytes <= 0 {
		o.MaxBlockBytes = DefaultMaxBlockBytes
	}
}

// Reader reads the records of one WARC stream, like archive/tar.Reader:
// Next moves to the next record and returns its header, Read reads that
// record's block. Not safe for concurrent use.
type Reader struct {
	opts ReaderOptions
	src  *countReader  // the raw (compressed) stream
	ms   *memberStream // gzip members as one stream, when gz != nil
	br   *bufio.Reader // decompressed bytes
	cur  *Header       // current record, nil before the first Next
	rem  int64         // unread bytes of the current block
	off  int64         // offset of the current record
	dig  hash.Hash     // digest of the block so far, when verifying
	want []byte        // expected block digest, raw bytes
	err  error         // sticky error
}

// NewReader reads a .warc or .warc.gz stream; gzip is recognised by its
// magic bytes.
func NewReader(r io.Reader, opts ReaderOptions) (*Reader, error) {
	opts.setDefaults()
	fb := bufio.NewReaderSize(r, 64<<10)
	rd := &Reader{opts: opts, src: &countReader{r: fb}}
	magic, err := fb.Peek(2)
	if err != nil && len(magic) == 0 {
		if errors.Is(err, io.EOF) {
			// An empty file holds no records; Next reports io.EOF.
			rd.br = bufio.NewReaderSize(rd.src, opts.MaxLineBytes)
			return rd, nil
		}
		return nil, fmt.Errorf("warc: read: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		rd.ms = &memberStream{src: rd.src}
		rd.br = bufio.NewReaderSize(rd.ms, opts.MaxLineBytes)
		return rd, nil
	}
	rd.br = bufio.NewReaderSize(rd.src, opts.MaxLineBytes)
	return rd, nil
}

// Offset returns the byte offset in the raw stream of the current record:
// of its gzip member for .warc.gz (records sharing one member report that
// member's offset), of its first byte otherwise.
func (r *Reader) Offset() int64 { return r.off }

// Next skips the rest of the current record and returns the next one's
// header, or io.EOF after the last record.
func (r *Reader) Next() (*Header, error) {
	if r.err != nil {
		return nil, r.err
	}
	h, err := r.next()
	if err != nil {
		r.err = err
		r.cur = nil
		return nil, err
	}
	r.cur = h
	return h, nil
}

func (r *Reader) next() (*Header, error) {
	if r.cur != nil {
		if _, err := io.Copy(io.Discard, blockOnly{r}); err != nil && !errors.Is(err, ErrDigest) {
			return nil, err
		}
		if err := r.readTrailer(); err != nil {
			return nil, err
		}
	}
	// Find the start of the next record: skip blank lines; at a gzip member
	// boundary, open the next member.
	blank := 0
	for {
		if r.ms != nil && r.br.Buffered() == 0 {
			r.ms.inRecord = false
			if _, err := r.br.Peek(1); err != nil {
				if !errors.Is(err, io.EOF) {
					return nil, r.wrapReadErr(err)
				}
				more, err := r.ms.advance()
				if err != nil {
					return nil, err
				}
				if !more {
					return nil, io.EOF
				}
				r.br.Reset(r.ms)
			}
			r.ms.inRecord = true
		}
		if r.ms != nil {
			r.off = r.ms.start
		} else {
			r.off = r.src.n - int64(r.br.Buffered())
		}
		b, err := r.br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if r.ms != nil {
					continue // member ended with blank lines only
				}
				return nil, io.EOF
			}
			return nil, r.wrapReadErr(err)
		}
		if b[0] != '\r' && b[0] != '\n' {
			break
		}
		if blank++; blank > maxBlankLines {
			return nil, fmt.Errorf("%w: more than %d blank lines between records at offset %d", ErrFormat, maxBlankLines, r.off)
		}
		if _, err := r.readLine(); err != nil {
			return nil, err
		}
	}
	return r.readHeader()
}

// readHeader parses the version line and fields and sets up the block.
func (r *Reader) readHeader() (*Header, error) {
	line, err := r.readLine()
	if err != nil {
		return nil, err
	}
	v, ok := strings.CutPrefix(line, "WARC/")
	if !ok || v == "" || len(v) > 8 || strings.Trim(v, "0123456789.") != "" {
		return nil, fmt.Errorf("%w: at offset %d: want version line WARC/1.1, got %.40q", ErrFormat, r.off, line)
	}
	h := &Header{Version: v}
	total := len(line)
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: header ends early at offset %d", ErrTruncated, r.off)
			}
			return nil, err
		}
		if line == "" {
			break
		}
		if total += len(line); total > r.opts.MaxHeaderBytes {
			return nil, fmt.Errorf("%w: header over %d bytes at offset %d", ErrTooLarge, r.opts.MaxHeaderBytes, r.off)
		}
		if line[0] == ' ' || line[0] == '\t' {
			// Folded continuation line (WARC 1.1 §4, RFC 2616 LWS).
			if len(h.Fields) == 0 {
				return nil, fmt.Errorf("%w: continuation line before any field at offset %d", ErrFormat, r.off)
			}
			last := &h.Fields[len(h.Fields)-1]
			last.Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || !validName(name) {
			return nil, fmt.Errorf("%w: bad header line %.60q at offset %d", ErrFormat, line, r.off)
		}
		if len(h.Fields) >= r.opts.MaxHeaderFields {
			return nil, fmt.Errorf("%w: more than %d header fields at offset %d", ErrTooLarge, r.opts.MaxHeaderFields, r.off)
		}
		h.Fields = append(h.Fields, Field{Name: name, Value: strings.TrimSpace(value)})
	}
	cl := h.Get(HeaderContentLength)
	n, err := strconv.ParseInt(cl, 10, 64)
	switch {
	case cl == "":
		return nil, fmt.Errorf("%w: no Content-Length at offset %d", ErrFormat, r.off)
	case err != nil || n < 0:
		return nil, fmt.Errorf("%w: bad Content-Length %q at offset %d", ErrFormat, cl, r.off)
	case n > r.opts.MaxContentLength:
		return nil, fmt.Errorf("%w: Content-Length %d over %d at offset %d", ErrTooLarge, n, r.opts.MaxContentLength, r.off)
	}
	r.rem = n
	r.dig, r.want = nil, nil
	if r.opts.VerifyDigests {
		r.dig, r.want = digestFor(h.Get(HeaderBlockDigest))
	}
	return h, nil
}

// readLine reads one line without its CRLF or LF, bounded by MaxLineBytes.
func (r *Reader) readLine() (string, error) {
	b, err := r.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("%w: header line over %d bytes at offset %d", ErrTooLarge, r.opts.MaxLineBytes, r.off)
	case errors.Is(err, io.EOF) && len(b) > 0:
		return "", fmt.Errorf("%w: line without end at offset %d", ErrTruncated, r.off)
	case err != nil:
		return "", r.wrapReadErr(err)
	}
	return string(bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))), nil
}

// readTrailer consumes the CRLF CRLF after a block. A stream or gzip member
// that ends right after the block is accepted (lenient, like warcio);
// other bytes are an error.
func (r *Reader) readTrailer() error {
	if r.ms != nil {
		r.ms.inRecord = false
	}
	for i := 0; i < 2; i++ {
		b, err := r.br.ReadByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return r.wrapReadErr(err)
		}
		if b == '\r' {
			if b, err = r.br.ReadByte(); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return r.wrapReadErr(err)
			}
		}
		if b != '\n' {
			return fmt.Errorf("%w: record at offset %d not followed by CRLF CRLF", ErrFormat, r.off)
		}
	}
	return nil
}

// Read reads the current record's block; io.EOF at its end. With
// VerifyDigests, the final Read returns an error wrapping ErrDigest when the
// block digest differs.
func (r *Reader) Read(p []byte) (int, error) {
	if r.cur == nil {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	if r.rem == 0 {
		return 0, r.checkBlockDigest()
	}
	if int64(len(p)) > r.rem {
		p = p[:r.rem]
	}
	n, err := r.br.Read(p)
	r.rem -= int64(n)
	if r.dig != nil {
		r.dig.Write(p[:n])
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: block ends %d bytes early at offset %d", ErrTruncated, r.rem, r.off)
		} else {
			err = r.wrapReadErr(err)
		}
		r.err = err
		return n, err
	}
	if r.rem == 0 {
		if err := r.checkBlockDigest(); err != nil && err != io.EOF {
			return n, err
		}
	}
	return n, nil
}

func (r *Reader) checkBlockDigest() error {
	if r.dig != nil {
		got := r.dig.Sum(nil)
		r.dig = nil
		if !bytes.Equal(got, r.want) {
			return fmt.Errorf("%w: block of %s at offset %d", ErrDigest, r.cur.RecordID(), r.off)
		}
	}
	return io.EOF
}

// blockOnly hides Reader's other methods from io.Copy (which would use
// WriterTo/ReaderFrom otherwise).
type blockOnly struct{ r *Reader }

func (b blockOnly) Read(p []byte) (int, error) { return b.r.Read(p) }

// ReadRecord returns the next record with its block in memory. A block
// over MaxBlockBytes is an error wrapping ErrTooLarge (Next still skips
// it). With VerifyDigests the payload digest is checked too.
func (r *Reader) ReadRecord() (*Record, error) {
	h, err := r.Next()
	if err != nil {
		return nil, err
	}
	if r.rem > r.opts.MaxBlockBytes {
		return nil, fmt.Errorf("%w: block of %d bytes over %d at offset %d", ErrTooLarge, r.rem, r.opts.MaxBlockBytes, r.off)
	}
	block := make([]byte, r.rem)
	if _, err := io.ReadFull(blockOnly{r}, block); err != nil {
		return nil, err
	}
	// The digest check runs on the read that reaches the end; with an
	// exact-size buffer that may not happen, so ask once more.
	if _, err := r.Read(nil); err != nil && err != io.EOF {
		return nil, err
	}
	rec := &Record{Header: *h, Block: block}
	if r.opts.VerifyDigests {
		if err := VerifyPayload(rec); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// VerifyPayload checks WARC-Payload-Digest of a response, request or
// resource record against its block; records without one, revisits (their
// digest is of the earlier capture) and unknown algorithms pass.
func VerifyPayload(rec *Record) error {
	want := rec.Header.Get(HeaderPayloadDigest)
	t := rec.Header.Type()
	if want == "" || t == TypeRevisit {
		return nil
	}
	payload := rec.Block
	if strings.HasPrefix(strings.ToLower(rec.Header.Get(HeaderContentType)), "application/http") {
		hdr, body, ok := splitHTTP(rec.Block)
		if !ok {
			return fmt.Errorf("%w: %s has no HTTP header end", ErrFormat, rec.Header.RecordID())
		}
		payload = body
		if isChunked(hdr) {
			if d, err := dechunk(body, int64(len(body))); err == nil {
				payload = d
			}
		}
	}
	h, exp := digestFor(want)
	if h == nil {
		return nil
	}
	h.Write(payload)
	if !bytes.Equal(h.Sum(nil), exp) {
		return fmt.Errorf("%w: payload of %s", ErrDigest, rec.Header.RecordID())
	}
	return nil
}

// digestFor returns a hash and the expected sum for a "sha1:..." or
// "sha256:..." label in base32 or hex; nil for anything else.
func digestFor(label string) (hash.Hash, []byte) {
	algo, enc, ok := strings.Cut(label, ":")
	if !ok {
		return nil, nil
	}
	var h hash.Hash
	switch strings.ToLower(algo) {
	case "sha1":
		h = sha1.New()
	case "sha256", "sha-256":
		h = sha256.New()
	default:
		return nil, nil
	}
	size := h.Size()
	if b, err := base32.StdEncoding.DecodeString(strings.ToUpper(enc)); err == nil && len(b) == size {
		return h, b
	}
	if b, err := hex.DecodeString(enc); err == nil && len(b) == size {
		return h, b
	}
	// A label that cannot be decoded can never match.
	return h, []byte{}
}

// wrapReadErr maps gzip and I/O errors to the package's errors.
func (r *Reader) wrapReadErr(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: stream ends inside the record at offset %d: %w", ErrTruncated, r.off, err)
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return fmt.Errorf("%w: gzip member at offset %d: %w", ErrFormat, r.off, err)
	case errors.Is(err, ErrFormat), errors.Is(err, ErrTruncated), errors.Is(err, ErrTooLarge):
		return err
	}
	return fmt.Errorf("warc: read at offset %d: %w", r.off, err)
}

// countReader counts the bytes consumed from a bufio.Reader; as an
// io.ByteReader it stops the gzip reader from reading ahead, so the count
// is exactly where a member ends.
type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// memberStream presents gzip members as one stream. At the end of a member
// it reports io.EOF while the reader is between records (so Next can note
// the next member's offset) and continues into the next member while
// inside a record (records spanning members are legal, if unusual).
type memberStream struct {
	src      *countReader
	gz       *gzip.Reader
	start    int64 // offset of the current member
	done     bool  // current member fully read
	inRecord bool
}

// advance opens the next member; false at the end of the stream.
func (m *memberStream) advance() (bool, error) {
	if _, err := m.src.r.Peek(1); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("warc: read: %w", err)
	}
	m.start = m.src.n
	var err error
	if m.gz == nil {
		m.gz, err = gzip.NewReader(m.src)
	} else {
		err = m.gz.Reset(m.src)
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, fmt.Errorf("%w: gzip header cut at offset %d", ErrTruncated, m.start)
		}
		return false, fmt.Errorf("%w: gzip member at offset %d: %w", ErrFormat, m.start, err)
	}
	m.gz.Multistream(false)
	m.done = false
	return true, nil
}

func (m *memberStream) Read(p []byte) (int, error) {
	for range 1 << 20 { // bound: one iteration per (empty) member
		if m.gz == nil || m.done {
			if !m.inRecord && m.gz != nil {
				return 0, io.EOF
			}
			more, err := m.advance()
			if err != nil {
				return 0, err
			}
			if !more {
				return 0, io.EOF
			}
		}
		n, err := m.gz.Read(p)
		if errors.Is(err, io.EOF) {
			m.done = true
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
	return 0, fmt.Errorf("%w: too many empty gzip members", ErrFormat)
}
