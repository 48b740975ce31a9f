package rdf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

// QuadFileExt ends the name of a finished quad file; a file being written
// ends with QuadFileExt + OpenSuffix.
const (
	QuadFileExt = ".nq.gz"
	OpenSuffix  = ".open"
)

// Defaults of QuadFileOptions.
const (
	DefaultQuadFilePrefix   = "courtesy"
	DefaultMaxQuadFileBytes = 64 << 20
)

// QuadFileOptions configure a QuadFileWriter. Dir is required; the zero
// value of every other field works.
type QuadFileOptions struct {
	// Dir is the directory of the files (DATA/rdf for a crawl); created
	// if missing.
	Dir string
	// Prefix starts every file name; "" means DefaultQuadFilePrefix.
	Prefix string
	// MaxFileBytes rotates the file once this many uncompressed bytes
	// were written to it; 0 means DefaultMaxQuadFileBytes (64 MiB).
	MaxFileBytes int64
	// MaxFileAge rotates a non-empty file older than this at the next
	// WriteQuads or Flush, so that a follower sees a slow crawl's quads
	// within about that delay; 0 means no age limit.
	MaxFileAge time.Duration
	// Now is the clock (file names, MaxFileAge); nil means time.Now.
	Now func() time.Time
}

// Validate reports the first invalid field.
func (o QuadFileOptions) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("rdf: quad files: Dir is required")
	case o.MaxFileBytes < 0:
		return fmt.Errorf("rdf: quad files: MaxFileBytes is negative (%d)", o.MaxFileBytes)
	case o.MaxFileAge < 0:
		return fmt.Errorf("rdf: quad files: MaxFileAge is negative (%v)", o.MaxFileAge)
	case strings.ContainsAny(o.Prefix, "/\\"):
		return fmt.Errorf("rdf: quad files: Prefix %q holds a path separator", o.Prefix)
	}
	return nil
}

// QuadFileWriter writes N-Quads into rotating gzip files, for a follower
// (the indexer) that reads them while they are produced. A file is written
// under NAME.nq.gz.open and renamed to NAME.nq.gz only once complete
// (closed, synced): a follower lists only *.nq.gz and so never reads a
// torn gzip member or a partial line. Names sort in the order the files
// were started. It is safe for concurrent use.
//
// A crawl writes one page's quads with one WriteQuads call (its graph is
// the page URL), so a page never straddles two files.
type QuadFileWriter struct {
	opts QuadFileOptions
	mu   struct {
		sync.Mutex
		f      *os.File
		gz     *gzip.Writer
		bw     *bufio.Writer
		name   string // final name, without OpenSuffix
		n      int64  // uncompressed bytes in the current file
		opened time.Time
		serial int
		closed bool
	}
}

// NewQuadFileWriter returns a writer; the first file is created at the
// first write.
func NewQuadFileWriter(opts QuadFileOptions) (*QuadFileWriter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultQuadFilePrefix
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = DefaultMaxQuadFileBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("rdf: quad files: %w", err)
	}
	return &QuadFileWriter{opts: opts}, nil
}

// WriteQuads appends quads (one page's, typically) to the current file,
// then rotates it if it is full.
func (w *QuadFileWriter) WriteQuads(quads []Quad) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return errors.New("rdf: quad files: write after Close")
	}
	if len(quads) == 0 {
		return nil
	}
	if err := w.rotateIfOldLocked(); err != nil {
		return err
	}
	if w.mu.f == nil {
		if err := w.openLocked(); err != nil {
			return err
		}
	}
	for _, q := range quads {
		s := q.String()
		if _, err := w.mu.bw.WriteString(s); err != nil {
			return fmt.Errorf("rdf: quad files: write %s: %w", w.mu.name, err)
		}
		if err := w.mu.bw.WriteByte('\n'); err != nil {
			return fmt.Errorf("rdf: quad files: write %s: %w", w.mu.name, err)
		}
		w.mu.n += int64(len(s)) + 1
	}
	if w.mu.n >= w.opts.MaxFileBytes {
		return w.finishLocked()
	}
	return nil
}

// Flush rotates the current file if it is older than MaxFileAge. Data of
// an unfinished file is invisible to followers anyway, so Flush does not
// sync it.
func (w *QuadFileWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rotateIfOldLocked()
}

// Sync makes every quad written so far durable in the current file: it
// flushes the buffers and the gzip stream (a sync flush, so the bytes on
// disk decode up to here), then fsyncs the file. It returns the current
// file's final name and its size in bytes after the sync ("" and 0 when no
// file is open): RecoverQuadFiles on that file cut back to size keeps
// exactly the quads written before this call. A crawl calls it before it
// commits the pages whose quads it wrote.
func (w *QuadFileWriter) Sync() (name string, size int64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.f == nil {
		return "", 0, nil
	}
	if err := w.mu.bw.Flush(); err != nil {
		return "", 0, fmt.Errorf("rdf: quad files: sync %s: %w", w.mu.name, err)
	}
	if err := w.mu.gz.Flush(); err != nil {
		return "", 0, fmt.Errorf("rdf: quad files: sync %s: %w", w.mu.name, err)
	}
	if err := w.mu.f.Sync(); err != nil {
		return "", 0, fmt.Errorf("rdf: quad files: sync %s: %w", w.mu.name, err)
	}
	st, err := w.mu.f.Stat()
	if err != nil {
		return "", 0, fmt.Errorf("rdf: quad files: sync %s: %w", w.mu.name, err)
	}
	return w.mu.name, st.Size(), nil
}

// Rotate finishes the current file (if any), making it visible to
// followers.
func (w *QuadFileWriter) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.finishLocked()
}

// Close finishes the current file. Later writes fail.
func (w *QuadFileWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil
	}
	w.mu.closed = true
	return w.finishLocked()
}

func (w *QuadFileWriter) rotateIfOldLocked() error {
	if w.mu.f != nil && w.opts.MaxFileAge > 0 && w.opts.Now().Sub(w.mu.opened) >= w.opts.MaxFileAge {
		return w.finishLocked()
	}
	return nil
}

func (w *QuadFileWriter) openLocked() error {
	now := w.opts.Now()
	w.mu.serial++
	// yyyyMMddHHmmssSSS as in WARC file names: names sort by start time,
	// then serial.
	stamp := now.UTC().Format("20060102150405.000")
	stamp = strings.Replace(stamp, ".", "", 1)
	name := fmt.Sprintf("%s-%s-%05d-%d%s", w.opts.Prefix, stamp, w.mu.serial, os.Getpid(), QuadFileExt)
	f, err := os.OpenFile(filepath.Join(w.opts.Dir, name+OpenSuffix), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	w.mu.f, w.mu.name, w.mu.n, w.mu.opened = f, name, 0, now
	w.mu.gz = gzip.NewWriter(f)
	w.mu.bw = bufio.NewWriterSize(w.mu.gz, 64<<10)
	return nil
}

// finishLocked closes, syncs and renames the current file.
func (w *QuadFileWriter) finishLocked() error {
	if w.mu.f == nil {
		return nil
	}
	f, name := w.mu.f, w.mu.name
	w.mu.f = nil
	err := w.mu.bw.Flush()
	if e := w.mu.gz.Close(); err == nil {
		err = e
	}
	if e := f.Sync(); err == nil {
		err = e
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("rdf: quad files: finish %s: %w", name, err)
	}
	final := filepath.Join(w.opts.Dir, name)
	if err := os.Rename(final+OpenSuffix, final); err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	syncDir(w.opts.Dir)
	return nil
}

// syncDir makes a rename durable; errors are ignored (some file systems
// cannot sync a directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// QuadFiles returns the names (not paths) of the finished quad files in
// dir, in the order they were started. A missing dir holds none.
func QuadFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdf: quad files: %w", err)
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, QuadFileExt) && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// ReadQuadFile calls fn for every quad of a .nq.gz (or plain .nq) file
// after the first skip statements, with the number of statements read so
// far (skip plus the quads given to fn, counting bad lines). A bad line
// is passed to bad (nil: it is skipped) with its error; a nil-returning
// bad goes on. It returns the statement count at the end or at fn's error.
func ReadQuadFile(ctx context.Context, path string, skip int64, opts QuadReaderOptions,
	fn func(q Quad, n int64) error, bad func(err error) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("rdf: quad files: %w", err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 64<<10)
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return 0, fmt.Errorf("rdf: quad files: %s: %w", filepath.Base(path), err)
		}
		defer gz.Close()
		r = gz
	}
	d := NewQuadReader(r, opts)
	var n int64
	for {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		q, err := d.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		var se *NQuadsError
		if err != nil && !errors.As(err, &se) && !errors.Is(err, ErrLineTooLong) {
			return n, fmt.Errorf("rdf: quad files: %s: %w", filepath.Base(path), err)
		}
		n++
		if n <= skip {
			continue
		}
		if err != nil {
			if bad != nil {
				if err := bad(fmt.Errorf("%s: %w", filepath.Base(path), err)); err != nil {
					return n, err
				}
			}
			continue
		}
		if err := fn(q, n); err != nil {
			return n, err
		}
	}
}

// RecoverQuadFiles finishes the *.nq.gz.open files a crashed writer left in
// dir: each keeps its complete lines and is renamed to its final name (an
// empty one is removed). Only the owner of dir may call it, before its
// writer starts: a running writer's file would be cut.
func RecoverQuadFiles(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), QuadFileExt+OpenSuffix) {
			continue
		}
		if err := recoverOne(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	syncDir(dir)
	return nil
}

func recoverOne(open string) error {
	final := strings.TrimSuffix(open, OpenSuffix)
	data, err := os.ReadFile(open)
	if err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	var text []byte
	if gz, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
		// A torn stream yields what it holds, then an error.
		text, _ = io.ReadAll(gz)
	}
	text = text[:bytes.LastIndexByte(text, '\n')+1]
	if len(text) == 0 {
		if err := os.Remove(open); err != nil {
			return fmt.Errorf("rdf: quad files: %w", err)
		}
		return nil
	}
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	_, _ = gw.Write(text)
	_ = gw.Close()
	tmp := open + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	if f, err := os.Open(tmp); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	if err := os.Remove(open); err != nil {
		return fmt.Errorf("rdf: quad files: %w", err)
	}
	return nil
}
