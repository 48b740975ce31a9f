package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// WriteText prints the report for people. Hosts are listed when they have
// a problem or a robots.txt delay, or all of them when allHosts is set.
func (r *Report) WriteText(w io.Writer, allHosts bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(name string, v any) { fmt.Fprintf(tw, "%s\t%v\n", name, v) }
	p("requests", r.Requests)
	p("distinct pages (2xx)", r.Pages)
	p("bytes", r.Bytes)
	p("duration", r.Duration.Round(time.Millisecond))
	p("pages/s", fmt.Sprintf("%.1f", r.PagesPerSecond))
	p("requests/s", fmt.Sprintf("%.1f", r.RequestsPerSecond))
	p("hosts requested", r.HostsRequested)
	if r.HasGaps {
		p("min gap start-to-start (any host)", fmtDur(r.MinGapStartToStart))
		p("min gap end-to-start (any host)", fmtDur(r.MinGapEndToStart))
	} else {
		p("min gap (any host)", "n/a (no host had two requests)")
	}
	p("overlapping requests to a host", r.Overlaps)
	p("gaps shorter than robots delay", r.DelayViolations)
	p("gaps shorter than --min-delay", r.MinDelayViolations)
	p("requests to disallowed paths", r.Disallowed)
	p("requests before robots.txt", r.BeforeRobots)
	p("requests outside Visit-time windows", r.OutsideVisitTime)
	p("requests to hosts with robots.txt 5xx", r.Robots5xx)
	p("requests to hosts with robots.txt 401/403", r.Robots401403)
	p("requests to hosts with robots.txt 429", r.Robots429)
	for _, t := range testweb.Traps {
		p("trap URLs fetched: "+string(t), r.Traps[t])
	}
	p("orphan sitemap pages found", fmt.Sprintf("%d of %d", r.OrphansFound, r.OrphansTotal))
	p("nofollow-only URLs fetched", r.NofollowFetched)
	p("/private/ URLs fetched", r.PrivateFetched)
	dups := make([]string, 0, len(r.DuplicateHosts))
	for _, d := range r.DuplicateHosts {
		dups = append(dups, fmt.Sprintf("%s (%d pages on the other names)", strings.Join(d.Hosts, "+"), d.ExtraPages))
	}
	p("duplicate hosts crawled twice", fmt.Sprintf("%d %s", len(r.DuplicateHosts), strings.Join(dups, " ")))
	p("requests to non-canonical hosts (robots Host, Mirror-site)", r.NonCanonical)
	for _, m := range r.MirrorLoad {
		parts := make([]string, len(m.Mirrors))
		for i, h := range m.Mirrors {
			parts[i] = fmt.Sprintf("%s %d", h, m.Pages[i])
		}
		p("pages per mirror of "+m.Site, fmt.Sprintf("%s (%d paths on several)", strings.Join(parts, ", "), m.Overlap))
	}
	p("requests to unknown hosts", r.UnknownHostRequests)
	if c := r.Coverage; c != nil {
		p("coverage: reachable pages fetched (generic sites)", fmt.Sprintf("%d of %d (%s)", c.Fetched, c.Reachable, pct(c.Fetched, c.Reachable)))
		p("coverage: same, sites visited", fmt.Sprintf("%d of %d (%s) on %d of %d sites", c.FetchedVisited, c.ReachableVisited, pct(c.FetchedVisited, c.ReachableVisited), c.SitesVisited, c.Sites))
		for _, u := range c.Missed {
			p("coverage: missed", u)
		}
	}
	uas := make([]string, 0, len(r.UserAgents))
	for ua := range r.UserAgents {
		uas = append(uas, ua)
	}
	slices.Sort(uas)
	for _, ua := range uas {
		p("user-agent", fmt.Sprintf("%q (%d)", ua, r.UserAgents[ua]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "host\trequests\tmin s2s\tmin e2s\trobots delay\toverlaps\tdelay viol.\tmin-delay viol.\tdisallowed\tbefore robots\t")
	shown := 0
	for _, h := range r.Hosts {
		problem := h.Overlaps+h.DelayViolations+h.MinDelayViolations+h.Disallowed+h.BeforeRobots+h.OutsideVisitTime > 0
		if !allHosts && !problem && h.Delay == 0 {
			continue
		}
		shown++
		s2s, e2s := "-", "-"
		if h.Gaps > 0 {
			s2s, e2s = fmtDur(h.MinGapStartToStart), fmtDur(h.MinGapEndToStart)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", h.Host, h.Requests, s2s, e2s, fmtDur(h.Delay),
			h.Overlaps, h.DelayViolations, h.MinDelayViolations, h.Disallowed, h.BeforeRobots)
	}
	if shown == 0 {
		fmt.Fprintln(tw, "(no host with a problem or a robots delay)\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range r.Examples {
			fmt.Fprintf(w, "  %-14s %s http://%s%s %s\n", e.Problem, e.Start.UTC().Format("15:04:05.000000"), e.Host, e.Target, e.Detail)
		}
	}
	return nil
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// pct formats n/d as a percentage.
func pct(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(d))
}
