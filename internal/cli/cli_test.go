package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// run runs the command line in-process and returns exit code and output.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code := Main(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
	}{
		{"no args is bad usage", nil, 2, ""},
		{"help", []string{"help"}, 0, "Commands:"},
		{"unknown command", []string{"frobnicate"}, 2, ""},
		{"version", []string{"version"}, 0, "courtesy "},
		{"version -h", []string{"version", "-h"}, 0, "Usage: courtesy version"},
		{"bad flag", []string{"version", "--nope"}, 2, ""},
		{"extra args", []string{"version", "x"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if !strings.Contains(out, tc.inStdout) {
				t.Errorf("stdout %q lacks %q", out, tc.inStdout)
			}
		})
	}
}

// Every subcommand answers -h with exit 0 and a usage text.
func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			code, out, _ := run(t, "", name, "-h")
			if code != 0 || !strings.Contains(out, "Usage: courtesy "+name) {
				t.Errorf("courtesy %s -h: exit %d, stdout %q", name, code, out)
			}
		})
	}
}
