// Command profile runs a courtesy subcommand in-process with the Go CPU
// profiler (and optionally a heap profile at the end), to see where the
// benchmarks' CPU goes (docs/performance.md):
//
//	go build -o /tmp/courtesy-profile ./bench/profile
//	/tmp/courtesy-profile -cpuprofile cpu.out -- crawl --seeds ... --resolve ...
//	go tool pprof -top /tmp/courtesy-profile cpu.out
//
// The arguments after -- are those of the courtesy command; the exit code
// is the command's.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	cpu := fs.String("cpuprofile", "", "write a CPU profile to `FILE`")
	heap := fs.String("memprofile", "", "write a heap profile to `FILE` when the command ends")
	heapAfter := fs.Duration("memprofile-after", 0, "write the heap profile this long after the start instead (the live heap mid-run)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: profile [-cpuprofile FILE] [-memprofile FILE] -- COURTESY_ARGS...")
		return 2
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *heap != "" && *heapAfter > 0 {
		t := time.AfterFunc(*heapAfter, func() { writeHeap(*heap) })
		defer t.Stop()
	}
	code := cli.Main(ctx, cli.Stdio(), fs.Args())
	if *heap != "" && *heapAfter == 0 {
		writeHeap(*heap)
	}
	return code
}

// writeHeap writes a heap profile of the live heap (after a GC) to name.
func writeHeap(name string) {
	runtime.GC()
	f, err := os.Create(name)
	if err == nil {
		err = pprof.WriteHeapProfile(f)
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
	}
}
