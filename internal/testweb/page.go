package testweb

import (
	"bytes"
	"strconv"
	"strings"
)

// rng is splitmix64: tiny, fast and fully determined by its seed, which is
// all the generator needs (the same flags must give the same bytes).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); n must be > 0.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// seedFor returns a generator for the content at (identity, path): FNV-1a
// over the seed, the identity and the path, written out so that it does
// not allocate on the hot path.
func (w *Web) seedFor(identity, path string) *rng {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	seed := uint64(w.cfg.Seed)
	for i := 0; i < 8; i++ {
		h ^= uint64(byte(seed >> (8 * i)))
		h *= prime
	}
	for i := 0; i < len(identity); i++ {
		h ^= uint64(identity[i])
		h *= prime
	}
	h ^= 0
	h *= prime
	for i := 0; i < len(path); i++ {
		h ^= uint64(path[i])
		h *= prime
	}
	return &rng{s: h}
}

// hashHex returns 16 hex digits derived from parts, for session ids and
// wildcard names.
func (w *Web) hashHex(parts ...string) string {
	r := w.seedFor(strings.Join(parts, "\x00"), "")
	return strconv.FormatUint(r.next()|1<<63, 16)[:16]
}

var words = strings.Fields(`polite crawler robots harvest frontier courtesy
archive network server client request response header content page site link
anchor index search engine query result table figure section chapter paper
report thesis protocol delay interval limit queue host domain address port
cache proxy session cookie calendar month year day week library museum river
mountain garden market station harbour bridge castle village forest meadow
winter summer autumn spring morning evening history science music theatre
language letter number signal pattern method system design measure document
journal record storage digest mirror replica duplicate trap spider wildcard
sitemap listing directory file image picture sound video stream radio news
weather travel recipe kitchen bread cheese apple orange lemon coffee tea`)

// sections and subs name the directories of generic pages, so that pages
// sit at different depths and relative links need ./ and ../.
var (
	sections = [...]string{"news", "docs", "about", "shop"}
	subs     = [...]string{"a", "b", "c"}
)

// genericPath is the path of generic page n: "/" for the home page, else
// /SECTION/SUB/page-N.html.
func genericPath(n int) string {
	if n == 0 {
		return "/"
	}
	return string(appendGenericPath(nil, n))
}

// appendGenericPath appends genericPath(n).
func appendGenericPath(b []byte, n int) []byte {
	if n == 0 {
		return append(b, '/')
	}
	b = append(b, '/')
	b = append(b, sections[n%len(sections)]...)
	b = append(b, '/')
	b = append(b, subs[(n/len(sections))%len(subs)]...)
	b = append(b, "/page-"...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ".html"...)
}

// parseGenericPath returns n for a path genericPath(n) produces.
func parseGenericPath(p string) (int, bool) {
	if p == "/" {
		return 0, true
	}
	i := strings.LastIndex(p, "/page-")
	if i < 0 || !strings.HasSuffix(p, ".html") {
		return 0, false
	}
	num := p[i+len("/page-") : len(p)-len(".html")]
	if len(num) == 0 || len(num) > 9 || (num[0] == '0' && len(num) > 1) {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || genericPath(n) != p {
		return 0, false
	}
	return n, true
}

// privatePath is the path of the members-only copy of page n, which
// robots.txt disallows; pages with n%5 == 1 link to it.
func privatePath(n int) string { return "/private/page-" + strconv.Itoa(n) + ".html" }

func hasPrivate(n int) bool { return n%5 == 1 }

// parsePrivatePath returns n for a path privatePath(n) produces.
func parsePrivatePath(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/private/page-")
	if !ok || !strings.HasSuffix(rest, ".html") {
		return 0, false
	}
	num := strings.TrimSuffix(rest, ".html")
	if len(num) == 0 || len(num) > 9 || (num[0] == '0' && len(num) > 1) {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// dirOf returns the directory part of an absolute path ("/a/b/" for
// "/a/b/c.html").
func dirOf(p string) string { return p[:strings.LastIndexByte(p, '/')+1] }

// relPath returns the relative reference from directory dir (ending in "/")
// to absolute path target, always starting with "./" or "../" so that both
// dot-segment forms appear in pages (RFC 3986 §5.2.4).
func relPath(dir, target string) string {
	return string(appendRel(nil, dir, []byte(target)))
}

// appendRel appends relPath(dir, target).
func appendRel(b []byte, dir string, target []byte) []byte {
	tdir := target[:bytes.LastIndexByte(target, '/')+1]
	file := target[len(tdir):]
	// Longest common directory prefix, on segment boundaries.
	common := 0
	for i := 1; i < len(dir) && i < len(tdir) && dir[i] == tdir[i]; i++ {
		if dir[i] == '/' {
			common = i
		}
	}
	up := strings.Count(dir[common+1:], "/")
	if up == 0 {
		b = append(b, "./"...)
	}
	for i := 0; i < up; i++ {
		b = append(b, "../"...)
	}
	b = append(b, tdir[common+1:]...)
	return append(b, file...)
}

// mixedCase upper-cases some letters of host so that links exercise
// case-insensitive host matching (RFC 3986 §6.2.2.1).
func mixedCase(host string, r *rng) string {
	b := []byte(host)
	for i, c := range b {
		if 'a' <= c && c <= 'z' && r.intn(3) == 0 {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// link is one anchor of a page. Generic links are lazy: their href and
// text are written straight into the page by appendLink from the fields
// below, so that the hot path builds no strings.
type link struct {
	href, text, rel string
	query           string // added before any fragment (session ids)

	lazy   bool   // href and text come from the fields below
	form   byte   // lazy: formRel, formAbs or formURL
	page   int    // lazy: the generic page linked to
	frag   int    // lazy: "#sN" when > 0
	host   string // lazy formURL: the host as written (maybe mixed case)
	port80 bool   // lazy formURL: write the default port
	num    int    // lazy: the text is text + " " + num
	dir    string // lazy formRel: the directory (or <base>) to be relative to
}

// Forms of lazy links.
const (
	formRel byte = iota // ./x or ../x relative to dir
	formAbs             // /absolute/path
	formURL             // http://host[:80]/path
)

// appendHref appends the link's URL, unescaped; lazy hrefs hold nothing to
// escape.
func appendHref(b []byte, l *link) []byte {
	if !l.lazy {
		return append(b, l.href...)
	}
	switch l.form {
	case formRel:
		var tb [64]byte
		b = appendRel(b, l.dir, appendGenericPath(tb[:0], l.page))
	case formAbs:
		b = appendGenericPath(b, l.page)
	default:
		b = append(b, "http://"...)
		b = append(b, l.host...)
		if l.port80 {
			b = append(b, ":80"...)
		}
		b = appendGenericPath(b, l.page)
	}
	b = append(b, l.query...)
	if l.frag > 0 {
		b = append(b, "#s"...)
		b = strconv.AppendInt(b, int64(l.frag), 10)
	}
	return b
}

// pageOpts says what a page holds besides the filler text.
type pageOpts struct {
	title      string
	canonical  string // absolute URL; "" for none
	base       string // <base href>, "" for none
	metaRobots string // content of <meta name=robots>, "" for none
	metaName   string // name of that meta element; "robots" when ""
	stamp      string // a "generated at" line (near-duplicates)
	nav        []link
	links      []link
	malformed  bool // break the markup the way careless authors do (the Viúva Negra report §4.2)
}

// htmlEscape appends s with the five HTML special characters escaped.
func htmlEscape(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			b = append(b, "&#34;"...)
		case '\'':
			b = append(b, "&#39;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// renderPage appends an HTML page to b: head with title, meta and
// canonical, nav, then sections of filler text with the links spread among
// them, until about size bytes.
func renderPage(b []byte, r *rng, size int, o *pageOpts) []byte {
	start := len(b)
	if o.malformed {
		b = append(b, "<HTML>\n<head>\n<TITLE>"...)
	} else {
		b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	}
	b = htmlEscape(b, o.title)
	if o.malformed {
		b = append(b, "</title>\n"...) // mismatched case on purpose
	} else {
		b = append(b, "</title>\n"...)
	}
	b = append(b, "<meta name=\"description\" content=\""...)
	b = appendWords(b, r, 12)
	b = append(b, "\">\n"...)
	if o.metaRobots != "" {
		name := o.metaName
		if name == "" {
			name = "robots"
		}
		b = append(b, "<meta name=\""...)
		b = append(b, name...)
		b = append(b, "\" content=\""...)
		b = append(b, o.metaRobots...)
		b = append(b, "\">\n"...)
	}
	if o.canonical != "" {
		b = append(b, "<link rel=\"canonical\" href=\""...)
		b = htmlEscape(b, o.canonical)
		b = append(b, "\">\n"...)
	}
	if o.base != "" {
		b = append(b, "<base href=\""...)
		b = htmlEscape(b, o.base)
		b = append(b, "\">\n"...)
	}
	if o.malformed {
		b = append(b, "<body bgcolor=white>\n<div class=nav>"...) // no </head>, unquoted attributes
	} else {
		b = append(b, "</head>\n<body>\n<nav>"...)
	}
	for i, l := range o.nav {
		if i > 0 {
			b = append(b, " | "...)
		}
		b = appendLink(b, l, o.malformed)
	}
	if o.malformed {
		b = append(b, "\n<h1>"...)
	} else {
		b = append(b, "</nav>\n<main>\n<h1>"...)
	}
	b = htmlEscape(b, o.title)
	b = append(b, "</h1>\n"...)
	if o.stamp != "" {
		b = append(b, "<p class=\"stamp\">"...)
		b = htmlEscape(b, o.stamp)
		b = append(b, "</p>\n"...)
	}
	links := o.links
	sec := 0
	for sec < 2 || len(b)-start < size || len(links) > 0 {
		sec++
		b = append(b, "<h2 id=\"s"...)
		b = strconv.AppendInt(b, int64(sec), 10)
		b = append(b, "\">"...)
		b = appendWords(b, r, 3)
		b = append(b, "</h2>\n<p>"...)
		nw := 20 + r.intn(40)
		for i := 0; i < nw; i++ {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, words[r.intn(len(words))]...)
			if len(links) > 0 && i%10 == 5 {
				b = append(b, ' ')
				b = appendLink(b, links[0], o.malformed)
				links = links[1:]
			}
			if len(b)-start >= size && len(links) == 0 && sec >= 2 {
				break
			}
		}
		if o.malformed && sec%2 == 0 {
			b = append(b, ".\n<p><b>unclosed bold <i>and italic</b>\n"...) // misnested, unclosed <p>
		} else {
			b = append(b, ".</p>\n"...)
		}
		if sec > 10000 {
			break // bounded whatever size says
		}
	}
	if o.malformed {
		b = append(b, "</div></div>\n<p>the end\n"...) // stray end tags, no </body></html>
	} else {
		b = append(b, "</main>\n<footer><p>Synthetic page by courtesy testweb.</p></footer>\n</body>\n</html>\n"...)
	}
	return b
}

// appendLink appends an anchor; malformed pages leave the href unquoted.
func appendLink(b []byte, l link, malformed bool) []byte {
	switch {
	case malformed && (l.lazy || !strings.ContainsAny(l.href, " >\"'")):
		b = append(b, "<A HREF="...)
		b = appendHref(b, &l)
	case l.lazy:
		b = append(b, "<a href=\""...)
		b = appendHref(b, &l)
		b = append(b, '"')
	default:
		b = append(b, "<a href=\""...)
		b = htmlEscape(b, l.href)
		b = htmlEscape(b, l.query)
		b = append(b, '"')
	}
	if l.rel != "" {
		b = append(b, " rel=\""...)
		b = append(b, l.rel...)
		b = append(b, '"')
	}
	b = append(b, '>')
	b = htmlEscape(b, l.text)
	if l.lazy {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(l.num), 10)
	}
	if malformed {
		b = append(b, "</A>"...)
	} else {
		b = append(b, "</a>"...)
	}
	return b
}

func appendWords(b []byte, r *rng, n int) []byte {
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[r.intn(len(words))]...)
	}
	return b
}

// genericLinks returns the links of generic page n of site s with pages
// pages: the next page (so that every page is reachable from the home
// page), LinksPerPage-1 pseudo-random pages, the members-only copy, and
// ExternalLinks deep links into other generic sites. Their forms vary
// (./ and ../ relative, absolute path, absolute URL with mixed-case host and
// default port, fragments), drawn from r.
func (w *Web) genericLinks(r *rng, s *Site, n, pages int, base string) []link {
	path := genericPath(n)
	dir := dirOf(path)
	if base != "" {
		dir = base
	}
	links := make([]link, 0, w.cfg.LinksPerPage+w.cfg.ExternalLinks+1)
	for i := 0; i < w.cfg.LinksPerPage; i++ {
		t := (n + 1) % pages
		if i > 0 {
			t = r.intn(pages)
		}
		l := link{lazy: true, page: t, num: t}
		switch r.intn(5) {
		case 0, 1:
			l.form, l.dir = formRel, dir
		case 2:
			l.form = formAbs
		case 3:
			l.form, l.host = formURL, s.Host
		default:
			l.form, l.host, l.port80 = formURL, mixedCase(s.Host, r), true
		}
		if r.intn(4) == 0 {
			l.frag = 1 + r.intn(3)
		}
		l.text = words[r.intn(len(words))]
		links = append(links, l)
	}
	if hasPrivate(n) {
		links = append(links, link{href: privatePath(n), text: "members only", rel: "nofollow"})
	}
	if s.special == specGeneric && w.cfg.Sites > 1 {
		for i := 0; i < w.cfg.ExternalLinks; i++ {
			j := r.intn(w.cfg.Sites - 1)
			if j >= s.index {
				j++ // never this site
			}
			other := w.sites[j]
			l := link{lazy: true, form: formURL, page: r.intn(w.cfg.PagesPerSite), host: other.Host, text: "elsewhere", num: j}
			if r.intn(3) == 0 {
				l.host = mixedCase(other.Host, r)
			}
			l.port80 = r.intn(4) == 0
			links = append(links, l)
		}
	}
	return links
}

// genericNav is the navigation bar of a page at path.
func genericNav(path string) []link {
	nav := []link{{href: "/", text: "Home"}}
	if strings.Count(path, "/") > 1 {
		nav = append(nav, link{href: relPath(dirOf(path), "/"), text: "Up to the top"})
	}
	return nav
}

// renderGeneric appends generic page n of site s (pages pages in all),
// with extra links after the generic ones. A non-empty sid is added to
// every link as a PHPSESSID query (session.test).
func (w *Web) renderGeneric(b []byte, s *Site, n, pages int, extra []link, malformed bool, sid string) []byte {
	path := genericPath(n)
	r := w.seedFor(s.identity, path)
	o := pageOpts{
		title:     s.Host + ": " + words[r.intn(len(words))] + " " + strconv.Itoa(n),
		canonical: s.origin + path,
		nav:       genericNav(path),
		malformed: malformed,
	}
	if n > 0 && n%7 == 3 {
		// A <base href> in another directory: relative links resolve
		// against it, not against the page's own path.
		o.base = "/" + sections[(n+1)%len(sections)] + "/"
	}
	o.links = w.genericLinks(r, s, n, pages, o.base)
	o.links = append(o.links, extra...)
	if s.special == specMirrored && n%2 == 0 {
		// Mirrors copy the master's pages, the even ones with an absolute
		// <base>: their relative links resolve on mirrored.test, whose
		// Mirror-site lines then send the crawler to the mirror of each
		// URL. The odd ones keep relative links, which resolve on whichever
		// mirror served the page: the crawler must still fetch each path
		// from one mirror only.
		dir := o.base
		if dir == "" {
			dir = dirOf(path)
		}
		o.base = s.origin + dir
	}
	if sid != "" {
		withSession(o.nav, sid)
		withSession(o.links, sid)
	}
	return renderPage(b, r, w.cfg.PageBytes, &o)
}

// renderNamed appends a page at path of site s with the given links.
func (w *Web) renderNamed(b []byte, s *Site, path, title string, links []link, o pageOpts) []byte {
	r := w.seedFor(s.identity, path)
	o.title = s.Host + ": " + title
	if o.canonical == "" {
		o.canonical = s.origin + path
	}
	if o.nav == nil {
		o.nav = genericNav(path)
	}
	o.links = links
	return renderPage(b, r, w.cfg.PageBytes, &o)
}

// withSession puts ?PHPSESSID=sid into every href, before any fragment.
func withSession(links []link, sid string) {
	for i := range links {
		if links[i].lazy {
			links[i].query = "?PHPSESSID=" + sid
			continue
		}
		h, frag, hasFrag := strings.Cut(links[i].href, "#")
		h += "?PHPSESSID=" + sid
		if hasFrag {
			h += "#" + frag
		}
		links[i].href = h
	}
}
