package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// measure appends, so only the last object counts.
	write("colly.measure.json", `{"exit_code":9}`+"\n"+`{"exit_code":0,"wall_seconds":100,"cpu_seconds":80,"max_rss_mb":2000}`+"\n")
	write("colly.report.json", `{"requests":41000,"pages":40000,"min_delay_violations":2000}`)
	write("courtesy.measure.json", `{"exit_code":0,"wall_seconds":50,"cpu_seconds":10,"max_rss_mb":300}`)
	write("courtesy.report.json", `{"requests":102000,"pages":100000,"end":"2026-11-25T06:00:00Z","coverage":{"reachable":100000,"fetched":99000}}`)
	write("courtesy.exit", "2026-11-25T06:00:01.25Z\n")
	write("broken.measure.json", `{"exit_code":`)
	write("broken.report.json", `{}`)

	tests := []struct {
		name  string
		names []string
		want  []string
		not   []string
	}{
		{"both", []string{"colly", "courtesy"}, []string{
			"| colly | 40000 | 41000 | 100.0 | 400 | 80.0 | 2.00 | 2000 | 0 | 0 | 2000 | 0 | 0 |",
			"| courtesy | 100000 | 102000 | 50.0 | 2000 | 10.0 | 0.10 | 300 | 0 |",
			"| 99000 of 100000 (99.0 %) | 0.20 | 1.25 |",
			"| 2000 | 0 | 0 | 2000 | 0 | 0 |  | 0.80 |  |", // colly: no exit file, no end
			"courtesy / colly: pages/s x5.00 (target >= 3: met), CPU per page x0.05 (target <= 0.33: met), max RSS x0.15 (300 MB, target < 500 MB: met)",
		}, nil},
		{"two baselines", []string{"colly", "broken", "courtesy"}, []string{
			"courtesy / colly: pages/s x5.00",
		}, []string{"courtesy / broken"}},
		{"courtesy not run", []string{"colly", "absent"}, []string{"| absent | not run |"}, []string{"absent / colly"}},
		{"broken json", []string{"broken"}, []string{"| broken | crawltable:"}, nil},
		{"slower crawler", []string{"courtesy", "colly"}, []string{"(target >= 3: NOT met)", "target < 500 MB: NOT met"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rows []row
			for _, n := range tc.names {
				rows = append(rows, load(dir, n))
			}
			var out bytes.Buffer
			writeTable(&out, rows)
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
