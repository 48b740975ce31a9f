package testweb

import (
	"strconv"
	"strings"
	"time"
)

// The routes of the hazard sites: redirects, meta robots, growing URLs,
// calendars, directory listings and session ids.

func routeRedirects(rt *route) bool {
	p := rt.path
	switch p {
	case "/r/301":
		rt.redirect(301, "/target/a.html")
	case "/r/302":
		rt.redirect(302, "/target/b.html")
	case "/r/307":
		rt.redirect(307, "/target/c.html")
	case "/r/relative":
		rt.redirect(301, "../target/d.html")
	case "/loop/a":
		rt.redirect(301, "/loop/b")
	case "/loop/b":
		rt.redirect(301, "/loop/a")
	case "/away":
		rt.redirect(301, "http://redirect-target.test/landing.html")
	case "/target/a.html", "/target/b.html", "/target/c.html", "/target/d.html", "/target/end.html":
		rt.named("redirect target " + p)
	default:
		num, ok := strings.CutPrefix(p, "/chain/")
		if !ok || len(num) != 1 || num[0] < '1' || num[0] > '5' {
			return false
		}
		if num == "5" {
			rt.redirect(301, "/target/end.html")
		} else {
			rt.redirect(302, "/chain/"+string(num[0]+1))
		}
	}
	return true
}

func routeMetaRobots(rt *route) bool {
	switch rt.path {
	case "/noindex.html":
		rt.named("noindex", link{href: "/noindex-child.html", text: "followable"})
		rt.opts.metaRobots = "noindex"
	case "/noindex-child.html":
		rt.named("linked from a noindex page")
	case "/nofollow.html":
		rt.named("nofollow", link{href: "/nofollow/target-1.html", text: "t1"}, link{href: "/nofollow/target-2.html", text: "t2"})
		rt.opts.metaRobots = "NOINDEX, NOFOLLOW"
	case "/x-noindex.html":
		rt.named("X-Robots-Tag noindex")
		rt.header = [][2]string{{"X-Robots-Tag", "noindex"}}
	case "/x-nofollow.html":
		rt.named("X-Robots-Tag nofollow", link{href: "/x-nofollow/target.html", text: "t"})
		rt.header = [][2]string{{"X-Robots-Tag", "nofollow"}}
	case "/googlebot-nofollow.html":
		rt.named("nofollow for googlebot only", link{href: "/other-bot/target.html", text: "t"})
		rt.opts.metaRobots, rt.opts.metaName = "nofollow", "googlebot"
	case "/other-bot/target.html":
		rt.named("followable by all but googlebot")
	case "/nofollow/target-1.html", "/nofollow/target-2.html", "/x-nofollow/target.html", "/rel-nofollow/target.html":
		rt.named("reachable only through nofollow")
		rt.Nofollow = true
	default:
		return false
	}
	return true
}

// routeGrowing routes prefix + ("a/")*: each level links one deeper (seed
// 001 §4.1, growing URLs). Paths past 2000 bytes answer 414.
func routeGrowing(rt *route, prefix string) bool {
	rest, ok := strings.CutPrefix(rt.path, prefix)
	if !ok || rest == "" {
		return false
	}
	depth := 0
	for rest != "" {
		next, ok := strings.CutPrefix(rest, "a/")
		if !ok {
			return false
		}
		rest = next
		depth++
	}
	if len(rt.path) > 2000 {
		rt.Class, rt.Trap, rt.op, rt.n, rt.Status = ClassTrap, TrapGrowing, opStatus, 414, 414
		return true
	}
	rt.trap(TrapGrowing, opGrowing)
	rt.n = depth
	return true
}

// routeCalendar routes /calendar/YYYY/MM/ and /calendar/YYYY/MM/DD/ for
// years 1 to 9999: an effectively infinite calendar (the Viúva Negra report §5.4).
func routeCalendar(rt *route) bool {
	rest, ok := strings.CutPrefix(rt.path, "/calendar/")
	if !ok || !strings.HasSuffix(rest, "/") {
		return false
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	var v [3]int
	for i, s := range parts {
		n, err := strconv.Atoi(s)
		if err != nil || len(s) > 4 || n < 1 {
			return false
		}
		v[i] = n
	}
	if v[0] > 9999 || v[1] > 12 || len(parts[0]) != 4 || len(parts[1]) != 2 {
		return false
	}
	if len(parts) == 3 {
		d := time.Date(v[0], time.Month(v[1]), v[2], 0, 0, 0, 0, time.UTC)
		if len(parts[2]) != 2 || d.Day() != v[2] {
			return false
		}
	}
	rt.trap(TrapCalendar, opCalendar)
	rt.n = v[0]*10000 + v[1]*100 + v[2]
	return true
}

// dirs are the directories of dirlist.test and their entries (a trailing
// slash marks a subdirectory).
var dirs = map[string][]string{
	"/pub/":          {"docs/", "src/", "README.txt", "CHANGES.txt"},
	"/pub/docs/":     {"manual.txt", "faq.txt", "old/"},
	"/pub/docs/old/": {"manual-1.0.txt"},
	"/pub/src/":      {"main.c.txt", "util.c.txt", "Makefile.txt"},
}

// routeDirList routes Apache-style listings: every listing URL with a sort
// query (?C=N;O=D in Apache 2, ?N=D in Apache 1.3 as the Viúva Negra report §5.4 shows)
// is a reordering of the same listing, hence a trap URL.
func routeDirList(rt *route) bool {
	p := rt.path
	if _, ok := dirs[p]; ok {
		rt.op, rt.Class, rt.Status = opDirList, ClassPage, 200
		if rt.query != "" {
			rt.trap(TrapDirList, opDirList)
		}
		return true
	}
	d := dirOf(p)
	for _, e := range dirs[d] {
		if !strings.HasSuffix(e, "/") && d+e == p {
			rt.bytes(ClassMedia, "text/plain; charset=utf-8", []byte("Contents of "+p+".\n"))
			return true
		}
	}
	return false
}

// mediaFiles are media.test's non-HTML files, some with the wrong
// Content-Type (the Viúva Negra report §4.2).
var mediaFiles = []struct {
	path, ctype string
	body        []byte
}{
	{"/files/report.pdf", "application/pdf", pdfBody},
	{"/files/photo.png", "image/png", pngBody},
	{"/files/logo.jpg", "image/jpeg", jpegBody},
	{"/files/wrong-type.pdf", "text/html; charset=utf-8", pdfBody}, // a PDF said to be HTML
	{"/files/page.jpg", "image/jpeg", []byte(htmlAsImage)},         // HTML said to be an image
	{"/files/binary.html", "text/html; charset=utf-8", jpegBody},   // an image said to be HTML
	{"/files/untyped", "application/octet-stream", []byte(htmlAsImage)},
}

const htmlAsImage = "<!DOCTYPE html>\n<html><head><title>mislabelled</title></head><body><p>An HTML page served with a wrong type. <a href=\"/\">home</a></p></body></html>\n"

var pdfBody = []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")

var pngBody = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

var jpegBody = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9")

// sessionID returns the session id of a query "PHPSESSID=<16 hex>", or "".
func sessionID(q string) string {
	v, ok := strings.CutPrefix(q, "PHPSESSID=")
	if !ok || len(v) != 16 {
		return ""
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return v
}
