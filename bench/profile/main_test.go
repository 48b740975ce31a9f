package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.out"), filepath.Join(dir, "heap.out")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		files    []string
	}{
		{"profiles a subcommand", []string{"-cpuprofile", cpu, "-memprofile", heap, "--", "version"}, 0, []string{cpu, heap}},
		{"passes the exit code", []string{"--", "no-such-subcommand"}, 2, nil},
		{"no command", nil, 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(tc.args); got != tc.wantCode {
				t.Fatalf("exit code %d, want %d", got, tc.wantCode)
			}
			for _, f := range tc.files {
				st, err := os.Stat(f)
				if err != nil {
					t.Errorf("profile %s: %v", f, err)
				} else if st.Size() == 0 {
					t.Errorf("profile %s is empty", f)
				}
			}
		})
	}
}
