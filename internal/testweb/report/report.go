// Package report judges a crawl's politeness from a testweb request log:
// the numbers the crawler and proxy issues are judged by (request counts,
// per-host gaps and overlaps, gaps shorter than the robots.txt delay,
// requests to disallowed paths or before robots.txt, trap URLs fetched,
// orphan pages found, duplicate hosts crawled twice, requests to hosts
// whose robots.txt names another (Host, Mirror-site) and the load on
// declared mirrors, user-agents).
//
//	web, _ := testweb.New(cfg)               // the same Config as the server
//	rep, err := report.Analyze(web, logFile, report.Options{MinDelay: time.Second})
//	rep.WriteText(os.Stdout)                  // or json.Marshal(rep)
//	if h := rep.Host("crawl-delay.test"); h != nil && h.DelayViolations > 0 { ... }
//
// Gaps are measured on the server's clock, from the log's start and end
// times: start-to-start (what "requests closer than the delay" means, and
// what delay violations are counted on) and end-to-start (negative when two
// requests overlap).
package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// Options tunes the judgement. The zero value matches each request's
// User-Agent product token against robots.txt and checks no minimum delay.
type Options struct {
	// Agent is the product token robots.txt groups are matched with (RFC
	// 9309 §2.2.1). Empty means the product token of each request's
	// User-Agent (the text before the first "/" or space).
	Agent string
	// MinDelay is the per-host delay the crawler was configured with;
	// start-to-start gaps shorter than it are counted. Zero checks nothing.
	MinDelay time.Duration
	// Tolerance is subtracted from every delay before gaps are compared
	// with it, to absorb scheduling jitter between client and server
	// clocks. Default 0 (strict).
	Tolerance time.Duration
	// MaxExamples bounds the examples kept per kind of problem. Default 10.
	MaxExamples int
	// Coverage, when set, also checks the crawl's coverage of the generic
	// sites against what was reachable (Report.Coverage).
	Coverage bool
}

// Coverage compares the pages of the generic sites a crawl fetched with
// the pages reachable by links (testweb.Web.Reachable: transient errors
// retried, redirects followed, robots.txt obeyed).
type Coverage struct {
	// Sites is the number of generic sites; SitesVisited of them got at
	// least one request.
	Sites        int `json:"sites"`
	SitesVisited int `json:"sites_visited"`
	// Reachable counts the reachable pages of all generic sites;
	// Fetched those the crawl got with a 2xx answer.
	Reachable int `json:"reachable"`
	Fetched   int `json:"fetched"`
	// ReachableVisited and FetchedVisited count the same over the sites
	// the crawl visited, for crawls seeded with a part of the web.
	ReachableVisited int `json:"reachable_visited"`
	FetchedVisited   int `json:"fetched_visited"`
	// Missed shows a few reachable pages of visited sites never fetched.
	Missed []string `json:"missed,omitempty"`
}

// Report is the politeness report of one crawl. Durations are in
// nanoseconds in JSON.
type Report struct {
	Requests          int           `json:"requests"`
	Pages             int           `json:"pages"` // distinct host+target answered 2xx, robots.txt excepted
	Bytes             int64         `json:"bytes"` // body bytes sent
	Start             time.Time     `json:"start"` // first request's start
	End               time.Time     `json:"end"`   // last request's end
	Duration          time.Duration `json:"duration_ns"`
	PagesPerSecond    float64       `json:"pages_per_second"`
	RequestsPerSecond float64       `json:"requests_per_second"`
	HostsRequested    int           `json:"hosts_requested"`

	// MinGapStartToStart and MinGapEndToStart are the smallest per-host
	// gaps over all hosts with two requests or more (HasGaps).
	HasGaps            bool          `json:"has_gaps"`
	MinGapStartToStart time.Duration `json:"min_gap_start_to_start_ns"`
	MinGapEndToStart   time.Duration `json:"min_gap_end_to_start_ns"`

	// Overlaps counts requests that started before an earlier request to
	// the same host had ended.
	Overlaps int `json:"overlaps"`
	// DelayViolations counts start-to-start gaps shorter than the host's
	// robots.txt delay (the longer of Crawl-delay and the Request-rate
	// interval of the agent's group).
	DelayViolations int `json:"delay_violations"`
	// MinDelayViolations counts start-to-start gaps shorter than
	// Options.MinDelay.
	MinDelayViolations int `json:"min_delay_violations"`
	// Disallowed counts requests robots.txt disallows for the agent.
	Disallowed int `json:"disallowed"`
	// OutsideVisitTime counts requests the agent's REGP Visit-time and
	// Time-forbidden windows did not permit at their start (the REGP paper
	// §3.2.8).
	OutsideVisitTime int `json:"outside_visit_time"`
	// BeforeRobots counts requests (other than robots.txt) to a host that
	// started before its first robots.txt request ended, or to a host whose
	// robots.txt was never requested.
	BeforeRobots int `json:"before_robots"`
	// Robots5xx, Robots401403 and Robots429 count requests (other than
	// robots.txt) to hosts whose robots.txt answers with those statuses.
	Robots5xx    int `json:"robots_5xx_requests"`
	Robots401403 int `json:"robots_401_403_requests"`
	Robots429    int `json:"robots_429_requests"`
	// Traps counts distinct trap URLs fetched, per trap kind (every kind
	// present, zero included).
	Traps map[testweb.Trap]int `json:"traps"`
	// OrphansFound is the number of distinct orphan pages (listed only by
	// sitemaps) fetched, of OrphansTotal.
	OrphansFound int `json:"orphans_found"`
	OrphansTotal int `json:"orphans_total"`
	// NofollowFetched counts distinct URLs fetched that only nofollow links
	// lead to.
	NofollowFetched int `json:"nofollow_fetched"`
	// PrivateFetched counts distinct /private/ URLs fetched (every
	// robots.txt of the web that answers 200 disallows them).
	PrivateFetched int `json:"private_fetched"`
	// DuplicateHosts lists the groups of duplicate hosts of which more than
	// one name served a page (2xx, robots.txt aside).
	DuplicateHosts []DupCrawl `json:"duplicate_hosts"`
	// NonCanonical counts requests (other than robots.txt) to the names
	// whose robots.txt sends crawlers elsewhere (Site.NonCanonical: robots
	// Host, REGP Mirror-site); a crawler honouring the directives sends
	// none.
	NonCanonical int `json:"non_canonical_requests"`
	// MirrorLoad shows, per site declaring mirrors, how many distinct
	// pages each mirror served and how many paths more than one did.
	MirrorLoad []MirrorLoad `json:"mirror_load"`
	// UnknownHostRequests counts requests for hosts the web does not have.
	UnknownHostRequests int `json:"unknown_host_requests"`
	// UserAgents counts requests per User-Agent.
	UserAgents map[string]int `json:"user_agents"`
	// Hosts has one entry per host requested, sorted by name.
	Hosts []HostStats `json:"hosts"`
	// Examples shows a few requests of each kind of problem.
	Examples []Example `json:"examples"`
	// Coverage is set when Options.Coverage asked for it.
	Coverage *Coverage `json:"coverage,omitempty"`

	byHost map[string]int
}

// DupCrawl is a group of duplicate hosts several of whose names were
// crawled.
type DupCrawl struct {
	Group string   `json:"group"`
	Hosts []string `json:"hosts"`
	// ExtraPages counts the pages (2xx, robots.txt aside) served by the
	// names other than the one that served the most: a crawler that finds
	// duplicate hosts as it goes fetches a name's home page and a page or
	// two more before it can tell; one that does not fetches the site
	// again on each name.
	ExtraPages int `json:"extra_pages"`
}

// MirrorLoad is how the pages of a site with REGP Mirror-site lines were
// spread over its mirrors.
type MirrorLoad struct {
	Site string `json:"site"`
	// Pages is the number of distinct pages (2xx, robots.txt excepted)
	// fetched from each mirror, in Site.Mirrors order.
	Pages []int `json:"pages"`
	// Mirrors are the mirror names, as Site.Mirrors.
	Mirrors []string `json:"mirrors"`
	// Overlap is the number of paths fetched from more than one mirror.
	Overlap int `json:"overlap"`
}

// HostStats are the numbers of one host (as named in the Host header,
// lower case, without port).
type HostStats struct {
	Host     string `json:"host"`
	Requests int    `json:"requests"`
	// Gaps is the number of consecutive request pairs (Requests-1); the
	// minimum gaps mean something only when it is positive.
	Gaps               int           `json:"gaps"`
	MinGapStartToStart time.Duration `json:"min_gap_start_to_start_ns"`
	MinGapEndToStart   time.Duration `json:"min_gap_end_to_start_ns"`
	// Delay is the robots.txt delay of the first request's agent for "/".
	Delay              time.Duration `json:"robots_delay_ns"`
	Overlaps           int           `json:"overlaps"`
	DelayViolations    int           `json:"delay_violations"`
	MinDelayViolations int           `json:"min_delay_violations"`
	Disallowed         int           `json:"disallowed"`
	BeforeRobots       int           `json:"before_robots"`
	OutsideVisitTime   int           `json:"outside_visit_time"`
	RobotsRequests     int           `json:"robots_requests"`
	// RobotsStatus is what the host's robots.txt answers (0: unknown host).
	RobotsStatus int `json:"robots_status"`
}

// Example is one request showing a problem.
type Example struct {
	Problem string    `json:"problem"`
	Host    string    `json:"host"`
	Target  string    `json:"target"`
	Start   time.Time `json:"start"`
	Detail  string    `json:"detail,omitempty"`
}

// Host returns the numbers of host (any case, port ignored), or nil when
// it was never requested.
func (r *Report) Host(host string) *HostStats {
	i, ok := r.byHost[testweb.NormalizeHost(host)]
	if !ok {
		return nil
	}
	return &r.Hosts[i]
}

// Analyze reads a log (JSON lines, as testweb.Log writes them) of a crawl
// of web and judges it.
func Analyze(web *testweb.Web, log io.Reader, opts Options) (*Report, error) {
	var entries []testweb.Entry
	err := testweb.ReadLog(log, func(e testweb.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return AnalyzeEntries(web, entries, opts), nil
}

// ProductToken returns the product token of a User-Agent: the text before
// the first "/", space or ";" (RFC 9309 §2.2.1 matches groups against it).
func ProductToken(ua string) string {
	if i := strings.IndexAny(ua, "/ ;("); i >= 0 {
		ua = ua[:i]
	}
	return ua
}

// analyzer holds the caches of one analysis.
type analyzer struct {
	web    *testweb.Web
	opts   Options
	files  map[*testweb.Site]*robots.File
	groups map[groupKey]*robots.Group
}

type groupKey struct {
	site  *testweb.Site
	agent string
}

// group returns the robots.txt group of agent on s, or nil when s's
// robots.txt does not answer with rules (4xx, 5xx).
func (a *analyzer) group(s *testweb.Site, agent string) *robots.Group {
	if s == nil || s.Robots == nil {
		return nil
	}
	k := groupKey{s, strings.ToLower(agent)}
	if g, ok := a.groups[k]; ok {
		return g
	}
	f, ok := a.files[s]
	if !ok {
		f = robots.Parse(s.Robots)
		a.files[s] = f
	}
	g := f.Group(agent)
	a.groups[k] = g
	return g
}

// delay is the robots.txt delay of agent on s for target at t: the longer
// of Crawl-delay and the Request-rate interval, path-specific where a REGP
// nested block says so (the REGP paper §3.2).
func (a *analyzer) delay(s *testweb.Site, agent, target string, t time.Time) time.Duration {
	g := a.group(s, agent)
	if g == nil {
		return 0
	}
	return g.MinInterval(target, t)
}

func (a *analyzer) agent(e *testweb.Entry) string {
	if a.opts.Agent != "" {
		return a.opts.Agent
	}
	return ProductToken(e.UserAgent)
}

// AnalyzeEntries judges entries (in any order) of a crawl of web.
func AnalyzeEntries(web *testweb.Web, entries []testweb.Entry, opts Options) *Report {
	if opts.MaxExamples <= 0 {
		opts.MaxExamples = 10
	}
	a := &analyzer{web: web, opts: opts, files: map[*testweb.Site]*robots.File{}, groups: map[groupKey]*robots.Group{}}
	rep := &Report{
		Traps:      map[testweb.Trap]int{},
		UserAgents: map[string]int{},
		byHost:     map[string]int{},
	}
	for _, t := range testweb.Traps {
		rep.Traps[t] = 0
	}
	for _, s := range web.Sites() {
		rep.OrphansTotal += len(s.Orphans)
	}
	examples := map[string]int{}
	example := func(problem string, e *testweb.Entry, detail string) {
		if examples[problem] >= opts.MaxExamples {
			return
		}
		examples[problem]++
		rep.Examples = append(rep.Examples, Example{Problem: problem, Host: testweb.NormalizeHost(e.Host), Target: e.Target, Start: e.Start, Detail: detail})
	}

	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(x, y testweb.Entry) int {
		if c := x.Start.Compare(y.Start); c != 0 {
			return c
		}
		return x.End.Compare(y.End)
	})

	type key struct{ host, target string }
	pages := map[key]bool{}
	trapURLs := map[key]bool{}
	orphans := map[key]bool{}
	nofollow := map[key]bool{}
	private := map[key]bool{}
	dupSeen := map[string]map[string]map[string]bool{}            // group → host → 2xx targets
	mirrorPaths := map[*testweb.Site]map[string]map[string]bool{} // site → target → mirrors
	perHost := map[string][]*testweb.Entry{}
	var hostOrder []string

	for i := range sorted {
		e := &sorted[i]
		rep.Requests++
		rep.Bytes += e.Bytes
		rep.UserAgents[e.UserAgent]++
		if rep.Start.IsZero() || e.Start.Before(rep.Start) {
			rep.Start = e.Start
		}
		if e.End.After(rep.End) {
			rep.End = e.End
		}
		host := testweb.NormalizeHost(e.Host)
		if _, ok := perHost[host]; !ok {
			hostOrder = append(hostOrder, host)
		}
		perHost[host] = append(perHost[host], e)
		k := key{host, e.Target}
		if e.Status >= 200 && e.Status < 300 && !isRobots(e.Target) {
			pages[k] = true
		}
		res := web.Lookup(host, e.Target)
		switch res.Class {
		case testweb.ClassUnknownHost:
			rep.UnknownHostRequests++
			continue
		case testweb.ClassTrap:
			if !trapURLs[k] {
				trapURLs[k] = true
				rep.Traps[res.Trap]++
			}
		case testweb.ClassOrphan:
			orphans[k] = true
		}
		if res.Nofollow {
			nofollow[k] = true
		}
		if res.Private {
			private[k] = true
		}
		s := res.Site
		if res.Class == testweb.ClassRobots {
			continue
		}
		if slices.Contains(s.NonCanonical, host) {
			rep.NonCanonical++
			example("non-canonical", e, "robots.txt names another host to crawl")
		}
		if len(s.Mirrors) > 0 && e.Status >= 200 && e.Status < 300 && slices.Contains(s.Mirrors, host) {
			if mirrorPaths[s] == nil {
				mirrorPaths[s] = map[string]map[string]bool{}
			}
			if mirrorPaths[s][e.Target] == nil {
				mirrorPaths[s][e.Target] = map[string]bool{}
			}
			mirrorPaths[s][e.Target][host] = true
		}
		switch st := s.RobotsStatus; {
		case st >= 500:
			rep.Robots5xx++
			example("robots-5xx", e, fmt.Sprintf("robots.txt answers %d", st))
		case st == 401 || st == 403:
			rep.Robots401403++
		case st == 429:
			rep.Robots429++
			example("robots-429", e, "robots.txt answers 429")
		}
		if s.DupGroup != "" && e.Status >= 200 && e.Status < 300 && !isRobots(e.Target) {
			if dupSeen[s.DupGroup] == nil {
				dupSeen[s.DupGroup] = map[string]map[string]bool{}
			}
			if dupSeen[s.DupGroup][host] == nil {
				dupSeen[s.DupGroup][host] = map[string]bool{}
			}
			dupSeen[s.DupGroup][host][e.Target] = true
		}
	}
	rep.Pages = len(pages)
	rep.OrphansFound = len(orphans)
	rep.NofollowFetched = len(nofollow)
	rep.PrivateFetched = len(private)
	rep.HostsRequested = len(perHost)
	if rep.Requests > 0 {
		rep.Duration = rep.End.Sub(rep.Start)
		if sec := rep.Duration.Seconds(); sec > 0 {
			rep.PagesPerSecond = float64(rep.Pages) / sec
			rep.RequestsPerSecond = float64(rep.Requests) / sec
		}
	}
	for _, s := range web.Sites() {
		if len(s.Mirrors) == 0 {
			continue
		}
		ml := MirrorLoad{Site: s.Host, Mirrors: s.Mirrors, Pages: make([]int, len(s.Mirrors))}
		for _, hosts := range mirrorPaths[s] {
			if len(hosts) > 1 {
				ml.Overlap++
			}
			for i, m := range s.Mirrors {
				if hosts[m] {
					ml.Pages[i]++
				}
			}
		}
		rep.MirrorLoad = append(rep.MirrorLoad, ml)
	}
	for group, hosts := range dupSeen {
		if len(hosts) < 2 {
			continue
		}
		d := DupCrawl{Group: group}
		most := 0
		for h, targets := range hosts {
			d.Hosts = append(d.Hosts, h)
			d.ExtraPages += len(targets)
			most = max(most, len(targets))
		}
		d.ExtraPages -= most
		slices.Sort(d.Hosts)
		rep.DuplicateHosts = append(rep.DuplicateHosts, d)
	}
	slices.SortFunc(rep.DuplicateHosts, func(x, y DupCrawl) int { return cmp.Compare(x.Group, y.Group) })

	slices.Sort(hostOrder)
	for _, host := range hostOrder {
		hs := a.hostStats(host, perHost[host], example)
		rep.Overlaps += hs.Overlaps
		rep.DelayViolations += hs.DelayViolations
		rep.MinDelayViolations += hs.MinDelayViolations
		rep.Disallowed += hs.Disallowed
		rep.BeforeRobots += hs.BeforeRobots
		rep.OutsideVisitTime += hs.OutsideVisitTime
		if hs.Gaps > 0 {
			if !rep.HasGaps || hs.MinGapStartToStart < rep.MinGapStartToStart {
				rep.MinGapStartToStart = hs.MinGapStartToStart
			}
			if !rep.HasGaps || hs.MinGapEndToStart < rep.MinGapEndToStart {
				rep.MinGapEndToStart = hs.MinGapEndToStart
			}
			rep.HasGaps = true
		}
		rep.byHost[host] = len(rep.Hosts)
		rep.Hosts = append(rep.Hosts, hs)
	}
	slices.SortStableFunc(rep.Examples, func(x, y Example) int { return cmp.Compare(x.Problem, y.Problem) })
	if opts.Coverage {
		rep.Coverage = coverage(web, perHost, opts.MaxExamples)
	}
	return rep
}

// coverage counts the reachable pages of the generic sites that some
// request got with a 2xx.
func coverage(web *testweb.Web, perHost map[string][]*testweb.Entry, maxMissed int) *Coverage {
	c := &Coverage{}
	for _, s := range web.Sites() {
		reach := web.Reachable(s)
		if reach == nil {
			continue
		}
		c.Sites++
		ok := map[string]bool{}
		visited := false
		for _, name := range append([]string{s.Host}, s.Aliases...) {
			for _, e := range perHost[name] {
				visited = true
				if e.Status >= 200 && e.Status < 300 {
					ok[e.Target] = true
				}
			}
		}
		if visited {
			c.SitesVisited++
			c.ReachableVisited += len(reach)
		}
		c.Reachable += len(reach)
		prefix := "http://" + s.Host
		for _, u := range reach {
			if ok[strings.TrimPrefix(u, prefix)] {
				c.Fetched++
				if visited {
					c.FetchedVisited++
				}
			} else if visited && len(c.Missed) < maxMissed {
				c.Missed = append(c.Missed, u)
			}
		}
	}
	return c
}

// hostStats judges the requests to one host, sorted by start.
func (a *analyzer) hostStats(host string, es []*testweb.Entry, example func(string, *testweb.Entry, string)) HostStats {
	hs := HostStats{Host: host, Requests: len(es)}
	s := a.web.Site(host)
	if s != nil {
		hs.RobotsStatus = s.RobotsStatus
		hs.Delay = a.delay(s, a.agent(es[0]), "/", es[0].Start)
	}
	// The end of the first robots.txt request: requests starting before it
	// were made without knowing the rules.
	var robotsEnd time.Time
	for _, e := range es {
		if isRobots(e.Target) {
			hs.RobotsRequests++
			if robotsEnd.IsZero() {
				robotsEnd = e.End
			}
		}
	}
	var maxEnd time.Time
	for i, e := range es {
		if i > 0 {
			prev := es[i-1]
			s2s := e.Start.Sub(prev.Start)
			e2s := e.Start.Sub(maxEnd)
			if hs.Gaps == 0 || s2s < hs.MinGapStartToStart {
				hs.MinGapStartToStart = s2s
			}
			if hs.Gaps == 0 || e2s < hs.MinGapEndToStart {
				hs.MinGapEndToStart = e2s
			}
			hs.Gaps++
			if e.Start.Before(maxEnd) {
				hs.Overlaps++
				example("overlap", e, fmt.Sprintf("started %v before the previous request to the host ended", maxEnd.Sub(e.Start)))
			}
			if s != nil {
				if d := a.delay(s, a.agent(e), e.Target, e.Start); d > 0 && s2s < d-a.opts.Tolerance {
					hs.DelayViolations++
					example("robots-delay", e, fmt.Sprintf("gap %v < robots delay %v", s2s, d))
				}
			}
			if a.opts.MinDelay > 0 && s2s < a.opts.MinDelay-a.opts.Tolerance {
				hs.MinDelayViolations++
				example("min-delay", e, fmt.Sprintf("gap %v < min delay %v", s2s, a.opts.MinDelay))
			}
		}
		if e.End.After(maxEnd) {
			maxEnd = e.End
		}
		if s == nil || isRobots(e.Target) {
			continue
		}
		if robotsEnd.IsZero() || e.Start.Before(robotsEnd) {
			hs.BeforeRobots++
			example("before-robots", e, "robots.txt not yet fetched")
		}
		g := a.group(s, a.agent(e))
		if g == nil {
			continue
		}
		if !g.Allowed(e.Target) {
			hs.Disallowed++
			example("disallowed", e, "agent "+a.agent(e))
		}
		if next := g.NextVisit(e.Start); !next.Equal(e.Start) {
			hs.OutsideVisitTime++
			detail := "no visit window ever"
			if !next.IsZero() {
				detail = "next visit window opens " + next.UTC().Format(time.RFC3339)
			}
			example("visit-time", e, detail)
		}
	}
	return hs
}

func isRobots(target string) bool {
	return target == "/robots.txt" || strings.HasPrefix(target, "/robots.txt?")
}
