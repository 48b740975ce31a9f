package cli

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/andybalholm/brotli"

	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// maxRDFPage bounds one page read for extraction, raw or decoded.
const maxRDFPage = rdf.DefaultMaxHTMLBytes

// runRDF dispatches `courtesy rdf extract`.
func runRDF(ctx context.Context, env *Env, args []string) error {
	const desc = `Structured data (RDFa, microdata, JSON-LD) as RDF.

Subcommands:
  extract   write the N-Quads of HTML files, WARC files or URLs to stdout

Run 'courtesy rdf SUBCOMMAND -h' for the flags of a subcommand.`
	if len(args) > 0 && args[0] == "extract" {
		return runRDFExtract(ctx, env, args[1:])
	}
	fs := newFlagSet(env, "rdf", "extract [args]", desc)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("missing subcommand: extract")
	}
	return usagef("unknown subcommand %q: want extract", fs.Arg(0))
}

func runRDFExtract(ctx context.Context, env *Env, args []string) error {
	const desc = `Extract the RDFa, microdata and JSON-LD of pages as N-Quads on stdout,
one named graph per page (the page's URL).

Each argument is an HTML file, a WARC file (.warc or .warc.gz: every
HTML response record is a page, named by its WARC-Target-URI), or an
http(s) URL, fetched once. An HTML file's URL is --base, else its file: URL.
A summary goes to stderr.`
	fs := newFlagSet(env, "rdf extract", "FILE|URL|WARC...", desc)
	base := fs.String("base", "", "document URL of the HTML file arguments (graph name and base IRI)")
	syntaxes := fs.String("syntax", "rdfa,microdata,jsonld", "syntaxes to extract, comma-separated")
	maxQuads := fs.Int("max-quads", rdf.DefaultMaxQuads, "most quads kept per page")
	var rules stringList
	fs.Var(&rules, "resolve", "for URL arguments: send connections for hosts matching `PATTERN=ADDR:PORT` to ADDR:PORT (repeatable)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("no FILE, URL or WARC given")
	}
	if *base != "" {
		if u, err := url.Parse(*base); err != nil || !u.IsAbs() {
			return usagef("--base %q is not an absolute URL", *base)
		}
	}
	var opts rdf.Options
	for _, s := range strings.Split(*syntaxes, ",") {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "rdfa":
			opts.Syntaxes |= rdf.RDFa
		case "microdata":
			opts.Syntaxes |= rdf.Microdata
		case "jsonld", "json-ld":
			opts.Syntaxes |= rdf.JSONLD
		case "":
		default:
			return usagef("--syntax: unknown syntax %q (rdfa, microdata, jsonld)", s)
		}
	}
	if opts.Syntaxes == 0 {
		return usagef("--syntax: none given")
	}
	opts.MaxQuads = *maxQuads
	res, err := resolve.New(rules)
	if err != nil {
		return usagef("--resolve: %v", err)
	}

	x := &rdfExtractor{env: env, opts: opts, res: res, out: bufio.NewWriterSize(env.Stdout, 64<<10)}
	var failed int
	for _, arg := range fs.Args() {
		var err error
		switch {
		case strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://"):
			err = x.url(ctx, arg)
		default:
			err = x.file(ctx, arg, *base)
		}
		if err != nil {
			if ctx.Err() != nil {
				x.out.Flush()
				return err
			}
			fmt.Fprintf(env.Stderr, "courtesy rdf extract: %v\n", err)
			failed++
		}
	}
	if err := x.out.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	st := x.stats
	fmt.Fprintf(env.Stderr, "rdf extract: %d pages, %d quads (rdfa %d, microdata %d, json-ld %d); json-ld scripts %d, malformed %d, too large %d, remote context refused %d; depth cut %d, invalid %d, dropped %d\n",
		x.pages, st.Quads(), st.RDFa, st.Microdata, st.JSONLD, st.JSONLDScripts, st.JSONLDMalformed,
		st.JSONLDTooLarge, st.JSONLDRemoteRefused, st.DepthCut, st.Invalid, st.Dropped)
	if failed > 0 {
		return fmt.Errorf("%d of %d inputs failed", failed, fs.NArg())
	}
	return nil
}

type rdfExtractor struct {
	env   *Env
	opts  rdf.Options
	res   *resolve.Resolver // for URL arguments
	out   *bufio.Writer
	pages int
	stats rdf.Stats
}

// page extracts one page and writes its quads.
func (x *rdfExtractor) page(ctx context.Context, pageURL string, body []byte, contentType string) error {
	o := x.opts
	o.ContentType = contentType
	quads, st, err := rdf.Extract(ctx, pageURL, body, o)
	if err != nil {
		return err
	}
	x.pages++
	x.stats.Add(st)
	for _, q := range quads {
		x.out.WriteString(q.String())
		x.out.WriteByte('\n')
	}
	return nil
}

func (x *rdfExtractor) url(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	c, err := fetch.New(fetch.Config{Resolver: x.res})
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Fetch(ctx, u, fetch.Request{})
	if err != nil {
		return fmt.Errorf("fetch %s: %w", raw, err)
	}
	if res.Status/100 != 2 {
		return fmt.Errorf("fetch %s: status %d", raw, res.Status)
	}
	if mt := res.MediaType(); !isHTMLType(mt) {
		return fmt.Errorf("fetch %s: %s is not HTML", raw, mt)
	}
	return x.page(ctx, u.String(), res.Body, res.ContentType)
}

func (x *rdfExtractor) file(ctx context.Context, path, base string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(5)
	isWARC := strings.HasSuffix(path, ".warc") || strings.HasSuffix(path, ".warc.gz") ||
		bytes.HasPrefix(head, []byte("WARC/"))
	if isWARC {
		return x.warcFile(ctx, path, br)
	}
	body, err := io.ReadAll(io.LimitReader(br, maxRDFPage+1))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	doc := base
	if doc == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		doc = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	}
	if err := x.page(ctx, doc, body, ""); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// warcFile extracts every HTML response record of a WARC file.
func (x *rdfExtractor) warcFile(ctx context.Context, path string, r io.Reader) error {
	wr, err := warc.NewReader(r, warc.ReaderOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var bad int
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := wr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if h.Type() != warc.TypeResponse {
			continue
		}
		target := h.TargetURI()
		if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
			continue
		}
		resp, err := http.ReadResponse(bufio.NewReader(io.LimitReader(wr, maxRDFPage*4)), nil)
		if err != nil {
			bad++
			continue
		}
		ct := resp.Header.Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		if resp.StatusCode/100 != 2 || !isHTMLType(mt) {
			resp.Body.Close()
			continue
		}
		body, err := decodeBody(resp.Body, resp.Header.Get("Content-Encoding"))
		resp.Body.Close()
		if err != nil {
			bad++
			continue
		}
		if err := x.page(ctx, target, body, ct); err != nil {
			if ctx.Err() != nil {
				return err
			}
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(x.env.Stderr, "courtesy rdf extract: %s: %d response records skipped (unreadable HTTP or body)\n", path, bad)
	}
	return nil
}

func isHTMLType(mt string) bool {
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// decodeBody undoes a response's content coding (gzip, deflate, br or
// none), reading at most maxRDFPage bytes.
func decodeBody(r io.Reader, coding string) ([]byte, error) {
	var dec io.Reader
	switch strings.ToLower(strings.TrimSpace(coding)) {
	case "", "identity":
		dec = r
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		dec = zr
	case "deflate":
		dec = flate.NewReader(r)
	case "br":
		dec = brotli.NewReader(r)
	default:
		return nil, fmt.Errorf("unknown content coding %q", coding)
	}
	b, err := io.ReadAll(io.LimitReader(dec, maxRDFPage+1))
	if err != nil {
		return nil, err
	}
	return b, nil
}
