package proxy

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// refusal is an answer the proxy gives itself instead of forwarding.
type refusal struct {
	status     int
	reason     string        // machine-readable: robots, delay, queue-full, ...
	message    string        // one human sentence
	retryAfter time.Duration // > 0: Retry-After and the ms header are sent
}

// write sends the refusal as JSON when the client prefers it (Accept names
// application/json before text/plain and text/html), else as plain text.
func (f refusal) write(w http.ResponseWriter, r *http.Request, url string) {
	h := w.Header()
	h.Set(HeaderReason, f.reason)
	h.Set("Cache-Control", "no-store")
	var ms int64 = -1
	if f.retryAfter > 0 {
		ms = int64((f.retryAfter + time.Millisecond - 1) / time.Millisecond)
		// Retry-After has whole seconds (RFC 9110 §10.2.3); round up so a
		// client that obeys it is never early.
		h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(f.retryAfter.Seconds())), 10))
		h.Set(HeaderRetryAfterMs, strconv.FormatInt(ms, 10))
	}
	if f.status == http.StatusProxyAuthRequired {
		h.Set("Proxy-Authenticate", `Basic realm="courtesy", charset="UTF-8"`)
	}
	if wantsJSON(r.Header.Get("Accept")) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_ = json.NewEncoder(w).Encode(struct {
			URL          string `json:"url"`
			Status       int    `json:"status"`
			Reason       string `json:"reason"`
			Error        string `json:"error"`
			RetryAfterMs int64  `json:"retryAfterMs"`
		}{url, f.status, f.reason, f.message, ms})
		return
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(f.status)
	var b strings.Builder
	b.WriteString(strconv.Itoa(f.status))
	b.WriteByte(' ')
	b.WriteString(http.StatusText(f.status))
	b.WriteString(": ")
	b.WriteString(f.message)
	b.WriteByte('\n')
	if ms >= 0 {
		b.WriteString("Retry after ")
		b.WriteString(strconv.FormatInt(ms, 10))
		b.WriteString(" ms.\n")
	}
	_, _ = w.Write([]byte(b.String()))
}

// wantsJSON reports whether an Accept value prefers JSON: it names
// application/json (or +json) before any text/* type.
func wantsJSON(accept string) bool {
	for r := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(r, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		switch {
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return true
		case strings.HasPrefix(mt, "text/"):
			return false
		}
	}
	return false
}
