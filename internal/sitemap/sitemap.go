package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// Defaults applied when an Options field is zero: the sitemaps.org limits.
const (
	DefaultMaxEntries   = 50_000
	DefaultMaxBytes     = 50 << 20
	DefaultMaxURLLength = 2048
)

// Options tunes parsing. The zero value applies the protocol's limits;
// negative values are rejected by Validate.
type Options struct {
	// MaxEntries is the number of entries (URLs or child sitemaps) kept
	// per file; parsing stops there and Truncated is set. Default 50,000.
	MaxEntries int
	// MaxBytes is the uncompressed size read per file, in bytes; it also
	// bounds what a gzip file may expand to. Default 50 MiB.
	MaxBytes int64
	// MaxURLLength is the longest loc or srcloc kept, in bytes; longer
	// entries are dropped and counted. Default 2,048 (sitemaps.org: "less
	// than 2,048 characters").
	MaxURLLength int
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.MaxEntries < 0:
		return fmt.Errorf("sitemap: option MaxEntries is negative (%d)", o.MaxEntries)
	case o.MaxBytes < 0:
		return fmt.Errorf("sitemap: option MaxBytes is negative (%d)", o.MaxBytes)
	case o.MaxURLLength < 0:
		return fmt.Errorf("sitemap: option MaxURLLength is negative (%d)", o.MaxURLLength)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxEntries == 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxURLLength == 0 {
		o.MaxURLLength = DefaultMaxURLLength
	}
	return o
}

// Kind is the format of a sitemap file.
type Kind string

const (
	KindURLSet Kind = "urlset" // XML <urlset>
	KindIndex  Kind = "index"  // XML <sitemapindex>
	KindText   Kind = "text"   // one URL a line
	KindFeed   Kind = "feed"   // RSS 2.0, RSS 1.0 or Atom: entries as in a urlset
)

// REGP <type> values (REGP §3).
const (
	TypeData  = "data"  // a data page: fetch it, do not follow its links
	TypeList  = "list"  // a list of data pages: follow all its links
	TypeOther = "other" // no advice: crawl as usual
)

// Entry is one <url> of a urlset, or one line of a text sitemap.
type Entry struct {
	// Loc is the absolute http(s) URL to fetch (for REGP, the crawler copy).
	Loc string
	// LastMod is <lastmod> (W3C datetime, any of its precisions); zero if
	// unset or unparsable. A date without time is midnight UTC.
	LastMod time.Time
	// ChangeFreq is <changefreq> lower-cased (always, hourly, daily,
	// weekly, monthly, yearly, never), or "" if unset or invalid.
	ChangeFreq string
	// Priority is <priority> in [0, 1], or -1 if unset or invalid (the
	// protocol's default is 0.5; the crawler applies it).
	Priority float64
	// Type is the REGP <type> lower-cased (TypeData, TypeList,
	// TypeOther), or "" if unset or unknown.
	Type string
	// SrcLoc is the REGP <srcloc>: the original URL of which Loc is the
	// crawler copy; "" if unset or not a usable http(s) URL.
	SrcLoc string
	// OtherHost is true when Loc's host differs from the sitemap's host
	// (sitemaps.org: such URLs are invalid unless the sitemap was
	// submitted through that host's robots.txt).
	OtherHost bool
}

// Problem is one kind of trouble met while parsing, with how often it
// happened, the first example and its line (0 when unknown).
type Problem struct {
	Kind    string
	Count   int
	Line    int
	Example string // at most 200 bytes
}

// Problem kinds.
const (
	ProblemTooManyEntries = "too-many-entries" // over MaxEntries: parsing stopped
	ProblemTooLarge       = "too-large"        // over MaxBytes: parsing stopped
	ProblemSyntax         = "xml-syntax"       // malformed XML: parsing stopped
	ProblemGzip           = "gzip"             // corrupt gzip data: parsing stopped
	ProblemBadURL         = "bad-url"          // loc not an absolute http(s) URL: dropped
	ProblemURLTooLong     = "url-too-long"     // loc over MaxURLLength: dropped
	ProblemRelativeURL    = "relative-url"     // relative loc, resolved against the sitemap URL
	ProblemMissingLoc     = "missing-loc"      // <url> or <sitemap> without <loc>: dropped
	ProblemBadSrcLoc      = "bad-srcloc"       // srcloc unusable: ignored
	ProblemBadLastMod     = "bad-lastmod"      // ignored
	ProblemBadChangeFreq  = "bad-changefreq"   // ignored
	ProblemBadPriority    = "bad-priority"     // ignored
	ProblemBadType        = "bad-type"         // unknown REGP type: ignored
	ProblemOtherHost      = "other-host"       // loc on another host: kept, flagged
	ProblemMixed          = "mixed"            // <url> in an index or <sitemap> in a urlset: ignored
)

// Sitemap is a parsed sitemap file.
type Sitemap struct {
	Kind Kind
	// URLs are the entries of a urlset or text sitemap, in file order.
	URLs []Entry
	// Sitemaps are the child sitemap URLs of an index, in file order.
	Sitemaps []string
	// Truncated is true when parsing stopped before the end of the input
	// (a limit, broken XML or corrupt gzip): entries may be missing.
	Truncated bool
	// Problems lists what was dropped, ignored or flagged, in order of
	// first occurrence; nil when nothing was.
	Problems []Problem
}

// Errors returned by Parse.
var (
	// ErrBase: the sitemap URL is nil, not absolute or not http(s).
	ErrBase = errors.New("sitemap: base URL must be absolute http or https")
	// ErrFormat: the input is binary, empty, or XML whose root is not
	// <urlset> or <sitemapindex> (an HTML error page, a feed).
	ErrFormat = errors.New("sitemap: not a sitemap")
)

// Parse reads one sitemap file from r. base is the URL the file was fetched
// from: it decides which locs are on another host, and resolves relative
// ones. Parse returns an error for a bad base or Options, for input that is
// not a sitemap (ErrFormat), and for a failure of r itself (wrapped, with
// what was parsed so far); content problems are reported in the result.
func Parse(r io.Reader, base *url.URL, o Options) (*Sitemap, error) {
	if base == nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, ErrBase
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	p := &parser{o: o, base: base, sm: &Sitemap{}}
	src := &sourceReader{r: r}
	br := bufio.NewReaderSize(src, 64<<10)
	var in io.Reader = br
	// Up to two gzip layers: a .gz file served with Content-Encoding: gzip
	// arrives double-compressed when the client did not decode the
	// transfer layer.
	for layer := 0; layer < 2; layer++ {
		magic, _ := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			break
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			if src.err != nil {
				return nil, fmt.Errorf("sitemap: read: %w", src.err)
			}
			return nil, fmt.Errorf("sitemap: bad gzip header: %w", err)
		}
		in = &gzipReader{r: zr}
		br = bufio.NewReaderSize(in, 64<<10)
		in = br
	}
	// The limit applies to the uncompressed bytes: it is the decompression
	// bomb guard (a 50 KB gzip file can expand to 50 GB).
	lim := &limitReader{r: in, n: o.MaxBytes}
	p.lim = lim
	err := p.parse(bufio.NewReaderSize(lim, 64<<10))
	if lim.hit {
		p.problem(ProblemTooLarge, 0, fmt.Sprintf("more than %d bytes", o.MaxBytes))
		p.sm.Truncated = true
	}
	if src.err != nil {
		return p.sm, fmt.Errorf("sitemap: read: %w", src.err)
	}
	if err != nil {
		return nil, err
	}
	return p.sm, nil
}

// sourceReader remembers an error of the caller's reader, to tell it apart
// from errors in the content.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// gzipReader marks decompression errors so that the parser reports them as
// a content problem rather than as broken XML.
type gzipReader struct {
	r io.Reader
}

func (g *gzipReader) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	return n, err
}

var errCorrupt = errors.New("sitemap: corrupt compressed data")

// limitReader returns EOF after n bytes and records that more were there.
type limitReader struct {
	r   io.Reader
	n   int64
	hit bool
}

func (l *limitReader) Read(b []byte) (int, error) {
	if l.n <= 0 {
		// Probe one byte to tell "exactly n" from "more than n".
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.hit = true
		}
		return 0, io.EOF
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= int64(n)
	return n, err
}

// parser holds the state of one Parse.
type parser struct {
	o    Options
	base *url.URL
	sm   *Sitemap
	full bool         // MaxEntries reached
	lim  *limitReader // the size limit, to tell a cut from broken XML
}

func (p *parser) parse(r *bufio.Reader) error {
	// Skip a UTF-8 byte order mark and leading white space to sniff.
	if bom, _ := r.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		r.Discard(3)
	}
	for {
		b, err := r.Peek(1)
		if err != nil {
			if errors.Is(err, errCorrupt) {
				p.problem(ProblemGzip, 0, err.Error())
				p.sm.Truncated = true
			}
			return fmt.Errorf("%w: empty", ErrFormat)
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			r.Discard(1)
			continue
		case '<':
			return p.parseXML(r)
		}
		if head, _ := r.Peek(512); binary(head) {
			return fmt.Errorf("%w: binary data", ErrFormat)
		}
		p.sm.Kind = KindText
		return p.parseText(r)
	}
}

// binary reports whether b holds control bytes that no text file has (an
// image, a PDF, a third gzip layer served as a sitemap).
func binary(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
			return true
		}
	}
	return false
}

// parseText reads a text sitemap: one URL a line, UTF-8; blank lines are
// skipped (sitemaps.org §"Text file"). Text in which no line is an
// absolute http(s) URL is not a sitemap (ErrFormat): prose, a script, an
// error message (crawler-commons testSitemapWithInvalidContent).
func (p *parser) parseText(r *bufio.Reader) error {
	var urls, others int // lines that look like URLs, and that do not
	for line := 1; !p.full; line++ {
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A 64 KiB line is no URL: skip to its end.
			p.problem(ProblemURLTooLong, line, string(b[:200]))
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil {
				p.readEnd(err)
				return textEnd(urls, others)
			}
			continue
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			// A text sitemap must hold full URLs only (sitemaps.org); a
			// line that is not one is more likely prose than a slip, so
			// it is not resolved as a relative reference.
			if absHTTP(s) {
				urls++
				if loc, other, ok := p.loc(s, line); ok {
					p.addURL(Entry{Loc: loc, Priority: -1, OtherHost: other}, line)
				}
			} else {
				others++
				p.problem(ProblemBadURL, line, s)
			}
		}
		if err != nil {
			p.readEnd(err)
			return textEnd(urls, others)
		}
	}
	return nil
}

// textEnd is the verdict on a text file that held urls lines that look
// like URLs and others that do not.
func textEnd(urls, others int) error {
	if urls == 0 && others > 0 {
		return fmt.Errorf("%w: text without URLs", ErrFormat)
	}
	return nil
}

// readEnd records why reading stopped, when it was not the end of input.
func (p *parser) readEnd(err error) {
	if errors.Is(err, errCorrupt) {
		p.problem(ProblemGzip, 0, err.Error())
		p.sm.Truncated = true
	}
}

// loc validates a loc (or a text line): it must be an absolute http(s)
// URL of bounded length; a relative one is resolved and counted. It
// returns the URL, whether it is on another host than the sitemap, and
// whether it is usable.
func (p *parser) loc(s string, line int) (string, bool, bool) {
	s = cleanURL(s)
	if len(s) > 4*p.o.MaxURLLength {
		p.problem(ProblemURLTooLong, line, s)
		return "", false, false
	}
	if !hasScheme(s) {
		// sitemaps.org requires absolute URLs; a relative one is an
		// author's slip with one obvious meaning.
		if entityRef(s) {
			// An entity the decoder did not expand: declared in a DTD,
			// which is never read (no XXE), so the loc is not a URL
			// (crawler-commons testSitemapXXE).
			p.problem(ProblemBadURL, line, s)
			return "", false, false
		}
		p.problem(ProblemRelativeURL, line, s)
		if hostFirst(s, p.base) {
			// "www.example.com/page": the scheme was forgotten, not
			// a path meant (crawler-commons testSitemapXMLfilterUrls).
			s = p.base.Scheme + "://" + s
		}
	}
	u, err := resolve(p.base, s, p.o.MaxURLLength)
	if err != nil {
		p.problem(ProblemBadURL, line, s)
		return "", false, false
	}
	out := u.String()
	if len(out) > p.o.MaxURLLength {
		p.problem(ProblemURLTooLong, line, out)
		return "", false, false
	}
	other := !sameHost(u, p.base)
	if other {
		p.problem(ProblemOtherHost, line, out)
	}
	return out, other, true
}

// entityRef reports whether s holds an XML entity reference ("&name;")
// that the decoder left as text because it does not know the entity.
func entityRef(s string) bool {
	for i := strings.IndexByte(s, '&'); i >= 0; {
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] == '-' || s[j] == '.' || s[j] == ':' ||
			'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || j > i+1 && '0' <= s[j] && s[j] <= '9') {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == ';' {
			return true
		}
		k := strings.IndexByte(s[i+1:], '&')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// hostFirst reports whether the relative reference s starts with a host
// name rather than a path: the sitemap's own host, or a "www." name.
func hostFirst(s string, base *url.URL) bool {
	h := s
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	return h != "" && (strings.EqualFold(h, base.Host) || strings.EqualFold(h, base.Hostname()) ||
		(len(h) > 4 && strings.EqualFold(h[:4], "www.") && strings.Contains(h[4:], ".")))
}

// cleanURL trims a URL and removes line breaks with the indentation around
// them: REGP §4.2's own example breaks a srcloc across lines
// ("newsItem.do?id=\n  1" means "newsItem.do?id=1").
func cleanURL(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			// Drop the spaces before the break, then the break and the
			// indentation after it.
			out := strings.TrimRight(b.String(), " \t")
			b.Reset()
			b.WriteString(out)
			for i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\r' || s[i+1] == '\n') {
				i++
			}
			continue
		}
		if c == '\t' {
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// resolve makes a loc absolute against the sitemap URL and applies RFC 3986
// normalization (urlnorm's zero Options: case, dot segments, default port,
// fragment removed) with the WHATWG leniencies for stray spaces and bytes.
func resolve(base *url.URL, s string, maxLen int) (*url.URL, error) {
	u, err := urlnorm.Resolve(base, s, urlnorm.Options{MaxLength: 4 * maxLen})
	if err != nil {
		return nil, err
	}
	if u.Host == "" || !httpScheme(u.Scheme) {
		return nil, errors.New("sitemap: not an http(s) URL")
	}
	return u, nil
}

// hasScheme reports whether s starts with an RFC 3986 scheme and ':'.
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// absHTTP reports whether s starts like an absolute http(s) URL and holds
// no white space.
func absHTTP(s string) bool {
	l := strings.ToLower(s[:min(len(s), 8)])
	return (strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) && !strings.ContainsAny(s, " \t")
}

func httpScheme(s string) bool {
	return strings.EqualFold(s, "http") || strings.EqualFold(s, "https")
}

// sameHost compares hosts case-insensitively, with default ports removed
// (http://A.example:80/ and http://a.example/ are one host).
func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(hostPort(a), hostPort(b))
}

func hostPort(u *url.URL) string {
	h, port := u.Hostname(), u.Port()
	if port == "" || (port == "80" && strings.EqualFold(u.Scheme, "http")) || (port == "443" && strings.EqualFold(u.Scheme, "https")) {
		return h
	}
	return h + ":" + port
}

func (p *parser) addURL(e Entry, line int) {
	if len(p.sm.URLs)+len(p.sm.Sitemaps) >= p.o.MaxEntries {
		p.stopFull(line)
		return
	}
	p.sm.URLs = append(p.sm.URLs, e)
}

func (p *parser) addSitemap(s string, line int) {
	if len(p.sm.URLs)+len(p.sm.Sitemaps) >= p.o.MaxEntries {
		p.stopFull(line)
		return
	}
	p.sm.Sitemaps = append(p.sm.Sitemaps, s)
}

func (p *parser) stopFull(line int) {
	p.full = true
	p.sm.Truncated = true
	p.problem(ProblemTooManyEntries, line, fmt.Sprintf("more than %d entries", p.o.MaxEntries))
}

func (p *parser) problem(kind string, line int, example string) {
	for i := range p.sm.Problems {
		if p.sm.Problems[i].Kind == kind {
			p.sm.Problems[i].Count++
			return
		}
	}
	p.sm.Problems = append(p.sm.Problems, Problem{Kind: kind, Count: 1, Line: line, Example: clip(example)})
}

// clip bounds an example to 200 bytes of valid UTF-8.
func clip(s string) string {
	const n = 200
	s = strings.ToValidUTF8(s[:min(len(s), 4*n)], "\uFFFD")
	if len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	return s
}

// parseLastMod reads a W3C datetime (https://www.w3.org/TR/NOTE-datetime):
// YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD,
// YYYY-MM-DDThh:mm:ss.sTZD; also, as found in the wild, a space for T and
// a missing zone (taken as UTC).
func parseLastMod(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 64 {
		return time.Time{}, false
	}
	s = strings.Replace(s, " ", "T", 1)
	for _, l := range []string{
		time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.999999999",
		"2006-01-02T15:04", "2006-01-02", "2006-01", "2006",
	} {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parsePriority reads a priority in [0.0, 1.0].
func parsePriority(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 32 {
		return -1, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 || f != f {
		return -1, false
	}
	return f, true
}

var changeFreqs = map[string]bool{
	"always": true, "hourly": true, "daily": true, "weekly": true,
	"monthly": true, "yearly": true, "never": true,
}
