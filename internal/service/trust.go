package service

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// Who may steer the services (docs/proxy.md, "Trust model"). Anyone the
// proxy serves may ask the politeness services; but the answers of other
// clients and the shared state are not theirs:
//
//   - a reservation belongs to the call that made it: /politeness/done
//     ends it only with the reservation token that call returned
//     (HeaderReservation), or with the admin token;
//   - a reported status (429 and 503 put the host into backoff for every
//     client) is taken only from a client in Options.ReportClients or one
//     presenting the admin token; anyone else's report ends its
//     reservation as a plain fetch;
//   - /trace (every client's URLs) and /delays are admin-only unless
//     Options.PublicMonitoring.

// HeaderReservation carries the token of a reservation: sent with the
// answer to a reserving call, and expected with /politeness/done.
const HeaderReservation = "X-Courtesy-Reservation"

// reservation is a permit taken by ?reserve=true, with the token of the
// call that took it.
type reservation struct {
	permit *politeness.Permit
	token  string
}

// newReservationToken returns a fresh random token.
func newReservationToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// remember keeps a reservation of u until it is reported done or expires.
func (s *Service) remember(u string, p *politeness.Permit, token string) {
	s.res.Lock()
	defer s.res.Unlock()
	if s.res.n >= maxReservations {
		now := time.Now()
		for k, rs := range s.res.m {
			live := rs[:0]
			for _, r := range rs {
				if r.permit.Deadline().After(now) {
					live = append(live, r)
				}
			}
			s.res.n -= len(rs) - len(live)
			if len(live) == 0 {
				delete(s.res.m, k)
			} else {
				s.res.m[k] = live
			}
		}
		if s.res.n >= maxReservations {
			return // the lease still expires on its own
		}
	}
	s.res.m[u] = append(s.res.m[u], &reservation{permit: p, token: token})
	s.res.n++
}

// take removes and returns the reservation of u held under token; with
// admin set, the oldest reservation of u whatever its token. It reports
// whether u had a reservation at all, so that a wrong token can be told
// from none.
func (s *Service) take(u, token string, admin bool) (r *reservation, exists bool) {
	s.res.Lock()
	defer s.res.Unlock()
	rs := s.res.m[u]
	for i, c := range rs {
		if admin || (token != "" && subtle.ConstantTimeCompare([]byte(c.token), []byte(token)) == 1) {
			rs = append(rs[:i:i], rs[i+1:]...)
			if len(rs) == 0 {
				delete(s.res.m, u)
			} else {
				s.res.m[u] = rs
			}
			s.res.n--
			return c, true
		}
	}
	return nil, len(rs) > 0
}

// isAdmin reports whether r carries the admin token: Authorization:
// Bearer TOKEN or X-Courtesy-Token: TOKEN, compared in constant time.
func (s *Service) isAdmin(r *http.Request) bool {
	want := *s.token.Load()
	if want == "" {
		return false
	}
	got := r.Header.Get("X-Courtesy-Token")
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = strings.TrimSpace(b)
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// trust is the part of Options that says who may steer the services;
// swapped whole by SetTrust.
type trust struct {
	reporters        []netip.Prefix
	publicMonitoring bool
}

func parseTrust(reportClients []string, public bool) (*trust, error) {
	t := &trust{publicMonitoring: public}
	for _, s := range reportClients {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			t.reporters = append(t.reporters, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("service: report-clients: %q is neither a network nor an address", s)
		}
		t.reporters = append(t.reporters, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return t, nil
}

// SetTrust replaces Options.ReportClients and Options.PublicMonitoring
// (the config file watcher calls it).
func (s *Service) SetTrust(reportClients []string, publicMonitoring bool) error {
	t, err := parseTrust(reportClients, publicMonitoring)
	if err != nil {
		return err
	}
	s.trust.Store(t)
	return nil
}

// mayReport reports whether r's outcomes are believed: its client is in
// ReportClients, or it carries the admin token.
func (s *Service) mayReport(r *http.Request) bool {
	if s.isAdmin(r) {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.trust.Load().reporters {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// monitoring guards a monitoring page that shows other clients' traffic
// or the shared state: admin-only unless PublicMonitoring.
func (s *Service) monitoring(h http.HandlerFunc) http.HandlerFunc {
	admin := s.admin(h)
	return func(w http.ResponseWriter, r *http.Request) {
		if s.trust.Load().publicMonitoring {
			h(w, r)
			return
		}
		admin(w, r)
	}
}
