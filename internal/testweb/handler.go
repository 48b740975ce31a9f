package testweb

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

// Handler returns the handler serving every site of the web, chosen by the
// Host header, in origin form or in absolute form (as an HTTP proxy would
// be asked). It never dials out.
func (w *Web) Handler() http.Handler { return handler{w: w} }

type handler struct{ w *Web }

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (h handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	hdr := rw.Header()
	hdr["Server"] = serverHeader
	if r.Method == http.MethodConnect {
		// Tunnels would need dialling; testweb only serves its own hosts.
		hdr["Allow"] = allowHeader
		http.Error(rw, "testweb: CONNECT is not supported; send absolute-form http:// requests", http.StatusMethodNotAllowed)
		return
	}
	rt := h.w.route(r.Host, r.URL.RequestURI())
	h.w.counts[classIndex(rt.Class)].Add(1)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr["Allow"] = allowHeader
		http.Error(rw, "testweb: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if h.w.cfg.LatencyMax > 0 && rt.op != opLocal && rt.op != opUnknownHost {
		// The simulated server time comes before the header, as a slow
		// origin's would: the crawler sees it as time to first byte.
		if d := h.w.Latency(r.Host, r.URL.RequestURI()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
	}
	h.w.serve(rw, r, &rt)
}

var (
	serverHeader = []string{"courtesy-testweb"}
	allowHeader  = []string{"GET, HEAD"}
	htmlType     = []string{"text/html; charset=utf-8"}
	textType     = []string{"text/plain; charset=utf-8"}
)

func (w *Web) serve(rw http.ResponseWriter, r *http.Request, rt *route) {
	hdr := rw.Header()
	for _, kv := range rt.header {
		hdr.Set(kv[0], kv[1])
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	defer func() {
		if cap(b) <= 1<<20 { // do not keep huge buffers alive
			*bp = b[:0]
			bufPool.Put(bp)
		}
	}()
	s := rt.Site
	switch rt.op {
	case opLocal:
		hdr["Content-Type"] = textType
		if rt.path == "/metrics" {
			rw.Write(w.metrics(b))
			return
		}
		rw.Write([]byte("ok\n"))
		return
	case opUnknownHost:
		http.Error(rw, "testweb: not a host of this synthetic web", http.StatusMisdirectedRequest)
		return
	case opNotFound:
		w.writeStatus(rw, 404, "Not Found")
		return
	case opStatus:
		w.writeStatus(rw, rt.n, http.StatusText(rt.n))
		return
	case opRobots:
		w.serveRobots(rw, s, rt.host)
		return
	case opRedirect:
		hdr.Set("Location", rt.str)
		hdr["Content-Type"] = htmlType
		rw.WriteHeader(rt.n)
		b = append(b, "<html><body><p>Moved to <a href=\""...)
		b = htmlEscape(b, rt.str)
		b = append(b, "\">here</a>.</p></body></html>\n"...)
		rw.Write(b)
		return
	case opBytes:
		hdr["Content-Type"] = []string{rt.str}
		w.writeBody(rw, r, rt, rt.body)
		return
	case opGeneric:
		var extra []link
		if rt.n == 0 {
			extra = w.homeExtras(s)
		}
		sid := ""
		if s.special == specSession {
			sid = w.sessionLinks(rw, r, "")
		}
		b = w.renderGeneric(b, s, rt.n, s.pageCount(), extra, s.special == specMalformed, sid)
	case opReal:
		var ok bool
		if b, ok = w.serveRealistic(rw, r, rt, b); !ok {
			return
		}
	case opPrivate:
		b = w.renderNamed(b, s, rt.path, "members only "+strconv.Itoa(rt.n), nil, pageOpts{})
	case opNamed:
		b = w.renderNamed(b, s, rt.path, rt.str, rt.links, rt.opts)
	case opSession:
		sid := w.sessionLinks(rw, r, sessionID(rt.query))
		b = w.renderGeneric(b, s, rt.n, specialPages, nil, false, sid)
	case opCalendar:
		b = w.renderCalendar(b, s, rt)
	case opGrowing:
		b = w.renderNamed(b, s, rt.path, "level "+strconv.Itoa(rt.n), []link{
			{href: "./a/", text: "deeper"}, {href: "../", text: "back"}}, pageOpts{})
	case opDirList:
		b = renderDirList(b, rt.path, rt.query)
	case opNearDup:
		b = w.renderNearDup(b, s, rt.n)
	case opWild:
		b = w.renderWild(b, s, rt.host)
	case opSlow:
		t := time.NewTimer(w.cfg.SlowDelay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		b = w.renderNamed(b, s, rt.path, "finally", nil, pageOpts{})
	case opEndless:
		w.serveEndless(rw, r, rt)
		return
	}
	hdr["Content-Type"] = htmlType
	w.writeBody(rw, r, rt, b)
}

// writeBody writes a complete body with its length, compressed on
// compressed.test as Accept-Encoding allows (br preferred, then gzip), and
// always gzipped on /always-gzip.html whatever the client accepts.
func (w *Web) writeBody(rw http.ResponseWriter, r *http.Request, rt *route, body []byte) {
	hdr := rw.Header()
	if rt.Site != nil && rt.Site.special == specCompressed && rt.Status == 200 {
		hdr["Vary"] = []string{"Accept-Encoding"}
		enc := ""
		ae := r.Header.Get("Accept-Encoding")
		switch {
		case rt.path == "/always-gzip.html":
			enc = "gzip"
		case acceptsEncoding(ae, "br"):
			enc = "br"
		case acceptsEncoding(ae, "gzip"):
			enc = "gzip"
		}
		if enc != "" {
			var out bytes.Buffer
			if enc == "br" {
				bw := brotli.NewWriterLevel(&out, 4)
				bw.Write(body)
				bw.Close()
			} else {
				zw, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
				zw.Write(body)
				zw.Close()
			}
			hdr["Content-Encoding"] = []string{enc}
			body = out.Bytes()
		}
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	if rt.Status != 0 && rt.Status != 200 {
		rw.WriteHeader(rt.Status)
	}
	rw.Write(body)
}

// acceptsEncoding reports whether an Accept-Encoding value lists enc with a
// non-zero q (RFC 9110 §12.5.3).
func acceptsEncoding(header, enc string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), enc) {
			continue
		}
		params = strings.ReplaceAll(params, " ", "")
		if q, ok := strings.CutPrefix(params, "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// writeStatus answers an error status with a small HTML body.
func (w *Web) writeStatus(rw http.ResponseWriter, code int, text string) {
	body := "<!DOCTYPE html>\n<html><head><title>" + strconv.Itoa(code) + " " + text +
		"</title></head><body><h1>" + text + "</h1><p><a href=\"/\">home</a></p></body></html>\n"
	hdr := rw.Header()
	hdr["Content-Type"] = htmlType
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	rw.WriteHeader(code)
	rw.Write([]byte(body))
}

// serveRobots answers /robots.txt on host (a name of s) with the site's
// status.
func (w *Web) serveRobots(rw http.ResponseWriter, s *Site, host string) {
	hdr := rw.Header()
	switch s.RobotsStatus {
	case 200:
		body := s.Robots
		if s.aliasRobots != nil && host != s.Host {
			body = s.aliasRobots
		}
		hdr["Content-Type"] = textType
		hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
		rw.Write(body)
	case 301:
		hdr.Set("Location", s.RobotsRedirect)
		w.writeStatus(rw, 301, "Moved Permanently")
	case 401:
		hdr.Set("WWW-Authenticate", `Basic realm="members"`)
		w.writeStatus(rw, 401, "Unauthorized")
	case 429:
		hdr.Set("Retry-After", "5")
		w.writeStatus(rw, 429, "Too Many Requests")
	case 503:
		hdr.Set("Retry-After", "3600")
		w.writeStatus(rw, 503, "Service Unavailable")
	default:
		w.writeStatus(rw, s.RobotsStatus, http.StatusText(s.RobotsStatus))
	}
}

// sessionLinks sets the session cookie and returns the session id to put
// in links: none when the client sent the cookie back (the Viúva Negra report §5.4: a
// crawler accepting cookies avoids the trap), else a new id derived from the
// old one, as if every session expired at once.
func (w *Web) sessionLinks(rw http.ResponseWriter, r *http.Request, old string) string {
	if c, err := r.Cookie("PHPSESSID"); err == nil && sessionID("PHPSESSID="+c.Value) != "" {
		return ""
	}
	sid := w.hashHex("session", old, r.URL.Path)
	rw.Header().Add("Set-Cookie", "PHPSESSID="+sid+"; Path=/; HttpOnly")
	return sid
}

// serveEndless streams a body until the client goes away, EndlessBytes are
// written or EndlessTime has passed (the Viúva Negra report §4.1: infinite size contents).
func (w *Web) serveEndless(rw http.ResponseWriter, r *http.Request, rt *route) {
	rw.Header()["Content-Type"] = []string{rt.str}
	rw.WriteHeader(200)
	if r.Method == http.MethodHead {
		return
	}
	deadline := time.Now().Add(w.cfg.EndlessTime)
	chunk := make([]byte, 0, 32<<10)
	rng := w.seedFor(rt.Site.identity, rt.path)
	html := strings.HasPrefix(rt.str, "text/html")
	if html {
		chunk = append(chunk, "<!DOCTYPE html>\n<html><head><title>live</title></head><body>\n"...)
	}
	fl, _ := rw.(http.Flusher)
	var sent int64
	for sent < w.cfg.EndlessBytes {
		if html {
			for len(chunk) < 32<<10-600 {
				chunk = append(chunk, "<p>"...)
				chunk = appendWords(chunk, rng, 50)
				chunk = append(chunk, "</p>\n"...)
			}
		} else {
			for len(chunk) < 32<<10 {
				v := rng.next()
				chunk = append(chunk, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
			}
		}
		if rest := w.cfg.EndlessBytes - sent; int64(len(chunk)) > rest {
			chunk = chunk[:rest]
		}
		n, err := rw.Write(chunk)
		sent += int64(n)
		if err != nil || r.Context().Err() != nil || !time.Now().Before(deadline) {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		chunk = chunk[:0]
	}
}

// classes lists the URL classes in the order of Web.counts.
var classes = [...]Class{ClassRobots, ClassPage, ClassOrphan, ClassSitemap, ClassRedirect, ClassError, ClassMedia, ClassTrap, ClassNotFound, ClassUnknownHost}

func classIndex(c Class) int {
	for i, x := range classes {
		if x == c {
			return i
		}
	}
	return len(classes) - 1
}

// metrics appends the Prometheus text exposition of the request counters
// (DESIGN.md: courtesy_<component>_<name>_<unit>).
func (w *Web) metrics(b []byte) []byte {
	b = append(b, "# HELP courtesy_testweb_requests_total Requests served, by class of URL.\n# TYPE courtesy_testweb_requests_total counter\n"...)
	for i, c := range classes {
		b = append(b, "courtesy_testweb_requests_total{class=\""...)
		b = append(b, c...)
		b = append(b, "\"} "...)
		b = strconv.AppendInt(b, w.counts[i].Load(), 10)
		b = append(b, '\n')
	}
	b = append(b, "# HELP courtesy_testweb_sites Sites of the synthetic web.\n# TYPE courtesy_testweb_sites gauge\ncourtesy_testweb_sites "...)
	b = strconv.AppendInt(b, int64(len(w.sites)), 10)
	return append(b, '\n')
}
