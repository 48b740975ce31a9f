package index

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"

	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// maxBody bounds the HTML read from one response (the extractor's own
// default bound).
const maxBody = extract.DefaultMaxBytes

// warcFile is a WARC file of the crawl: its name without ".open" (the key
// of its progress) and whether the writer finished it.
type warcFile struct {
	name, path string
	final      bool
}

func listWARC(dir string) ([]warcFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	var out []warcFile
	for _, e := range ents {
		n := e.Name()
		base, open := strings.CutSuffix(n, ".open")
		if !strings.HasSuffix(base, ".warc.gz") && !strings.HasSuffix(base, ".warc") {
			continue
		}
		out = append(out, warcFile{name: base, path: filepath.Join(dir, n), final: !open})
	}
	slices.SortFunc(out, func(a, b warcFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// catchUpWARC indexes the WARC files' HTML responses. Files still being
// written (.open) are read up to their last whole record.
func (ix *Indexer) catchUpWARC(ctx context.Context) error {
	files, err := listWARC(filepath.Join(ix.opts.DataDir, "warc"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		pr, err := ix.progress("warc", f.name)
		if err != nil {
			return err
		}
		if pr.done {
			continue
		}
		if err := ix.indexWARC(ctx, f, pr); err != nil {
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

func (ix *Indexer) indexWARC(ctx context.Context, wf warcFile, pr progress) error {
	f, err := os.Open(wf.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // renamed from .open since listed: next round
	}
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(pr.pos, io.SeekStart); err != nil {
		return fmt.Errorf("index: %s: %w", wf.name, err)
	}
	r, err := warc.NewReader(f, warc.ReaderOptions{MaxBlockBytes: maxBody + 1<<20})
	if err != nil {
		return fmt.Errorf("index: %s: %w", wf.name, err)
	}
	p := ix.newPending()
	at := pr // the position committed with the batch
	for i := int64(0); ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := r.Next()
		if err != nil {
			done := wf.final
			if !errors.Is(err, io.EOF) {
				if wf.final {
					ix.opts.Logf("index: %s: %v (rest of the file skipped)", wf.name, err)
				} else {
					done = false // a record being written: come back later
				}
			}
			at.done = done
			if err := setProgress(p.b, "warc", wf.name, at); err != nil {
				return err
			}
			if err := p.commit(); err != nil {
				return err
			}
			if done {
				ix.count(func(s *Stats) { s.Files++ })
			}
			return nil
		}
		if i < pr.skip {
			continue
		}
		off := pr.pos + r.Offset()
		if p.cost >= ix.opts.BatchQuads || len(p.pages) >= ix.opts.BatchQuads/10 {
			// Commit everything before this record.
			if err := setProgress(p.b, "warc", wf.name, progress{pos: off}); err != nil {
				return err
			}
			if err := p.commit(); err != nil {
				return err
			}
			p = ix.newPending()
		}
		ix.count(func(s *Stats) { s.Records++ })
		if h.Type() == warc.TypeResponse {
			if err := ix.indexResponse(p, h, r); err != nil {
				return err
			}
		}
		at = progress{pos: off, skip: 1}
	}
}

// indexResponse reads an HTTP response record and, for a successful HTML
// page, sets the title and text of its page record.
func (ix *Indexer) indexResponse(p *pending, h *warc.Header, r io.Reader) error {
	target := h.TargetURI()
	block, err := io.ReadAll(io.LimitReader(r, maxBody+1<<20))
	if err != nil {
		ix.count(func(s *Stats) { s.Skipped++ })
		ix.opts.Logf("index: response %s: %v", target, err)
		return nil
	}
	ix.count(func(s *Stats) { s.Bytes += int64(len(block)) })
	base, err := url.Parse(target)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		ix.count(func(s *Stats) { s.Skipped++ })
		return nil
	}
	body, ct, ok := htmlBody(block)
	if !ok {
		ix.count(func(s *Stats) { s.Skipped++ })
		return nil
	}
	page, err := extract.HTML(base, body, ct, extract.Options{MaxText: maxText, MaxAnchorText: maxTitle / 4, MaxLinks: 1})
	if err != nil {
		ix.count(func(s *Stats) { s.Skipped++ })
		return nil
	}
	pg, err := p.page(target)
	if err != nil {
		return err
	}
	pg.Title = truncate(page.Title, maxTitle)
	pg.Desc = truncate(page.Description, maxTitle)
	pg.Text = truncate(page.Text, maxText)
	pg.Fetched = true
	p.cost += 10
	ix.count(func(s *Stats) { s.Pages++ })
	return nil
}

// htmlBody returns the decoded entity body of a 2xx HTML response held in
// a WARC response block, and its Content-Type.
func htmlBody(block []byte) ([]byte, string, bool) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
	if err != nil {
		return nil, "", false
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", false
	}
	ct := resp.Header.Get("Content-Type")
	var body io.Reader = resp.Body
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "", "identity":
	case "gzip", "x-gzip":
		gz, err := gzip.NewReader(body)
		if err != nil {
			return nil, "", false
		}
		defer gz.Close()
		body = gz
	case "deflate":
		body = flate.NewReader(body)
	case "br":
		body = brotli.NewReader(body)
	default:
		return nil, "", false
	}
	// A body cut short (a truncated record) is still worth its text.
	b, err := io.ReadAll(io.LimitReader(body, maxBody))
	if err != nil && len(b) == 0 {
		return nil, "", false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	switch mt {
	case "text/html", "application/xhtml+xml":
	case "":
		if !strings.HasPrefix(http.DetectContentType(b), "text/html") {
			return nil, "", false
		}
	default:
		return nil, "", false
	}
	return b, ct, true
}
