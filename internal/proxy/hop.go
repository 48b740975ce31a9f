package proxy

import (
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// hopByHop are the connection-specific fields a proxy must not forward
// (RFC 9110 §7.6.1), plus the proxy-authentication fields, which concern
// the next hop only (§11.7; RFC 9111 §3.1 forbids storing them).
var hopByHop = []string{
	"Connection",
	"Proxy-Connection", // non-standard, still sent by old clients
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authentication-Info",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

// removeHopByHop deletes the hop-by-hop fields of h, including those named
// in Connection (RFC 9110 §7.6.1: "a proxy MUST ... remove any header field
// named in Connection").
func removeHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopByHop {
		delete(h, k)
	}
}

// removeControl deletes the X-Courtesy-* request fields, which steer this
// proxy and are nobody else's business.
func removeControl(h http.Header) {
	delete(h, HeaderMode)
	delete(h, HeaderClient)
	delete(h, HeaderTimeout)
}

// isHopByHop reports whether the canonical field name k is in hopByHop.
func isHopByHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authentication-Info",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// outHeader is the header of a request forwarded upstream, built in one
// pass over the client's header h: without the hop-by-hop fields (RFC
// 9110 §7.6.1), those named in Connection included, without the
// X-Courtesy-* control fields, and with via appended to Via (RFC 9110
// §7.6.3). The values share one backing array, each capped so that an
// append to one never writes into the next. (removeHopByHop and
// removeControl on a clone of h give the same header; this costs one
// copy instead of a copy and the deletions.)
func outHeader(h http.Header, via string) http.Header {
	var named []string // canonical names listed in Connection
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				named = append(named, textproto.CanonicalMIMEHeaderKey(f))
			}
		}
	}
	nv := 1
	for _, vv := range h {
		nv += len(vv)
	}
	all := make([]string, 0, nv)
	out := make(http.Header, len(h)+1)
	for k, vv := range h {
		switch {
		case k == "Via", isHopByHop(k), k == HeaderMode, k == HeaderClient, k == HeaderTimeout:
			continue
		case len(named) > 0 && slices.Contains(named, k):
			continue
		}
		n := len(all)
		all = append(all, vv...)
		out[k] = all[n:len(all):len(all)]
	}
	if !slices.Contains(named, "Via") {
		n := len(all)
		all = append(all, h["Via"]...)
		all = append(all, via)
		out["Via"] = all[n:len(all):len(all)]
	} else {
		out["Via"] = []string{via}
	}
	return out
}

// noSniff keeps net/http from adding a Content-Type the origin did not
// send: a ResponseWriter without one sniffs the first 512 bytes of the
// body and announces what it guessed (text/plain for an image without
// the field, say). A proxy must relay the content as it came (RFC 9110
// §7.7, §8.3: a recipient may sniff, not the intermediary for it). A nil
// value suppresses the guess and writes nothing.
func noSniff(h http.Header) {
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
}
