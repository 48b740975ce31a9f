package crawl

// robots.txt in the WARC files and crawl.log: the policy in force at crawl
// time, archived as Heritrix, wget and Browsertrix archive it.

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/fetch"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/h1"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// robotsArchiveMax bounds the body of a robots.txt response archived (and
// read) here: twice what the gate parses (robots.MaxSize), so that a
// gzip-coded body cut here still decodes past what the gate reads.
const robotsArchiveMax = 2 * robots.MaxSize

// robotsArchive is the RoundTripper under the politeness gate's robots.txt
// client. The gate asks it only for requests that go to the network (its
// cache answers the rest), one request per redirect hop, so every
// robots.txt response it sees is archived: response, request and metadata
// records as for a page, in the WARC writer of the worker whose URL
// needed it. The crawl.log line of the fetch waits until the acker has
// flushed that writer (take), so a line always has its record on disk.
//
// It reads the whole body at once (at most robotsArchiveMax bytes, within
// the request's deadline), 4xx and 5xx bodies too, which the gate itself
// would not read; the gate then reads the same bytes. It asks for gzip
// and decodes it for the gate as net/http does when it asks itself, so
// the gate sees what it saw before while the record keeps the bytes as
// transferred.
type robotsArchive struct {
	c  *Crawler
	rt http.RoundTripper // DisableCompression: the bytes as transferred
	// plain takes the http:// and https:// GETs, so that the record
	// keeps the exchange as it went over the wire (h1.WithWire), as a
	// page's does; rt the others.
	plain *h1.Client

	mu      sync.Mutex
	closed  bool
	pending []robotsLine
	// logged holds the crawllog.PrerequisiteKey of each robots.txt URL
	// with a crawl.log line (this run's, and those the log kept from
	// earlier runs): a later fetch of the same robots.txt (expired, or
	// asked again after a 5xx) is archived without a second line, so that
	// crawl.log keeps one line per URL. At most maxRobotsLogged.
	logged map[uint64]struct{}
}

// maxRobotsLogged bounds robotsArchive.logged (16 bytes and a map slot per
// host); past it a refetched robots.txt may get a second line.
const maxRobotsLogged = 1 << 22

// seed notes the robots.txt lines crawl.log already holds.
func (a *robotsArchive) seed(keys []uint64) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		if len(a.logged) >= maxRobotsLogged {
			break
		}
		a.logged[k] = struct{}{}
	}
}

// robotsLine is the crawl.log line of an archived robots.txt fetch and the
// WARC writer holding its records.
type robotsLine struct {
	e  *crawllog.Entry
	wi int
}

// robotsNeedKey is the context key of the URL whose gate question made
// the gate fetch robots.txt: the referrer of the fetch (Heritrix's
// prerequisite "via"). The gate fetches with the first asker's context
// values (its own cancellation apart).
type robotsNeedKey struct{}

type robotsNeed struct {
	url, path string
	wid       int
}

// withRobotsNeed marks ctx as the gate question of worker wid for l.
func (c *Crawler) withRobotsNeed(ctx context.Context, wid int, l frontier.Lease) context.Context {
	if c.robotsArc == nil {
		return ctx
	}
	return context.WithValue(ctx, robotsNeedKey{}, robotsNeed{url: l.URL, path: md1(l.Metadata, mdPath), wid: wid})
}

// RoundTrip implements http.RoundTripper.
func (a *robotsArchive) RoundTrip(req *http.Request) (*http.Response, error) {
	askedGzip := false
	if req.Method != http.MethodHead && req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("Accept-Encoding", "gzip")
		askedGzip = true
	}
	var mu sync.Mutex
	var remote netip.AddrPort
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
			mu.Lock()
			remote = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
			mu.Unlock()
		}
	}})
	sent := req.WithContext(ctx)
	start := time.Now()
	var resp *http.Response
	var err error
	var wire h1.Wire
	if a.plain != nil && a.plain.Handles(sent) {
		// No timeout of its own: the gate's deadline is in ctx.
		resp, err = a.plain.RoundTrip(sent.WithContext(h1.WithWire(ctx, &wire)), 0)
	} else {
		resp, err = a.rt.RoundTrip(sent)
	}
	if err != nil {
		return nil, err
	}
	raw, readErr := io.ReadAll(io.LimitReader(resp.Body, robotsArchiveMax+1))
	resp.Body.Close()
	trunc := ""
	switch {
	case len(raw) > robotsArchiveMax:
		raw, trunc = raw[:robotsArchiveMax], warc.TruncatedLength
	case readErr != nil && ctx.Err() != nil:
		trunc = warc.TruncatedTime
	case readErr != nil:
		trunc = warc.TruncatedDisconnect
	}
	mu.Lock()
	addr := remote
	mu.Unlock()
	a.archive(req, resp, wire, raw, trunc, start, time.Since(start), addr)

	// The gate's view: the same bytes, then the read error if any,
	// decoded if we asked for gzip.
	var body io.Reader = bytes.NewReader(raw)
	if readErr != nil {
		body = io.MultiReader(body, errReader{readErr})
	}
	if askedGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		resp.Header = resp.Header.Clone() // the archived header keeps them
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength, resp.Uncompressed = -1, true
		body = &lazyGunzip{src: body}
	}
	resp.Body = io.NopCloser(body)
	return resp, nil
}

// archive writes the records of one robots.txt response and queues its
// crawl.log line.
func (a *robotsArchive) archive(req *http.Request, resp *http.Response, wire h1.Wire, raw []byte, trunc string, start time.Time, took time.Duration, remote netip.AddrPort) {
	need, _ := req.Context().Value(robotsNeedKey{}).(robotsNeed)
	h := req.Header.Clone()
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	h.Set("Host", host)
	res := &fetch.Result{URL: req.URL, Status: resp.StatusCode, Reason: fetch.StatusReason(resp), Proto: resp.Proto, Header: resp.Header,
		WireHeader: wire.Response, WireRequest: wire.Request, Request: fetch.SentRequest{Method: req.Method, URL: req.URL, Header: h}}
	target := req.URL.String()
	path := need.path + "P"
	meta := []warc.Field{
		{Name: "hopsFromSeed", Value: path},
		{Name: "fetchTimeMs", Value: strconv.FormatInt(took.Milliseconds(), 10)},
	}
	if need.url != "" {
		meta = append(meta, warc.Field{Name: "via", Value: need.url})
	}
	ex := &warc.Exchange{URL: target, Date: start, Request: res.RequestHeaderBytes(), ResponseHeader: res.HTTPHeaderBytes(),
		Body: raw, Truncated: trunc}
	if remote.IsValid() {
		ex.IP = remote.Addr().String()
		meta = append(meta, warc.Field{Name: "ip", Value: ex.IP})
	}
	if trunc != "" {
		meta = append(meta, warc.Field{Name: "truncated", Value: trunc})
	}
	ex.Metadata = meta

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || len(a.c.warcs) == 0 {
		// A fetch the gate started before the crawl stopped and that
		// ended after its WARC files were closed.
		a.c.log.Warn("robots.txt fetched after the WARC files were closed: not archived", "url", target, "status", resp.StatusCode)
		return
	}
	wi := need.wid % len(a.c.warcs)
	wr, err := a.c.warcs[wi].WriteExchange(context.Background(), ex)
	if err != nil {
		a.c.log.Error("robots.txt not archived: WARC write failed", "url", target, "err", err)
		return
	}
	a.c.metrics.robotsArchived.Inc()
	k := crawllog.PrerequisiteKey(target)
	if _, done := a.logged[k]; done {
		return // its line is in crawl.log: the first fetch's
	}
	if len(a.logged) < maxRobotsLogged {
		a.logged[k] = struct{}{}
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		mt = ""
	}
	e := &crawllog.Entry{Status: resp.StatusCode, Size: int64(len(raw)), URL: target, Path: path, Via: need.url, MIME: mt,
		Thread: need.wid, FetchStart: start, FetchDuration: took, Digest: wr.PayloadDigest,
		Annotations: []string{crawllog.AnnotationRobotsPrerequisite}}
	switch trunc {
	case warc.TruncatedLength:
		e.Annotations = append(e.Annotations, crawllog.AnnotationSizeTruncated)
	case warc.TruncatedTime:
		e.Annotations = append(e.Annotations, crawllog.AnnotationTimeTruncated)
	}
	a.pending = append(a.pending, robotsLine{e: e, wi: wi})
}

// take returns the lines of the records written so far, for the acker to
// log once their writers are flushed.
func (a *robotsArchive) take() []robotsLine {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pending
	a.pending = nil
	return p
}

// shut stops the archiving (the WARC files are about to close) and returns
// the lines not yet logged.
func (a *robotsArchive) shut() []robotsLine {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	p := a.pending
	a.pending = nil
	return p
}

// logRobotsLines logs the lines of robots.txt records whose WARC writer
// flushed (failed[i]: writer i did not); it reports whether it logged any.
func (c *Crawler) logRobotsLines(lines []robotsLine, failed []bool) bool {
	n := 0
	for _, rl := range lines {
		if rl.wi < len(failed) && failed[rl.wi] {
			c.log.Warn("robots.txt record lost with its WARC file; no crawl.log line", "url", rl.e.URL)
			continue
		}
		if c.clog == nil {
			continue
		}
		if err := c.clog.Log(rl.e); err != nil {
			c.log.Warn("crawl log write failed", "err", err)
			continue
		}
		n++
	}
	return n > 0
}

// closeWARCs closes the WARC writers, the robots.txt archive first, and
// logs the robots.txt lines still waiting for their flush.
func (c *Crawler) closeWARCs() error {
	lines := c.robotsArc.shut()
	var first error
	failed := make([]bool, len(c.warcs))
	for i, w := range c.warcs {
		if err := w.Close(); err != nil {
			if first == nil {
				first = err
			}
			failed[i] = true
		}
	}
	c.logRobotsLines(lines, failed)
	return first
}

// errReader returns err once its bytes are read: a body whose read failed.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// lazyGunzip decodes src on first Read, as net/http's transparent gzip
// does: a bad gzip header is a read error, not a request error.
type lazyGunzip struct {
	src io.Reader
	zr  *gzip.Reader
	err error
}

func (z *lazyGunzip) Read(p []byte) (int, error) {
	if z.zr == nil && z.err == nil {
		z.zr, z.err = gzip.NewReader(z.src)
	}
	if z.err != nil {
		return 0, z.err
	}
	return z.zr.Read(p)
}
