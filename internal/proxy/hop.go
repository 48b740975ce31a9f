package proxy

import (
	"net/http"
	"net/textproto"
	"strings"
)

// hopByHop are the connection-specific fields a proxy must not forward
// (RFC 9110 §7.6.1), plus the proxy-authentication fields it consumes
// itself (§11.7).
var hopByHop = []string{
	"Connection",
	"Proxy-Connection", // non-standard, still sent by old clients
	"Keep-Alive",
	"Proxy-Authenticate",
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
