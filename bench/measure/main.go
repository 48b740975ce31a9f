// Command measure runs a command and reports what it cost: wall-clock
// seconds, user and system CPU seconds and the maximum resident set size,
// as one JSON object. The benchmarks in bench/ use it to compare Courtesy
// with a peer in one run (docs/performance.md).
//
//	measure [-o FILE] [-label NAME] [-timeout D] -- COMMAND [ARG...]
//
// The command's standard streams are the measure's own. The JSON line goes
// to FILE (appended) or, without -o, to standard error after the command has
// ended. The CPU and RSS figures are those the kernel reports for the child
// when it is reaped (wait4's rusage, os.ProcessState.SysUsage): they cover
// the command's own process and any children it waited for, not grandchildren
// left running. On Linux ru_maxrss is in KiB.
//
// measure exits with the command's exit code (1 if it could not be started,
// 2 on bad usage). SIGINT and SIGTERM are passed on to the command.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Result is the JSON object measure writes.
type Result struct {
	Label       string   `json:"label,omitempty"`
	Command     []string `json:"command"`
	ExitCode    int      `json:"exit_code"`
	WallSeconds float64  `json:"wall_seconds"`
	UserSeconds float64  `json:"user_seconds"`
	SysSeconds  float64  `json:"sys_seconds"`
	// CPUSeconds is UserSeconds + SysSeconds.
	CPUSeconds float64 `json:"cpu_seconds"`
	// MaxRSSMB is the peak resident set size in MiB (ru_maxrss / 1024).
	MaxRSSMB float64 `json:"max_rss_mb"`
	// TimedOut is true when -timeout killed the command.
	TimedOut bool `json:"timed_out,omitempty"`
}

func main() {
	os.Exit(mainErr(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func mainErr(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "append the JSON line to `FILE` instead of writing it to standard error")
	label := fs.String("label", "", "a `NAME` copied into the JSON")
	timeout := fs.Duration("timeout", 0, "kill the command after `DURATION` (0: never)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: measure [-o FILE] [-label NAME] [-timeout D] -- COMMAND [ARG...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, fs.Args(), *timeout, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	res.Label = *label
	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(stderr, "measure:", err)
		return 1
	}
	line = append(line, '\n')
	if *out == "" {
		_, _ = stderr.Write(line)
	} else if err := appendFile(*out, line); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return res.ExitCode
}

// run starts argv, waits for it and returns its cost. A cancelled ctx
// sends SIGTERM to the command (SIGKILL 10 s later); timeout, when not
// zero, kills it.
func run(ctx context.Context, argv []string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (Result, error) {
	res := Result{Command: argv}
	var timedOut <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timedOut = t.C
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("measure: start %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	var killAt <-chan time.Time
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			killAt = time.After(10 * time.Second)
			ctx = context.Background() // signal once
		case <-timedOut:
			res.TimedOut = true
			_ = cmd.Process.Kill()
		case <-killAt:
			_ = cmd.Process.Kill()
		}
	}
	res.WallSeconds = time.Since(start).Seconds()
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("measure: wait %s: %w", argv[0], waitErr)
	}
	st := cmd.ProcessState
	res.ExitCode = st.ExitCode()
	if res.ExitCode < 0 { // killed by a signal
		res.ExitCode = 128
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode += int(ws.Signal())
		}
	}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		res.UserSeconds = tv(ru.Utime)
		res.SysSeconds = tv(ru.Stime)
		res.CPUSeconds = res.UserSeconds + res.SysSeconds
		res.MaxRSSMB = float64(ru.Maxrss) / 1024
	}
	return res, nil
}

func tv(t syscall.Timeval) float64 {
	return float64(t.Sec) + float64(t.Usec)/1e6
}

func appendFile(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("measure: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	return nil
}
