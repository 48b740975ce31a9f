package console

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /api/info", s.getInfo)
	m.HandleFunc("GET /api/overview", s.getOverview)
	m.HandleFunc("GET /api/hosts", s.getHosts)
	m.HandleFunc("GET /api/hosts/{host}", s.getHost)
	m.HandleFunc("GET /api/nodes", s.getNodes)
	m.HandleFunc("GET /api/proxy", s.getProxy)
	m.HandleFunc("GET /api/delays", s.getDelays)
	m.HandleFunc("GET /api/actions", s.getActions)
	m.HandleFunc("GET /api/events", s.events)
	m.HandleFunc("POST /api/pause", s.action("pause", s.doPause))
	m.HandleFunc("POST /api/resume", s.action("resume", s.doResume))
	m.HandleFunc("POST /api/seeds", s.action("seeds", s.doSeeds))
	m.HandleFunc("POST /api/delay", s.action("delay", s.doDelay))
	m.HandleFunc("POST /api/block", s.action("block", s.doBlock))
	m.HandleFunc("POST /api/unblock", s.action("unblock", s.doUnblock))
	m.HandleFunc("POST /api/retire", s.action("retire", s.doRetire))
	m.HandleFunc("POST /api/log-level", s.action("log-level", s.doLogLevel))
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "console: no such API endpoint "+r.Method+" "+r.URL.Path)
	})
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	m.Handle("/", securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})))
	return m
}

// securityHeaders keeps the UI out of frames and limits what it may load
// (everything it uses is served from here).
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func notHere(w http.ResponseWriter, what string) {
	apiError(w, http.StatusNotFound, "console: no "+what+" here")
}

// Info says what this console has (GET /api/info): which views, the
// robots.txt agent, the log level and the bounds of the actions.
type Info struct {
	Agent    string          `json:"agent"`
	Views    map[string]bool `json:"views"`
	LogLevel string          `json:"log_level,omitempty"`
	MaxSeeds int             `json:"max_seeds"`
}

func (s *Server) getInfo(w http.ResponseWriter, r *http.Request) {
	in := Info{Agent: s.cfg.Agent, MaxSeeds: s.cfg.MaxSeeds, Views: map[string]bool{
		"crawl": s.src.Crawl != nil, "hosts": s.src.Frontier != nil, "politeness": s.src.Politeness != nil,
		"nodes": s.src.Nodes != nil, "proxy": s.src.Proxy != nil, "fetch_log": s.src.FetchLog != nil}}
	if s.cfg.LogLevel != nil {
		in.LogLevel = s.cfg.LogLevel.Level().String()
	}
	writeJSON(w, http.StatusOK, in)
}

// Overview is the crawl's state at one moment (GET /api/overview and each
// live update).
type Overview struct {
	Time time.Time `json:"time"`
	// State is "running", "paused", "waiting" (everything left is in
	// backoff or delay, until WaitingUntil), "finished" or "idle" (no
	// crawl).
	State        string           `json:"state"`
	WaitingUntil time.Time        `json:"waiting_until,omitzero"`
	Start        time.Time        `json:"start,omitzero"`
	ElapsedSec   float64          `json:"elapsed_s"`
	ETASec       *float64         `json:"eta_s"`
	Pages        int64            `json:"pages"`
	PagesPerSec  float64          `json:"pages_per_s"`
	Bytes        int64            `json:"bytes"`
	BytesPerSec  float64          `json:"bytes_per_s"`
	Status       map[string]int64 `json:"status"`
	MIME         map[string]int64 `json:"mime"`
	Queued       uint64           `json:"queued"`
	InFlight     int64            `json:"in_flight"`
	Hosts        uint64           `json:"hosts"`
	ActiveHosts  uint64           `json:"active_hosts"`
	RetiredHosts uint64           `json:"retired_hosts"`
	Completed    uint64           `json:"completed"`
	Errors       int64            `json:"errors"`
	TrapHits     int64            `json:"trap_hits"`
	Duplicates   int64            `json:"duplicates"`
	RobotsDenied int64            `json:"robots_denied"`
	Paused       bool             `json:"paused"`
	// History is the last hour's rates, one point per second (only with
	// ?history=1).
	History *Series `json:"history,omitempty"`
}

// Series are the chart data: unix seconds and the rates at each.
type Series struct {
	T           []int64   `json:"t"`
	PagesPerSec []float64 `json:"pages_per_s"`
	BytesPerSec []float64 `json:"bytes_per_s"`
}

// rateWindow is the window pages/s and bytes/s are averaged over.
const rateWindow = 10 * time.Second

func (s *Server) overview(withHistory bool) Overview {
	now := s.cfg.Now()
	o := Overview{Time: now, State: "idle", Status: map[string]int64{}, MIME: map[string]int64{}}
	var p Progress
	if s.src.Crawl != nil {
		p = s.src.Crawl.Progress()
		o.State = "running"
		o.Start, o.Pages, o.Bytes, o.Errors = p.Start, p.Pages, p.Bytes, p.Errors
		o.TrapHits, o.Duplicates, o.RobotsDenied, o.InFlight = p.TrapHits, p.Duplicates, p.RobotsDenied, p.InFlight
		if p.Status != nil {
			o.Status = p.Status
		}
		if p.MIME != nil {
			o.MIME = p.MIME
		}
		if !p.Start.IsZero() {
			o.ElapsedSec = now.Sub(p.Start).Seconds()
		}
		o.PagesPerSec, o.BytesPerSec = s.hist.rates(rateWindow)
	}
	if s.src.Frontier != nil {
		st := s.src.Frontier.Stats()
		o.Queued, o.Hosts, o.ActiveHosts, o.RetiredHosts, o.Completed = st.Queued, st.Hosts, st.Active, st.Retired, st.Completed
		if s.src.Crawl == nil {
			o.InFlight = int64(st.InFlight)
		}
		o.Paused = s.src.Frontier.Paused()
		switch {
		case p.Finished:
		case o.Paused:
			o.State = "paused"
		case !p.WaitingUntil.IsZero() && p.WaitingUntil.After(now):
			o.State, o.WaitingUntil = "waiting", p.WaitingUntil
		case o.InFlight == 0 && st.Queued > 0 && st.NextReady.After(now.Add(time.Second)):
			o.State, o.WaitingUntil = "waiting", st.NextReady
		}
	}
	if p.Finished {
		o.State = "finished"
	}
	o.ETASec = eta(p, o.PagesPerSec, now)
	if withHistory {
		// Empty, not null, before the first sample: the page reads the
		// arrays' lengths.
		h := Series{T: []int64{}, PagesPerSec: []float64{}, BytesPerSec: []float64{}}
		if t, p, b := s.hist.series(); len(t) > 0 {
			h.T, h.PagesPerSec, h.BytesPerSec = t, p, b
		}
		o.History = &h
	}
	return o
}

// eta is the time left of a bounded crawl: the sooner of the page and the
// time bound; nil when unbounded or unknown.
func eta(p Progress, rate float64, now time.Time) *float64 {
	var best *float64
	take := func(v float64) {
		v = max(v, 0)
		if best == nil || v < *best {
			best = &v
		}
	}
	if p.MaxPages > 0 && rate > 0 {
		take(float64(p.MaxPages-p.Pages) / rate)
	}
	if p.MaxDuration > 0 && !p.Start.IsZero() {
		take(p.Start.Add(p.MaxDuration).Sub(now).Seconds())
	}
	if p.Finished {
		return nil
	}
	return best
}

func (s *Server) overviewEvent() []byte {
	b, err := json.Marshal(s.overview(false))
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

func (s *Server) getOverview(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.overview(r.URL.Query().Get("history") == "1"))
}

func (s *Server) getHosts(w http.ResponseWriter, r *http.Request) {
	if s.hosts == nil {
		notHere(w, "crawl frontier")
		return
	}
	q, err := parseHostQuery(r.URL.Query())
	if err == nil {
		err = q.check()
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.hostPage(r, q))
}

func parseHostQuery(v url.Values) (HostQuery, error) {
	q := HostQuery{Search: v.Get("q"), Sort: v.Get("sort"), Desc: v.Get("order") == "desc"}
	if o := v.Get("order"); o != "" && o != "asc" && o != "desc" {
		return q, errors.New("console: order must be asc or desc")
	}
	for _, f := range []struct {
		name string
		p    *int
	}{{"offset", &q.Offset}, {"limit", &q.Limit}} {
		if s := v.Get(f.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return q, errors.New("console: " + f.name + " is not a number")
			}
			*f.p = n
		}
	}
	return q, nil
}

// hostPage answers a checked query, adding the politeness state and
// robots.txt of the rows shown.
func (s *Server) hostPage(r *http.Request, q HostQuery) HostPage {
	snap := s.hosts.snapshot()
	rows, total := snap.page(q)
	p := HostPage{Total: total, Offset: q.Offset, Limit: q.Limit, Snapshot: snap.at, Rows: make([]HostView, len(rows))}
	now := s.cfg.Now()
	for i, row := range rows {
		v := HostView{HostRow: row}
		if s.src.Politeness != nil {
			if hp, err := s.src.Politeness.Host(r.Context(), row.Host); err == nil {
				v.Politeness = &hp
			}
			if ri, err := s.src.Politeness.Robots(r.Context(), row.Host); err == nil {
				v.Robots = summarize(ri, now)
			}
		}
		p.Rows[i] = v
	}
	return p
}

func summarize(ri RobotsInfo, now time.Time) *RobotsSummary {
	rs := &RobotsSummary{Result: ri.Result, Status: ri.Status, Fetched: ri.Fetched}
	if !ri.Fetched.IsZero() {
		rs.AgeSec = int64(now.Sub(ri.Fetched).Seconds())
	}
	return rs
}

// HostDetail is one host (GET /api/hosts/{host}).
type HostDetail struct {
	HostRow
	Politeness *HostPoliteness `json:"politeness,omitempty"`
	Robots     *RobotsDetail   `json:"robots,omitempty"`
	Head       []QueueEntry    `json:"queue_head"`
	Recent     []Fetch         `json:"recent"`
}

// RobotsDetail is a host's robots.txt with the lines of the group that
// applies to our agent.
type RobotsDetail struct {
	RobotsInfo
	AgeSec int64  `json:"age_s"`
	Agent  string `json:"agent"`
	Body   string `json:"body"`
	// Group lists the line ranges (1-based, inclusive) of the group that
	// applies; Decisions the line that decides each queued URL.
	Group     []LineRange `json:"group"`
	Decisions []Verdict   `json:"decisions,omitempty"`
}

func (s *Server) getHost(w http.ResponseWriter, r *http.Request) {
	if s.src.Frontier == nil {
		notHere(w, "crawl frontier")
		return
	}
	host := r.PathValue("host")
	if err := checkHost(host); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	row, err := s.src.Frontier.Host(host)
	if err != nil {
		sourceError(w, err)
		return
	}
	d := HostDetail{HostRow: row, Head: []QueueEntry{}, Recent: []Fetch{}}
	if head, err := s.src.Frontier.Head(r.Context(), host, 20); err == nil {
		d.Head = head
	}
	if s.src.Politeness != nil {
		if hp, err := s.src.Politeness.Host(r.Context(), host); err == nil {
			d.Politeness = &hp
		}
		if ri, err := s.src.Politeness.Robots(r.Context(), host); err == nil {
			d.Robots = s.robotsDetail(ri, d.Head)
		}
	}
	if s.src.FetchLog != nil {
		if rec, err := s.src.FetchLog.Recent(host, 50); err == nil {
			d.Recent = rec
		}
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) robotsDetail(ri RobotsInfo, head []QueueEntry) *RobotsDetail {
	rd := &RobotsDetail{RobotsInfo: ri, Agent: s.cfg.Agent, Body: string(ri.Body)}
	if !ri.Fetched.IsZero() {
		rd.AgeSec = int64(s.cfg.Now().Sub(ri.Fetched).Seconds())
	}
	rd.Group = GroupLines(ri.Body, s.cfg.Agent)
	urls := make([]string, 0, len(head))
	for _, e := range head {
		urls = append(urls, e.URL)
	}
	rd.Decisions = explain(ri.Body, s.cfg.Agent, urls)
	return rd
}

func sourceError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknownHost), errors.Is(err, ErrNoRobots):
		apiError(w, http.StatusNotFound, err.Error())
	default:
		apiError(w, http.StatusInternalServerError, err.Error())
	}
}

// NodeView is a node row with how long it has been silent.
type NodeView struct {
	Node
	SilenceSec float64 `json:"silence_s"`
}

// NodesView is GET /api/nodes: the nodes, live ones first, and, from a
// cluster, the crawls' totals.
type NodesView struct {
	DeadAfterSec float64       `json:"dead_after_s"`
	Live         int           `json:"live"`
	Dead         int           `json:"dead"`
	Nodes        []NodeView    `json:"nodes"`
	Crawls       []CrawlTotals `json:"crawls,omitzero"`
}

func (s *Server) getNodes(w http.ResponseWriter, r *http.Request) {
	if s.src.Nodes == nil {
		notHere(w, "cluster nodes")
		return
	}
	nodes, err := s.src.Nodes.Nodes(r.Context())
	if err != nil {
		apiError(w, http.StatusBadGateway, err.Error())
		return
	}
	now := s.cfg.Now()
	out := NodesView{DeadAfterSec: s.cfg.DeadAfter.Seconds(), Nodes: make([]NodeView, len(nodes))}
	for i, n := range nodes {
		silence := now.Sub(n.LastSeen)
		n.Dead = n.Dead || silence > s.cfg.DeadAfter
		if n.Dead {
			out.Dead++
		} else {
			out.Live++
		}
		out.Nodes[i] = NodeView{Node: n, SilenceSec: max(0, silence.Seconds())}
	}
	slices.SortFunc(out.Nodes, func(a, b NodeView) int {
		if a.Dead != b.Dead {
			if a.Dead {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if t, ok := s.src.Nodes.(ClusterTotals); ok {
		if out.Crawls, err = t.Totals(r.Context()); err != nil {
			apiError(w, http.StatusBadGateway, err.Error())
			return
		}
		if out.Crawls == nil {
			out.Crawls = []CrawlTotals{}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// ProxyView is GET /api/proxy: the counters, their rates and the cache
// hit ratio.
type ProxyView struct {
	ProxyStats
	RequestsPerSec float64  `json:"requests_per_s"`
	HitRatio       *float64 `json:"cache_hit_ratio"`
}

func (s *Server) getProxy(w http.ResponseWriter, r *http.Request) {
	if s.src.Proxy == nil {
		notHere(w, "proxy")
		return
	}
	st := s.src.Proxy.ProxyStats()
	v := ProxyView{ProxyStats: st}
	v.RequestsPerSec = s.proxyRate(st.Requests)
	if n := st.CacheHits + st.CacheMisses; n > 0 {
		h := float64(st.CacheHits) / float64(n)
		v.HitRatio = &h
	}
	if v.Clients == nil {
		v.Clients = map[string]int64{}
	}
	if v.Trace == nil {
		v.Trace = []TraceEntry{}
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) getDelays(w http.ResponseWriter, r *http.Request) {
	if s.src.Politeness == nil {
		notHere(w, "politeness gate")
		return
	}
	after := r.URL.Query().Get("after")
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			apiError(w, http.StatusBadRequest, "console: limit must be 1..1000")
			return
		}
		limit = n
	}
	rows, err := s.src.Politeness.Delays(r.Context(), after, limit)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if rows == nil {
		rows = []DelayRow{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"delays": rows})
}
