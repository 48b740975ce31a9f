// Package cli implements the courtesy command line: one file per subcommand,
// a shared dispatcher with uniform exit codes (0 success, 1 runtime failure,
// 2 bad usage) and common flags (--config, --resolve, --log-format).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Env is what a subcommand may touch of the outside world, so that tests can
// run subcommands in-process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// IsTerminal reports whether Stdout is an interactive terminal (progress
	// lines are drawn only then).
	IsTerminal bool
}

// Stdio returns the process's own standard streams.
func Stdio() *Env {
	fi, err := os.Stdout.Stat()
	tty := err == nil && fi.Mode()&os.ModeCharDevice != 0
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, IsTerminal: tty}
}

// command is one subcommand. run returns nil on success, a usageError for bad
// usage (exit 2), flag.ErrHelp after printing help (exit 0), or any other
// error for a runtime failure (exit 1).
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

// commands is the table of subcommands; each lives in its own file.
var commands = map[string]command{
	"version":  {"print the version", runVersion},
	"robots":   {"check and lint robots.txt files (check, lint)", runRobots},
	"testweb":  {"serve the synthetic web; report on a crawl's politeness", runTestweb},
	"proxy":    {"run the polite forward proxy and the politeness services", runProxy},
	"serve":    {"run the shared frontier (URLFrontier gRPC) and politeness services", runServe},
	"crawl":    {"crawl politely from seed URLs, writing WARC files", runCrawl},
	"demo":     {"crawl the built-in synthetic web for about 30 seconds", runDemo},
	"rdf":      {"extract RDFa, microdata and JSON-LD as N-Quads (extract)", runRDF},
	"frontier": {"talk to a URLFrontier service: queues, stats, put, dump, ...", runFrontier},
	"index":    {"index a crawl's structured data and pages as they are written", runIndex},
	"search":   {"serve the search site and API over a crawl's index", runSearch},
	"cluster":  {"show the nodes and totals of a crawl shared through Redis Cluster", runCluster},
}

// usageError marks a bad invocation (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// Main runs the command line args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		printUsage(env.Stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		printUsage(env.Stdout)
		return 0
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "courtesy: unknown command %q\n\n", name)
		printUsage(env.Stderr)
		return 2
	}
	return exitCode(env.Stderr, name, cmd.run(ctx, env, args[1:]))
}

// exitCode maps a subcommand's error to the process exit code, printing it.
func exitCode(stderr io.Writer, name string, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "courtesy %s: %v\nRun 'courtesy %s -h' for usage.\n", name, err, name)
		return 2
	default:
		fmt.Fprintf(stderr, "courtesy %s: %v\n", name, err)
		return 1
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Courtesy %s: a polite web-crawling platform.\n\nUsage: courtesy COMMAND [flags] [args]\n\nCommands:\n", Version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'courtesy COMMAND -h' for the flags of a command.")
}

// newFlagSet returns a FlagSet that reports errors instead of exiting, with a
// usage text naming the command, its arguments and a one-line description.
func newFlagSet(env *Env, name, argsSynopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet("courtesy "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: courtesy %s [flags] %s\n\n%s\n\nFlags:\n", name, argsSynopsis, strings.TrimSpace(description))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs, turning flag errors into usage errors and
// sending -h output to stdout.
func parseFlags(env *Env, fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(env.Stdout)
			fs.Usage()
			return flag.ErrHelp
		}
		if a == "--" {
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error()}
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
