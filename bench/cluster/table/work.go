package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// workMsg is the message of the line a crawl node logs at exit with its
// shared frontier's Redis work by operation (internal/cli, crawl
// --redis-cluster): one attribute per operation, "OP=COMMANDS/ROUNDTRIPS".
const workMsg = `msg="shared frontier Redis work (commands/round trips)"`

// work is the Redis work of one operation: the commands (scripts and
// plain commands) a node sent and their round trips, one per master.
type work struct {
	commands, roundTrips float64
}

// parseWork reads a node's log and returns its last work line's
// operations; ok is false when there is none.
func parseWork(r io.Reader) (ops map[string]work, ok bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxInfoLineSize)
	for sc.Scan() {
		_, rest, found := strings.Cut(sc.Text(), workMsg)
		if !found {
			continue
		}
		ops, ok = map[string]work{}, true
		for _, f := range strings.Fields(rest) {
			k, v, found := strings.Cut(f, "=")
			c, rt, found2 := strings.Cut(v, "/")
			if !found || !found2 || k == "" {
				continue
			}
			nc, err1 := strconv.ParseUint(c, 10, 64)
			nr, err2 := strconv.ParseUint(rt, 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			ops[strings.ReplaceAll(k, "_", " ")] = work{commands: float64(nc), roundTrips: float64(nr)}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("clustertable: reading a node's log: %w", err)
	}
	return ops, ok, nil
}

// loadWork sums the work lines of a run's nodes (DIR/NAME.node*.out); nil
// when no node logged one (a build from before the line).
func loadWork(dir, name string) (map[string]work, error) {
	files, _ := filepath.Glob(filepath.Join(dir, name+".node*.out"))
	sort.Strings(files)
	var sum map[string]work
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("clustertable: %w", err)
		}
		ops, ok, err := parseWork(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if sum == nil {
			sum = map[string]work{}
		}
		for k, w := range ops {
			s := sum[k]
			s.commands += w.commands
			s.roundTrips += w.roundTrips
			sum[k] = s
		}
	}
	return sum, nil
}

// writeWork prints the frontier's Redis work by operation, per page, one
// column per cluster run that has it, and what the rest of the Redis
// traffic was (the politeness gate and robots.txt cache, membership,
// the crawl's shared host list).
func writeWork(w io.Writer, runs []run) {
	var cols []run
	names := map[string]bool{}
	for _, r := range runs {
		if r.ok && r.work != nil {
			cols = append(cols, r)
			for k := range r.work {
				names[k] = true
			}
		}
	}
	if len(cols) == 0 {
		return
	}
	ops := make([]string, 0, len(names))
	for k := range names {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The shared frontier's Redis work by operation, per page (commands sent / round trips, one per master reached; summed over the nodes):")
	fmt.Fprintln(w)
	head, sep := "| operation |", "| --- |"
	for _, r := range cols {
		head += " " + r.name + " |"
		sep += " ---: |"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, sep)
	cell := func(r run, c, rt float64) string {
		return fmt.Sprintf(" %.2f / %.2f |", r.perPage(c), r.perPage(rt))
	}
	for _, op := range ops {
		line := "| " + op + " |"
		for _, r := range cols {
			if x, ok := r.work[op]; ok {
				line += cell(r, x.commands, x.roundTrips)
			} else {
				line += " |"
			}
		}
		fmt.Fprintln(w, line)
	}
	all, rest := "| frontier, all |", "| rest of Redis (politeness gate, robots.txt, membership): round trips |"
	for _, r := range cols {
		var c, rt float64
		for _, x := range r.work {
			c += x.commands
			rt += x.roundTrips
		}
		all += cell(r, c, rt)
		if r.redis != nil {
			rest += fmt.Sprintf(" %.2f |", r.perPage(r.redis.reads-rt))
		} else {
			rest += " |"
		}
	}
	fmt.Fprintln(w, all)
	fmt.Fprintln(w, rest)
}
