package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/triplestore"
)

// Options configure an Indexer. DataDir is required; the zero value of
// every other field works.
type Options struct {
	// DataDir is the crawl's data directory: quads are read from
	// DataDir/rdf, WARC files from DataDir/warc.
	DataDir string
	// IndexDir holds the stores; "" means DataDir/index.
	IndexDir string
	// Poll is how often Run looks for new data; 0 means 2 s.
	Poll time.Duration
	// BatchQuads is the number of quads (or WARC records, counted as 10
	// quads each) committed together; 0 means 20,000. Memory grows with
	// it (about 1 KB per quad, the text documents included).
	BatchQuads int
	// ReadOnly opens the stores for search only: Run and CatchUp fail.
	ReadOnly bool
	// Store tunes the triple store.
	Store triplestore.Options
	// Logf receives progress and skipped input; nil discards it.
	Logf func(format string, args ...any)
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.DataDir == "":
		return errors.New("index: DataDir is required")
	case o.Poll < 0:
		return fmt.Errorf("index: Poll is negative (%v)", o.Poll)
	case o.BatchQuads < 0:
		return fmt.Errorf("index: BatchQuads is negative (%d)", o.BatchQuads)
	}
	return o.Store.Validate()
}

// Stats count what an Indexer has done since it was opened.
type Stats struct {
	Files      int64 // files finished
	Quads      int64 // quads read
	NewQuads   int64 // quads not already in the store
	BadLines   int64 // N-Quads lines skipped as malformed
	Records    int64 // WARC records read
	Pages      int64 // HTML responses indexed
	Bytes      int64 // bytes of input read (uncompressed quads, WARC blocks)
	Commits    int64
	Skipped    int64 // WARC responses skipped (not HTML, bad HTTP, encoding)
	TextErrors int64
}

// Indexer fills the stores from a data directory. Its methods are safe for
// concurrent use, but only one Run or CatchUp works at a time.
type Indexer struct {
	opts  Options
	store *triplestore.Store
	text  bleve.Index
	runMu sync.Mutex // one CatchUp at a time
	dirty int        // pages marked dirty since the last flushText; under runMu
	mu    struct {
		sync.Mutex
		stats Stats
	}
}

// Open opens (creating if needed) the stores of a data directory.
func Open(opts Options) (*Indexer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.IndexDir == "" {
		opts.IndexDir = filepath.Join(opts.DataDir, "index")
	}
	if opts.Poll == 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.BatchQuads == 0 {
		opts.BatchQuads = 20_000
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(opts.IndexDir, 0o755); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	st, err := triplestore.Open(filepath.Join(opts.IndexDir, "store"), opts.Store)
	if err != nil {
		return nil, fmt.Errorf("index: %w (is another indexer or search using %s?)", err, opts.IndexDir)
	}
	textDir := filepath.Join(opts.IndexDir, "text")
	var text bleve.Index
	if _, serr := os.Stat(textDir); errors.Is(serr, os.ErrNotExist) {
		text, err = bleve.New(textDir, textMapping())
	} else {
		text, err = bleve.Open(textDir)
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("index: text index %s: %w", textDir, err)
	}
	return &Indexer{opts: opts, store: st, text: text}, nil
}

// Close closes the stores.
func (ix *Indexer) Close() error {
	err := ix.text.Close()
	if e := ix.store.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("index: close: %w", err)
	}
	return nil
}

// Store returns the triple store.
func (ix *Indexer) Store() *triplestore.Store { return ix.store }

// Text returns the full-text index (one document per page, fields Field*).
func (ix *Indexer) Text() bleve.Index { return ix.text }

// Page returns the record of a page, or nil if the indexer has none.
func (ix *Indexer) Page(url string) (*Page, error) {
	v, c, err := ix.store.DB().Pebble().Get([]byte(prefixPage + url))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: page %s: %w", url, err)
	}
	defer c.Close()
	p, err := decodePage(v)
	if err != nil {
		return nil, fmt.Errorf("index: page record %s: %w", url, err)
	}
	return p, nil
}

// Stats returns the counts so far.
func (ix *Indexer) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.mu.stats
}

func (ix *Indexer) count(f func(s *Stats)) {
	ix.mu.Lock()
	f(&ix.mu.stats)
	ix.mu.Unlock()
}

// Run catches up, then looks for new data every Poll, until ctx ends
// (returning nil) or an error that is not about one file's content.
func (ix *Indexer) Run(ctx context.Context) error {
	t := time.NewTicker(ix.opts.Poll)
	defer t.Stop()
	for {
		if err := ix.CatchUp(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// CatchUp indexes everything finished in the data directory that is not
// indexed yet, then returns.
func (ix *Indexer) CatchUp(ctx context.Context) error {
	if ix.opts.ReadOnly {
		return errors.New("index: opened read-only")
	}
	ix.runMu.Lock()
	defer ix.runMu.Unlock()
	if err := ix.catchUpQuads(ctx); err != nil {
		return err
	}
	if err := ix.catchUpWARC(ctx); err != nil {
		return err
	}
	return ix.flushText(ctx)
}

// progress is how far a file was indexed: done, or the position to go on
// from (statements for quad files; byte offset and records to skip there
// for WARC files).
type progress struct {
	done bool
	pos  int64
	skip int64
}

const prefixProgress = "x/f/"

func (ix *Indexer) progress(kind, name string) (progress, error) {
	v, c, err := ix.store.DB().Pebble().Get([]byte(prefixProgress + kind + "/" + name))
	if errors.Is(err, pebble.ErrNotFound) {
		return progress{}, nil
	}
	if err != nil {
		return progress{}, fmt.Errorf("index: progress of %s: %w", name, err)
	}
	defer c.Close()
	if len(v) < 1 {
		return progress{}, fmt.Errorf("index: corrupt progress of %s", name)
	}
	p := progress{done: v[0] == 'd'}
	rest := v[1:]
	pos, n := binary.Uvarint(rest)
	if n <= 0 {
		return progress{}, fmt.Errorf("index: corrupt progress of %s", name)
	}
	skip, m := binary.Uvarint(rest[n:])
	if m <= 0 {
		return progress{}, fmt.Errorf("index: corrupt progress of %s", name)
	}
	p.pos, p.skip = int64(pos), int64(skip)
	return p, nil
}

func setProgress(b *triplestore.Batch, kind, name string, p progress) error {
	v := []byte{'p'}
	if p.done {
		v[0] = 'd'
	}
	v = binary.AppendUvarint(v, uint64(p.pos))
	v = binary.AppendUvarint(v, uint64(p.skip))
	return b.Set([]byte(prefixProgress+kind+"/"+name), v)
}

// pending is a batch under construction: quads in the store batch, and
// the page records touched, written with it at commit.
type pending struct {
	ix    *Indexer
	b     *triplestore.Batch
	pages map[string]*Page
	cost  int
}

func (ix *Indexer) newPending() *pending {
	return &pending{ix: ix, b: ix.store.NewBatch(), pages: map[string]*Page{}}
}

// page returns the record of url, loaded once per batch.
func (p *pending) page(url string) (*Page, error) {
	if pg, ok := p.pages[url]; ok {
		return pg, nil
	}
	pg, err := p.ix.Page(url)
	if err != nil {
		return nil, err
	}
	if pg == nil {
		pg = &Page{URL: url}
	}
	p.pages[url] = pg
	return pg, nil
}

// commit writes the store batch with the touched page records, each
// marked dirty (its text document is to be rewritten), and the progress
// (set by the caller in b). Text documents are written later, by
// flushText: a page whose quads and response are read in one pass gets
// one text document, not two.
func (p *pending) commit() error {
	for _, pg := range p.pages {
		if err := putPageBatch(p.b, pg); err != nil {
			return err
		}
		if err := p.b.Set([]byte(prefixDirty+pg.URL), nil); err != nil {
			return err
		}
	}
	if err := p.b.Commit(); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	p.ix.dirty += len(p.pages)
	p.ix.count(func(s *Stats) { s.Commits++ })
	return nil
}

// prefixDirty marks the pages whose text document is out of date.
const prefixDirty = "x/d/"

// textBatch is the number of text documents written together.
const textBatch = 500

// maxDirty is the number of dirty pages after which a pass writes their
// text documents before going on, so that search keeps up during a long
// catch-up.
const maxDirty = 20_000

// flushText rewrites the text documents of the dirty pages, then clears
// their marks. A crash in between rewrites them again at the next pass.
func (ix *Indexer) flushText(ctx context.Context) error {
	db := ix.store.DB().Pebble()
	lower := []byte(prefixDirty)
	upper := []byte(prefixDirty[:len(prefixDirty)-1] + string(prefixDirty[len(prefixDirty)-1]+1))
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		var urls []string
		for ok := it.First(); ok && len(urls) < textBatch; ok = it.Next() {
			urls = append(urls, string(it.Key()[len(prefixDirty):]))
		}
		err = it.Close()
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if len(urls) == 0 {
			ix.dirty = 0
			return nil
		}
		tb := ix.text.NewBatch()
		for _, u := range urls {
			pg, err := ix.Page(u)
			if err != nil {
				return err
			}
			if pg == nil {
				continue
			}
			if err := tb.Index(u, pg.doc()); err != nil {
				ix.count(func(s *Stats) { s.TextErrors++ })
				ix.opts.Logf("index: text document %s: %v", u, err)
			}
		}
		if err := ix.text.Batch(tb); err != nil {
			return fmt.Errorf("index: text index: %w", err)
		}
		b := ix.store.NewBatch()
		for _, u := range urls {
			if err := b.Delete([]byte(prefixDirty + u)); err != nil {
				return err
			}
		}
		if err := b.Commit(); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
}

// catchUpQuads indexes the finished quad files.
func (ix *Indexer) catchUpQuads(ctx context.Context) error {
	dir := filepath.Join(ix.opts.DataDir, "rdf")
	names, err := rdf.QuadFiles(dir)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		pr, err := ix.progress("rdf", name)
		if err != nil {
			return err
		}
		if pr.done {
			continue
		}
		if err := ix.indexQuadFile(ctx, filepath.Join(dir, name), name, pr.pos); err != nil {
			return err
		}
		if ix.dirty >= maxDirty {
			if err := ix.flushText(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
