package testweb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Entry is one recorded request.
type Entry struct {
	Start     time.Time `json:"start"`  // when the handler received the request
	End       time.Time `json:"end"`    // when the handler returned (body written)
	Method    string    `json:"method"` // request method
	Host      string    `json:"host"`   // Host header (or absolute-form host) as sent
	Target    string    `json:"target"` // path and query, origin form
	Client    string    `json:"client"` // client address and port
	Status    int       `json:"status"` // status answered
	Bytes     int64     `json:"bytes"`  // body bytes written (after compression)
	UserAgent string    `json:"ua"`     // User-Agent header
	Proxy     bool      `json:"proxy"`  // the request came in absolute form
}

// Recorder receives one Entry per request, from many goroutines at once.
type Recorder interface {
	Record(e *Entry)
}

// LoggedHandler returns Handler with every request recorded by rec (nil
// records nothing).
func (w *Web) LoggedHandler(rec Recorder) http.Handler {
	if rec == nil {
		return w.Handler()
	}
	return &loggedHandler{h: handler{w: w}, rec: rec}
}

type loggedHandler struct {
	h   handler
	rec Recorder
}

var countingPool = sync.Pool{New: func() any { return new(countingWriter) }}

func (l *loggedHandler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	e := Entry{Start: time.Now()}
	cw := countingPool.Get().(*countingWriter)
	*cw = countingWriter{ResponseWriter: rw}
	l.h.ServeHTTP(cw, r)
	e.End = time.Now()
	e.Method = r.Method
	e.Host = r.Host
	e.Target = r.URL.RequestURI()
	e.Client = r.RemoteAddr
	e.Status = cw.status
	if e.Status == 0 {
		e.Status = 200
	}
	e.Bytes = cw.n
	e.UserAgent = r.UserAgent()
	e.Proxy = r.URL.IsAbs()
	*cw = countingWriter{}
	countingPool.Put(cw)
	l.rec.Record(&e)
}

// countingWriter remembers the status and counts body bytes.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = 200
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// Flush lets the endless body stream through the wrapper.
func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Log writes entries as JSON lines through a buffer. Writing is cheap (the
// line is encoded by hand into the buffer under a mutex); the buffer goes to
// the underlying writer when full, every FlushInterval, on Flush and on
// Close. Write errors are kept and returned by Flush and Close.
type Log struct {
	done chan struct{}
	wg   sync.WaitGroup

	mu struct {
		sync.Mutex
		w       *bufio.Writer
		line    []byte
		err     error
		closed  bool
		entries int64
	}
}

// FlushInterval is how often a Log flushes its buffer on its own.
const FlushInterval = time.Second

// NewLog returns a Log writing to w, and starts its flushing goroutine,
// which Close stops.
func NewLog(w io.Writer) *Log {
	l := &Log{done: make(chan struct{})}
	l.mu.w = bufio.NewWriterSize(w, 256<<10)
	l.wg.Add(1)
	go l.flushLoop()
	return l
}

func (l *Log) flushLoop() {
	defer l.wg.Done()
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			l.Flush()
		}
	}
}

// Record appends e to the log; after Close it does nothing.
func (l *Log) Record(e *Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return
	}
	l.mu.line = AppendEntry(l.mu.line[:0], e)
	if _, err := l.mu.w.Write(l.mu.line); err != nil && l.mu.err == nil {
		l.mu.err = fmt.Errorf("testweb: writing log: %w", err)
	}
	l.mu.entries++
}

// Entries returns how many entries were recorded.
func (l *Log) Entries() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.entries
}

// Flush writes the buffered lines out.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.mu.w.Flush(); err != nil && l.mu.err == nil {
		l.mu.err = fmt.Errorf("testweb: writing log: %w", err)
	}
	return l.mu.err
}

// Close flushes the log and stops its goroutine. It does not close the
// underlying writer. Calling Close twice is harmless.
func (l *Log) Close() error {
	l.mu.Lock()
	already := l.mu.closed
	l.mu.closed = true
	l.mu.Unlock()
	if !already {
		close(l.done)
		l.wg.Wait()
	}
	return l.Flush()
}

// AppendEntry appends e as one JSON line (with its newline) to b. Times are
// UTC RFC 3339 with nanoseconds; strings are escaped as RFC 8259 §7 says,
// invalid UTF-8 replaced by U+FFFD.
func AppendEntry(b []byte, e *Entry) []byte {
	b = append(b, `{"start":"`...)
	b = e.Start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","end":"`...)
	b = e.End.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","method":`...)
	b = appendJSONString(b, e.Method)
	b = append(b, `,"host":`...)
	b = appendJSONString(b, e.Host)
	b = append(b, `,"target":`...)
	b = appendJSONString(b, e.Target)
	b = append(b, `,"client":`...)
	b = appendJSONString(b, e.Client)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, `,"ua":`...)
	b = appendJSONString(b, e.UserAgent)
	b = append(b, `,"proxy":`...)
	b = strconv.AppendBool(b, e.Proxy)
	b = append(b, "}\n"...)
	return b
}

const hexDigits = "0123456789abcdef"

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// MaxLogLine bounds one line of a log read by ReadLog.
const MaxLogLine = 1 << 20

// ParseEntry parses one log line (without or with its newline).
func ParseEntry(line []byte) (Entry, error) {
	var e Entry
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return e, errors.New("testweb: log line is not a JSON object")
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return Entry{}, fmt.Errorf("testweb: log line: %w", err)
	}
	if e.Start.IsZero() || e.End.IsZero() {
		return Entry{}, errors.New("testweb: log line lacks start or end")
	}
	if e.End.Before(e.Start) {
		return Entry{}, errors.New("testweb: log line ends before it starts")
	}
	return e, nil
}

// ReadLog calls fn for every entry of a log in file order. Blank lines are
// skipped; a bad line stops the reading with an error naming its number. A
// last line without newline (a log cut by a crash) is ignored when it does
// not parse.
func ReadLog(r io.Reader, fn func(Entry) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(line) > 0 && len(bytes.TrimSpace(line)) > 0 {
			complete := line[len(line)-1] == '\n'
			e, perr := ParseEntry(line)
			switch {
			case perr != nil && !complete && err == io.EOF:
				return nil
			case perr != nil:
				return fmt.Errorf("testweb: log line %d: %w", n, perr)
			}
			if ferr := fn(e); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("testweb: reading log line %d: %w", n, err)
		}
	}
}

// readLine reads one line including its newline, refusing lines longer
// than MaxLogLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > MaxLogLine {
			return nil, fmt.Errorf("testweb: log line longer than %d bytes", MaxLogLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// Memory keeps entries in memory, for in-process tests. At most Limit
// entries are kept (default 1,000,000); later ones are counted in Dropped.
type Memory struct {
	// Limit is the most entries kept; 0 means 1,000,000.
	Limit int

	mu struct {
		sync.Mutex
		entries []Entry
		dropped int
	}
}

// Record keeps a copy of e.
func (m *Memory) Record(e *Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := m.Limit
	if limit <= 0 {
		limit = 1_000_000
	}
	if len(m.mu.entries) >= limit {
		m.mu.dropped++
		return
	}
	m.mu.entries = append(m.mu.entries, *e)
}

// Entries returns a copy of the entries kept, in recording order.
func (m *Memory) Entries() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Entry(nil), m.mu.entries...)
}

// Dropped returns how many entries were not kept for lack of room.
func (m *Memory) Dropped() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.dropped
}

// Reset forgets every entry.
func (m *Memory) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.entries, m.mu.dropped = nil, 0
}
