// The admin API (delays, configuration) and monitoring (/delays,
// /trace, /cache).

package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/proxy"
)

// admin wraps an admin handler with the token check (isAdmin).
func (s *Service) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if *s.token.Load() == "" {
			writeError(w, &apiError{http.StatusForbidden, "the admin API is disabled: no admin token is configured"})
			return
		}
		if !s.isAdmin(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="courtesy-admin"`)
			writeError(w, &apiError{http.StatusUnauthorized, "a valid admin token is required"})
			return
		}
		h(w, r)
	}
}

// delayJSON is a key's delay configuration in the admin API and /delays,
// in milliseconds as Listing 9.
type delayJSON struct {
	Domain   string `json:"domain"`
	Delay    int64  `json:"delay"`             // in force (ms), adaptive and backoff aside
	Manual   *int64 `json:"manual"`            // operator's delay (ms), null when none
	Robots   int64  `json:"robots"`            // robots.txt Crawl-delay / Request-rate (ms)
	Override bool   `json:"override"`          // manual wins even over robots
	FromFile bool   `json:"fromFile"`          // manual comes from the config file
	Updated  string `json:"updated,omitempty"` // RFC 3339, when last stored
	// Popularity and Bandwidth say how the default delay was scaled
	// (the polite-proxy thesis' work packages 7-8); absent when it was not.
	Popularity *politeness.PopularityInfo `json:"popularity,omitempty"`
	Bandwidth  *politeness.BandwidthInfo  `json:"bandwidth,omitempty"`
}

func toDelayJSON(d politeness.DelayInfo) delayJSON {
	j := delayJSON{Domain: d.Key, Delay: d.Current.Milliseconds(), Robots: d.Robots.Milliseconds(), Override: d.Override, FromFile: d.FromFile,
		Popularity: d.Popularity, Bandwidth: d.Bandwidth}
	if d.HasManual {
		m := d.Manual.Milliseconds()
		j.Manual = &m
	}
	if !d.Updated.IsZero() {
		j.Updated = d.Updated.UTC().Format(time.RFC3339)
	}
	return j
}

// delays is GET /delays: at most MaxDelays entries; X-Courtesy-Truncated
// says there were more (the thesis answered an empty list then).
func (s *Service) delays(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Gate.ListDelays(r.Context(), "", MaxDelays+1)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if len(list) > MaxDelays {
		list = list[:MaxDelays]
		w.Header().Set("X-Courtesy-Truncated", "true")
	}
	out := make([]delayJSON, 0, len(list)+1)
	def, err := s.o.Gate.DefaultDelay(r.Context())
	if err == nil {
		out = append(out, delayJSON{Domain: "default", Delay: def.Milliseconds()})
	}
	for _, d := range list {
		out = append(out, toDelayJSON(d))
	}
	writeJSON(w, http.StatusOK, out)
}

// listDelays is GET /admin/delays?after=KEY&limit=N, for paging.
func (s *Service) listDelays(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	list, err := s.o.Gate.ListDelays(r.Context(), r.URL.Query().Get("after"), limit)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	out := make([]delayJSON, 0, len(list))
	for _, d := range list {
		out = append(out, toDelayJSON(d))
	}
	writeJSON(w, http.StatusOK, out)
}

// getDelay is GET /admin/delays/{key}: the key's live status; key "*" (or
// "default") is the default delay.
func (s *Service) getDelay(w http.ResponseWriter, r *http.Request) {
	key := strings.ToLower(r.PathValue("key"))
	if key == "*" || key == "default" {
		d, err := s.o.Gate.DefaultDelay(r.Context())
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, delayJSON{Domain: "default", Delay: d.Milliseconds()})
		return
	}
	st, err := s.o.Gate.Status(r.Context(), key, "")
	if err != nil {
		writeError(w, &apiError{http.StatusBadRequest, err.Error()})
		return
	}
	d := st.Delays
	j := struct {
		delayJSON
		Effective   int64  `json:"effective"`
		Open        bool   `json:"open"`
		InFlight    int    `json:"inFlight"`
		NextAllowed string `json:"nextAllowed"`
		Backoff     int64  `json:"backoff"`
		// Default is the default delay before popularity and bandwidth
		// scaling (ms); absent for a manual delay.
		Default int64 `json:"default,omitempty"`
	}{
		delayJSON: delayJSON{Domain: key, Delay: d.Effective.Milliseconds(), Robots: d.Robots.Milliseconds(), Override: d.Override},
		Effective: d.Effective.Milliseconds(), Open: st.Open, InFlight: st.InFlight,
		NextAllowed: st.NextAllowed.UTC().Format(time.RFC3339Nano), Backoff: d.Backoff.Milliseconds(),
	}
	if d.Manual {
		m := d.Configured.Milliseconds()
		j.Manual = &m
		j.FromFile = s.fromFile(r.Context(), key)
	} else {
		j.Default = d.Default.Milliseconds()
	}
	if d.Popularity.Rank > 0 {
		p := d.Popularity
		j.Popularity = &p
	}
	if d.Bandwidth.Samples > 0 {
		b := d.Bandwidth
		j.Bandwidth = &b
	}
	writeJSON(w, http.StatusOK, j)
}

// fromFile reports whether key's manual delay comes from the config file,
// as /delays says: the gate's listing of that one key (the key just
// before it in byte order is not a key, so "after" that lists key first).
func (s *Service) fromFile(ctx context.Context, key string) bool {
	if key == "" {
		return false
	}
	after := key[:len(key)-1]
	if c := key[len(key)-1]; c > 0 {
		after += string([]byte{c - 1, 0xff})
	}
	list, err := s.o.Gate.ListDelays(ctx, after, 1)
	return err == nil && len(list) > 0 && list[0].Key == key && list[0].FromFile
}

// putDelay is PUT /admin/delays/{key} with {"delay": 1500} (milliseconds,
// as Listing 9) or {"delay": "1.5s"}, and optionally "override": true.
// Persisted (the polite-proxy thesis §5.6).
func (s *Service) putDelay(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Delay    json.RawMessage `json:"delay"`
		Override bool            `json:"override"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, err)
		return
	}
	d, err := ParseDelay(body.Delay)
	if err != nil {
		writeError(w, &apiError{http.StatusBadRequest, err.Error()})
		return
	}
	key := strings.ToLower(r.PathValue("key"))
	if key == "*" || key == "default" {
		err = s.o.Gate.SetDefaultDelay(r.Context(), d)
	} else {
		err = s.o.Gate.SetDelay(r.Context(), key, d, body.Override)
	}
	if err != nil {
		writeError(w, &apiError{http.StatusBadRequest, err.Error()})
		return
	}
	s.o.Logger.Info("delay set", "key", key, "delay", d, "override", body.Override)
	writeJSON(w, http.StatusOK, map[string]any{"domain": key, "delay": d.Milliseconds(), "override": body.Override})
}

// ParseDelay reads a delay given as a JSON number of milliseconds or a
// JSON string holding a Go duration.
func ParseDelay(raw json.RawMessage) (time.Duration, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return 0, errors.New("service: missing delay")
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err == nil {
		if ms < 0 || ms > float64(24*time.Hour/time.Millisecond) {
			return 0, fmt.Errorf("service: delay %v ms outside 0..86400000", ms)
		}
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, errors.New("service: delay must be milliseconds (number) or a duration (\"1.5s\")")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("service: delay %q: %w", s, err)
	}
	if d < 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("service: delay %v outside 0..24h", d)
	}
	return d, nil
}

func (s *Service) deleteDelay(w http.ResponseWriter, r *http.Request) {
	key := strings.ToLower(r.PathValue("key"))
	if err := s.o.Gate.DeleteDelay(r.Context(), key); err != nil {
		writeError(w, &apiError{http.StatusBadRequest, err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) config(w http.ResponseWriter, r *http.Request) {
	if s.o.Config == nil {
		writeJSON(w, http.StatusOK, struct{}{})
		return
	}
	writeJSON(w, http.StatusOK, s.o.Config())
}

// trace is GET /trace?limit=N: the proxy's recent requests, newest first.
func (s *Service) trace(w http.ResponseWriter, r *http.Request) {
	var entries []proxy.TraceEntry
	if s.o.Proxy != nil {
		entries = s.o.Proxy.Trace()
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n >= 0 && n < len(entries) {
		entries = entries[:n]
	}
	if entries == nil {
		entries = []proxy.TraceEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
}

// cacheStats is GET /cache: hits, misses, size, bytes and hit ratio
// (the polite-proxy thesis §5.10's cache metrics).
func (s *Service) cacheStats(w http.ResponseWriter, r *http.Request) {
	if s.o.Cache == nil {
		writeJSON(w, http.StatusOK, map[string]any{"enabled": false})
		return
	}
	st := s.o.Cache.Stats()
	writeJSON(w, http.StatusOK, map[string]any{
		"enabled": true, "entries": st.Entries, "bytes": st.Bytes, "memoryEntries": st.HotEntries,
		"memoryBytes": st.HotBytes, "hits": st.Hits, "misses": st.Misses, "stale": st.Stale,
		"revalidated": st.Revalidated, "stores": st.Stores, "evictions": st.Evictions, "hitRatio": st.HitRatio,
	})
}
