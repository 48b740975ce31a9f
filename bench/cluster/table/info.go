package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// info is one Redis server's INFO output, as numbers: the plain fields
// ("total_net_input_bytes" → 123) and the calls of each command of the
// commandstats section ("evalsha" → 456).
type info struct {
	fields map[string]float64
	calls  map[string]int64
}

// Limits on an INFO text, so a wrong file cannot exhaust memory.
const (
	maxInfoLines    = 100_000
	maxInfoLineSize = 64 << 10
)

// parseInfo reads the text of INFO (any sections). Lines are "# Section",
// "key:value" or blank; values that are not numbers are skipped, and so are
// lines without a colon (Redis prints none, but a wrong file should not
// stop the table). cmdstat_NAME lines give NAME's calls=N.
func parseInfo(r io.Reader) (info, error) {
	in := info{fields: map[string]float64{}, calls: map[string]int64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxInfoLineSize)
	n := 0
	for sc.Scan() {
		n++
		if n > maxInfoLines {
			return info{}, fmt.Errorf("clustertable: INFO text over %d lines", maxInfoLines)
		}
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || key == "" {
			continue
		}
		if name, ok := strings.CutPrefix(key, "cmdstat_"); ok {
			for kv := range strings.SplitSeq(val, ",") {
				if c, ok := strings.CutPrefix(kv, "calls="); ok {
					if v, err := strconv.ParseInt(c, 10, 64); err == nil && v >= 0 {
						in.calls[name] = v
					}
				}
			}
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			in.fields[key] = v
		}
	}
	if err := sc.Err(); err != nil {
		return info{}, fmt.Errorf("clustertable: reading INFO: %w", err)
	}
	return in, nil
}

// snapshotCommands are the commands the benchmark itself sends to take its
// snapshots and reset the counters; they are not the crawl's traffic.
var snapshotCommands = map[string]bool{"info": true, "config|resetstat": true, "flushall": true, "role": true, "ping": true}

// commands is the number of commands the server ran, those of scripts
// included (Redis counts a script's redis.call()s in commandstats), less
// the benchmark's own.
func (in info) commands() int64 {
	var n int64
	for name, c := range in.calls {
		if !snapshotCommands[name] {
			n += c
		}
	}
	return n
}

// scripts is the number of script calls (EVALSHA, EVAL, FCALL and their
// read-only forms).
func (in info) scripts() int64 {
	var n int64
	for _, name := range []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"} {
		n += in.calls[name]
	}
	return n
}

// delta is after - before for the figures the table uses.
type delta struct {
	commands, scripts int64
	// reads is total_reads_processed: read events on client connections.
	// A pipeline sent at once arrives in one read, so this counts round
	// trips (a command larger than a socket buffer takes more than one).
	reads float64
	// netIn and netOut are the bytes to and from clients (replication is
	// counted apart, in Redis 7's total_net_repl_* fields).
	netIn, netOut float64
	// replOut is the bytes a master sent its replicas.
	replOut float64
	// cpu is used_cpu_user + used_cpu_sys of the server process, seconds.
	cpu float64
}

func diff(before, after info) delta {
	f := func(k string) float64 { return after.fields[k] - before.fields[k] }
	return delta{
		commands: after.commands() - before.commands(),
		scripts:  after.scripts() - before.scripts(),
		reads:    f("total_reads_processed"),
		netIn:    f("total_net_input_bytes"),
		netOut:   f("total_net_output_bytes"),
		replOut:  f("total_net_repl_output_bytes"),
		cpu:      f("used_cpu_user") + f("used_cpu_sys"),
	}
}

func (d *delta) add(o delta) {
	d.commands += o.commands
	d.scripts += o.scripts
	d.reads += o.reads
	d.netIn += o.netIn
	d.netOut += o.netOut
	d.replOut += o.replOut
	d.cpu += o.cpu
}
