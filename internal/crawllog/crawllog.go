// Package crawllog writes and parses crawl.log, the one-line-per-URL log of
// Heritrix that web archivists' tools read. Every URL the crawler finishes
// with (fetched, failed, or refused by robots, scope or a trap) gets a line
// of twelve space-separated columns in Heritrix's order:
//
//  1. log time, ISO 8601 UTC with milliseconds
//  2. fetch status: the HTTP code, or a negative Heritrix code (Status*)
//  3. document size in bytes (the body, without HTTP headers), "-" if none
//  4. URL
//  5. discovery (hop) path from the seed: L link, R redirect, E embed,
//     X speculative embed, P prerequisite, S submit, I inferred; "-" for a
//     seed; longer than 50 hops it is shortened to "N+" and the last 50
//  6. referrer ("via"), "-" if none
//  7. MIME type, "-" if unknown
//  8. worker thread, "#NNN"
//  9. fetch start and duration, "yyyyMMddHHmmssSSS+millis", "-" if not fetched
//  10. content digest, "sha1:BASE32" (package warc's Digest), "-" if none
//  11. source tag: the crawler writes "seed" on a seed's line and "-"
//     on the others (Heritrix, with sourceTagSeeds on, writes the seed's
//     tag on every URL descending from it; off, "-" everywhere)
//  12. annotations, comma-separated (Annotation*), "-" if none
//
// For example:
//
//	2026-11-22T09:30:15.123Z   200      11429 http://example.com/a LL http://example.com/ text/html #007 20261122093014900+223 sha1:7AJUMSDT... - duplicate:digest
//
// Status and size are right-aligned in 5 and 10 characters as Heritrix
// does. A Writer is buffered and safe for concurrent use; Flush writes and
// fsyncs. It only ever writes whole lines (repair.go), so a process killed
// at any point leaves no torn line, and Create cuts a torn tail that a
// machine crash left. OpenRepair makes the log agree with the frontier on
// resume: exactly one line per acknowledged URL. Parse and Scanner read the
// lines back (tests, resume).
package crawllog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fetch status codes Heritrix writes besides HTTP codes (Heritrix
// FetchStatusCodes).
const (
	StatusDNSSuccess          = 1     // successful DNS lookup
	StatusUnattempted         = 0     // fetch never tried
	StatusDNSFailed           = -1    // DNS lookup failed
	StatusConnectFailed       = -2    // HTTP connect failed
	StatusConnectBroken       = -3    // HTTP connection broken
	StatusTimeout             = -4    // timeout before any meaningful response
	StatusRuntimeError        = -5    // unexpected internal error
	StatusPrereqDNSFailed     = -6    // prerequisite DNS lookup failed
	StatusUnsupportedURI      = -7    // URI unsupported or illegal
	StatusRetriesExhausted    = -8    // retry limit reached
	StatusDeferred            = -50   // waiting for a prerequisite
	StatusUnqueueable         = -60   // could not be queued by the frontier
	StatusPrereqRobotsFailed  = -61   // robots.txt fetch failed, fetch precluded
	StatusPrereqFailed        = -62   // some other prerequisite failed
	StatusPrereqUnschedulable = -63   // a prerequisite could not be scheduled
	StatusEmptyResponse       = -404  // empty HTTP response, taken as 404
	StatusSevereError         = -3000 // severe internal error
	StatusChaff               = -4000 // trap / negligible-value content
	StatusTooManyHops         = -4001 // too many link hops from the seed
	StatusTooManyEmbedHops    = -4002 // too many embed hops from the last in-scope URI
	StatusOutOfScope          = -5000 // out of scope on re-examination
	StatusBlockedByUser       = -5001 // blocked by a user setting
	StatusBlockedByProcessor  = -5002 // blocked by a custom processor
	StatusBlockedByQuota      = -5003 // blocked: a quota (e.g. pages per site) exceeded
	StatusBlockedByRuntime    = -5004 // blocked: the crawl's time limit exceeded
	StatusDeletedByUser       = -6000 // deleted from the frontier by the operator
	StatusKilled              = -7000 // worker killed by the operator
	StatusRobotsDisallowed    = -9998 // robots.txt rules precluded the fetch
)

// Annotations Courtesy writes (Heritrix writes "duplicate:digest" and
// "lenTrunc"/"timeTrunc"; the rest name Courtesy's own rules).
const (
	AnnotationDuplicateDigest = "duplicate:digest" // payload already archived: revisit record
	AnnotationNearDuplicate   = "duplicate:near"   // simhash near-duplicate of an archived page
	AnnotationSizeTruncated   = "size-truncated"   // body cut at the size cap (WARC-Truncated: length)
	AnnotationTimeTruncated   = "time-truncated"   // body cut at the time limit (WARC-Truncated: time)
	AnnotationRobotsDisallow  = "robots:disallowed"
	AnnotationTrapMaxDepth    = "trap:max-depth"
	AnnotationTrapMaxURLs     = "trap:max-urls"
	AnnotationTrapURLLength   = "trap:url-length"
	AnnotationTrapRepeatPath  = "trap:repeated-path"
	AnnotationTrapDuplicates  = "trap:max-duplicates"
	// AnnotationRobotsPrerequisite marks the line of a robots.txt fetch
	// (discovery path ending in "P", referrer the URL that needed it): a
	// line of its own, not a frontier URL's (Entry.Prerequisite).
	AnnotationRobotsPrerequisite = "robots:prerequisite"
)

// Prerequisite reports whether e is the line of a robots.txt fetch
// (AnnotationRobotsPrerequisite) rather than of a URL the crawl completed.
func (e *Entry) Prerequisite() bool {
	return slices.Contains(e.Annotations, AnnotationRobotsPrerequisite)
}

// Tries returns the Heritrix annotation for a URL fetched on its n-th try
// ("3t").
func Tries(n int) string { return strconv.Itoa(n) + "t" }

// Limits.
const (
	// MaxLineBytes bounds a line the parser accepts.
	MaxLineBytes = 256 << 10
	// maxHops is the number of hop letters kept (Heritrix 3.1+).
	maxHops = 50
	// MaxAnnotations bounds the annotations of one line.
	MaxAnnotations = 64
)

// hopLetters are the discovery path codes (Heritrix Hop).
const hopLetters = "LREXSPI"

// Entry is one line of the log.
type Entry struct {
	// Time is when the line was logged; zero means the writer's clock.
	Time time.Time
	// Status is the HTTP status or a negative Status* code.
	Status int
	// Size is the body size in bytes; negative means none ("-").
	Size int64
	// URL is the URL the line is about. Required; spaces are escaped.
	URL string
	// Path is the discovery path (hop letters), empty for a seed.
	Path string
	// Via is the referrer URL; empty for none.
	Via string
	// MIME is the media type without parameters; empty for unknown.
	MIME string
	// Thread is the worker number, written "#NNN".
	Thread int
	// FetchStart and FetchDuration time the fetch; zero FetchStart means
	// not fetched ("-"). The duration is written in milliseconds.
	FetchStart    time.Time
	FetchDuration time.Duration
	// Digest is the payload digest "sha1:BASE32"; empty for none.
	Digest string
	// Source is the source tag ("seed" on a seed's line); empty for none.
	Source string
	// Annotations are short tags without spaces or commas.
	Annotations []string
}

// ErrBadLine reports a line that is not a crawl.log line.
var ErrBadLine = errors.New("crawllog: malformed line")

const (
	timeLayout  = "2006-01-02T15:04:05.000Z"
	fetchLayout = "20060102150405.000"
)

// field returns s or "-" when empty, with whitespace escaped (URLs are
// the only fields that may carry it).
func field(s string) string {
	if s == "" {
		return "-"
	}
	if strings.ContainsAny(s, " \t\r\n") {
		s = strings.NewReplacer(" ", "%20", "\t", "%09", "\r", "%0D", "\n", "%0A").Replace(s)
	}
	return s
}

// Format returns the line for e, without newline; now fills a zero Time.
func (e *Entry) Format(now time.Time) (string, error) {
	if e.URL == "" {
		return "", fmt.Errorf("%w: empty URL", ErrBadLine)
	}
	t := e.Time
	if t.IsZero() {
		t = now
	}
	path, err := hopPath(e.Path)
	if err != nil {
		return "", err
	}
	if len(e.Annotations) > MaxAnnotations {
		return "", fmt.Errorf("%w: %d annotations, at most %d", ErrBadLine, len(e.Annotations), MaxAnnotations)
	}
	for _, a := range e.Annotations {
		if a == "" || strings.ContainsAny(a, ", \t\r\n") {
			return "", fmt.Errorf("%w: annotation %q empty or with a comma or space", ErrBadLine, a)
		}
	}
	if e.Thread < 0 {
		return "", fmt.Errorf("%w: negative thread %d", ErrBadLine, e.Thread)
	}
	var b strings.Builder
	b.WriteString(t.UTC().Format(timeLayout))
	fmt.Fprintf(&b, " %5d ", e.Status)
	if e.Size < 0 {
		fmt.Fprintf(&b, "%10s", "-")
	} else {
		fmt.Fprintf(&b, "%10d", e.Size)
	}
	fetch := "-"
	if !e.FetchStart.IsZero() {
		fetch = strings.Replace(e.FetchStart.UTC().Format(fetchLayout), ".", "", 1) + "+" + strconv.FormatInt(e.FetchDuration.Milliseconds(), 10)
	}
	mime, _, _ := strings.Cut(e.MIME, ";")
	for _, f := range []string{
		field(e.URL), field(path), field(e.Via), field(strings.TrimSpace(mime)),
		fmt.Sprintf("#%03d", e.Thread), fetch, field(e.Digest), field(e.Source),
		field(strings.Join(e.Annotations, ",")),
	} {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String(), nil
}

// hopPath checks the letters and keeps the last 50 hops as Heritrix does:
// "N+" then the last 50, N the number of hops dropped.
func hopPath(p string) (string, error) {
	letters := p
	dropped := 0
	if i := strings.IndexByte(p, '+'); i >= 0 {
		n, err := strconv.Atoi(p[:i])
		if err != nil || n < 0 {
			return "", fmt.Errorf("%w: discovery path %q", ErrBadLine, p)
		}
		dropped, letters = n, p[i+1:]
	}
	if strings.Trim(letters, hopLetters) != "" {
		return "", fmt.Errorf("%w: discovery path %q: letters other than %s", ErrBadLine, p, hopLetters)
	}
	if len(letters) > maxHops {
		dropped += len(letters) - maxHops
		letters = letters[len(letters)-maxHops:]
	}
	if dropped > 0 {
		return strconv.Itoa(dropped) + "+" + letters, nil
	}
	return letters, nil
}

// Parse parses one line (trailing newline allowed). Columns beyond the
// twelfth (Heritrix's optional JSON extra) are ignored.
func Parse(line string) (Entry, error) {
	line = strings.TrimRight(line, "\r\n")
	if len(line) > MaxLineBytes {
		return Entry{}, fmt.Errorf("%w: longer than %d bytes", ErrBadLine, MaxLineBytes)
	}
	f := strings.Fields(line)
	if len(f) < 12 {
		return Entry{}, fmt.Errorf("%w: %d columns, want 12", ErrBadLine, len(f))
	}
	bad := func(col, v string) error { return fmt.Errorf("%w: %s %.40q", ErrBadLine, col, v) }
	var e Entry
	var err error
	if e.Time, err = time.Parse(time.RFC3339Nano, f[0]); err != nil {
		return Entry{}, bad("time", f[0])
	}
	e.Time = e.Time.UTC()
	if e.Status, err = strconv.Atoi(f[1]); err != nil {
		return Entry{}, bad("status", f[1])
	}
	if f[2] == "-" {
		e.Size = -1
	} else if e.Size, err = strconv.ParseInt(f[2], 10, 64); err != nil || e.Size < 0 {
		return Entry{}, bad("size", f[2])
	}
	dash := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	e.URL = f[3]
	if e.Path, err = hopPath(dash(f[4])); err != nil {
		return Entry{}, err
	}
	e.Via, e.MIME = dash(f[5]), dash(f[6])
	th, ok := strings.CutPrefix(f[7], "#")
	if e.Thread, err = strconv.Atoi(th); !ok || err != nil || e.Thread < 0 {
		return Entry{}, bad("thread", f[7])
	}
	if f[8] != "-" {
		start, dur, ok := strings.Cut(f[8], "+")
		if !ok || len(start) != 17 {
			return Entry{}, bad("fetch time", f[8])
		}
		if e.FetchStart, err = time.Parse(fetchLayout, start[:14]+"."+start[14:]); err != nil {
			return Entry{}, bad("fetch time", f[8])
		}
		ms, err := strconv.ParseInt(dur, 10, 64)
		if err != nil || ms < 0 || ms > int64(time.Duration(1<<62)/time.Millisecond) {
			return Entry{}, bad("fetch duration", f[8])
		}
		e.FetchDuration = time.Duration(ms) * time.Millisecond
	}
	e.Digest, e.Source = dash(f[9]), dash(f[10])
	if a := dash(f[11]); a != "" {
		e.Annotations = strings.Split(a, ",")
		if len(e.Annotations) > MaxAnnotations {
			return Entry{}, bad("annotations", a)
		}
	}
	return e, nil
}

// Options tune a Writer. The zero value works.
type Options struct {
	// Now is the clock for Entry.Time when zero; nil means time.Now.
	Now func() time.Time
	// BufferBytes is the write buffer size; 0 means 64 KiB.
	BufferBytes int
}

// Writer appends lines to a crawl log. Safe for concurrent use. Its
// buffer holds whole lines only and goes to the file in one write call, so
// that a process killed between two writes (kill -9) leaves whole lines:
// unlike a bufio.Writer, which cuts a line at the buffer's edge.
type Writer struct {
	now  func() time.Time
	size int // BufferBytes
	mu   struct {
		sync.Mutex
		buf    []byte // whole lines not yet written
		w      io.Writer
		file   *os.File // nil when writing to a plain io.Writer
		closer io.Closer
		closed bool
	}
}

// NewWriter writes to w (not closed by Close unless it is an io.Closer
// given through Create).
func NewWriter(w io.Writer, opts Options) *Writer {
	cw := &Writer{now: opts.Now}
	if cw.now == nil {
		cw.now = time.Now
	}
	cw.size = opts.BufferBytes
	if cw.size <= 0 {
		cw.size = 64 << 10
	}
	cw.mu.w = w
	cw.mu.buf = make([]byte, 0, cw.size)
	return cw
}

// Create opens path for appending (a resumed crawl continues its log). If
// a crash left a partial last line (a machine crash can, a killed process
// cannot: see Writer), it is cut off; OpenRepair restores the lines of the
// URLs the frontier acknowledged.
func Create(path string, opts Options) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("crawllog: %w", err)
	}
	if _, err = cutTornTail(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("crawllog: %s: %w", path, err)
	}
	w := NewWriter(f, opts)
	w.mu.file, w.mu.closer = f, f
	return w, nil
}

// Log appends e's line to the buffer.
func (w *Writer) Log(e *Entry) error {
	line, err := e.Format(w.now())
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return errors.New("crawllog: writer closed")
	}
	if len(w.mu.buf)+len(line)+1 > w.size && len(w.mu.buf) > 0 {
		if err := w.writeLocked(); err != nil {
			return err
		}
	}
	w.mu.buf = append(w.mu.buf, line...)
	w.mu.buf = append(w.mu.buf, '\n')
	return nil
}

// writeLocked writes the buffered lines in one call.
func (w *Writer) writeLocked() error {
	if len(w.mu.buf) == 0 {
		return nil
	}
	_, err := w.mu.w.Write(w.mu.buf)
	w.mu.buf = w.mu.buf[:0]
	if cap(w.mu.buf) > 4*w.size {
		w.mu.buf = make([]byte, 0, w.size) // one huge line does not stay
	}
	if err != nil {
		return fmt.Errorf("crawllog: write: %w", err)
	}
	return nil
}

// Flush writes buffered lines and, for a file, fsyncs it. The fsync runs
// without the lock, so that Log does not wait for the disk; what was
// written before it is durable when it returns (or was made durable by
// Close, whose fsync comes before its close).
func (w *Writer) Flush() error {
	w.mu.Lock()
	err := w.writeLocked()
	f := w.mu.file
	w.mu.Unlock()
	if err != nil || f == nil {
		return err
	}
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("crawllog: sync: %w", err)
	}
	return nil
}

func (w *Writer) flushLocked() error {
	if err := w.writeLocked(); err != nil {
		return err
	}
	if w.mu.file != nil {
		if err := w.mu.file.Sync(); err != nil {
			return fmt.Errorf("crawllog: sync: %w", err)
		}
	}
	return nil
}

// Close flushes and closes the file opened by Create. Later Logs fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil
	}
	w.mu.closed = true
	err := w.flushLocked()
	if w.mu.closer != nil {
		if cerr := w.mu.closer.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("crawllog: close: %w", cerr)
		}
	}
	return err
}

// Scanner reads a crawl log line by line.
type Scanner struct {
	br   *bufio.Reader
	line int
}

// NewScanner reads from r.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next entry, io.EOF at the end, or an error wrapping
// ErrBadLine (with the line number) for a malformed line; scanning may go
// on after such an error.
func (s *Scanner) Next() (Entry, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return Entry{}, err
		}
		s.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, perr := Parse(string(line))
		if perr != nil {
			return Entry{}, fmt.Errorf("line %d: %w", s.line, perr)
		}
		return e, nil
	}
}

// readLine returns one line without its newline; an over-long line is
// skipped whole and reported as ErrBadLine.
func (s *Scanner) readLine() ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		part, err := s.br.ReadSlice('\n')
		if len(buf)+len(part) > MaxLineBytes {
			tooLong, buf = true, buf[:0]
		} else {
			buf = append(buf, part...)
		}
		switch {
		case err == nil:
			if tooLong {
				s.line++
				return nil, fmt.Errorf("line %d: %w: longer than %d bytes", s.line, ErrBadLine, MaxLineBytes)
			}
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				s.line++
				return nil, fmt.Errorf("line %d: %w: longer than %d bytes", s.line, ErrBadLine, MaxLineBytes)
			}
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return buf, nil
		default:
			return nil, fmt.Errorf("crawllog: read: %w", err)
		}
	}
}
