package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const infoBefore = `# Stats
total_net_input_bytes:1000
total_net_output_bytes:2000
total_net_repl_output_bytes:0
total_reads_processed:10
role:master

# CPU
used_cpu_sys:1.5
used_cpu_user:2.5

# Commandstats
cmdstat_evalsha:calls=5,usec=10,usec_per_call=2.00,rejected_calls=0,failed_calls=0
cmdstat_hset:calls=20,usec=10,usec_per_call=0.50,rejected_calls=0,failed_calls=0
cmdstat_info:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0
`

// infoAfter is infoBefore plus 100 pages' traffic: 2,000 commands (50
// EVALSHA, 1,950 inside and outside scripts), 300 reads, 101,000 bytes in,
// 202,000 out, 50,000 to replicas, 1 s of CPU.
const infoAfter = "# Stats\r\n" +
	"total_net_input_bytes:102000\r\n" +
	"total_net_output_bytes:204000\r\n" +
	"total_net_repl_output_bytes:50000\r\n" +
	"total_reads_processed:310\r\n" +
	"# CPU\r\n" +
	"used_cpu_sys:2.0\r\n" +
	"used_cpu_user:3.0\r\n" +
	"# Commandstats\r\n" +
	"cmdstat_evalsha:calls=55,usec=10\r\n" +
	"cmdstat_hset:calls=1970,usec=10\r\n" +
	"cmdstat_info:calls=9,usec=30\r\n" +
	"cmdstat_config|resetstat:calls=1,usec=30\r\n"

func TestParseInfo(t *testing.T) {
	tests := []struct {
		name          string
		text          string
		commands      int64
		scripts       int64
		field         string
		value         float64
		wantErr       bool
		wantFieldMiss bool
	}{
		{name: "before", text: infoBefore, commands: 25, scripts: 5, field: "used_cpu_user", value: 2.5},
		{name: "crlf", text: infoAfter, commands: 2025, scripts: 55, field: "total_reads_processed", value: 310},
		{name: "empty", text: "", field: "x", wantFieldMiss: true},
		{name: "junk lines", text: "no colon here\n:\ncmdstat_get:calls=x\ncmdstat_set:calls=-4\nkey:not a number\n", field: "key", wantFieldMiss: true},
		{name: "too long a line", text: strings.Repeat("a", maxInfoLineSize+1), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := parseInfo(strings.NewReader(tc.text))
			if tc.wantErr {
				if err == nil {
					t.Fatal("parseInfo succeeded; want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := in.commands(); got != tc.commands {
				t.Errorf("commands() = %d, want %d", got, tc.commands)
			}
			if got := in.scripts(); got != tc.scripts {
				t.Errorf("scripts() = %d, want %d", got, tc.scripts)
			}
			v, ok := in.fields[tc.field]
			if ok == tc.wantFieldMiss || v != tc.value {
				t.Errorf("field %s = %v, %v; want %v (missing: %v)", tc.field, v, ok, tc.value, tc.wantFieldMiss)
			}
		})
	}
}

func FuzzParseInfo(f *testing.F) {
	f.Add(infoBefore)
	f.Add(infoAfter)
	f.Add("cmdstat_evalsha:calls=1,calls=2\n")
	f.Add("# x\n\n:\n")
	f.Fuzz(func(t *testing.T, s string) {
		in, err := parseInfo(strings.NewReader(s))
		if err != nil {
			return
		}
		if in.commands() < 0 || in.scripts() < 0 {
			t.Fatalf("negative counts from %q", s)
		}
	})
}

func FuzzParseWork(f *testing.F) {
	f.Add("time=t level=INFO " + workMsg + " peek=1/1 lease_index=2/1\n")
	f.Add(workMsg + " =/ a=1/ b=/2 c=1/2/3 d=18446744073709551616/1\n")
	f.Add("no line\n")
	f.Fuzz(func(t *testing.T, s string) {
		ops, ok, err := parseWork(strings.NewReader(s))
		if err != nil {
			return
		}
		if ok != (ops != nil) {
			t.Fatalf("ok %v with ops %v", ok, ops)
		}
		for k, w := range ops {
			if k == "" || w.commands < 0 || w.roundTrips < 0 {
				t.Fatalf("op %q %+v from %q", k, w, s)
			}
		}
	})
}

// writeRun writes the files of one run into dir.
func writeRun(t *testing.T, dir, name string, nodes []string, report string, redis bool) {
	t.Helper()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range nodes {
		write(name+".node"+string(rune('1'+i))+".measure.json", n)
	}
	write(name+".report.json", report)
	write(name+".testweb.measure.json", `{"cpu_seconds":0.1}`)
	if redis {
		write(name+".redis/masters", "7000\n")
		write(name+".redis/before/7000.info", infoBefore)
		write(name+".redis/after/7000.info", infoAfter)
		// A replica: only its CPU (1 s) counts.
		write(name+".redis/before/7001.info", "used_cpu_user:1\ntotal_reads_processed:5\n")
		write(name+".redis/after/7001.info", "used_cpu_user:2\ntotal_reads_processed:999\n")
	}
}

func TestTables(t *testing.T) {
	dir := t.TempDir()
	// 100 pages in 10 s with 1 s of CPU: 10 pages/s, 10 ms/page.
	writeRun(t, dir, "embedded", []string{`{"wall_seconds":10,"cpu_seconds":1}`}, `{"pages":100,"requests":110}`, false)
	writeRun(t, dir, "cluster-1", []string{`{"wall_seconds":10,"cpu_seconds":1.2}`}, `{"pages":100,"requests":110}`, true)
	// Three nodes: 300 pages in 12 s (the longest node), 4.5 s of CPU.
	writeRun(t, dir, "cluster-3", []string{`{"wall_seconds":10,"cpu_seconds":1.5}`, `{"wall_seconds":12,"cpu_seconds":1.5}`, `{"wall_seconds":11,"cpu_seconds":1.5}`},
		`{"pages":300,"requests":330,"overlaps":1}`, true)
	writeRun(t, dir, "cluster-2", []string{`{"wall_seconds":`}, `{}`, true)
	// The nodes' logs: cluster-1's node gives its frontier work at exit,
	// cluster-3's first two nodes too (summed), the third (an older build)
	// does not.
	for name, body := range map[string]string{
		"cluster-1.node1.out": "time=t level=INFO msg=progress pages=1\n" +
			"time=t level=INFO " + workMsg + " lease=100/100 lease_index=100/100 peek=160/30\n",
		"cluster-3.node1.out": "time=t level=INFO " + workMsg + " peek=100/10 put=3/x\n",
		"cluster-3.node2.out": "time=t level=INFO " + workMsg + " peek=50/5 put=150/15\n",
		"cluster-3.node3.out": "nothing\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name  string
		runs  []string
		cores int
		want  []string
		not   []string
	}{
		{name: "full", runs: []string{"cluster-1", "cluster-3"}, cores: 2, want: []string{
			"| embedded | 1 | 100 | 110 | 10.0 | 10 |  | 1.0 | 10.00 |  |",
			"| cluster-1 | 1 | 100 | 110 | 10.0 | 10 | 1.00 | 1.2 | 12.00 | 1.20 |",
			"| cluster-3 | 3 | 300 | 330 | 12.0 | 25 | 2.50 | 4.5 | 15.00 | 1.50 |",
			// per page: 2,000 commands, 50 scripts, 300 reads (the replica's
			// left out), 101,000 + 202,000 bytes, 50,000 replication bytes,
			// 2 s of CPU (master and replica) over 100 pages.
			"| cluster-1 | 1 | 20.0 | 0.50 | 3.0 | 1010 | 2020 | 2.96 | 0.49 | 20.000 |",
			// nodes 12 + Redis 20 + testweb 1 ms a page; 2 cores / 33 ms.
			"| cluster-1 | 12.00 | 20.00 | 1.00 | 33.00 | 61 | 10 |",
			// The frontier's work per page: cluster-1 100 pages, cluster-3
			// 300 (its bad "put=3/x" left out).
			"| operation | cluster-1 | cluster-3 |",
			"| lease index | 1.00 / 1.00 | |",
			"| peek | 1.60 / 0.30 | 0.50 / 0.05 |",
			"| put | | 0.50 / 0.05 |",
			"| frontier, all | 3.60 / 2.30 | 1.00 / 0.10 |",
			// 300 reads over 100 pages less the frontier's 230; 300 over
			// 300 less 30.
			"| rest of Redis (politeness gate, robots.txt, membership): round trips | 0.70 | 0.90 |",
			"| pages/s at 3 nodes >= 2.5x 1 node | 25 / 10 = 2.50x | met |",
			"| CPU per page, cluster-1 <= 1.5x embedded | 12.00 / 10.00 ms = 1.20x | met |",
			"| CPU per page, cluster-3 <= 1.5x embedded | 15.00 / 10.00 ms = 1.50x | met |",
			"| politeness, cluster-3: 0 overlaps, gaps < delay, Crawl-delay violations, disallowed, before robots | 1, 0, 0, 0, 0 | NOT met |",
			"| politeness, cluster-1: 0 overlaps, gaps < delay, Crawl-delay violations, disallowed, before robots | 0, 0, 0, 0, 0 | met |",
		}},
		{name: "no scaling", runs: []string{"cluster-3", "cluster-1"}, want: []string{"| pages/s at 1 nodes >= 2.5x 1 node | 10 / 25 = 0.40x | NOT met |"},
			not: []string{"CPU-bound ceiling"}},
		{name: "no work lines", runs: []string{"cluster-2"}, not: []string{"by operation"}},
		{name: "broken run", runs: []string{"cluster-1", "cluster-2", "absent"}, want: []string{"| cluster-2 | clustertable:", "| absent | not run |"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var runs []run
			for _, n := range tc.runs {
				runs = append(runs, load(dir, n, true))
			}
			emb := load(dir, "embedded", false)
			var out bytes.Buffer
			writeTables(&out, runs, &emb, tc.cores)
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}
