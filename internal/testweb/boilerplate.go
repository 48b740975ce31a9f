package testweb

import (
	"strconv"
	"strings"
)

// boilerplate is what every page of a realistic site shares: the head's
// style sheet and script, the header with its navigation, the sidebar and
// the footer. Built once per site.
type boilerplate struct {
	head, header, aside, footer []byte
	links                       []int // generic pages the boilerplate links to
}

// navNames name the header's links; footerNames the footer's.
var (
	navNames    = [...]string{"News", "Products", "Documentation", "Blog", "Support", "Community"}
	footerNames = [...]string{"About us", "Contact", "Privacy policy", "Terms of use", "Careers"}
)

// boilerplateOf returns the boilerplate of site s, building it the first
// time.
func (w *Web) boilerplateOf(s *Site) *boilerplate {
	if bp := s.boiler.Load(); bp != nil {
		return bp
	}
	bp := w.buildBoilerplate(s)
	s.boiler.CompareAndSwap(nil, bp)
	return s.boiler.Load()
}

func (w *Web) buildBoilerplate(s *Site) *boilerplate {
	r := w.seedFor(s.identity, "\x00boilerplate")
	pages := s.pageCount()
	bp := &boilerplate{}
	name := strings.ToUpper(s.Host[:1]) + strings.TrimSuffix(s.Host[1:], "."+TLD)

	// Head: a style sheet and an analytics-like script, a few KB each, as
	// real pages inline.
	h := append([]byte(nil), "<style>\n"...)
	for i, nr := 0, 40+r.intn(80); i < nr; i++ {
		h = append(h, '.')
		h = append(h, words[r.intn(len(words))]...)
		h = append(h, '-')
		h = append(h, words[r.intn(len(words))]...)
		h = append(h, " { margin: "...)
		h = strconv.AppendInt(h, int64(r.intn(24)), 10)
		h = append(h, "px "...)
		h = strconv.AppendInt(h, int64(r.intn(24)), 10)
		h = append(h, "px; color: #"...)
		h = strconv.AppendUint(h, 0x100000+r.next()%0xefffff, 16)
		h = append(h, "; font-size: "...)
		h = strconv.AppendInt(h, int64(12+r.intn(12)), 10)
		h = append(h, "px; }\n"...)
	}
	h = append(h, "</style>\n<script>\nwindow.dataLayer = window.dataLayer || [];\n"...)
	for i, ns := 0, 10+r.intn(30); i < ns; i++ {
		h = append(h, "function "...)
		h = append(h, words[r.intn(len(words))]...)
		h = strconv.AppendInt(h, int64(i), 10)
		h = append(h, "(e) { dataLayer.push({event: '"...)
		h = append(h, words[r.intn(len(words))]...)
		h = append(h, "', target: e && e.id, t: Date.now()}); return "...)
		h = strconv.AppendInt(h, int64(r.intn(1000)), 10)
		h = append(h, "; }\n"...)
	}
	bp.head = append(h, "</script>\n"...)

	link := func(b []byte, page int, text string) []byte {
		page %= pages
		bp.links = append(bp.links, page)
		b = append(b, "<a href=\""...)
		b = appendGenericPath(b, page)
		b = append(b, "\">"...)
		b = htmlEscape(b, text)
		return append(b, "</a>"...)
	}

	// Header: logo, navigation, search form, cookie banner.
	h = append([]byte(nil), "<header class=\"site-header\">\n<div class=\"logo\">"...)
	h = link(h, 0, name)
	h = append(h, "</div>\n<nav class=\"main-nav\"><ul>\n"...)
	for i, t := range navNames {
		h = append(h, "<li>"...)
		h = link(h, 1+i, t)
		h = append(h, "</li>\n"...)
	}
	h = append(h, "</ul></nav>\n<form class=\"search\" action=\"/search\"><input name=\"q\" placeholder=\"Search "...)
	h = htmlEscape(h, name)
	h = append(h, "\"><button>Search</button></form>\n</header>\n<div class=\"cookie-banner\"><p>We use cookies to remember your preferences and to measure how our pages are read. By continuing to browse you agree to our use of cookies.</p><button>Accept</button></div>\n"...)
	bp.header = h

	// Sidebar: popular pages and a blurb about the site.
	h = append([]byte(nil), "<aside class=\"sidebar\">\n<h3>Popular</h3>\n<ul>\n"...)
	for i := 0; i < 5; i++ {
		h = append(h, "<li>"...)
		h = link(h, 12+i, capitalize(words[r.intn(len(words))])+" "+words[r.intn(len(words))])
		h = append(h, "</li>\n"...)
	}
	h = append(h, "</ul>\n<h3>About "...)
	h = htmlEscape(h, name)
	h = append(h, "</h3>\n<p>"...)
	h = appendSentences(h, r, 30+r.intn(30))
	bp.aside = append(h, "</p>\n</aside>\n"...)

	// Footer: links, a longer blurb, an address and the copyright line.
	h = append([]byte(nil), "<footer class=\"site-footer\">\n<div class=\"footer-links\">"...)
	for i, t := range footerNames {
		if i > 0 {
			h = append(h, " · "...)
		}
		h = link(h, 7+i, t)
	}
	h = append(h, "</div>\n<p class=\"footer-about\">"...)
	h = appendSentences(h, r, 40+r.intn(40))
	h = append(h, "</p>\n<address>"...)
	h = htmlEscape(h, name)
	h = append(h, ", "...)
	h = strconv.AppendInt(h, int64(1+r.intn(200)), 10)
	h = append(h, ' ')
	h = append(h, capitalize(words[r.intn(len(words))])...)
	h = append(h, " Street, "...)
	h = append(h, capitalize(words[r.intn(len(words))])...)
	h = append(h, "</address>\n<p class=\"copyright\">© 2026 "...)
	h = htmlEscape(h, name)
	bp.footer = append(h, ". All rights reserved.</p>\n</footer>\n"...)
	return bp
}

// capitalize upper-cases the first letter of an ASCII word.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// appendSentences appends about n words as sentences of 6 to 17 words.
func appendSentences(b []byte, r *rng, n int) []byte {
	for n > 0 {
		k := min(6+r.intn(12), n)
		for i := 0; i < k; i++ {
			w := words[r.intn(len(words))]
			if i == 0 {
				w = capitalize(w)
			} else {
				b = append(b, ' ')
			}
			b = append(b, w...)
		}
		b = append(b, '.')
		n -= k
		if n > 0 {
			b = append(b, ' ')
		}
	}
	return b
}
