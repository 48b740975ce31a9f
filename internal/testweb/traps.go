package testweb

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
)

// renderCalendar appends a month page (links to the previous and next
// month and to every day) or a day page (previous and next day, the month).
func (w *Web) renderCalendar(b []byte, s *Site, rt *route) []byte {
	y, m, d := rt.n/10000, time.Month(rt.n/100%100), rt.n%100
	var links []link
	title := ""
	if d == 0 {
		t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		title = t.Format("January 2006")
		if prev := t.AddDate(0, -1, 0); prev.Year() >= 1 {
			links = append(links, link{href: calPath(prev, false), text: "previous month"})
		}
		if next := t.AddDate(0, 1, 0); next.Year() <= 9999 {
			links = append(links, link{href: calPath(next, false), text: "next month"})
		}
		for day := t; day.Month() == m; day = day.AddDate(0, 0, 1) {
			links = append(links, link{href: fmt.Sprintf("./%02d/", day.Day()), text: strconv.Itoa(day.Day())})
		}
	} else {
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		title = t.Format("Monday 2 January 2006")
		if prev := t.AddDate(0, 0, -1); prev.Year() >= 1 {
			links = append(links, link{href: calPath(prev, true), text: "previous day"})
		}
		if next := t.AddDate(0, 0, 1); next.Year() <= 9999 {
			links = append(links, link{href: calPath(next, true), text: "next day"})
		}
		links = append(links, link{href: "../", text: "the month"})
	}
	return w.renderNamed(b, s, rt.path, "events of "+title, links, pageOpts{})
}

func calPath(t time.Time, day bool) string {
	if day {
		return fmt.Sprintf("/calendar/%04d/%02d/%02d/", t.Year(), t.Month(), t.Day())
	}
	return fmt.Sprintf("/calendar/%04d/%02d/", t.Year(), t.Month())
}

// dirEntry is one line of a directory listing.
type dirEntry struct {
	name  string
	mtime time.Time
	size  int64
	desc  string
}

func entriesOf(dir string) []dirEntry {
	var out []dirEntry
	for _, name := range dirs[dir] {
		h := fnv.New64a()
		h.Write([]byte(dir + name))
		v := h.Sum64()
		e := dirEntry{
			name:  name,
			mtime: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(v%(5*365*24)) * time.Hour),
			size:  int64(v>>20) % 100000,
			desc:  words[int(v>>40)%len(words)],
		}
		if strings.HasSuffix(name, "/") {
			e.size = -1
		}
		out = append(out, e)
	}
	return out
}

// parseSort reads the column and order of an Apache listing query: Apache 2
// "C=N;O=D" (also with & separators) or Apache 1.3 "N=D". Unknown queries
// sort by name, ascending, like Apache.
func parseSort(q string) (col, ord byte) {
	col, ord = 'N', 'A'
	for part := range strings.FieldsFuncSeq(q, func(r rune) bool { return r == ';' || r == '&' }) {
		k, v, _ := strings.Cut(part, "=")
		if len(k) != 1 || len(v) != 1 {
			continue
		}
		switch k[0] {
		case 'C':
			if strings.IndexByte("NMSD", v[0]) >= 0 {
				col = v[0]
			}
		case 'O':
			if v[0] == 'A' || v[0] == 'D' {
				ord = v[0]
			}
		case 'N', 'M', 'S', 'D':
			if v[0] == 'A' || v[0] == 'D' {
				col, ord = k[0], v[0]
			}
		}
	}
	return col, ord
}

// renderDirList appends an Apache-style listing of dir sorted as the query
// says, with the column headers linking to the other orders (the Viúva Negra report §4.1,
// Figure 2). /pub/docs/ and below use the Apache 1.3 query form.
func renderDirList(b []byte, dir, query string) []byte {
	col, ord := parseSort(query)
	es := entriesOf(dir)
	key := func(a, c dirEntry) int {
		switch col {
		case 'M':
			return a.mtime.Compare(c.mtime)
		case 'S':
			return cmp.Compare(a.size, c.size)
		case 'D':
			return strings.Compare(a.desc, c.desc)
		}
		return strings.Compare(a.name, c.name)
	}
	slices.SortStableFunc(es, func(a, c dirEntry) int {
		if ord == 'D' {
			return key(c, a)
		}
		return key(a, c)
	})
	old := strings.HasPrefix(dir, "/pub/docs/")
	sortHref := func(c byte) string {
		o := byte('A')
		if c == col && ord == 'A' {
			o = 'D'
		}
		if old {
			return "?" + string(c) + "=" + string(o)
		}
		return "?C=" + string(c) + ";O=" + string(o)
	}
	b = append(b, "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\">\n<html>\n <head>\n  <title>Index of "...)
	b = htmlEscape(b, dir)
	b = append(b, "</title>\n </head>\n <body>\n<h1>Index of "...)
	b = htmlEscape(b, dir)
	b = append(b, "</h1>\n  <table>\n   <tr>"...)
	for _, c := range []struct {
		c    byte
		name string
	}{{'N', "Name"}, {'M', "Last modified"}, {'S', "Size"}, {'D', "Description"}} {
		b = append(b, "<th><a href=\""...)
		b = append(b, sortHref(c.c)...)
		b = append(b, "\">"...)
		b = append(b, c.name...)
		b = append(b, "</a></th>"...)
	}
	b = append(b, "</tr>\n"...)
	if dir != "/pub/" {
		b = append(b, "<tr><td><a href=\"../\">Parent Directory</a></td><td>&nbsp;</td><td align=\"right\">  - </td><td>&nbsp;</td></tr>\n"...)
	}
	for _, e := range es {
		b = append(b, "<tr><td><a href=\""...)
		b = htmlEscape(b, e.name)
		b = append(b, "\">"...)
		b = htmlEscape(b, e.name)
		b = append(b, "</a></td><td align=\"right\">"...)
		b = e.mtime.AppendFormat(b, "2006-01-02 15:04")
		b = append(b, "  </td><td align=\"right\">"...)
		if e.size < 0 {
			b = append(b, "  - "...)
		} else {
			b = strconv.AppendInt(b, e.size, 10)
		}
		b = append(b, "</td><td>"...)
		b = append(b, e.desc...)
		b = append(b, "</td></tr>\n"...)
	}
	b = append(b, "</table>\n<address>Apache Server at dirlist.test Port 80</address>\n</body></html>\n"...)
	return b
}

// renderNearDup appends item n of neardup.test: the same text on every
// item, only the "generated" timestamp and the next-item link differ.
func (w *Web) renderNearDup(b []byte, s *Site, n int) []byte {
	r := w.seedFor(s.identity, "/item")
	stamp := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	o := pageOpts{
		title: s.Host + ": today's item",
		stamp: "Generated " + stamp.Format(time.RFC1123),
		nav:   []link{{href: "/", text: "Home"}},
		links: []link{{href: "/item/" + strconv.Itoa(n+1), text: "next item"}},
	}
	return renderPage(b, r, w.cfg.PageBytes, &o)
}

// renderWild appends the doorway page every *.wild.test name answers, with
// links to five more invented names (the Viúva Negra report §4.1, DNS wildcards).
func (w *Web) renderWild(b []byte, s *Site, host string) []byte {
	r := w.seedFor(s.identity, host)
	links := make([]link, 0, 6)
	for i := 0; i < 5; i++ {
		name := words[r.intn(len(words))] + "-" + w.hashHex("wild", host, strconv.Itoa(i))[:8] + "." + s.Host
		links = append(links, link{href: "http://" + name + "/", text: name})
	}
	links = append(links, link{href: "http://" + s.Host + "/", text: "the real site"})
	o := pageOpts{
		title:     "Welcome to " + host,
		canonical: "http://" + host + "/",
		nav:       []link{{href: "/", text: "Home"}},
		links:     links,
	}
	return renderPage(b, r, w.cfg.PageBytes, &o)
}
