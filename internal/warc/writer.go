package warc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/courtesy-crawler/courtesy/internal/gzmember"
	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

// Defaults of Options.
const (
	DefaultPrefix         = "courtesy"
	DefaultMaxFileBytes   = 1_000_000_000 // 1 GB, Heritrix's default
	DefaultMaxFileRecords = 1_000_000
	DefaultSoftware       = "Courtesy (https://github.com/courtesy-crawler/courtesy)"
)

// OpenSuffix marks a file still being written (Heritrix convention); a
// reader never takes a NAME.open file for a finished one.
const OpenSuffix = ".open"

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("warc: writer closed")

// Options configure a Writer. The zero value with Dir set is ready to use.
type Options struct {
	// Dir receives the files; it is created if missing. Required.
	Dir string
	// Prefix starts every file name; default "courtesy". Letters, digits,
	// '-', '_' and '.' only.
	Prefix string
	// MaxFileBytes rotates to a new file once the current one reaches this
	// many (compressed) bytes; checked after each WriteRecord or
	// WriteExchange, so an exchange never spans two files. Default 1 GB.
	MaxFileBytes int64
	// MaxFileRecords also rotates after this many records, which bounds
	// the CDXJ entries held in memory; default 1,000,000.
	MaxFileRecords int
	// Hostname and Port go into file names and the warcinfo record;
	// Hostname defaults to os.Hostname(), Port 0 means none ("0" in names,
	// as Heritrix writes when it has no web UI port).
	Hostname string
	Port     int
	// Info are extra warcinfo fields (operator, isPartOf, description,
	// http-header-user-agent, robots ...), written after "software",
	// "format" and "conformsTo".
	Info []Field
	// Software is the warcinfo "software" field; default DefaultSoftware.
	Software string
	// Level is the gzip level (1 fastest .. 9 smallest); 0 means the
	// library default (6).
	Level int
	// SmallMemberBytes: a record whose header and block are smaller than
	// this is compressed by package gzmember instead of at Level.
	// klauspost/compress builds its Huffman tables with a method made for
	// long streams, which costs more than the rest of a small member's
	// compression; gzmember's members are the size of level 1's at well
	// under its CPU. 0 means never; NewWriter refuses it with a Level
	// other than 1. The crawler sets DefaultSmallMemberBytes.
	SmallMemberBytes int
	// NoIndex turns off the CDXJ index beside each file.
	NoIndex bool
	// Now is the clock for WARC-Date defaults and file names; nil means
	// time.Now. Tests inject a fixed clock.
	Now func() time.Time
}

// Validate reports a configuration error.
func (o *Options) Validate() error {
	if o.Dir == "" {
		return errors.New("warc: Options.Dir is empty")
	}
	for _, c := range o.Prefix {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)) {
			return fmt.Errorf("warc: Options.Prefix %q: only letters, digits, '-', '_' and '.' allowed", o.Prefix)
		}
	}
	if o.MaxFileBytes < 0 || o.MaxFileRecords < 0 || o.Port < 0 || o.Port > 65535 {
		return errors.New("warc: Options: negative MaxFileBytes/MaxFileRecords or bad Port")
	}
	if o.Level < 0 || o.Level > 9 {
		return fmt.Errorf("warc: Options.Level %d not in 0..9", o.Level)
	}
	if o.SmallMemberBytes < 0 || o.SmallMemberBytes > 0 && o.Level != 1 {
		return fmt.Errorf("warc: Options.SmallMemberBytes %d needs Level 1 (the size gzmember matches), not %d", o.SmallMemberBytes, o.Level)
	}
	if strings.ContainsAny(o.Hostname, "~/\\ ") {
		return fmt.Errorf("warc: Options.Hostname %q contains '~', '/', '\\' or a space", o.Hostname)
	}
	return nil
}

func (o *Options) setDefaults() {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxFileRecords == 0 {
		o.MaxFileRecords = DefaultMaxFileRecords
	}
	if o.Hostname == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		o.Hostname = strings.NewReplacer("~", "-", "/", "-", "\\", "-", " ", "-").Replace(h)
	}
	if o.Software == "" {
		o.Software = DefaultSoftware
	}
	if o.Level == 0 {
		o.Level = gzip.DefaultCompression
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Location says where a record landed.
type Location struct {
	// File is the final base name of the WARC file (without ".open").
	File string
	// Offset is the byte offset of the record's gzip member in the file.
	Offset int64
	// Length is the compressed length of the record in bytes.
	Length int64
	// RecordID is the record's WARC-Record-ID.
	RecordID string
}

// Writer writes records to rotating WARC files in one directory. It is safe
// for concurrent use; records are serialized under one lock.
type Writer struct {
	opts Options
	pid  int

	mu struct {
		sync.Mutex
		f          *os.File      // current file, nil between files
		bw         *bufio.Writer // buffers f
		gz         *gzip.Writer  // reused for every member
		small      gzmember.Encoder
		member     []byte       // a gzmember member, reused
		hdr        []byte       // serialized record header, reused
		name       string       // final base name of f
		size       int64        // bytes written to f (through bw)
		records    int          // records in f
		warcinfoID string       // of f's warcinfo record
		index      []cdxj.Entry // CDXJ entries of f
		serial     int          // next file's serial number
		lastStamp  string       // timestamp17 of the previous file
		closed     bool
		files      []string // finished files, full paths
	}
}

// NewWriter checks opts and creates Dir. The first file is opened by the
// first write.
func NewWriter(opts Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	w := &Writer{opts: opts, pid: os.Getpid()}
	gz, err := gzip.NewWriterLevel(io.Discard, opts.Level)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	w.mu.gz = gz
	return w, nil
}

// Files returns the full paths of the files finished so far.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.mu.files...)
}

// WriteRecord writes one record. Missing WARC-Record-ID, WARC-Date,
// WARC-Warcinfo-ID (except on warcinfo records) and WARC-Block-Digest are
// filled in; Content-Length is always set from the block. rec is not
// modified.
func (w *Writer) WriteRecord(ctx context.Context, rec *Record) (Location, error) {
	if err := ctx.Err(); err != nil {
		return Location{}, fmt.Errorf("warc: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	loc, err := w.writeLocked(rec)
	if err != nil {
		return loc, err
	}
	return loc, w.maybeRotateLocked()
}

// Flush writes buffered bytes to the file and fsyncs it, so every record
// written before survives a crash (then Recover makes the file final).
func (w *Writer) Flush() error {
	w.mu.Lock()
	f, name := w.mu.f, w.mu.name
	if f == nil {
		w.mu.Unlock()
		return nil
	}
	if err := w.mu.bw.Flush(); err != nil {
		w.mu.Unlock()
		return fmt.Errorf("warc: flush %s: %w", name, err)
	}
	w.mu.Unlock()
	// The fsync runs without the lock: writers append meanwhile (a crawl's
	// workers waited on it). What was written before it is made durable by
	// it, or, if the file was finished meanwhile, by the finish's own
	// fsync before its close (so a closed file is no error).
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("warc: sync %s: %w", name, err)
	}
	return nil
}

// Rotate finishes the current file now (if any); the next write opens a
// new one.
func (w *Writer) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.finishLocked()
}

// Close finishes the current file: flush, fsync, CDXJ index, rename from
// NAME.open to NAME. Writes after Close fail with ErrClosed; a second Close
// is a no-op.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return nil
	}
	w.mu.closed = true
	return w.finishLocked()
}

// writeLocked writes rec into the current file, opening one if needed.
func (w *Writer) writeLocked(rec *Record) (Location, error) {
	if w.mu.closed {
		return Location{}, ErrClosed
	}
	if w.mu.f == nil {
		if err := w.openLocked(); err != nil {
			return Location{}, err
		}
	}
	h := Header{Version: rec.Header.Version, Fields: append([]Field(nil), rec.Header.Fields...)}
	if h.Get(HeaderType) == "" {
		return Location{}, errors.New("warc: record without WARC-Type")
	}
	if h.Get(HeaderRecordID) == "" {
		h.Set(HeaderRecordID, NewRecordID())
	}
	if h.Get(HeaderDate) == "" {
		h.Set(HeaderDate, FormatDate(w.opts.Now()))
	}
	if h.Type() != TypeWarcinfo && h.Get(HeaderWarcinfoID) == "" && w.mu.warcinfoID != "" {
		h.Set(HeaderWarcinfoID, w.mu.warcinfoID)
	}
	if h.Get(HeaderBlockDigest) == "" {
		h.Set(HeaderBlockDigest, digest2(rec.Block, rec.tail))
	}
	h.Set(HeaderContentLength, strconv.Itoa(len(rec.Block)+len(rec.tail)))

	hb, err := appendHeader(w.mu.hdr[:0], &h)
	w.mu.hdr = hb
	if err != nil {
		return Location{}, err
	}
	off := w.mu.size
	cw := &countWriter{w: w.mu.bw}
	if len(hb)+len(rec.Block)+len(rec.tail) < w.opts.SmallMemberBytes {
		w.mu.member = w.mu.small.AppendMember(w.mu.member[:0], hb, rec.Block, rec.tail, recordEnd)
		_, err = cw.Write(w.mu.member)
	} else {
		w.mu.gz.Reset(cw)
		_, err = w.mu.gz.Write(hb)
		if err == nil {
			_, err = w.mu.gz.Write(rec.Block)
		}
		if err == nil && len(rec.tail) > 0 {
			_, err = w.mu.gz.Write(rec.tail)
		}
		if err == nil {
			_, err = w.mu.gz.Write(recordEnd)
		}
		if err == nil {
			err = w.mu.gz.Close()
		}
	}
	w.mu.size += cw.n
	if err != nil {
		// A half-written member may stay in the file and later records
		// must not follow it: leave the file as NAME.open for Recover and
		// start a new one on the next write.
		w.abandonLocked()
		return Location{}, fmt.Errorf("warc: write %s: %w", w.mu.name, err)
	}
	w.mu.records++
	loc := Location{File: w.mu.name, Offset: off, Length: cw.n, RecordID: h.RecordID()}
	if !w.opts.NoIndex {
		if e, ok := indexEntry(&h, rec.Block, loc); ok {
			w.mu.index = append(w.mu.index, e)
		}
	}
	return loc, nil
}

// recordEnd ends every record (WARC 1.1 §4: two CRLFs after the block).
var recordEnd = []byte("\r\n\r\n")

// DefaultSmallMemberBytes is the crawler's Options.SmallMemberBytes:
// gzmember makes one DEFLATE block of the whole record, which suits
// records up to tens of kilobytes; a longer one is better served by
// klauspost/compress' blocks.
const DefaultSmallMemberBytes = 64 << 10

// abandonLocked closes the current file after a write error without
// renaming it, so that Recover repairs it later.
func (w *Writer) abandonLocked() {
	if w.mu.f != nil {
		w.mu.bw.Flush()
		w.mu.f.Close()
	}
	w.mu.f, w.mu.bw, w.mu.index = nil, nil, nil
}

func (w *Writer) maybeRotateLocked() error {
	if w.mu.f != nil && (w.mu.size >= w.opts.MaxFileBytes || w.mu.records >= w.opts.MaxFileRecords) {
		return w.finishLocked()
	}
	return nil
}

// fileName builds a Heritrix-style name:
// {prefix}-{yyyyMMddHHmmssSSS}-{serial:05d}-{pid}~{hostname}~{port}.warc.gz
func (w *Writer) fileName(t time.Time, serial int) string {
	stamp := t.UTC().Format("20060102150405.000")
	stamp = strings.Replace(stamp, ".", "", 1)
	return fmt.Sprintf("%s-%s-%05d-%d~%s~%d.warc.gz", w.opts.Prefix, stamp, serial, w.pid, w.opts.Hostname, w.opts.Port)
}

// openLocked creates the next NAME.open and writes its warcinfo record.
func (w *Writer) openLocked() error {
	now := w.opts.Now()
	var name string
	// O_EXCL: never append to another writer's file; the serial makes the
	// name unique within this process, the pid across processes.
	var f *os.File
	for range 1000 {
		name = w.fileName(now, w.mu.serial)
		w.mu.serial++
		var err error
		f, err = os.OpenFile(filepath.Join(w.opts.Dir, name+OpenSuffix), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			if _, err := os.Stat(filepath.Join(w.opts.Dir, name)); err == nil {
				// A finished file of that name exists (same pid reused
				// after a restart with a frozen clock): try the next serial.
				f.Close()
				os.Remove(filepath.Join(w.opts.Dir, name+OpenSuffix))
				continue
			}
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("warc: %w", err)
		}
	}
	if f == nil {
		return fmt.Errorf("warc: no free file name in %s", w.opts.Dir)
	}
	w.mu.f = f
	w.mu.bw = bufio.NewWriterSize(f, 256<<10)
	w.mu.name = name
	w.mu.size, w.mu.records, w.mu.index = 0, 0, nil
	w.mu.warcinfoID = ""

	var block strings.Builder
	fields := append([]Field{
		{"software", w.opts.Software},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{"hostname", w.opts.Hostname},
	}, w.opts.Info...)
	for _, f := range fields {
		if strings.ContainsAny(f.Name+f.Value, "\r\n") {
			continue
		}
		block.WriteString(f.Name + ": " + f.Value + "\r\n")
	}
	id := NewRecordID()
	rec := &Record{Block: []byte(block.String())}
	rec.Header.Add(HeaderType, string(TypeWarcinfo))
	rec.Header.Add(HeaderRecordID, id)
	rec.Header.Add(HeaderDate, FormatDate(now))
	rec.Header.Add(HeaderFilename, name)
	rec.Header.Add(HeaderContentType, ContentTypeFields)
	if _, err := w.writeLocked(rec); err != nil {
		return err
	}
	w.mu.warcinfoID = id
	return nil
}

// finishLocked flushes, fsyncs, writes the index and renames the current
// file to its final name.
func (w *Writer) finishLocked() error {
	if w.mu.f == nil {
		return nil
	}
	f, name, index := w.mu.f, w.mu.name, w.mu.index
	err := w.mu.bw.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.mu.f, w.mu.bw, w.mu.index = nil, nil, nil
	if err != nil {
		return fmt.Errorf("warc: finish %s: %w", name, err)
	}
	final := filepath.Join(w.opts.Dir, name)
	if !w.opts.NoIndex {
		if err := cdxj.WriteFile(final+".cdxj", index); err != nil {
			return fmt.Errorf("warc: index %s: %w", name, err)
		}
	}
	if err := os.Rename(final+OpenSuffix, final); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	if err := syncDir(w.opts.Dir); err != nil {
		return err
	}
	w.mu.files = append(w.mu.files, final)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", dir, err)
	}
	return nil
}

// countWriter counts bytes passed to w.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
