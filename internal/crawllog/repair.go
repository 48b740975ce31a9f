package crawllog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// cutTornTail truncates f after its last newline, dropping a partial last
// line, and returns the bytes dropped.
func cutTornTail(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size == 0 {
		return 0, nil
	}
	buf := make([]byte, 64<<10)
	end := size
	for end > 0 {
		n := min(int64(len(buf)), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if end == size {
		return 0, nil
	}
	if err := f.Truncate(end); err != nil {
		return 0, err
	}
	return size - end, nil
}

// AnnotationRebuilt marks a line OpenRepair's caller added for an
// acknowledged URL whose line a crash lost.
const AnnotationRebuilt = "log:rebuilt"

// Owner returns the URL whose completion a line belongs to: the line's
// own URL, except for a URL cut by a trap limit before it was queued
// (annotation "trap:..."), which the crawler logs while it processes the
// page that linked to it (Via).
func (e *Entry) Owner() string {
	for _, a := range e.Annotations {
		if strings.HasPrefix(a, "trap:") && e.Via != "" {
			return e.Via
		}
	}
	return e.URL
}

// RepairStats says what a repair did.
type RepairStats struct {
	// Kept lines belong to acknowledged URLs.
	Kept int
	// Unacked lines belonged to URLs the frontier had not acknowledged:
	// the crawl does them again and logs them then.
	Unacked int
	// Duplicates are further lines of a URL already kept.
	Duplicates int
	// Malformed lines could not be parsed (a torn line from an older
	// version, garbage).
	Malformed int
	// TornBytes were cut from a partial last line.
	TornBytes int64
	// Added lines were written with Add for acknowledged URLs without one.
	Added int
	// Prerequisites are the robots.txt fetch lines kept (also counted in
	// Kept): they need no acknowledgement.
	Prerequisites int
}

func (s RepairStats) String() string {
	return fmt.Sprintf("%d lines kept (%d robots.txt fetches), %d of unacknowledged URLs dropped, %d duplicates dropped, %d malformed dropped, %d torn bytes cut, %d rebuilt",
		s.Kept, s.Prerequisites, s.Unacked, s.Duplicates, s.Malformed, s.TornBytes, s.Added)
}

// Repair rewrites a crawl log so that it agrees with the frontier after a
// crash: open it with OpenRepair, give the lines lost for acknowledged URLs
// with Add (Has tells which have one), and Commit.
//
// The rule: a crawl's frontier acknowledges a URL after its line was
// logged, so after a crash the log may hold lines of URLs not acknowledged
// (done again on resume, which would log them twice) and, if it was not
// flushed first, lack lines of acknowledged ones. A repaired log holds
// exactly one line per acknowledged URL (the first it had) plus the lines of
// trap cuts whose owner (Entry.Owner) was acknowledged and the first
// robots.txt fetch line of each robots.txt URL (Entry.Prerequisite), in
// their order, then the lines added.
type Repair struct {
	path  string
	tmp   *os.File
	bw    *bufio.Writer
	has   map[uint64]struct{} // keys of lines kept or added
	pre   []uint64            // keys of the robots.txt fetch lines kept
	stats RepairStats
	now   func() time.Time
}

// OpenRepair reads the log at path (a missing file is an empty log) and
// keeps, in a temporary file beside it, the lines whose owner acked
// accepts. acked must answer for every URL of the log; a frontier's set of
// completed URLs, or a lookup in it, is what it is for.
func OpenRepair(path string, acked func(url string) bool) (*Repair, error) {
	r := &Repair{path: path, has: map[uint64]struct{}{}, now: time.Now}
	in, err := os.OpenFile(path, os.O_RDWR, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		in = nil
	case err != nil:
		return nil, fmt.Errorf("crawllog: repair: %w", err)
	}
	if in != nil {
		defer in.Close()
		if r.stats.TornBytes, err = cutTornTail(in); err != nil {
			return nil, fmt.Errorf("crawllog: repair: %s: %w", path, err)
		}
	}
	r.tmp, err = os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".repair-*")
	if err != nil {
		return nil, fmt.Errorf("crawllog: repair: %w", err)
	}
	r.bw = bufio.NewWriterSize(r.tmp, 256<<10)
	if in == nil {
		return r, nil
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		r.Abort()
		return nil, fmt.Errorf("crawllog: repair: %w", err)
	}
	s := NewScanner(in)
	for {
		line, err := s.readLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrBadLine) {
			r.stats.Malformed++
			continue
		}
		if err != nil {
			r.Abort()
			return nil, fmt.Errorf("crawllog: repair: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := Parse(string(line))
		if err != nil {
			r.stats.Malformed++
			continue
		}
		// A robots.txt fetch is no frontier URL: nothing acknowledges it,
		// and the crawler logs it only once its WARC record is on disk.
		// Kept (once).
		pre := e.Prerequisite()
		if !pre && !acked(e.Owner()) {
			r.stats.Unacked++
			continue
		}
		k := key(&e)
		if _, dup := r.has[k]; dup {
			r.stats.Duplicates++
			continue
		}
		r.has[k] = struct{}{}
		r.bw.Write(line)
		r.bw.WriteByte('\n')
		r.stats.Kept++
		if pre {
			r.pre = append(r.pre, k)
		}
	}
	return r, nil
}

// key identifies a line: its URL, and for a trap cut also its owner (one
// URL may be cut once per page linking to it). A robots.txt fetch line is
// keyed apart from any URL line of the same URL (a page may link to
// /robots.txt): PrerequisiteKey.
func key(e *Entry) uint64 {
	if e.Prerequisite() {
		return PrerequisiteKey(e.URL)
	}
	h := fnv.New64a()
	io.WriteString(h, e.URL)
	if o := e.Owner(); o != e.URL {
		h.Write([]byte{0})
		io.WriteString(h, o)
	}
	return h.Sum64()
}

// PrerequisiteKey identifies the robots.txt fetch line of url: a log has
// one per robots.txt URL, the first fetch's (the crawler archives later
// fetches, after an expiry or a 5xx, without a line), so that every URL,
// robots.txt included, has one line.
func PrerequisiteKey(url string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, url)
	h.Write([]byte{0, 'P'})
	return h.Sum64()
}

// Prerequisites returns the PrerequisiteKey of each robots.txt fetch line
// the repaired log kept.
func (r *Repair) Prerequisites() []uint64 { return r.pre }

// Has reports whether the repaired log has a line for url (as a URL of
// its own, not a trap cut).
func (r *Repair) Has(url string) bool {
	_, ok := r.has[key(&Entry{URL: url})]
	return ok
}

// Add appends a line for an acknowledged URL that has none (Has false);
// a URL that has one is left alone. The line is annotated
// AnnotationRebuilt; a zero Time is the repair's clock.
func (r *Repair) Add(e Entry) error {
	k := key(&e)
	if _, ok := r.has[k]; ok {
		return nil
	}
	if len(e.Annotations) < MaxAnnotations {
		e.Annotations = append(e.Annotations[:len(e.Annotations):len(e.Annotations)], AnnotationRebuilt)
	}
	line, err := e.Format(r.now())
	if err != nil {
		return err
	}
	r.has[k] = struct{}{}
	r.bw.WriteString(line)
	r.bw.WriteByte('\n')
	r.stats.Added++
	return nil
}

// Commit replaces the log with the repaired one (written, fsynced, renamed
// over it, the directory fsynced) and says what changed.
func (r *Repair) Commit() (RepairStats, error) {
	fail := func(err error) (RepairStats, error) {
		r.Abort()
		return r.stats, fmt.Errorf("crawllog: repair: %w", err)
	}
	r.stats.Prerequisites = len(r.pre)
	if err := r.bw.Flush(); err != nil {
		return fail(err)
	}
	if err := r.tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := r.tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := r.tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(r.tmp.Name(), r.path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(filepath.Dir(r.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return r.stats, nil
}

// Abort drops the repair and leaves the log as it was (its torn tail cut).
func (r *Repair) Abort() {
	if r.tmp != nil {
		r.tmp.Close()
		os.Remove(r.tmp.Name())
	}
}
