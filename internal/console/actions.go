package console

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxActions is how many actions GET /api/actions remembers.
const maxActions = 200

// maxBody bounds an action's JSON body (a thousand seeds of 1 KiB fit).
const maxBody = 1 << 20

// maxBlock bounds how far ahead a host may be blocked.
const maxBlock = 365 * 24 * time.Hour

// ActionRecord is one action as the log keeps it.
type ActionRecord struct {
	Time    time.Time `json:"time"`
	Action  string    `json:"action"`
	Remote  string    `json:"remote"`
	TokenID string    `json:"token_id,omitempty"`
	Detail  string    `json:"detail,omitempty"`
	// Status is the HTTP status answered; Error says why it failed.
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

// actionError is an action's failure with its HTTP status.
type actionError struct {
	code int
	msg  string
}

func (e *actionError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &actionError{http.StatusBadRequest, fmt.Sprintf("console: "+format, args...)}
}

// actionFunc does an action from its decoded request and returns the
// answer and a short detail for the log.
type actionFunc func(ctx context.Context, body []byte) (any, string, error)

// action wraps an action with the checks every action passes: same
// origin, JSON body, the token; then logs it.
func (s *Server) action(name string, do actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := ActionRecord{Time: s.cfg.Now(), Action: name, Remote: r.RemoteAddr}
		finish := func(code int, msg string) {
			rec.Status, rec.Error = code, msg
			s.logAction(rec)
		}
		if err := sameOrigin(r); err != nil {
			apiError(w, http.StatusForbidden, err.Error())
			finish(http.StatusForbidden, err.Error())
			return
		}
		if !s.tokenOK(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="courtesy console"`)
			msg := "console: this action needs the access token (Authorization: Bearer TOKEN)"
			apiError(w, http.StatusUnauthorized, msg)
			finish(http.StatusUnauthorized, msg)
			return
		}
		rec.TokenID = s.tokenID
		body, err := readBody(w, r)
		if err != nil {
			apiError(w, http.StatusBadRequest, err.Error())
			finish(http.StatusBadRequest, err.Error())
			return
		}
		out, detail, err := do(r.Context(), body)
		rec.Detail = detail
		if err != nil {
			code := http.StatusInternalServerError
			var ae *actionError
			switch {
			case errors.As(err, &ae):
				code = ae.code
			case errors.Is(err, ErrUnknownHost):
				code = http.StatusNotFound
			}
			apiError(w, code, err.Error())
			finish(code, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, out)
		finish(http.StatusOK, "")
	}
}

// sameOrigin refuses requests a page of another site made: browsers send
// Sec-Fetch-Site and Origin on cross-site POSTs, and a page cannot forge
// them. Scripts (curl) send neither and pass on the token alone. The token
// travels in a header, never a cookie, so a browser never adds it by
// itself; together with the JSON content type (which needs a CORS
// preflight the console never grants) this closes CSRF.
func sameOrigin(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return fmt.Errorf("console: cross-origin request refused (Sec-Fetch-Site: %s)", site)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || o == "null" || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Errorf("console: cross-origin request refused (Origin: %s)", o)
		}
	}
	return nil
}

func (s *Server) tokenOK(r *http.Request) bool {
	tok := r.Header.Get("X-Courtesy-Token")
	if a := r.Header.Get("Authorization"); tok == "" && len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		tok = strings.TrimSpace(a[7:])
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, fmt.Errorf("console: body must be application/json, not %s", ct)
	}
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("console: body: %w", err)
	}
	return buf.Bytes(), nil
}

// decode reads body (empty: {}) into v, refusing unknown fields.
func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return badRequest("bad JSON body: %v", err)
	}
	return nil
}

func (s *Server) logAction(rec ActionRecord) {
	s.mu.Lock()
	s.mu.actions = append(s.mu.actions, rec)
	if len(s.mu.actions) > maxActions {
		s.mu.actions = append(s.mu.actions[:0], s.mu.actions[len(s.mu.actions)-maxActions:]...)
	}
	s.mu.Unlock()
	lvl := slog.LevelInfo
	if rec.Status != http.StatusOK {
		lvl = slog.LevelWarn
	}
	s.cfg.Logger.Log(context.Background(), lvl, "console action", "action", rec.Action, "remote", rec.Remote,
		"token_id", rec.TokenID, "at", rec.Time, "detail", rec.Detail, "status", rec.Status, "err", rec.Error)
}

func (s *Server) getActions(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	out := make([]ActionRecord, len(s.mu.actions))
	for i, a := range s.mu.actions {
		out[len(out)-1-i] = a
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"actions": out})
}

func (s *Server) needFrontier() error {
	if s.src.Frontier == nil {
		return &actionError{http.StatusNotFound, "console: no crawl frontier here"}
	}
	return nil
}

func (s *Server) doPause(ctx context.Context, body []byte) (any, string, error) {
	if err := s.needFrontier(); err != nil {
		return nil, "", err
	}
	s.src.Frontier.SetPaused(true)
	return map[string]bool{"paused": true}, "", nil
}

func (s *Server) doResume(ctx context.Context, body []byte) (any, string, error) {
	if err := s.needFrontier(); err != nil {
		return nil, "", err
	}
	s.src.Frontier.SetPaused(false)
	return map[string]bool{"paused": false}, "", nil
}

// SeedsRequest is POST /api/seeds.
type SeedsRequest struct {
	URLs []string `json:"urls"`
}

func (s *Server) doSeeds(ctx context.Context, body []byte) (any, string, error) {
	if err := s.needFrontier(); err != nil {
		return nil, "", err
	}
	var req SeedsRequest
	if err := decode(body, &req); err != nil {
		return nil, "", err
	}
	switch {
	case len(req.URLs) == 0:
		return nil, "", badRequest("no URLs")
	case len(req.URLs) > s.cfg.MaxSeeds:
		return nil, "", badRequest("%d URLs, at most %d per request", len(req.URLs), s.cfg.MaxSeeds)
	}
	for _, raw := range req.URLs {
		if err := checkSeed(raw); err != nil {
			return nil, "", err
		}
	}
	n, err := s.src.Frontier.AddSeeds(ctx, req.URLs)
	if err != nil {
		return nil, "", err
	}
	return map[string]int{"received": len(req.URLs), "added": n}, fmt.Sprintf("%d URLs, %d new", len(req.URLs), n), nil
}

func checkSeed(raw string) error {
	if len(raw) > 8192 {
		return badRequest("URL longer than 8192 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return badRequest("not an absolute http(s) URL: %q", clip(raw, 100))
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// checkHost refuses what cannot be a host name or politeness key.
func checkHost(h string) error {
	if h == "" || len(h) > 255 || strings.ContainsAny(h, " \t\r\n/?#") {
		return badRequest("bad host %q", clip(h, 100))
	}
	return nil
}

// Duration is a JSON duration: a Go duration string ("1.5s") or a number
// of milliseconds.
type Duration time.Duration

// UnmarshalJSON accepts "1.5s" or 1500.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("console: bad duration %q", s)
		}
		*d = Duration(v)
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("console: a duration is a string (\"1.5s\") or milliseconds")
	}
	if ms > float64(maxBlock/time.Millisecond) || ms < -float64(maxBlock/time.Millisecond) {
		return fmt.Errorf("console: duration %v ms out of range", ms)
	}
	*d = Duration(time.Duration(ms * float64(time.Millisecond)))
	return nil
}

// DelayRequest is POST /api/delay: set (or with Clear, remove) the manual
// delay of a host or registrable domain (a politeness key).
type DelayRequest struct {
	Key      string    `json:"key"`
	Delay    *Duration `json:"delay"`
	Override bool      `json:"override"`
	Clear    bool      `json:"clear"`
}

// maxDelay is the politeness gate's bound on a manual delay.
const maxDelay = 24 * time.Hour

func (s *Server) doDelay(ctx context.Context, body []byte) (any, string, error) {
	if s.src.Politeness == nil {
		return nil, "", &actionError{http.StatusNotFound, "console: no politeness gate here"}
	}
	var req DelayRequest
	if err := decode(body, &req); err != nil {
		return nil, "", err
	}
	req.Key = strings.ToLower(strings.TrimSpace(req.Key))
	if err := checkHost(req.Key); err != nil {
		return nil, "", err
	}
	if req.Clear {
		if err := s.src.Politeness.ClearDelay(ctx, req.Key); err != nil {
			return nil, "", err
		}
		return map[string]any{"key": req.Key, "cleared": true}, req.Key + " cleared", nil
	}
	if req.Delay == nil {
		return nil, "", badRequest("delay missing")
	}
	d := time.Duration(*req.Delay)
	if d < 0 || d > maxDelay {
		return nil, "", badRequest("delay %v outside 0..%v", d, maxDelay)
	}
	if err := s.src.Politeness.SetDelay(ctx, req.Key, d, req.Override); err != nil {
		return nil, "", err
	}
	return map[string]any{"key": req.Key, "delay_ns": d, "override": req.Override},
		fmt.Sprintf("%s %v override=%v", req.Key, d, req.Override), nil
}

// BlockRequest is POST /api/block: keep a host from being served until a
// time (Until, RFC 3339) or for a duration (For).
type BlockRequest struct {
	Host  string    `json:"host"`
	Until time.Time `json:"until"`
	For   *Duration `json:"for"`
}

func (s *Server) doBlock(ctx context.Context, body []byte) (any, string, error) {
	req, err := hostRequest[BlockRequest](s, body, func(r *BlockRequest) string { return r.Host })
	if err != nil {
		return nil, "", err
	}
	now := s.cfg.Now()
	until := req.Until
	switch {
	case req.For != nil && !until.IsZero():
		return nil, "", badRequest("give until or for, not both")
	case req.For != nil:
		if *req.For <= 0 {
			return nil, "", badRequest("for must be positive")
		}
		until = now.Add(time.Duration(*req.For))
	case until.IsZero():
		return nil, "", badRequest("until or for missing")
	}
	if !until.After(now) || until.Sub(now) > maxBlock {
		return nil, "", badRequest("until must lie within a year from now")
	}
	if err := s.src.Frontier.Block(ctx, req.Host, until); err != nil {
		return nil, "", err
	}
	return map[string]any{"host": req.Host, "blocked_until": until}, req.Host + " until " + until.UTC().Format(time.RFC3339), nil
}

// HostRequest names a host (unblock, retire).
type HostRequest struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// hostRequest decodes the body of an action on one host and checks that
// the frontier knows the host.
func hostRequest[T any](s *Server, body []byte, host func(*T) string) (T, error) {
	var req T
	if err := s.needFrontier(); err != nil {
		return req, err
	}
	if err := decode(body, &req); err != nil {
		return req, err
	}
	return req, s.knownHost(host(&req))
}

func (s *Server) knownHost(h string) error {
	if err := checkHost(h); err != nil {
		return err
	}
	_, err := s.src.Frontier.Host(h)
	return err
}

func (s *Server) doUnblock(ctx context.Context, body []byte) (any, string, error) {
	req, err := hostRequest[HostRequest](s, body, func(r *HostRequest) string { return r.Host })
	if err != nil {
		return nil, "", err
	}
	if err := s.src.Frontier.Block(ctx, req.Host, time.Time{}); err != nil {
		return nil, "", err
	}
	return map[string]any{"host": req.Host, "blocked_until": nil}, req.Host, nil
}

func (s *Server) doRetire(ctx context.Context, body []byte) (any, string, error) {
	req, err := hostRequest[HostRequest](s, body, func(r *HostRequest) string { return r.Host })
	if err != nil {
		return nil, "", err
	}
	reason := strings.TrimSpace(req.Reason)
	if reason == "" {
		reason = "retired by operator"
	}
	if len(reason) > 200 || strings.ContainsAny(reason, "\r\n") {
		return nil, "", badRequest("reason must be one line of at most 200 bytes")
	}
	if err := s.src.Frontier.Retire(ctx, req.Host, reason); err != nil {
		return nil, "", err
	}
	return map[string]any{"host": req.Host, "retired": reason}, req.Host + ": " + reason, nil
}

// LogLevelRequest is POST /api/log-level.
type LogLevelRequest struct {
	Level string `json:"level"`
}

func (s *Server) doLogLevel(ctx context.Context, body []byte) (any, string, error) {
	if s.cfg.LogLevel == nil {
		return nil, "", &actionError{http.StatusNotFound, "console: the log level is fixed here"}
	}
	var req LogLevelRequest
	if err := decode(body, &req); err != nil {
		return nil, "", err
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(req.Level)); err != nil {
		return nil, "", badRequest("unknown log level %q (debug, info, warn, error)", clip(req.Level, 20))
	}
	old := s.cfg.LogLevel.Level()
	s.cfg.LogLevel.Set(l)
	return map[string]string{"level": l.String()}, old.String() + " -> " + l.String(), nil
}
