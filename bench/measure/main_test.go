package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the measured command: with
// MEASURE_HELPER set it does that job and exits.
func TestMain(m *testing.M) {
	switch os.Getenv("MEASURE_HELPER") {
	case "":
		os.Exit(m.Run())
	case "alloc":
		// Touch 96 MiB so that the peak RSS must exceed it.
		b := make([]byte, 96<<20)
		for i := range b {
			b[i] = byte(i)
		}
		os.Stdout.WriteString("allocated\n")
		runtime.KeepAlive(b)
		os.Exit(0)
	case "spin":
		x := uint64(1)
		for i := 0; i < 300_000_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if x == 42 {
			os.Stdout.WriteString("unlikely\n")
		}
		os.Exit(0)
	case "exit3":
		os.Exit(3)
	}
	os.Exit(99)
}

func TestMeasure(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		helper   string
		wantCode int
		check    func(t *testing.T, r Result, stdout string)
	}{
		{"exit code passes through", "exit3", 3, nil},
		{"rss of a 96 MiB allocation", "alloc", 0, func(t *testing.T, r Result, stdout string) {
			if r.MaxRSSMB < 96 {
				t.Errorf("max_rss_mb = %.1f, want >= 96", r.MaxRSSMB)
			}
			if stdout != "allocated\n" {
				t.Errorf("command stdout = %q, want it passed through", stdout)
			}
		}},
		{"cpu of a busy loop", "spin", 0, func(t *testing.T, r Result, _ string) {
			if r.CPUSeconds <= 0 || r.CPUSeconds != r.UserSeconds+r.SysSeconds {
				t.Errorf("cpu_seconds = %v (user %v + sys %v), want > 0 and the sum", r.CPUSeconds, r.UserSeconds, r.SysSeconds)
			}
			if r.WallSeconds <= 0 {
				t.Errorf("wall_seconds = %v, want > 0", r.WallSeconds)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MEASURE_HELPER", tc.helper)
			out := filepath.Join(t.TempDir(), "m.jsonl")
			var stdout, stderr bytes.Buffer
			code := mainErr([]string{"-o", out, "-label", tc.name, "--", self}, strings.NewReader(""), &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var r Result
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("output %q: %v", b, err)
			}
			if r.Label != tc.name || r.ExitCode != tc.wantCode || len(r.Command) != 1 {
				t.Errorf("result %+v: want label %q, exit_code %d, the command", r, tc.name, tc.wantCode)
			}
			if tc.check != nil {
				tc.check(t, r, stdout.String())
			}
		})
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, 2},
		{"unknown flag", []string{"-nope", "--", "true"}, 2},
		{"command not found", []string{"--", "/nonexistent/measure-test-command"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := mainErr(tc.args, strings.NewReader(""), &stdout, &stderr); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
			if stderr.Len() == 0 {
				t.Error("no message on stderr")
			}
		})
	}
}
