package cli

import (
	"context"
	"fmt"
	"runtime"
)

// Version is the release of this build; set with
// -ldflags "-X github.com/courtesy-crawler/courtesy/internal/cli.Version=…".
var Version = "0.1.0-dev"

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "version", "", "Print the version of courtesy and of the Go toolchain that built it.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintf(env.Stdout, "courtesy %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
