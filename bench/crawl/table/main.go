// Command crawltable prints the crawl benchmark's table (bench/crawl/run.sh,
// docs/performance.md): for each crawler, the pages it fetched as the
// synthetic web counted them (`courtesy testweb report --json`), the cost
// of the crawler process (bench/measure's JSON), the politeness the report
// found and, when the report was made with --coverage, how many of the
// pages reachable by links the crawler fetched, the CPU it used in cores
// (CPU seconds / wall seconds) and the time from the web's last request to
// the crawler's exit (DIR/NAME.exit, written by run.sh); then the ratios of the last crawler to the first against
// the crawl targets (at least 3x the pages/s, at most 1/3 of the CPU per
// page, RSS under 500 MB).
//
//	crawltable -dir DIR NAME...
//
// For each NAME it reads DIR/NAME.measure.json and DIR/NAME.report.json.
// A crawler whose files are missing is listed as not run.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
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
	HostsRequested     int `json:"hosts_requested"`
	Overlaps           int `json:"overlaps"`
	DelayViolations    int `json:"delay_violations"`
	MinDelayViolations int `json:"min_delay_violations"`
	Disallowed         int `json:"disallowed"`
	BeforeRobots       int `json:"before_robots"`
	// End is when the last request to the web ended.
	End time.Time `json:"end"`
	// Coverage is there when the report was made with --coverage.
	Coverage *struct {
		Reachable int `json:"reachable"`
		Fetched   int `json:"fetched"`
	} `json:"coverage"`
}

// coverage is the "reachable pages fetched" cell.
func (r reported) coverage() string {
	if r.Coverage == nil || r.Coverage.Reachable == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d (%.1f %%)", r.Coverage.Fetched, r.Coverage.Reachable, 100*float64(r.Coverage.Fetched)/float64(r.Coverage.Reachable))
}

// row is one crawler's line.
type row struct {
	name string
	ok   bool
	why  string // when !ok
	m    measured
	r    reported
	exit time.Time // when the crawler process had exited (NAME.exit; zero if absent)
}

// cores is the CPU the crawler used in cores: CPU seconds per wall second.
func (r row) cores() float64 { return div(r.m.CPUSeconds, r.m.WallSeconds) }

// tail is the last-request-to-exit cell: how long the crawler ran after the
// web's last request ended (for a finished crawl, its idle tail; for one
// stopped at the time cap, its shutdown).
func (r row) tail() string {
	if r.exit.IsZero() || r.r.End.IsZero() {
		return ""
	}
	return fmt.Sprintf("%.2f", r.exit.Sub(r.r.End).Seconds())
}

func (r row) pagesPerSec() float64 { return div(float64(r.r.Pages), r.m.WallSeconds) }
func (r row) cpuMsPerPage() float64 {
	return div(1000*r.m.CPUSeconds, float64(r.r.Pages))
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func main() {
	fs := flag.NewFlagSet("crawltable", flag.ContinueOnError)
	dir := fs.String("dir", ".", "`DIR` holding NAME.measure.json and NAME.report.json")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: crawltable -dir DIR NAME...")
		os.Exit(2)
	}
	var rows []row
	for _, name := range fs.Args() {
		rows = append(rows, load(*dir, name))
	}
	writeTable(os.Stdout, rows)
}

func load(dir, name string) row {
	r := row{name: name}
	if err := readJSON(filepath.Join(dir, name+".measure.json"), &r.m); err != nil {
		r.why = err.Error()
		return r
	}
	if err := readJSON(filepath.Join(dir, name+".report.json"), &r.r); err != nil {
		r.why = err.Error()
		return r
	}
	if b, err := os.ReadFile(filepath.Join(dir, name+".exit")); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil {
			r.exit = t
		}
	}
	r.ok = true
	return r
}

// readJSON decodes the last JSON object of a file (measure appends).
func readJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("not run")
	}
	if err != nil {
		return fmt.Errorf("crawltable: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	found := false
	for {
		err := dec.Decode(v)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("crawltable: %s: %w", name, err)
		}
		found = true
	}
	if !found {
		return fmt.Errorf("crawltable: %s: empty", name)
	}
	return nil
}

func writeTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| crawler | pages | requests | seconds | pages/s | CPU s | CPU ms/page | max RSS MB | exit | overlaps | gaps < delay | disallowed | before robots | reachable pages fetched | CPU cores | last request to exit s |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		if !r.ok {
			fmt.Fprintf(w, "| %s | %s | | | | | | | | | | | | | | |\n", r.name, r.why)
			continue
		}
		exit := fmt.Sprint(r.m.ExitCode)
		if r.m.TimedOut {
			exit += " (killed at timeout)"
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.0f | %.1f | %.2f | %.0f | %s | %d | %d | %d | %d | %s | %.2f | %s |\n",
			r.name, r.r.Pages, r.r.Requests, r.m.WallSeconds, r.pagesPerSec(),
			r.m.CPUSeconds, r.cpuMsPerPage(), r.m.MaxRSSMB, exit,
			r.r.Overlaps, r.r.MinDelayViolations, r.r.Disallowed, r.r.BeforeRobots, r.r.coverage(),
			r.cores(), r.tail())
	}
	if len(rows) < 2 || !rows[len(rows)-1].ok {
		return
	}
	last := rows[len(rows)-1]
	fmt.Fprintln(w)
	for _, base := range rows[:len(rows)-1] {
		if !base.ok {
			continue
		}
		speed := div(last.pagesPerSec(), base.pagesPerSec())
		cpu := div(last.cpuMsPerPage(), base.cpuMsPerPage())
		rss := div(last.m.MaxRSSMB, base.m.MaxRSSMB)
		fmt.Fprintf(w, "%s / %s: pages/s x%.2f (target >= 3: %s), CPU per page x%.2f (target <= 0.33: %s), max RSS x%.2f (%.0f MB, target < 500 MB: %s)\n",
			last.name, base.name, speed, verdict(speed >= 3), cpu, verdict(cpu <= 1.0/3), rss, last.m.MaxRSSMB, verdict(last.m.MaxRSSMB < 500))
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
