package testweb

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Profile says what the generic sites look like.
type Profile string

// Profiles.
const (
	// ProfilePlain (the default, also "") serves small pages of filler
	// text (Config.PageBytes, LinksPerPage links), all answering 200: a
	// throughput benchmark's web.
	ProfilePlain Profile = "plain"
	// ProfileRealistic serves pages that look like today's web: sizes
	// drawn from a heavy-tailed distribution, 20-60 links, boilerplate
	// shared across a site, and a few per cent of broken, redirected,
	// duplicate and slow URLs. The rates are the constants below;
	// docs/testweb.md explains each.
	ProfileRealistic Profile = "realistic"
)

// Profiles lists the valid profiles.
var Profiles = []Profile{ProfilePlain, ProfileRealistic}

// Rates of the realistic profile, in URLs per thousand generic pages (the
// home page is always a plain 200). Each page draws its fate once, from
// the seed, the site and the page number, so the same Config always gives
// the same broken pages.
const (
	Real404PerMille       = 50  // answers 404 Not Found
	Real500PerMille       = 20  // answers 500 on every request (persistent)
	Real503PerMille       = 10  // answers 503 once or twice, then 200 (transient)
	RealRedirectPerMille  = 100 // redirects, in chains of 1 to 3 hops
	RealDuplicatePerMille = 30  // serves the same bytes as another page
	RealSlowPerMille      = 20  // answers after RealSlowMin..RealSlowMax
)

// Sizes and delays of the realistic profile.
const (
	// RealMedianBytes is the median size of a page's HTML: about what the
	// HTTP Archive reports for the web's pages in 2024 (30 KB).
	RealMedianBytes = 30_000
	// RealSigma is the standard deviation of the log of the page size
	// (a log-normal distribution): 10 % of pages are over 108 KB, 1 %
	// over 300 KB.
	RealSigma = 1.0
	// RealMinBytes and RealMaxBytes bound the drawn size.
	RealMinBytes = 4 << 10
	RealMaxBytes = 1 << 20
	// RealMinLinks and RealMaxLinks bound the links of a page, the
	// site's navigation and footer included.
	RealMinLinks = 20
	RealMaxLinks = 60
	// RealSlowMin and RealSlowMax bound the wait of a slow page.
	RealSlowMin = 500 * time.Millisecond
	RealSlowMax = 3 * time.Second
)

// fate is what one page of a realistic site does.
type fate uint8

const (
	fateOK fate = iota
	fate404
	fate500
	fate503
	fateRedirect
	fateDup
	fateSlow
)

// pageFate is a page's fate and its parameter: the hops of a redirect
// chain, the 503 answers before a 200, the page whose bytes a duplicate
// serves, or a slow page's delay in milliseconds.
type pageFate struct {
	fate  fate
	param int
	retry bool // fate503: the 503 carries Retry-After
	code  int  // fateRedirect: the status of the first hop
}

// fateOf draws the fate of page n of s.
func (w *Web) fateOf(s *Site, n int) pageFate {
	if n == 0 {
		return pageFate{}
	}
	var pb [24]byte
	r := w.seedFor(s.identity, string(strconv.AppendInt(append(pb[:0], "\x00fate"...), int64(n), 10)))
	u := r.intn(1000)
	switch {
	case u < Real404PerMille:
		return pageFate{fate: fate404}
	case u < Real404PerMille+Real500PerMille:
		return pageFate{fate: fate500}
	case u < Real404PerMille+Real500PerMille+Real503PerMille:
		return pageFate{fate: fate503, param: 1 + r.intn(2), retry: r.intn(2) == 0}
	case u < Real404PerMille+Real500PerMille+Real503PerMille+RealRedirectPerMille:
		hops := 1
		if v := r.intn(100); v >= 85 {
			hops = 3
		} else if v >= 60 {
			hops = 2
		}
		return pageFate{fate: fateRedirect, param: hops, code: redirectCodes[r.intn(len(redirectCodes))]}
	case u < Real404PerMille+Real500PerMille+Real503PerMille+RealRedirectPerMille+RealDuplicatePerMille:
		// The same bytes as the nearest page before it that serves its
		// own content (the home page at worst).
		m := n - 1 - r.intn(3)
		for m > 0 && w.fateOf(s, m).fate != fateOK {
			m--
		}
		return pageFate{fate: fateDup, param: max(m, 0)}
	case u < Real404PerMille+Real500PerMille+Real503PerMille+RealRedirectPerMille+RealDuplicatePerMille+RealSlowPerMille:
		span := int((RealSlowMax - RealSlowMin) / time.Millisecond)
		return pageFate{fate: fateSlow, param: int(RealSlowMin/time.Millisecond) + r.intn(span+1)}
	}
	return pageFate{}
}

var redirectCodes = [...]int{301, 301, 302, 307, 308}

// movedPath is where the content of a redirected page n ends up.
func movedPath(n int) string { return "/moved/page-" + strconv.Itoa(n) + ".html" }

// hopPath is hop k (1-based) of page n's redirect chain.
func hopPath(n, k int) string {
	return "/moved/hop-" + strconv.Itoa(n) + "-" + strconv.Itoa(k) + ".html"
}

// realistic reports whether s serves realistic pages.
func (w *Web) realistic(s *Site) bool {
	return w.cfg.Profile == ProfileRealistic && s.special == specGeneric
}

// routeRealistic routes the pages of a realistic generic site; false means
// "not one of its URLs" (the /private/ copies and 404s are left to the
// generic routing).
func (w *Web) routeRealistic(s *Site, rt *route) bool {
	p := rt.path
	pages := s.pageCount()
	if n, ok := parseGenericPath(p); ok && n < pages && rt.query == "" {
		f := w.fateOf(s, n)
		switch f.fate {
		case fate404:
			rt.status(404)
		case fate500:
			rt.status(500)
		case fateRedirect:
			next := movedPath(n)
			if f.param > 1 {
				next = hopPath(n, 1)
			}
			rt.redirect(f.code, next)
		default:
			w.realPage(s, rt, n, f)
		}
		return true
	}
	rest, ok := strings.CutPrefix(p, "/moved/")
	if !ok {
		return false
	}
	if num, ok := strings.CutPrefix(rest, "page-"); ok {
		n, ok := parseNum(strings.TrimSuffix(num, ".html"))
		if !ok || !strings.HasSuffix(num, ".html") || n >= pages || w.fateOf(s, n).fate != fateRedirect {
			return false
		}
		w.realPage(s, rt, n, pageFate{})
		return true
	}
	// hop-N-K.html
	num, ok := strings.CutPrefix(rest, "hop-")
	if !ok || !strings.HasSuffix(num, ".html") {
		return false
	}
	ns, ks, ok := strings.Cut(strings.TrimSuffix(num, ".html"), "-")
	n, ok1 := parseNum(ns)
	k, ok2 := parseNum(ks)
	if !ok || !ok1 || !ok2 || n >= pages {
		return false
	}
	f := w.fateOf(s, n)
	if f.fate != fateRedirect || k < 1 || k >= f.param {
		return false
	}
	next := movedPath(n)
	if k+1 < f.param {
		next = hopPath(n, k+1)
	}
	if k%2 == 1 {
		next = s.origin + next // absolute and relative Locations both occur
	}
	rt.redirect(302, next)
	return true
}

// parseNum parses a decimal number without sign or leading zeros.
func parseNum(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// realPage sets rt to realistic page n with fate f.
func (w *Web) realPage(s *Site, rt *route, n int, f pageFate) {
	rt.Class, rt.op, rt.n, rt.Status = ClassPage, opReal, n, 200
	rt.fate = f
	switch f.fate {
	case fate503:
		rt.Transient = f.param
	case fateSlow:
		rt.Delay = time.Duration(f.param) * time.Millisecond
	case fateDup:
		rt.DupOf = genericPath(f.param)
	}
}

// serveRealistic serves realistic page rt.n: a transient page answers 503
// the first times it is asked, a slow page waits, a duplicate renders the
// page it copies.
func (w *Web) serveRealistic(rw http.ResponseWriter, r *http.Request, rt *route, b []byte) ([]byte, bool) {
	s := rt.Site
	if rt.Transient > 0 {
		key := rt.host + rt.path
		w.transient.Lock()
		if w.transient.tries == nil {
			w.transient.tries = map[string]int{}
		}
		tries := w.transient.tries[key]
		if tries < rt.Transient {
			w.transient.tries[key] = tries + 1
		}
		w.transient.Unlock()
		if tries < rt.Transient {
			if rt.fate.retry {
				rw.Header().Set("Retry-After", "2")
			}
			w.writeStatus(rw, 503, "Service Unavailable")
			return b, false
		}
	}
	if rt.Delay > 0 {
		t := time.NewTimer(rt.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return b, false
		}
	}
	n, path := rt.n, rt.path
	if rt.fate.fate == fateDup {
		n, path = rt.fate.param, rt.DupOf
	}
	return w.renderRealistic(b, s, n, path), true
}

// realSize draws a page size: log-normal around RealMedianBytes.
func realSize(r *rng) int {
	u1 := (float64(r.next()>>11) + 0.5) / (1 << 53)
	u2 := float64(r.next()>>11) / (1 << 53)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	size := int(RealMedianBytes * math.Exp(RealSigma*z))
	return min(max(size, RealMinBytes), RealMaxBytes)
}

// realLinks returns the content links of realistic page n: the next page
// first (so that following "next" alone would walk the site), then pages
// drawn at random, the members-only copy and the external links. Their
// number is drawn so that, with the boilerplate's links, the page has
// RealMinLinks to RealMaxLinks links. Drawn from their own generator so
// that Reachable need not render pages.
func (w *Web) realLinks(s *Site, n, boilerLinks int) []link {
	pages := s.pageCount()
	path := genericPath(n)
	r := w.seedFor(s.identity, path+"\x00links")
	total := RealMinLinks + r.intn(RealMaxLinks-RealMinLinks+1)
	content := max(total-boilerLinks-w.cfg.ExternalLinks, 3)
	dir := dirOf(path)
	links := make([]link, 0, content+w.cfg.ExternalLinks+1)
	for i := 0; i < content; i++ {
		t := (n + 1) % pages
		if i > 0 {
			t = r.intn(pages)
		}
		l := link{lazy: true, page: t, num: t}
		switch r.intn(4) {
		case 0, 1:
			l.form, l.dir = formRel, dir
		case 2:
			l.form = formAbs
		default:
			l.form, l.host = formURL, s.Host
		}
		if r.intn(6) == 0 {
			l.frag = 1 + r.intn(3)
		}
		l.text = words[r.intn(len(words))]
		links = append(links, l)
	}
	if hasPrivate(n) {
		links = append(links, link{href: privatePath(n), text: "members only", rel: "nofollow"})
	}
	if w.cfg.Sites > 1 {
		for i := 0; i < w.cfg.ExternalLinks; i++ {
			j := r.intn(w.cfg.Sites - 1)
			if j >= s.index {
				j++
			}
			links = append(links, link{lazy: true, form: formURL, page: r.intn(w.cfg.PagesPerSite), host: w.sites[j].Host, text: "elsewhere", num: j})
		}
	}
	return links
}

// renderRealistic appends realistic page n of s as served at path.
func (w *Web) renderRealistic(b []byte, s *Site, n int, path string) []byte {
	bp := w.boilerplateOf(s)
	r := w.seedFor(s.identity, path)
	start := len(b)
	size := realSize(r)
	title := capitalize(words[r.intn(len(words))]) + " " + words[r.intn(len(words))] + " " + words[r.intn(len(words))]
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"...)
	b = htmlEscape(b, title)
	b = append(b, " | "...)
	b = htmlEscape(b, s.Host)
	b = append(b, "</title>\n<meta name=\"description\" content=\""...)
	b = appendWords(b, r, 15)
	b = append(b, "\">\n<link rel=\"canonical\" href=\""...)
	b = append(b, s.origin...)
	b = append(b, path...)
	b = append(b, "\">\n"...)
	b = append(b, bp.head...)
	b = append(b, "</head>\n<body>\n"...)
	b = append(b, bp.header...)
	b = append(b, "<main>\n<article>\n<h1>"...)
	b = htmlEscape(b, title)
	b = append(b, "</h1>\n<p class=\"byline\">By "...)
	b = append(b, capitalize(words[r.intn(len(words))])...)
	b = append(b, ' ')
	b = append(b, capitalize(words[r.intn(len(words))])...)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(1+r.intn(28)), 10)
	b = append(b, " March 20"...)
	b = strconv.AppendInt(b, int64(10+r.intn(17)), 10)
	b = append(b, "</p>\n"...)
	links := w.realLinks(s, n, len(bp.links))
	rest := len(bp.aside) + len(bp.footer) + 40
	for sec := 1; sec <= 2 || len(b)-start+rest < size || len(links) > 0; sec++ {
		b = append(b, "<h2 id=\"s"...)
		b = strconv.AppendInt(b, int64(sec), 10)
		b = append(b, "\">"...)
		b = append(b, capitalize(words[r.intn(len(words))])...)
		b = append(b, ' ')
		b = appendWords(b, r, 2)
		b = append(b, "</h2>\n"...)
		for p, np := 0, 1+r.intn(4); p < np; p++ {
			b = append(b, "<p>"...)
			nl := 0
			if len(links) > 0 {
				nl = 1 + r.intn(3)
			}
			for i := 0; i < nl && len(links) > 0; i++ {
				b = appendSentences(b, r, 8+r.intn(20))
				b = append(b, ' ')
				b = appendLink(b, links[0], false)
				b = append(b, ' ')
				links = links[1:]
			}
			b = appendSentences(b, r, 10+r.intn(50))
			b = append(b, "</p>\n"...)
		}
		if r.intn(5) == 0 {
			b = append(b, "<ul>\n"...)
			for i, ni := 0, 3+r.intn(5); i < ni; i++ {
				b = append(b, "<li>"...)
				b = appendSentences(b, r, 4+r.intn(10))
				b = append(b, "</li>\n"...)
			}
			b = append(b, "</ul>\n"...)
		}
		if sec > 20000 {
			break // bounded whatever the size says
		}
	}
	b = append(b, "</article>\n</main>\n"...)
	b = append(b, bp.aside...)
	b = append(b, bp.footer...)
	return append(b, "</body>\n</html>\n"...)
}

// Reachable returns the absolute URLs of site s that answer 200 (at
// last: transient errors retried, redirects followed) to a crawler that
// starts at the site's seed pages and follows its links within the site,
// obeying robots.txt and rel=nofollow. The redirecting URLs themselves are
// not listed, their targets are. In the order a breadth-first crawl finds
// them; for generic sites only: nil for hazard sites, whose traps have no
// finite answer.
func (w *Web) Reachable(s *Site) []string {
	if s.special != specGeneric {
		return nil
	}
	pages := s.pageCount()
	if !w.realistic(s) {
		// Every plain page links to the next one.
		out := make([]string, pages)
		for n := range out {
			out[n] = s.origin + genericPath(n)
		}
		return out
	}
	bp := w.boilerplateOf(s)
	seen := make([]bool, pages)
	var out []string
	queue := []int{0}
	seen[0] = true
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		f := w.fateOf(s, n)
		src := n
		switch f.fate {
		case fate404, fate500:
			continue
		case fateRedirect:
			out = append(out, s.origin+movedPath(n))
		case fateDup:
			out = append(out, s.origin+genericPath(n))
			src = f.param
		default:
			out = append(out, s.origin+genericPath(n))
		}
		next := append([]int(nil), bp.links...)
		for _, l := range w.realLinks(s, src, len(bp.links)) {
			if l.lazy && l.host != "" && l.host != s.Host {
				continue // another site
			}
			if l.lazy {
				next = append(next, l.page)
			}
		}
		for _, t := range next {
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	return out
}
