package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

// Exchange is one HTTP fetch in plain terms, the input of WriteExchange.
// The crawler fills it from its fetch result; this package does not depend
// on the fetcher.
type Exchange struct {
	// URL is the requested URL (WARC-Target-URI). Required.
	URL string
	// IP is the server address the fetch connected to (WARC-IP-Address);
	// empty when unknown.
	IP string
	// Date is when the fetch started (WARC-Date of every record of the
	// exchange); zero means the writer's clock now.
	Date time.Time
	// Request is the request as sent: request line, header fields, blank
	// line, body if any. Empty means no request record.
	Request []byte
	// ResponseHeader is the status line and header fields through the
	// blank line, as received. Required.
	ResponseHeader []byte
	// Body is the body as stored. Normally the entity body with
	// transfer-encoding removed (what net/http returns; then the header
	// must not say "Transfer-Encoding: chunked", and net/http's
	// Response.Header already lacks it). Raw chunked bytes are also
	// accepted when the header says chunked; the payload digest is then
	// computed after dechunking.
	Body []byte
	// Truncated is the WARC-Truncated reason (TruncatedLength, ...) when
	// the fetcher stopped early; empty when the body is complete.
	Truncated string
	// PayloadDigest is the payload's digest if the caller already has it
	// (Digest form "sha1:BASE32"); empty means computed here.
	PayloadDigest string
	// Revisit, when set, writes a revisit record (identical-payload-digest
	// profile) holding only ResponseHeader, instead of a response record:
	// the payload was archived before (package dedup decides).
	Revisit *Revisit
	// Metadata are the fields of a metadata record (application/warc-fields)
	// linked to the response, e.g. Heritrix's "via", "hopsFromSeed",
	// "fetchTimeMs", "outlink"; empty means no metadata record.
	Metadata []Field
}

// Revisit names the earlier capture a revisit record refers to.
type Revisit struct {
	// TargetURI is WARC-Refers-To-Target-URI, the URL of the earlier
	// capture. Required.
	TargetURI string
	// Date is WARC-Refers-To-Date, the earlier capture's WARC-Date.
	// Required.
	Date time.Time
	// RecordID is WARC-Refers-To, the earlier record's WARC-Record-ID;
	// optional.
	RecordID string
}

// Result says what WriteExchange wrote.
type Result struct {
	// Response is the response or revisit record.
	Response Location
	// Request and Metadata are zero when not written.
	Request, Metadata Location
	// PayloadDigest is the WARC-Payload-Digest written ("sha1:BASE32").
	PayloadDigest string
	// BlockDigest is the response (or revisit) record's WARC-Block-Digest.
	BlockDigest string
	// Status is the HTTP status code parsed from ResponseHeader, 0 if
	// unparsable; MIME is its Content-Type without parameters.
	Status int
	MIME   string
}

// ErrExchange reports an Exchange that cannot be written.
var ErrExchange = errors.New("warc: bad exchange")

// Validate reports a missing or malformed field.
func (ex *Exchange) Validate() error {
	switch {
	case ex.URL == "" || strings.ContainsAny(ex.URL, " \r\n"):
		return fmt.Errorf("%w: URL %q is empty or contains whitespace", ErrExchange, ex.URL)
	case len(ex.ResponseHeader) == 0:
		return fmt.Errorf("%w: empty ResponseHeader", ErrExchange)
	case ex.Revisit != nil && (ex.Revisit.TargetURI == "" || ex.Revisit.Date.IsZero()):
		return fmt.Errorf("%w: Revisit needs TargetURI and Date", ErrExchange)
	}
	if ex.IP != "" {
		if _, err := netip.ParseAddr(ex.IP); err != nil {
			return fmt.Errorf("%w: IP %q: %w", ErrExchange, ex.IP, err)
		}
	}
	switch ex.Truncated {
	case "", TruncatedLength, TruncatedTime, TruncatedDisconnect, TruncatedUnspecified:
	default:
		return fmt.Errorf("%w: Truncated %q", ErrExchange, ex.Truncated)
	}
	return nil
}

// WriteExchange writes the response (or revisit), request and metadata
// records of one fetch into the same file, in Heritrix's order (response
// first), linked by WARC-Concurrent-To. It may rotate the file afterwards.
func (w *Writer) WriteExchange(ctx context.Context, ex *Exchange) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("warc: %w", err)
	}
	if err := ex.Validate(); err != nil {
		return Result{}, err
	}
	date := ex.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	ds := FormatDate(date)
	res := Result{PayloadDigest: ex.PayloadDigest}
	if res.PayloadDigest == "" {
		res.PayloadDigest = PayloadDigest(ex.ResponseHeader, ex.Body)
	}
	res.Status, res.MIME = parseStatusMIME(ex.ResponseHeader)

	// Digests are computed before taking the lock: they are the costly
	// part and need no shared state.
	respID := NewRecordID()
	resp := &Record{}
	rh := &resp.Header
	if ex.Revisit != nil {
		resp.Block = ex.ResponseHeader
		rh.Add(HeaderType, string(TypeRevisit))
	} else {
		resp.Block, resp.tail = ex.ResponseHeader, ex.Body
		rh.Add(HeaderType, string(TypeResponse))
	}
	rh.Add(HeaderRecordID, respID)
	rh.Add(HeaderDate, ds)
	rh.Add(HeaderTargetURI, ex.URL)
	if ex.IP != "" {
		rh.Add(HeaderIPAddress, ex.IP)
	}
	rh.Add(HeaderContentType, ContentTypeResponse)
	if ex.Revisit != nil {
		rh.Add(HeaderProfile, ProfileIdenticalPayload)
		rh.Add(HeaderRefersToURI, ex.Revisit.TargetURI)
		rh.Add(HeaderRefersToDate, FormatDate(ex.Revisit.Date))
		if ex.Revisit.RecordID != "" {
			rh.Add(HeaderRefersTo, ex.Revisit.RecordID)
		}
	}
	rh.Add(HeaderPayloadDigest, res.PayloadDigest)
	res.BlockDigest = digest2(resp.Block, resp.tail)
	rh.Add(HeaderBlockDigest, res.BlockDigest)
	if ex.Truncated != "" && ex.Revisit == nil {
		rh.Add(HeaderTruncated, ex.Truncated)
	}

	var req *Record
	if len(ex.Request) > 0 {
		req = &Record{Block: ex.Request}
		h := &req.Header
		h.Add(HeaderType, string(TypeRequest))
		h.Add(HeaderRecordID, NewRecordID())
		h.Add(HeaderDate, ds)
		h.Add(HeaderTargetURI, ex.URL)
		if ex.IP != "" {
			h.Add(HeaderIPAddress, ex.IP)
		}
		h.Add(HeaderConcurrentTo, respID)
		h.Add(HeaderContentType, ContentTypeRequest)
		if hdr, body, ok := splitHTTP(ex.Request); ok {
			h.Add(HeaderPayloadDigest, PayloadDigest(hdr, body))
		}
		h.Add(HeaderBlockDigest, Digest(req.Block))
	}

	var meta *Record
	if len(ex.Metadata) > 0 {
		var b bytes.Buffer
		n := 0
		for _, f := range ex.Metadata {
			n += len(f.Name) + len(f.Value) + 4
		}
		b.Grow(n)
		for _, f := range ex.Metadata {
			if !validName(f.Name) || strings.ContainsAny(f.Value, "\r\n") {
				return Result{}, fmt.Errorf("%w: metadata field %q", ErrExchange, f.Name)
			}
			b.WriteString(f.Name)
			b.WriteString(": ")
			b.WriteString(f.Value)
			b.WriteString("\r\n")
		}
		meta = &Record{Block: b.Bytes()}
		h := &meta.Header
		h.Add(HeaderType, string(TypeMetadata))
		h.Add(HeaderRecordID, NewRecordID())
		h.Add(HeaderDate, ds)
		h.Add(HeaderTargetURI, ex.URL)
		h.Add(HeaderConcurrentTo, respID)
		h.Add(HeaderContentType, ContentTypeFields)
		h.Add(HeaderBlockDigest, Digest(meta.Block))
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if res.Response, err = w.writeLocked(resp); err != nil {
		return res, err
	}
	if req != nil {
		if res.Request, err = w.writeLocked(req); err != nil {
			return res, err
		}
	}
	if meta != nil {
		if res.Metadata, err = w.writeLocked(meta); err != nil {
			return res, err
		}
	}
	return res, w.maybeRotateLocked()
}

// parseStatusMIME reads the status code and media type of an HTTP response
// header block; zero values when absent.
func parseStatusMIME(header []byte) (int, string) {
	line, _, _ := bytes.Cut(header, []byte("\n"))
	status := 0
	if f := strings.Fields(string(line)); len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/") {
		if n, err := strconv.Atoi(f[1]); err == nil && n >= 100 && n <= 999 {
			status = n
		}
	}
	ct := httpHeaderValue(header, "Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return status, mt
}

// indexEntry returns the CDXJ entry of a response or revisit record.
func indexEntry(h *Header, block []byte, loc Location) (cdxj.Entry, bool) {
	t := h.Type()
	if t != TypeResponse && t != TypeRevisit && t != TypeResource {
		return cdxj.Entry{}, false
	}
	uri := h.TargetURI()
	key, err := cdxj.SURT(uri)
	if err != nil {
		return cdxj.Entry{}, false
	}
	date, err := h.Date()
	if err != nil {
		return cdxj.Entry{}, false
	}
	e := cdxj.Entry{
		Key: key, Timestamp: Timestamp14(date), URL: uri,
		Digest: h.Get(HeaderPayloadDigest),
		Length: loc.Length, Offset: loc.Offset, Filename: loc.File,
	}
	switch {
	case t == TypeResource:
		e.MIME, _, _ = strings.Cut(h.Get(HeaderContentType), ";")
		if e.Digest == "" {
			e.Digest = h.Get(HeaderBlockDigest)
		}
	case strings.HasPrefix(strings.ToLower(h.Get(HeaderContentType)), "application/http"):
		hdr, _, _ := splitHTTP(block[:min(len(block), 64<<10)])
		e.Status, e.MIME = parseStatusMIME(hdr)
	}
	if t == TypeRevisit {
		e.MIME = "warc/revisit"
	}
	return e, true
}

// HTTPHeader serializes a status or request line and header fields into the
// bytes an Exchange wants, fields sorted by name for stable output.
// net/http drops Transfer-Encoding from Response.Header, so a header built
// from it matches a dechunked body.
func HTTPHeader(firstLine string, h http.Header) []byte {
	var b bytes.Buffer
	b.WriteString(firstLine + "\r\n")
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	return b.Bytes()
}
