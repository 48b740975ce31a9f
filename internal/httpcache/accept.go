package httpcache

import (
	"net/http"
	"strings"
)

// MaxAcceptRanges is how many media ranges of an Accept field are read.
const MaxAcceptRanges = 32

// MediaType returns the lower-cased type/subtype of a Content-Type value,
// without parameters, or "" when there is none.
func MediaType(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if !strings.Contains(mt, "/") {
		return ""
	}
	return mt
}

// Acceptable reports whether a stored variant of media type mediaType may
// answer a request with header h (the polite-proxy thesis §5.4). A request without Accept,
// or whose Accept admits "*/*", takes any variant; otherwise the variant's
// type must match a range with a non-zero quality. A variant without a
// content type only answers requests that accept anything.
func Acceptable(h http.Header, mediaType string) bool {
	values := h.Values("Accept")
	if len(values) == 0 {
		return true
	}
	typ, _, _ := strings.Cut(mediaType, "/")
	n := 0
	seen := false
	for _, v := range values {
		for r := range strings.SplitSeq(v, ",") {
			if n >= MaxAcceptRanges {
				return true // too long to judge: behave as if absent
			}
			n++
			rng, params, _ := strings.Cut(r, ";")
			rng = strings.ToLower(strings.TrimSpace(rng))
			if rng == "" {
				continue
			}
			seen = true
			if zeroQuality(params) {
				continue
			}
			switch {
			case rng == "*/*" || rng == "*":
				return true
			case mediaType == "":
				continue
			case strings.HasSuffix(rng, "/*") && rng[:len(rng)-2] == typ:
				return true
			case rng == mediaType:
				return true
			}
		}
	}
	return !seen
}

// zeroQuality reports whether media-range parameters contain q=0.
func zeroQuality(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		return strings.TrimRight(strings.TrimPrefix(v, "0."), "0") == "" && strings.HasPrefix(v, "0")
	}
	return false
}
