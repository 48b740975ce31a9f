package warc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

// RecoverResult describes what Recover did to one file.
type RecoverResult struct {
	// Path is the final path (without ".open"); empty when the file held no
	// complete record and was removed.
	Path string
	// Records is the number of complete records kept.
	Records int
	// Cut is the number of bytes removed from the end (a partial record).
	Cut int64
}

// Recover makes every "*.warc.gz.open" file in dir final after a crash: it
// keeps the complete gzip members (one record each), cuts the partial
// trailing one, fsyncs, rebuilds NAME.cdxj and renames the file to NAME. A
// file without one complete record is removed. Other files are untouched.
// Run it before a Writer starts in dir.
func Recover(ctx context.Context, dir string) ([]RecoverResult, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("warc: recover: %w", err)
	}
	var out []RecoverResult
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".warc.gz"+OpenSuffix) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("warc: recover: %w", err)
		}
		res, err := recoverFile(ctx, filepath.Join(dir, e.Name()))
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	if len(out) > 0 {
		if err := syncDir(dir); err != nil {
			return out, err
		}
	}
	return out, nil
}

type member struct{ start, end int64 }

// scanMembers returns the complete gzip members at the start of r.
func scanMembers(ctx context.Context, r io.Reader) ([]member, error) {
	cr := &countReader{r: bufio.NewReaderSize(r, 256<<10)}
	var (
		ms []member
		gz *gzip.Reader
	)
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ms, fmt.Errorf("warc: recover: %w", ctx.Err())
		}
		if _, err := cr.r.Peek(1); err != nil {
			return ms, nil // end of data (or unreadable tail: cut there)
		}
		start := cr.n
		var err error
		if gz == nil {
			gz, err = gzip.NewReader(cr)
		} else {
			err = gz.Reset(cr)
		}
		if err != nil {
			return ms, nil
		}
		gz.Multistream(false)
		if _, err := io.Copy(io.Discard, gz); err != nil {
			return ms, nil
		}
		ms = append(ms, member{start, cr.n})
	}
}

func recoverFile(ctx context.Context, open string) (RecoverResult, error) {
	final := strings.TrimSuffix(open, OpenSuffix)
	f, err := os.OpenFile(open, os.O_RDWR, 0)
	if err != nil {
		return RecoverResult{}, fmt.Errorf("warc: recover: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return RecoverResult{}, fmt.Errorf("warc: recover: %w", err)
	}
	ms, err := scanMembers(ctx, f)
	if err != nil {
		return RecoverResult{}, err
	}
	// Index what the members hold; a member that is valid gzip but not a
	// valid record ends the file too.
	entries, kept, err := indexMembers(io.NewSectionReader(f, 0, st.Size()), filepath.Base(final), ms)
	if err != nil {
		return RecoverResult{}, err
	}
	ms = ms[:kept]
	var size int64
	if len(ms) > 0 {
		size = ms[len(ms)-1].end
	}
	res := RecoverResult{Records: len(ms), Cut: st.Size() - size}
	if len(ms) == 0 {
		f.Close()
		if err := os.Remove(open); err != nil {
			return res, fmt.Errorf("warc: recover: %w", err)
		}
		return res, nil
	}
	if err := f.Truncate(size); err != nil {
		return res, fmt.Errorf("warc: recover: truncate %s: %w", open, err)
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("warc: recover: sync %s: %w", open, err)
	}
	if err := cdxj.WriteFile(final+".cdxj", entries); err != nil {
		return res, fmt.Errorf("warc: recover: %w", err)
	}
	if err := os.Rename(open, final); err != nil {
		return res, fmt.Errorf("warc: recover: %w", err)
	}
	res.Path = final
	return res, nil
}

// indexMembers reads records from r, which must start with members ms, and
// returns the CDXJ entries and how many members hold one valid record
// each.
func indexMembers(r io.Reader, filename string, ms []member) ([]cdxj.Entry, int, error) {
	if len(ms) == 0 {
		return nil, 0, nil
	}
	rd, err := NewReader(io.LimitReader(r, ms[len(ms)-1].end), ReaderOptions{})
	if err != nil {
		return nil, 0, err
	}
	var entries []cdxj.Entry
	for i := range ms {
		h, err := rd.Next()
		if err != nil || rd.Offset() != ms[i].start {
			return entries, i, nil
		}
		head := make([]byte, min(rd.rem, 64<<10))
		if _, err := io.ReadFull(blockOnly{rd}, head); err != nil {
			return entries, i, nil
		}
		loc := Location{File: filename, Offset: ms[i].start, Length: ms[i].end - ms[i].start, RecordID: h.RecordID()}
		if e, ok := indexEntry(h, head, loc); ok {
			entries = append(entries, e)
		}
	}
	// The last record must also end cleanly.
	if _, err := rd.Next(); err != nil && !errors.Is(err, io.EOF) {
		return entries, len(ms) - 1, nil
	}
	return entries, len(ms), nil
}

// IndexFile builds the CDXJ index of a finished .warc.gz file and writes it
// to path+".cdxj".
func IndexFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("warc: index: %w", err)
	}
	defer f.Close()
	ms, err := scanMembers(ctx, f)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("warc: index: %w", err)
	}
	if len(ms) == 0 || ms[len(ms)-1].end != st.Size() {
		return fmt.Errorf("%w: %s is not a complete multi-member .warc.gz", ErrFormat, path)
	}
	entries, kept, err := indexMembers(io.NewSectionReader(f, 0, st.Size()), filepath.Base(path), ms)
	if err != nil {
		return err
	}
	if kept != len(ms) {
		return fmt.Errorf("%w: %s: member %d is not a record", ErrFormat, path, kept)
	}
	return cdxj.WriteFile(path+".cdxj", entries)
}
