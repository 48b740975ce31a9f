// Package service is Courtesy's HTTP JSON API beside the proxy: the
// politeness services for mature crawlers (the polite-proxy thesis §4.7.3, §5.7), the
// admin API for delays and configuration (§5.6, §5.9), and monitoring
// (§5.10).
//
//	POST /politeness            JSON array of URLs → array of the URLs allowed now
//	GET  /politeness?urls=a,b   the same, URLs in the query
//	POST /politeness/verbose    → [{url, error, allowed, retryAfter}] (Listing 8)
//	POST /politeness/done       report fetches of reserved URLs (reserve=true)
//	GET|PUT|DELETE /admin/delays/{key}, GET /admin/delays, GET /admin/config  (token)
//	GET  /health, /metrics, /delays, /trace, /cache
//
// ?reserve=true on the three politeness calls makes every allowed URL take
// its host's slot for Options.ReserveWindow, so two crawlers asking at once
// are never both allowed the same host. A reservation not reported done
// within its window is released by the gate's lease expiry (counting as a
// fetch that ended then).
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/proxy"
)

// Limits on requests to the services.
const (
	// MaxBodyBytes bounds a JSON request body.
	MaxBodyBytes = 1 << 20
	// MaxURLs bounds the URLs of one politeness call.
	MaxURLs = 1000
	// MaxDelays is the most entries GET /delays returns (the polite-proxy thesis §5.10).
	MaxDelays = 2000
	// maxReservations bounds the reservations remembered for /done.
	maxReservations = 100_000
)

// Options are the service's collaborators. Gate is required.
type Options struct {
	Gate  *politeness.Gate
	Proxy *proxy.Proxy     // for /trace; nil: empty
	Cache *httpcache.Cache // for /cache; nil: caching off
	// Gatherer serves /metrics; nil serves an empty registry.
	Gatherer prometheus.Gatherer
	// AdminToken guards /admin/*; "" disables the admin API.
	AdminToken string
	// Config returns the effective configuration for GET /admin/config,
	// secrets already removed; nil answers {}.
	Config func() any
	// ReserveWindow is how long a reservation holds its host's slot.
	// Default 10s.
	ReserveWindow time.Duration
	// ReportClients are the client networks (CIDRs or addresses) whose
	// statuses reported to /politeness/done are believed; the admin token
	// is believed too. Others' reports end their reservations as plain
	// fetches: a 429 or 503 from them does not put a host into backoff.
	// Default none.
	ReportClients []string
	// Check reports whether the services' dependencies answer (the
	// Redis of a cluster); /health answers 503 "degraded" when it fails.
	// nil: nothing to check.
	Check func(ctx context.Context) error
	// PublicMonitoring opens /trace and /delays to every client of the
	// API; by default they need the admin token (they show every client's
	// URLs and the shared delays). Default false.
	PublicMonitoring bool
	Logger           *slog.Logger
}

// Service is the API handler. It is safe for concurrent use.
type Service struct {
	o     Options
	mux   *http.ServeMux
	token atomic.Pointer[string]

	trust atomic.Pointer[trust]

	// res guards reserved permits by URL, for POST /politeness/done.
	res struct {
		sync.Mutex
		m map[string][]*reservation
		n int // reservations in m
	}
}

// New builds the service.
func New(o Options) (*Service, error) {
	if o.Gate == nil {
		return nil, errors.New("service: a politeness gate is required")
	}
	if o.ReserveWindow <= 0 {
		o.ReserveWindow = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Gatherer == nil {
		o.Gatherer = prometheus.NewRegistry()
	}
	s := &Service{o: o, mux: http.NewServeMux()}
	s.res.m = map[string][]*reservation{}
	if err := s.SetTrust(o.ReportClients, o.PublicMonitoring); err != nil {
		return nil, err
	}
	s.SetAdminToken(o.AdminToken)
	m := s.mux
	m.HandleFunc("POST /politeness", s.filter)
	m.HandleFunc("GET /politeness", s.filter)
	m.HandleFunc("POST /politeness/verbose", s.verbose)
	m.HandleFunc("POST /politeness/done", s.done)
	m.HandleFunc("GET /admin/delays", s.admin(s.listDelays))
	m.HandleFunc("GET /admin/delays/{key}", s.admin(s.getDelay))
	m.HandleFunc("PUT /admin/delays/{key}", s.admin(s.putDelay))
	m.HandleFunc("DELETE /admin/delays/{key}", s.admin(s.deleteDelay))
	m.HandleFunc("GET /admin/config", s.admin(s.config))
	m.HandleFunc("GET /health", s.health)
	m.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	m.HandleFunc("GET /delays", s.monitoring(s.delays))
	m.HandleFunc("GET /trace", s.monitoring(s.trace))
	m.HandleFunc("GET /cache", s.cacheStats)
	return s, nil
}

// SetAdminToken replaces the admin token ("" disables the admin API).
func (s *Service) SetAdminToken(t string) { s.token.Store(&t) }

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Result is one entry of the verbose answer, exactly the polite-proxy thesis' Listing 8:
// error is null when allowed; retryAfter is in milliseconds, -1 when no
// delay applies (allowed, or waiting does not help).
type Result struct {
	URL        string  `json:"url"`
	Error      *string `json:"error"`
	Allowed    bool    `json:"allowed"`
	RetryAfter int64   `json:"retryAfter"`
	// Reservation is the token that ends this URL's reservation at
	// /politeness/done; only with ?reserve=true (beyond Listing 8).
	Reservation string `json:"reservation,omitempty"`
}

// Messages of Listing 8.
const (
	msgRobots = "Blocked because URL is excluded from allowed URLs."
	msgDelay  = "There must be a delay of %d milliseconds between each request."
)

// check runs Listing 6's loop over urls: a host already allowed earlier in
// the batch is refused (the thesis allows one URL per host per batch), then
// robots.txt and the delay decide.
// With reserve, allowed URLs are reserved under token.
func (s *Service) check(ctx context.Context, urls []string, reserve bool, token string) []Result {
	out := make([]Result, 0, len(urls))
	allowed := map[string]time.Duration{} // key → its effective delay
	cfg := s.o.Gate.Config()
	for _, raw := range urls {
		res := Result{URL: raw, RetryAfter: -1}
		fail := func(msg string, retry int64) {
			res.Error, res.RetryAfter = &msg, retry
			out = append(out, res)
		}
		u, err := parseURL(raw)
		if err != nil {
			fail(err.Error(), -1)
			continue
		}
		key, err := cfg.KeyFunc(ctx, u)
		if err != nil {
			fail("Invalid URL: "+err.Error(), -1)
			continue
		}
		if delay, dup := allowed[key]; dup {
			// Listing 8: robots.txt still speaks first, then the rule of
			// one URL per host per batch.
			if d, err := s.o.Gate.Peek(ctx, u); err == nil && d.Reason == politeness.ReasonRobots {
				fail(msgRobots, -1)
				continue
			}
			fail(fmt.Sprintf(msgDelay, delay.Milliseconds()), delay.Milliseconds())
			continue
		}
		var d politeness.Decision
		if reserve {
			var p *politeness.Permit
			p, d, err = s.o.Gate.Try(ctx, u, politeness.WithLease(s.o.ReserveWindow))
			if p != nil {
				s.remember(u.String(), p, token)
				res.Reservation = token
			}
		} else {
			d, err = s.o.Gate.Peek(ctx, u)
		}
		if err != nil {
			s.o.Logger.Warn("politeness check failed", "url", raw, "err", err)
			fail("politeness check failed: "+msgStateDown, -1)
			continue
		}
		if !d.Allowed {
			msg := d.Detail
			switch {
			case d.Reason == politeness.ReasonRobots:
				msg = msgRobots
			case msg == "":
				msg = fmt.Sprintf(msgDelay, d.Delays.Effective.Milliseconds())
			}
			fail(msg, d.RetryAfterMillis())
			continue
		}
		allowed[key] = d.Delays.Effective
		res.Allowed = true
		out = append(out, res)
	}
	return out
}

// errInvalidURL is the verbose service's error for a URL it cannot check;
// its text is a sentence for the `error` field of Listing 8.
//
//lint:ignore ST1005 a user-facing sentence, capitalized like Listing 8's
var errInvalidURL = errors.New("Invalid URL: want an absolute http or https URL")

// parseURL accepts absolute http and https URLs only.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errInvalidURL
	}
	return u, nil
}

func (s *Service) filter(w http.ResponseWriter, r *http.Request) {
	urls, err := readURLs(r)
	if err != nil {
		writeError(w, err)
		return
	}
	results := s.check(r.Context(), urls, reserveParam(r), s.reserveToken(w, r))
	allowed := make([]string, 0, len(results))
	for _, res := range results {
		if res.Allowed {
			allowed = append(allowed, res.URL)
		}
	}
	writeJSON(w, http.StatusOK, allowed)
}

func (s *Service) verbose(w http.ResponseWriter, r *http.Request) {
	urls, err := readURLs(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.check(r.Context(), urls, reserveParam(r), s.reserveToken(w, r)))
}

// reserveToken is the token of a reserving call, sent back in
// HeaderReservation; "" when the call does not reserve.
func (s *Service) reserveToken(w http.ResponseWriter, r *http.Request) string {
	if !reserveParam(r) {
		return ""
	}
	t := newReservationToken()
	w.Header().Set(HeaderReservation, t)
	return t
}

// done takes [{"url": ..., "status": 200, "reservation": TOKEN}] for
// reserved URLs that were fetched, ending their reservations so the host's
// delay counts from now. The token may come in HeaderReservation instead,
// for all reports; the admin token ends any reservation. A status is
// believed only from a client allowed to report (trust.go); "refused"
// counts reports for reservations held under another token, "ignored"
// statuses not believed.
func (s *Service) done(w http.ResponseWriter, r *http.Request) {
	var reports []struct {
		URL         string `json:"url"`
		Status      int    `json:"status"`
		Reservation string `json:"reservation"`
	}
	if err := decodeBody(r, &reports); err != nil {
		writeError(w, err)
		return
	}
	if len(reports) > MaxURLs {
		writeError(w, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("at most %d reports per call", MaxURLs)})
		return
	}
	admin, reporter := s.isAdmin(r), s.mayReport(r)
	common := r.Header.Get(HeaderReservation)
	var out struct {
		Ended   int `json:"ended"`
		Refused int `json:"refused,omitempty"`
		Ignored int `json:"ignored,omitempty"`
	}
	for _, rep := range reports {
		token := rep.Reservation
		if token == "" {
			token = common
		}
		key := rep.URL
		if u, err := parseURL(rep.URL); err == nil {
			key = u.String() // as check remembered it
		}
		res, exists := s.take(key, token, admin)
		if res == nil {
			if exists {
				out.Refused++
			}
			continue
		}
		switch {
		case rep.Status == 0:
			_ = res.permit.Release()
		case reporter:
			_ = res.permit.Done(politeness.Outcome{Status: rep.Status})
		default:
			// A fetch happened; its status is not believed.
			_ = res.permit.Done(politeness.Outcome{})
			out.Ignored++
		}
		out.Ended++
	}
	writeJSON(w, http.StatusOK, out)
}

func reserveParam(r *http.Request) bool {
	v, _ := strconv.ParseBool(r.URL.Query().Get("reserve"))
	return v
}

// apiError is an error with its HTTP status.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// readURLs takes the URLs of a politeness call: a JSON array of strings (or
// {"urls": [...]}) in a POST body, or the urls query parameter — comma
// separated, optionally in [brackets] as in the polite-proxy thesis §5.7, repeatable.
func readURLs(r *http.Request) ([]string, error) {
	if r.Method == http.MethodGet {
		var urls []string
		for _, v := range r.URL.Query()["urls"] {
			urls = append(urls, SplitURLList(v)...)
		}
		if len(urls) == 0 {
			return nil, &apiError{http.StatusBadRequest, "missing urls parameter"}
		}
		if len(urls) > MaxURLs {
			return nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("at most %d URLs per call", MaxURLs)}
		}
		return urls, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, &apiError{http.StatusBadRequest, "reading body: " + err.Error()}
	}
	if len(body) > MaxBodyBytes {
		return nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", MaxBodyBytes)}
	}
	return ParseURLList(body)
}

// ParseURLList parses a politeness call's JSON body: an array of URL
// strings, or an object {"urls": [...]}. At most MaxURLs.
func ParseURLList(body []byte) ([]string, error) {
	var urls []string
	err := json.Unmarshal(body, &urls)
	if err != nil {
		// The thesis' Listing 7 ends its array with a comma: accept that
		// one leniency.
		if t, ok := dropTrailingComma(body); ok && json.Unmarshal(t, &urls) == nil && urls != nil {
			err = nil
		}
	}
	if err != nil {
		var obj struct {
			URLs []string `json:"urls"`
		}
		if err2 := json.Unmarshal(body, &obj); err2 != nil || obj.URLs == nil {
			return nil, &apiError{http.StatusBadRequest, "want a JSON array of URL strings: " + err.Error()}
		}
		urls = obj.URLs
	} else if urls == nil {
		// JSON null decodes without error into a nil slice; it is not a
		// list of URLs.
		return nil, &apiError{http.StatusBadRequest, "want a JSON array of URL strings, not null"}
	}
	if len(urls) > MaxURLs {
		return nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("at most %d URLs per call", MaxURLs)}
	}
	return urls, nil
}

// dropTrailingComma turns a body ending in `, ]` into one ending in `]`.
func dropTrailingComma(body []byte) ([]byte, bool) {
	t := bytes.TrimRight(body, " \t\r\n")
	if !bytes.HasSuffix(t, []byte("]")) {
		return nil, false
	}
	head := bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	if !bytes.HasSuffix(head, []byte(",")) {
		return nil, false
	}
	head = head[:len(head)-1]
	if bytes.HasSuffix(bytes.TrimRight(head, " \t\r\n"), []byte("[")) {
		return nil, false // [,] is no list
	}
	out := append([]byte(nil), head...)
	return append(out, ']'), true
}

// SplitURLList splits a query value of URLs separated by commas. A comma
// only separates when an http:// or https:// URL follows it, so commas
// inside URLs survive; surrounding [brackets] are dropped. A value that is
// a JSON array of strings (["http://a/","http://b/"], the same list a POST
// body holds) gives its strings.
func SplitURLList(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		var list []string
		if json.Unmarshal([]byte(v), &list) == nil {
			out := list[:0]
			for _, u := range list {
				if u = strings.TrimSpace(u); u != "" {
					out = append(out, u)
				}
			}
			return out
		}
		v = v[1 : len(v)-1]
	}
	var out []string
	start := 0
	for i := 0; i < len(v); i++ {
		if v[i] != ',' {
			continue
		}
		rest := strings.TrimLeft(v[i+1:], " ")
		if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
			if u := strings.TrimSpace(v[start:i]); u != "" {
				out = append(out, u)
			}
			start = i + 1
		}
	}
	if u := strings.TrimSpace(v[start:]); u != "" {
		out = append(out, u)
	}
	return out
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxBodyBytes))
	if err := dec.Decode(v); err != nil {
		return &apiError{http.StatusBadRequest, "bad JSON body: " + err.Error()}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// msgStateDown is what a client is told when the politeness state (Redis,
// the store) fails: the cause, with its addresses, goes to the log only.
const msgStateDown = "the politeness state is unavailable"

// writeError answers err: an apiError with its status and text; anything
// else is internal, 500 with a fixed text (the log has the error).
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeJSON(w, ae.status, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusInternalServerError, map[string]string{"error": msgStateDown})
}

// internalError logs err and answers it without its detail.
func (s *Service) internalError(w http.ResponseWriter, r *http.Request, err error) {
	s.o.Logger.Error("service error", "path", r.URL.Path, "err", err)
	writeError(w, err)
}

// health is GET /health: ok, or 503 degraded when Options.Check fails
// (the cause is logged, not shown).
func (s *Service) health(w http.ResponseWriter, r *http.Request) {
	if s.o.Check != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		err := s.o.Check(ctx)
		cancel()
		if err != nil {
			s.o.Logger.Warn("health check failed", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "degraded", "politeness": "unavailable"})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
