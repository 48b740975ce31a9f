package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/h1"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// Truncation says why a body is incomplete.
type Truncation string

const (
	// TruncNone: the body is complete.
	TruncNone Truncation = ""
	// TruncSize: RawBody reached Config.MaxBodySize, or Body reached
	// Config.MaxDecodedSize (a decompression bomb).
	TruncSize Truncation = "size"
	// TruncTime: Config.Timeout passed while the body was being read.
	TruncTime Truncation = "time"
	// TruncDecode: the content coding could not be undone (corrupt data or
	// an unsupported coding); Body holds what was decoded before the error.
	TruncDecode Truncation = "decode"
)

// errTimeout is the cause of a fetch's own deadline, told apart from the
// caller's.
var errTimeout = errors.New("fetch: timeout")

// Request holds the per-request options. The zero value is a plain GET.
type Request struct {
	// Method is GET (default, "") or HEAD.
	Method string
	// Header holds extra request headers (e.g. If-Modified-Since), set
	// after the Client's own, so they can replace Accept. Host,
	// User-Agent and Cookie cannot be set here.
	Header http.Header
	// AcceptLanguage is sent as Accept-Language when not empty: the REGP
	// "Language" directive.
	AcceptLanguage string
	// AcceptEncoding replaces DefaultAcceptEncoding when not empty: the
	// REGP "Encoding" directive. A coding Body cannot be
	// decoded from gives TruncDecode.
	AcceptEncoding string
	// Cookie is sent in the Cookie header after the jar's cookies: the
	// REGP "Cookie" directive, e.g. "visitor=crawler".
	Cookie string
	// NoHeadCheck skips Config.HeadBeforeGet for this request.
	NoHeadCheck bool
	// MaxBodySize, when positive, replaces Config.MaxBodySize and
	// Config.MaxDecodedSize for this request, in bytes: a sitemap may be
	// 50 MB uncompressed (sitemaps.org), more than a page's cap.
	MaxBodySize int64
}

// SentRequest is the request as sent, for WARC request records.
type SentRequest struct {
	Method string
	URL    *url.URL
	// Header is every header sent, with Host.
	Header http.Header
}

// Result is one HTTP exchange. Redirects are not followed (the Viuva Negra report §3.4:
// a redirect is a link), so URL is the URL requested.
type Result struct {
	URL    *url.URL
	Status int    // status code, e.g. 200
	Reason string // status text after the code, e.g. "OK"
	Proto  string // "HTTP/1.1", "HTTP/2.0", ...
	Header http.Header
	// WireHeader is the status line and header block as the server sent
	// them (field order, case, repeated fields), through the empty line,
	// when the exchange went through internal/h1 (HTTP/1.x, http:// and
	// https://); nil otherwise (with Config.HTTP2, https goes through
	// net/http, which keeps only the parsed fields).
	WireHeader []byte
	// WireRequest is the request as written, in the same cases.
	WireRequest []byte

	// RawBody is the body as transferred: content-coded (gzip, br, ...),
	// de-chunked, at most Config.MaxBodySize bytes. For WARC records.
	RawBody []byte
	// Body is RawBody with the content codings undone, at most
	// Config.MaxDecodedSize bytes; it may share memory with RawBody.
	Body []byte
	// Truncated is set when Body or RawBody is incomplete, with the reason.
	Truncated   bool
	TruncReason Truncation
	// DecodeErr is the decoding error behind TruncDecode.
	DecodeErr error

	// ContentType is the Content-Type header, or when there is none, the
	// type sniffed from Body (http.DetectContentType), with Sniffed set.
	ContentType string
	Sniffed     bool

	// Redirect is the resolved, RFC 3986-normalized Location of a 3xx
	// response, nil otherwise or when Location is unusable.
	Redirect *url.URL

	RemoteAddr netip.AddrPort // server address connected to
	ConnReused bool           // the connection was kept alive from before
	Start      time.Time      // when the request was started
	TTFB       time.Duration  // Start to the first response byte
	Duration   time.Duration  // Start to the last body byte read

	// Skipped is set when HEAD-before-GET found an unwanted Content-Type:
	// Status, Header and ContentType are the HEAD's, there is no body.
	Skipped    bool
	SkipReason string

	// Request is the request as sent (the HEAD, for a skipped result).
	Request SentRequest
}

// MediaType returns the lower-case media type of ContentType, without
// parameters ("text/html").
func (r *Result) MediaType() string {
	mt, _, err := mime.ParseMediaType(r.ContentType)
	if err != nil {
		mt, _, _ = strings.Cut(r.ContentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// HTTPHeaderBytes returns the status line and header block ending in an
// empty line, for WARC response records: WireHeader as the server sent it
// when there is one, else HTTP/1.1 text rebuilt from the parsed fields
// (also for HTTP/2 responses, whose status line is written "HTTP/1.1"),
// sorted by name, values of one name in received order. RawBody follows
// it in a record. Transfer-Encoding is left out because RawBody is
// de-chunked, and lines end in CRLF, as WARC readers find the body after
// the first CRLF CRLF.
func (r *Result) HTTPHeaderBytes() []byte {
	if r.WireHeader != nil {
		return archivedHeader(r.WireHeader)
	}
	var b bytes.Buffer
	proto := "HTTP/1.1"
	if r.Proto == "HTTP/1.0" {
		proto = r.Proto
	}
	// Built by hand, not with fmt: this runs for every archived page.
	b.Grow(512)
	b.WriteString(proto)
	b.WriteByte(' ')
	if r.Status >= 0 && r.Status <= 999 {
		b.Write([]byte{byte('0' + r.Status/100), byte('0' + r.Status/10%10), byte('0' + r.Status%10)})
	} else {
		fmt.Fprintf(&b, "%03d", r.Status) // not from net/http; as before
	}
	if r.Reason != "" {
		b.WriteByte(' ')
		b.WriteString(r.Reason)
	}
	b.WriteString("\r\n")
	writeHeader(&b, r.Header)
	b.WriteString("\r\n")
	return b.Bytes()
}

// RequestHeaderBytes returns the request line and headers ending in an
// empty line, for WARC request records: WireRequest when there is one,
// else HTTP/1.1 text rebuilt from Request, Host first, the rest sorted by
// name.
func (r *Result) RequestHeaderBytes() []byte {
	if r.WireRequest != nil {
		return r.WireRequest
	}
	var b bytes.Buffer
	target := "/"
	if r.Request.URL != nil {
		target = r.Request.URL.RequestURI()
	}
	// Built by hand, without fmt or cloning the header: this runs for
	// every archived page.
	b.Grow(512)
	b.WriteString(r.Request.Method)
	b.WriteByte(' ')
	b.WriteString(target)
	b.WriteString(" HTTP/1.1\r\n")
	if host := r.Request.Header.Get("Host"); host != "" {
		b.WriteString("Host: ")
		b.WriteString(host)
		b.WriteString("\r\n")
	}
	writeHeaderExcept(&b, r.Request.Header, "Host")
	b.WriteString("\r\n")
	return b.Bytes()
}

// archivedHeader returns a header block as received, for an archive
// record that holds the body de-chunked: the Transfer-Encoding field (and
// its obs-fold continuation lines) left out, and with it any
// Content-Length, which Transfer-Encoding overrides (RFC 9112 §6.3: a
// sender of both lies about one; the record's body is the de-chunked one,
// and a replay tool trusting the length would cut it). Every line ends in
// CRLF (a bare LF, which RFC 9112 §2.2 lets a recipient accept, becomes
// CRLF). Anything else is kept byte for byte.
func archivedHeader(raw []byte) []byte {
	out, chunked := headerWithout(raw, "Transfer-Encoding")
	if chunked {
		out, _ = headerWithout(out, "Content-Length")
	}
	return out
}

// headerWithout returns the header block raw with the field name (and its
// obs-fold continuation lines) left out, lines ending in CRLF, and
// whether the field was there. The first line, the status line, is
// never taken for a field.
func headerWithout(raw []byte, name string) ([]byte, bool) {
	out := make([]byte, 0, len(raw)+16)
	skipping := false // inside a left-out field's lines
	found := false
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		folded := len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
		if !folded {
			field, _, _ := bytes.Cut(line, []byte(":"))
			skipping = len(out) > 0 && bytes.EqualFold(bytes.TrimSpace(field), []byte(name))
			found = found || skipping
		}
		if skipping {
			continue
		}
		if len(line) == 0 {
			break // the empty line ends the header
		}
		out = append(out, line...)
		out = append(out, '\r', '\n')
	}
	return append(out, '\r', '\n'), found
}

func writeHeader(b *bytes.Buffer, h http.Header) { writeHeaderExcept(b, h, "") }

// writeHeaderExcept writes h sorted by name, leaving out the canonical
// name skip (Host, written first by RequestHeaderBytes).
func writeHeaderExcept(b *bytes.Buffer, h http.Header, skip string) {
	var buf [32]string // a fetch's header fits: no allocation for keys
	keys := buf[:0]
	for k := range h {
		if skip != "" && k == skip {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
}

// Client fetches URLs. It is safe for concurrent use. Close releases its
// idle connections.
type Client struct {
	cfg       Config
	transport *http.Transport
	// plain takes the http:// GETs and HEADs (internal/h1): the exchange
	// runs on the fetching goroutine, without http.Transport's two
	// goroutines per connection and the hand-offs to them, which cost
	// ~10 % of the crawl benchmark's CPU (docs/performance.md). Every
	// other request (https, HTTP/2) goes to transport. Nil sends all to
	// transport (tests compare the two paths).
	plain   *h1.Client
	dial    *dialer
	dns     *dnsCache
	cookies *cookieStore // nil when cookies are disabled
	headExt map[string]bool
}

// New returns a Client for cfg (see Config for defaults).
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	lookup := cfg.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	c := &Client{
		cfg:     cfg,
		dns:     newDNSCache(lookup, cfg.DNSCacheTTL, cfg.DNSNegativeTTL, cfg.DNSCacheSize),
		headExt: make(map[string]bool, len(cfg.HeadExtensions)),
	}
	for _, e := range cfg.HeadExtensions {
		c.headExt[strings.ToLower(strings.TrimPrefix(e, "."))] = true
	}
	if !cfg.DisableCookies {
		c.cookies = newCookieStore(cfg.CookieSites)
	}
	d := &dialer{
		net:      net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second},
		resolver: cfg.Resolver,
		cache:    c.dns,
		policy:   cfg.AddrPolicy,
	}
	c.dial = d
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
	}
	if tlsConf.ClientSessionCache == nil {
		// Resumed sessions: a host's next connection skips the full
		// handshake (net/http keeps none by default). 1,024 hosts' worth
		// (a few KB each), where the default is 64.
		tlsConf.ClientSessionCache = tls.NewLRUClientSessionCache(1024)
	}
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	protos.SetHTTP2(cfg.HTTP2)
	c.transport = &http.Transport{
		// No Proxy: the crawler talks to origins itself; an HTTP_PROXY in
		// the environment (perhaps "courtesy proxy") must not reroute it.
		Proxy:               nil,
		DialContext:         d.DialContext,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		// WARC needs the bytes as transferred: we send Accept-Encoding
		// ourselves and decode into Body.
		DisableCompression:     true,
		MaxIdleConns:           cfg.MaxIdleConns,
		MaxIdleConnsPerHost:    cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:        cfg.IdleConnTimeout,
		MaxResponseHeaderBytes: cfg.MaxHeaderBytes,
		ExpectContinueTimeout:  time.Second,
		Protocols:              protos,
		ForceAttemptHTTP2:      cfg.HTTP2,
	}
	// The same dialer, bounds, header limit and TLS configuration as
	// transport: http:// has no HTTP/2 here (no h2c) and no upstream
	// proxy, so plain takes all of its GETs and HEADs, and those of
	// https:// unless HTTP2 is asked for. Its idle bounds are its own:
	// MaxIdleConns holds for plain and for transport each.
	ho := h1.Options{
		Dial:             d.DialContext,
		MaxIdlePerHost:   cfg.MaxIdleConnsPerHost,
		MaxIdle:          cfg.MaxIdleConns,
		IdleTimeout:      cfg.IdleConnTimeout,
		MaxHeaderBytes:   cfg.MaxHeaderBytes,
		HandshakeTimeout: cfg.ConnectTimeout,
	}
	if !cfg.HTTP2 {
		ho.TLSConfig = tlsConf
	}
	c.plain = h1.New(ho)
	return c, nil
}

// Dial connects to addr ("host:port") as the client's own requests do:
// Config.Resolver's rules, the DNS cache, Config.AddrPolicy (a refusal
// wraps addrpolicy.ErrRefused). For another HTTP client of the same
// crawl, such as its robots.txt client.
func (c *Client) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.dial.DialContext(ctx, network, addr)
}

// Close closes idle connections. In-flight fetches finish normally.
func (c *Client) Close() {
	c.transport.CloseIdleConnections()
	if c.plain != nil {
		c.plain.CloseIdle()
	}
}

// DNSStats returns the DNS cache's hit and miss counts.
func (c *Client) DNSStats() (hits, misses uint64) { return c.dns.stats() }

// Fetch requests u. It returns a Result for every HTTP response, whatever
// its status (including 3xx, whose Location is in Redirect, not followed);
// an error, of type *Error with a Kind, when there is no response.
func (c *Client) Fetch(ctx context.Context, u *url.URL, req Request) (*Result, error) {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Kind: KindRequest, URL: fmt.Sprint(u), Err: errors.New("want an absolute http or https URL")}
	}
	method := strings.ToUpper(req.Method)
	switch method {
	case "":
		method = http.MethodGet
	case http.MethodGet, http.MethodHead:
	default:
		return nil, &Error{Kind: KindRequest, URL: u.String(), Err: fmt.Errorf("method %q: want GET or HEAD", req.Method)}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errTimeout)
	defer cancel()

	if method == http.MethodGet && c.cfg.HeadBeforeGet && !req.NoHeadCheck && c.headExt[extension(u)] {
		head, err := c.roundTrip(ctx, u, http.MethodHead, req)
		if err != nil {
			return nil, err
		}
		// Only a successful HEAD decides; servers that refuse HEAD or
		// redirect get the GET, which reports the real answer.
		if head.Status >= 200 && head.Status < 300 && head.Header.Get("Content-Type") != "" {
			if mt := head.MediaType(); !c.wanted(mt) {
				head.Skipped = true
				head.SkipReason = fmt.Sprintf("content type %q not wanted", mt)
				return head, nil
			}
		}
	}
	return c.roundTrip(ctx, u, method, req)
}

func extension(u *url.URL) string {
	ext := path.Ext(u.Path)
	if ext == "" {
		return ""
	}
	return strings.ToLower(ext[1:])
}

func (c *Client) wanted(mediaType string) bool {
	for _, w := range c.cfg.WantedTypes {
		w = strings.ToLower(w)
		if top, ok := strings.CutSuffix(w, "/*"); ok {
			if t, _, _ := strings.Cut(mediaType, "/"); t == top {
				return true
			}
		} else if w == mediaType {
			return true
		}
	}
	return false
}

// traceState collects what the client trace reports during one exchange.
type traceState struct {
	mu        sync.Mutex
	remote    netip.AddrPort
	reused    bool
	firstByte time.Time
	tlsFailed bool
}

func (s *traceState) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reused = info.Reused
			if ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
				s.remote = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
			}
		},
		GotFirstResponseByte: func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.firstByte = time.Now()
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.tlsFailed = true
			}
		},
	}
}

func (c *Client) roundTrip(ctx context.Context, u *url.URL, method string, opts Request) (*Result, error) {
	var ts traceState
	fail := func(kind Kind, err error) (*Result, error) {
		ts.mu.Lock()
		answered := !ts.firstByte.IsZero()
		ts.mu.Unlock()
		return nil, &Error{Kind: kind, URL: u.String(), Err: err, Answered: answered}
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return fail(KindRequest, err)
	}
	h := hreq.Header
	h.Set("User-Agent", c.cfg.UserAgent)
	h.Set("Accept", c.cfg.Accept)
	if opts.AcceptEncoding != "" {
		h.Set("Accept-Encoding", opts.AcceptEncoding)
	} else {
		h.Set("Accept-Encoding", DefaultAcceptEncoding)
	}
	if opts.AcceptLanguage != "" {
		h.Set("Accept-Language", opts.AcceptLanguage)
	}
	for k, vs := range opts.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "User-Agent", "Cookie":
			continue
		}
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	var cookies []string
	if c.cookies != nil {
		for _, ck := range c.cookies.Cookies(hreq.URL) {
			cookies = append(cookies, ck.Name+"="+ck.Value)
		}
	}
	if opts.Cookie != "" {
		cookies = append(cookies, opts.Cookie)
	}
	if len(cookies) > 0 {
		h.Set("Cookie", strings.Join(cookies, "; "))
	}

	var wire h1.Wire // the exchange's bytes, on the h1 path
	plain := c.plain != nil && c.plain.Handles(hreq)
	hctx := httptrace.WithClientTrace(ctx, ts.trace())
	if plain {
		hctx = h1.WithWire(hctx, &wire)
	}
	hreq = hreq.WithContext(hctx)
	sent := SentRequest{Method: method, URL: hreq.URL, Header: h.Clone()}
	sent.Header.Set("Host", hreq.Host)

	start := time.Now()
	var resp *http.Response
	if plain {
		// No timeout of its own: ctx's deadline ends the exchange, as it
		// does http.Transport's, so that a cut body is told apart by
		// context.Cause (TruncTime) in the same way on both paths.
		resp, err = c.plain.RoundTrip(hreq, 0)
	} else {
		resp, err = c.transport.RoundTrip(hreq)
	}
	if err != nil {
		ts.mu.Lock()
		tlsFailed := ts.tlsFailed
		ts.mu.Unlock()
		own := errors.Is(context.Cause(ctx), errTimeout)
		return fail(classify(err, tlsFailed, own, ctx.Err() != nil), err)
	}
	defer resp.Body.Close()

	r := &Result{
		URL:         hreq.URL,
		Status:      resp.StatusCode,
		Reason:      StatusReason(resp),
		Proto:       resp.Proto,
		Header:      resp.Header,
		Start:       start,
		WireHeader:  wire.Response,
		WireRequest: wire.Request,
		Request:     sent,
	}
	if method != http.MethodHead {
		rawMax := c.cfg.MaxBodySize
		if opts.MaxBodySize > 0 {
			rawMax = opts.MaxBodySize
		}
		raw, trunc, err := readBody(resp.Body, rawMax, resp.ContentLength)
		switch {
		case err == nil:
		case errors.Is(context.Cause(ctx), errTimeout):
			// The Viuva Negra report §5.4: a time limit per URL; what arrived is kept.
			trunc = TruncTime
		default:
			own := errors.Is(context.Cause(ctx), errTimeout)
			return fail(classify(err, false, own, ctx.Err() != nil), fmt.Errorf("reading body: %w", err))
		}
		r.RawBody = raw
		if trunc != TruncNone {
			r.Truncated, r.TruncReason = true, trunc
		}
	}
	r.Duration = time.Since(start)
	ts.mu.Lock()
	r.RemoteAddr, r.ConnReused = ts.remote, ts.reused
	if !ts.firstByte.IsZero() {
		r.TTFB = ts.firstByte.Sub(start)
	}
	ts.mu.Unlock()

	decodedMax := c.cfg.MaxDecodedSize
	if opts.MaxBodySize > 0 {
		decodedMax = opts.MaxBodySize
	}
	decodeBody(r, decodedMax)
	r.ContentType = resp.Header.Get("Content-Type")
	if r.ContentType == "" && len(r.Body) > 0 {
		r.ContentType, r.Sniffed = http.DetectContentType(r.Body), true
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			if ru, err := urlnorm.Resolve(hreq.URL, loc, urlnorm.Options{}); err == nil {
				r.Redirect = ru
			}
		}
	}
	if c.cookies != nil {
		c.cookies.SetCookies(hreq.URL, resp.Cookies())
	}
	return r, nil
}

// StatusReason is the reason phrase of resp's status line ("OK" of "200
// OK"), or the standard text of its code when the line has none.
func StatusReason(resp *http.Response) string {
	// Status is "200 OK": the code (three digits for 100-999) and the
	// reason phrase. No fmt here: this runs for every fetch.
	code := strconv.Itoa(resp.StatusCode)
	if resp.StatusCode < 100 {
		code = strings.Repeat("0", 3-len(code)) + code
	}
	if s, ok := strings.CutPrefix(resp.Status, code); ok {
		return strings.TrimSpace(s)
	}
	return http.StatusText(resp.StatusCode)
}

// readBody reads at most limit bytes. Reaching the limit is TruncSize,
// not an error; the rest is not read (the connection is not reused).
func readBody(body io.Reader, limit, sizeHint int64) ([]byte, Truncation, error) {
	var buf bytes.Buffer
	if sizeHint > 0 {
		// A declared Content-Length sizes the buffer once instead of
		// doubling from 512 bytes; bounded by the limit, and by 1 MiB so
		// that a false header costs no large allocation before bytes
		// arrive. ReadFrom wants MinRead spare bytes to see EOF.
		buf.Grow(int(min(sizeHint, limit, 1<<20)) + bytes.MinRead)
	}
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if n > limit {
		return buf.Bytes()[:limit], TruncSize, nil
	}
	return buf.Bytes(), TruncNone, err
}

// decodeBody sets r.Body from r.RawBody, at most limit bytes.
func decodeBody(r *Result, limit int64) {
	if len(r.RawBody) == 0 {
		return
	}
	body, err := decode(r.RawBody, r.Header.Get("Content-Encoding"), limit)
	r.Body = body
	if err == nil || r.Truncated {
		// A body cut by size or time fails to decode at its end; the
		// first reason is the one that counts.
		return
	}
	r.Truncated = true
	if errors.Is(err, errDecodeLimit) {
		r.TruncReason = TruncSize
		return
	}
	r.TruncReason, r.DecodeErr = TruncDecode, err
}
