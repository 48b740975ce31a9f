package crawl

// Structured data (Config.StructuredData): every HTML page's RDFa,
// microdata and JSON-LD become N-Quads (graph = the page URL) in
// DATA/rdf/*.nq.gz, and their counts go into the page's WARC metadata
// record.
//
// Workers extract (in parallel); the acker writes a group's quads,
// syncs the quad file and records the sync point (file name and size) in
// the crawl's store right before the frontier's synced commit of the
// same group. So a page is acknowledged only once its quads are on disk,
// and after a crash the open quad file is cut back to the last recorded
// sync point before rdf.RecoverQuadFiles finishes it: the quads of pages
// that were not acknowledged (fetched again after the restart) are
// removed, those of acknowledged pages kept. What holds exactly is in
// docs/structured-data.md ("Durability").

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// Structured-data settings.
const (
	// rdfDirName is the quad files' directory under DataDir.
	rdfDirName = "rdf"
	// rdfMaxFileAge rotates a quad file after this long, so that an
	// indexer following DATA/rdf sees a slow crawl's quads within it.
	rdfMaxFileAge = time.Minute
	// rdfFlushEvery is how often the age rotation is checked while no
	// page arrives.
	rdfFlushEvery = 5 * time.Second
	// rdfMarkKey holds the last committed sync point: "NAME\x00SIZE".
	rdfMarkKey = "mark"
)

// structuredSink is the crawl's side of structured data: the one quad
// writer all workers share (through the acker), the quads of pages not
// yet acknowledged, and the sync point in the store.
type structuredSink struct {
	w    *rdf.QuadFileWriter
	dir  string
	mark *kv.Bucket

	// mu orders a group's write, sync and mark against the periodic age
	// rotation.
	mu sync.Mutex
	// pending holds the quads of pages archived but not yet acknowledged,
	// by URL (a leased URL is in flight once).
	pendingMu sync.Mutex
	pending   map[string][]rdf.Quad

	stop chan struct{}
	wg   sync.WaitGroup

	pages, quads, failed atomic.Int64
}

// pageRDF is what extraction found on one page.
type pageRDF struct {
	quads []rdf.Quad
	stats rdf.Stats
	err   error
}

// openStructured opens the quad writer when structured data is on, after
// cutting an open quad file a crash left back to the last committed sync
// point. It needs the store (c.db).
func (c *Crawler) openStructured() error {
	if !c.cfg.StructuredData {
		return nil
	}
	s := &structuredSink{dir: filepath.Join(c.cfg.DataDir, rdfDirName), mark: c.db.Bucket("C/rdf/"),
		pending: map[string][]rdf.Quad{}, stop: make(chan struct{})}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("crawl: structured data: %w", err)
	}
	if err := s.cutToMark(c); err != nil {
		return err
	}
	if err := rdf.RecoverQuadFiles(s.dir); err != nil {
		return fmt.Errorf("crawl: structured data: %w", err)
	}
	w, err := rdf.NewQuadFileWriter(rdf.QuadFileOptions{Dir: s.dir, MaxFileAge: rdfMaxFileAge, Now: c.now})
	if err != nil {
		return fmt.Errorf("crawl: structured data: %w", err)
	}
	s.w = w
	s.wg.Go(func() { s.flushLoop(c) })
	c.sd = s
	return nil
}

// cutToMark cuts every *.nq.gz.open file back to the committed sync
// point: the file the mark names to its size, any other to nothing (no
// committed page has quads in it).
func (s *structuredSink) cutToMark(c *Crawler) error {
	name, size := "", int64(0)
	v, err := s.mark.Get([]byte(rdfMarkKey))
	switch {
	case err == nil:
		name, size = parseMark(v)
	case !errors.Is(err, kv.ErrNotFound):
		return fmt.Errorf("crawl: structured data: sync point: %w", err)
	}
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("crawl: structured data: %w", err)
	}
	for _, e := range ents {
		open := e.Name()
		if !strings.HasSuffix(open, rdf.QuadFileExt+rdf.OpenSuffix) {
			continue
		}
		keep := int64(0)
		if strings.TrimSuffix(open, rdf.OpenSuffix) == name {
			keep = size
		}
		fi, err := e.Info()
		if err != nil {
			return fmt.Errorf("crawl: structured data: %w", err)
		}
		if fi.Size() > keep {
			if err := os.Truncate(filepath.Join(s.dir, open), keep); err != nil {
				return fmt.Errorf("crawl: structured data: %w", err)
			}
			c.log.Info("quad file cut back to its last committed page", "file", open, "bytes", keep, "cut_bytes", fi.Size()-keep)
		}
	}
	return nil
}

// formatMark and parseMark encode a sync point: "NAME\x00SIZE". The store
// holds only what formatMark wrote; a damaged value that does not parse
// (or names a path) reads as no sync point.
func formatMark(name string, size int64) []byte {
	return []byte(name + "\x00" + strconv.FormatInt(size, 10))
}

func parseMark(v []byte) (name string, size int64) {
	n, sz, ok := strings.Cut(string(v), "\x00")
	p, err := strconv.ParseInt(sz, 10, 64)
	if !ok || err != nil || p < 0 || strings.ContainsAny(n, "/\\\x00") {
		return "", 0
	}
	return n, p
}

// flushLoop rotates an old quad file while pages are few, until stop.
func (s *structuredSink) flushLoop(c *Crawler) {
	t := time.NewTicker(rdfFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		err := s.w.Flush()
		s.mu.Unlock()
		if err != nil {
			c.log.Warn("quad file rotation failed", "err", err)
		}
	}
}

// structuredSummary returns the quad files' directory ("" when structured
// data is off) and this run's pages with quads and quads, all
// acknowledged by now (Run calls it after the acker stopped).
func (c *Crawler) structuredSummary() (dir string, pages, quads int64) {
	if c.sd == nil {
		return "", 0, 0
	}
	return c.sd.dir, c.sd.pages.Load(), c.sd.quads.Load()
}

// closeStructured finishes the quad file; called after the workers and
// the acker stopped.
func (c *Crawler) closeStructured() error {
	s := c.sd
	if s == nil {
		return nil
	}
	c.sd = nil
	close(s.stop)
	s.wg.Wait()
	c.log.Info("structured data", "pages", s.pages.Load(), "quads", s.quads.Load(), "dir", s.dir)
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("crawl: structured data: %w", err)
	}
	return nil
}

// structuredPage extracts a fetched page's structured data, when it is
// on and the page is HTML (html: extract.HTML parsed it) that may be kept:
// not noindex, and archived (noarchive honoured skips it too). Extraction
// is bounded by rdf.Options' defaults and never fails the page: an error
// or a panic is counted in the metadata record. nil means not extracted.
func (c *Crawler) structuredPage(ctx context.Context, pageURL string, res *fetch.Result, html bool, d robots.Directives) (p *pageRDF) {
	if c.sd == nil || !html || d.NoIndex || (d.NoArchive && c.honorNA) {
		return nil
	}
	p = &pageRDF{}
	defer func() {
		if r := recover(); r != nil {
			p.quads, p.err = nil, fmt.Errorf("crawl: structured data: extraction panicked: %v", r)
			c.log.Error("structured-data extraction panicked", "url", pageURL, "panic", r)
		}
	}()
	p.quads, p.stats, p.err = rdf.Extract(ctx, pageURL, res.Body, rdf.Options{ContentType: res.Header.Get("Content-Type")})
	if p.err != nil {
		p.quads = nil
		c.log.Debug("structured data not extracted", "url", pageURL, "err", p.err)
	}
	return p
}

// fields are the page's lines in its WARC metadata record.
func (p *pageRDF) fields() []warc.Field {
	if p == nil {
		return nil
	}
	st := p.stats
	f := []warc.Field{
		{Name: "rdf-quads", Value: strconv.Itoa(len(p.quads))},
		{Name: "rdf-quads-rdfa", Value: strconv.Itoa(st.RDFa)},
		{Name: "rdf-quads-microdata", Value: strconv.Itoa(st.Microdata)},
		{Name: "rdf-quads-jsonld", Value: strconv.Itoa(st.JSONLD)},
	}
	for _, n := range []struct {
		name string
		v    int
	}{
		{"rdf-jsonld-scripts", st.JSONLDScripts}, {"rdf-jsonld-malformed", st.JSONLDMalformed},
		{"rdf-jsonld-too-large", st.JSONLDTooLarge}, {"rdf-jsonld-remote-refused", st.JSONLDRemoteRefused},
		{"rdf-depth-cut", st.DepthCut}, {"rdf-invalid", st.Invalid}, {"rdf-dropped", st.Dropped},
	} {
		if n.v > 0 {
			f = append(f, warc.Field{Name: n.name, Value: strconv.Itoa(n.v)})
		}
	}
	if p.err != nil {
		msg := strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return ' '
			}
			return r
		}, p.err.Error())
		f = append(f, warc.Field{Name: "rdf-error", Value: msg[:min(len(msg), 200)]})
	}
	return f
}

// holdQuads keeps an archived page's quads for the acker.
func (c *Crawler) holdQuads(pageURL string, p *pageRDF) {
	if c.sd == nil || p == nil || len(p.quads) == 0 {
		return
	}
	c.sd.pendingMu.Lock()
	c.sd.pending[pageURL] = p.quads
	c.sd.pendingMu.Unlock()
}

// commitQuads runs in the acker before the frontier's commit of group:
// it writes the quads of the group's pages that will be acknowledged
// (those whose WARC writer did not fail), syncs the quad file and records
// the sync point, to be made durable by that commit. If the quads cannot
// be written, their pages are given back to the frontier (fetched again)
// and left out of the returned group.
func (c *Crawler) commitQuads(group []*ack, warcFailed []bool) []*ack {
	s := c.sd
	if s == nil {
		return group
	}
	var pages []*ack
	var quads [][]rdf.Quad
	s.pendingMu.Lock()
	for _, a := range group {
		q, ok := s.pending[a.lease.URL]
		if !ok {
			continue
		}
		delete(s.pending, a.lease.URL)
		if a.warc >= 0 && warcFailed[a.warc] {
			continue // given back by the acker: extracted again when fetched again
		}
		pages, quads = append(pages, a), append(quads, q)
	}
	s.pendingMu.Unlock()
	if len(pages) == 0 {
		return group
	}
	err := s.writeAndMark(quads)
	if err == nil {
		n := 0
		for _, q := range quads {
			n += len(q)
		}
		s.pages.Add(int64(len(pages)))
		s.quads.Add(int64(n))
		return group
	}
	c.log.Error("quad file write failed; its pages will be fetched again", "pages", len(pages), "err", err)
	s.failed.Add(int64(len(pages)))
	drop := make(map[*ack]bool, len(pages))
	for _, a := range pages {
		drop[a] = true
	}
	kept := group[:0:0]
	for _, a := range group {
		if drop[a] {
			c.fr.Release(a.lease.URLInfo)
			c.ackDone()
			continue
		}
		kept = append(kept, a)
	}
	return kept
}

// writeAndMark writes the pages' quads (one WriteQuads per page, so a page
// never straddles two files), syncs, and stores the sync point without
// waiting for the disk: the frontier's synced commit that follows makes
// it durable with the acknowledgements.
func (s *structuredSink) writeAndMark(pages [][]rdf.Quad) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range pages {
		if err := s.w.WriteQuads(q); err != nil {
			return err
		}
	}
	name, size, err := s.w.Sync()
	if err != nil {
		return err
	}
	return s.mark.SetNoSync([]byte(rdfMarkKey), formatMark(name, size))
}
