// Command clustertable prints the cluster benchmark's tables
// (bench/cluster/run.sh, docs/performance.md): for each run, the pages the
// synthetic web counted (`courtesy testweb report --json`), the crawl
// nodes' cost (bench/measure's JSON, one file per node, summed), the Redis
// traffic per page from INFO snapshots taken before and after the run, and
// the politeness the report found; then the targets and whether each is
// met: pages/s at the most nodes at least 2.5x one node, and a cluster
// node's CPU per page at most 1.5x the embedded frontier's on the same
// workload.
//
//	clustertable -dir DIR [-embedded NAME] NAME...
//
// For each NAME it reads DIR/NAME.report.json, DIR/NAME.node*.measure.json
// and, for cluster runs, DIR/NAME.redis/masters (the master ports, one a
// line) with DIR/NAME.redis/before/PORT.info and after/PORT.info (the text
// of `redis-cli -p PORT info everything` of every server), and the
// nodes' logs DIR/NAME.node*.out for the line giving the shared
// frontier's Redis work by operation. The first NAME
// is the baseline of the scaling ratios.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Targets of the cluster benchmark.
const (
	targetScale = 2.5 // pages/s at the most nodes / pages/s at one node, at least
	targetCPU   = 1.5 // cluster node CPU per page / embedded CPU per page, at most
)

// measured is the part of bench/measure's JSON the table uses.
type measured struct {
	ExitCode    int     `json:"exit_code"`
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	MaxRSSMB    float64 `json:"max_rss_mb"`
	TimedOut    bool    `json:"timed_out"`
}

// reported is the part of the testweb report's JSON the table uses.
type reported struct {
	Requests           int `json:"requests"`
	Pages              int `json:"pages"`
	Overlaps           int `json:"overlaps"`
	MinDelayViolations int `json:"min_delay_violations"`
	DelayViolations    int `json:"delay_violations"`
	Disallowed         int `json:"disallowed"`
	BeforeRobots       int `json:"before_robots"`
}

// run is one crawl: one or more nodes, and Redis figures for cluster runs.
type run struct {
	name  string
	ok    bool
	why   string // when !ok
	nodes []measured
	r     reported
	redis *delta // nil for the embedded frontier
	// masters is the number of master servers summed in redis.
	masters int
	// testweb is the synthetic web's process, when it was measured.
	testweb *measured
	// work is the shared frontier's Redis work by operation, summed over
	// the nodes (nil when the nodes did not log it).
	work map[string]work
}

// wall is the longest node's wall time: the nodes start together, so it
// is the run's duration.
func (r run) wall() float64 {
	w := 0.0
	for _, m := range r.nodes {
		w = max(w, m.WallSeconds)
	}
	return w
}

func (r run) cpu() float64 {
	c := 0.0
	for _, m := range r.nodes {
		c += m.CPUSeconds
	}
	return c
}

func (r run) maxRSS() float64 {
	x := 0.0
	for _, m := range r.nodes {
		x = max(x, m.MaxRSSMB)
	}
	return x
}

func (r run) exits() string {
	var s []string
	for _, m := range r.nodes {
		e := fmt.Sprint(m.ExitCode)
		if m.TimedOut {
			e += "(timeout)"
		}
		s = append(s, e)
	}
	return strings.Join(s, " ")
}

func (r run) pagesPerSec() float64 { return div(float64(r.r.Pages), r.wall()) }
func (r run) cpuMsPerPage() float64 {
	return div(1000*r.cpu(), float64(r.r.Pages))
}
func (r run) perPage(v float64) float64 { return div(v, float64(r.r.Pages)) }

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func main() {
	fs := flag.NewFlagSet("clustertable", flag.ContinueOnError)
	dir := fs.String("dir", ".", "`DIR` holding the runs' files")
	embedded := fs.String("embedded", "", "`NAME` of the run with the embedded frontier (the CPU baseline)")
	cores := fs.Int("cores", 0, "the machine's `N` cores, for the CPU-bound ceiling (0: leave it out)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: clustertable -dir DIR [-embedded NAME] NAME...")
		os.Exit(2)
	}
	var runs []run
	for _, name := range fs.Args() {
		runs = append(runs, load(*dir, name, true))
	}
	var emb *run
	if *embedded != "" {
		e := load(*dir, *embedded, false)
		emb = &e
	}
	writeTables(os.Stdout, runs, emb, *cores)
}

func load(dir, name string, cluster bool) run {
	r := run{name: name}
	files, _ := filepath.Glob(filepath.Join(dir, name+".node*.measure.json"))
	sort.Strings(files)
	if len(files) == 0 {
		r.why = "not run"
		return r
	}
	for _, f := range files {
		var m measured
		if err := readJSON(f, &m); err != nil {
			r.why = err.Error()
			return r
		}
		r.nodes = append(r.nodes, m)
	}
	if err := readJSON(filepath.Join(dir, name+".report.json"), &r.r); err != nil {
		r.why = err.Error()
		return r
	}
	var tw measured
	if err := readJSON(filepath.Join(dir, name+".testweb.measure.json"), &tw); err == nil {
		r.testweb = &tw
	}
	if cluster {
		d, n, err := loadRedis(filepath.Join(dir, name+".redis"))
		if err != nil {
			r.why = err.Error()
			return r
		}
		r.redis, r.masters = &d, n
		if r.work, err = loadWork(dir, name); err != nil {
			r.why = err.Error()
			return r
		}
	}
	r.ok = true
	return r
}

// loadRedis sums the masters' traffic and every server's CPU over a run.
func loadRedis(dir string) (delta, int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "masters"))
	if err != nil {
		return delta{}, 0, fmt.Errorf("clustertable: %w", err)
	}
	masters := map[string]bool{}
	for _, p := range strings.Fields(string(b)) {
		masters[p] = true
	}
	if len(masters) == 0 {
		return delta{}, 0, fmt.Errorf("clustertable: %s: no master listed", filepath.Join(dir, "masters"))
	}
	after, _ := filepath.Glob(filepath.Join(dir, "after", "*.info"))
	if len(after) == 0 {
		return delta{}, 0, fmt.Errorf("clustertable: no INFO snapshot in %s", filepath.Join(dir, "after"))
	}
	var sum delta
	seen := 0
	for _, a := range after {
		port := strings.TrimSuffix(filepath.Base(a), ".info")
		bi, err := readInfo(filepath.Join(dir, "before", port+".info"))
		if err != nil {
			return delta{}, 0, err
		}
		ai, err := readInfo(a)
		if err != nil {
			return delta{}, 0, err
		}
		d := diff(bi, ai)
		if !masters[port] {
			// A replica's traffic is the replication stream; only its CPU
			// is part of the crawl's cost here.
			sum.cpu += d.cpu
			continue
		}
		seen++
		sum.add(d)
	}
	if seen != len(masters) {
		return delta{}, 0, fmt.Errorf("clustertable: %d masters listed, %d with snapshots", len(masters), seen)
	}
	return sum, seen, nil
}

func readInfo(name string) (info, error) {
	f, err := os.Open(name)
	if err != nil {
		return info{}, fmt.Errorf("clustertable: %w", err)
	}
	defer f.Close()
	in, err := parseInfo(f)
	if err != nil {
		return info{}, fmt.Errorf("%w (%s)", err, name)
	}
	return in, nil
}

// readJSON decodes the last JSON object of a file (measure appends).
func readJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("not run")
	}
	if err != nil {
		return fmt.Errorf("clustertable: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	found := false
	for {
		err := dec.Decode(v)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("clustertable: %s: %w", name, err)
		}
		found = true
	}
	if !found {
		return fmt.Errorf("clustertable: %s: empty", name)
	}
	return nil
}

func writeTables(w io.Writer, runs []run, emb *run, cores int) {
	all := runs
	if emb != nil {
		all = append([]run{*emb}, runs...)
	}
	fmt.Fprintln(w, "| run | nodes | pages | requests | seconds | pages/s | x 1 node | node CPU s | CPU ms/page | x embedded | max RSS MB | exits | overlaps | gaps < delay | disallowed | before robots |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
	var base *run
	if len(runs) > 0 && runs[0].ok {
		base = &runs[0]
	}
	for _, r := range all {
		if !r.ok {
			fmt.Fprintf(w, "| %s | %s | | | | | | | | | | | | | | |\n", r.name, r.why)
			continue
		}
		scale, vsEmb := "", ""
		if r.redis != nil && base != nil {
			scale = fmt.Sprintf("%.2f", div(r.pagesPerSec(), base.pagesPerSec()))
		}
		if r.redis != nil && emb != nil && emb.ok {
			vsEmb = fmt.Sprintf("%.2f", div(r.cpuMsPerPage(), emb.cpuMsPerPage()))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.1f | %.0f | %s | %.1f | %.2f | %s | %.0f | %s | %d | %d | %d | %d |\n",
			r.name, len(r.nodes), r.r.Pages, r.r.Requests, r.wall(), r.pagesPerSec(), scale,
			r.cpu(), r.cpuMsPerPage(), vsEmb, r.maxRSS(), r.exits(),
			r.r.Overlaps, r.r.MinDelayViolations, r.r.Disallowed, r.r.BeforeRobots)
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Redis per page (commands, scripts, reads and bytes: the masters, client traffic; CPU: all servers):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| run | masters | commands/page | EVALSHA/page | round trips/page | bytes in/page | bytes out/page | KB/page | replication KB/page | Redis CPU ms/page |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range runs {
		if !r.ok || r.redis == nil {
			continue
		}
		d := r.redis
		fmt.Fprintf(w, "| %s | %d | %.1f | %.2f | %.1f | %.0f | %.0f | %.2f | %.2f | %.3f |\n",
			r.name, r.masters, r.perPage(float64(d.commands)), r.perPage(float64(d.scripts)), r.perPage(d.reads),
			r.perPage(d.netIn), r.perPage(d.netOut), r.perPage(d.netIn+d.netOut)/1024, r.perPage(d.replOut)/1024,
			1000*r.perPage(d.cpu))
	}

	writeWork(w, runs)

	if cores > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "CPU of every process per page, and the pages/s that %d cores could give at that cost if the crawl had them all:\n", cores)
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| run | nodes ms/page | Redis ms/page | testweb ms/page | total ms/page | CPU-bound ceiling pages/s | pages/s |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, r := range all {
			if !r.ok {
				continue
			}
			redisCPU, twCPU := 0.0, 0.0
			if r.redis != nil {
				redisCPU = 1000 * r.perPage(r.redis.cpu)
			}
			tw := "?"
			if r.testweb != nil {
				twCPU = 1000 * r.perPage(r.testweb.CPUSeconds)
				tw = fmt.Sprintf("%.2f", twCPU)
			}
			total := r.cpuMsPerPage() + redisCPU + twCPU
			fmt.Fprintf(w, "| %s | %.2f | %.2f | %s | %.2f | %.0f | %.0f |\n",
				r.name, r.cpuMsPerPage(), redisCPU, tw, total, div(1000*float64(cores), total), r.pagesPerSec())
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | figure | met |")
	fmt.Fprintln(w, "| --- | --- | --- |")
	if base != nil && len(runs) > 1 {
		last := runs[len(runs)-1]
		if last.ok {
			x := div(last.pagesPerSec(), base.pagesPerSec())
			fmt.Fprintf(w, "| pages/s at %d nodes >= %.1fx 1 node | %.0f / %.0f = %.2fx | %s |\n",
				len(last.nodes), targetScale, last.pagesPerSec(), base.pagesPerSec(), x, verdict(x >= targetScale))
		}
	}
	if emb != nil && emb.ok {
		for _, r := range runs {
			if !r.ok {
				continue
			}
			x := div(r.cpuMsPerPage(), emb.cpuMsPerPage())
			fmt.Fprintf(w, "| CPU per page, %s <= %.1fx embedded | %.2f / %.2f ms = %.2fx | %s |\n",
				r.name, targetCPU, r.cpuMsPerPage(), emb.cpuMsPerPage(), x, verdict(x <= targetCPU))
		}
	}
	for _, r := range all {
		if !r.ok {
			continue
		}
		p := r.r
		polite := p.Overlaps == 0 && p.MinDelayViolations == 0 && p.DelayViolations == 0 && p.Disallowed == 0 && p.BeforeRobots == 0
		fmt.Fprintf(w, "| politeness, %s: 0 overlaps, gaps < delay, Crawl-delay violations, disallowed, before robots | %d, %d, %d, %d, %d | %s |\n",
			r.name, p.Overlaps, p.MinDelayViolations, p.DelayViolations, p.Disallowed, p.BeforeRobots, verdict(polite))
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
