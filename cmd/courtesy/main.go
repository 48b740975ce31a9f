// Command courtesy is a polite web-crawling platform: a robots.txt toolkit,
// a polite forward proxy with politeness services, a synthetic test web and a
// complete crawler, sharing one politeness engine. Run `courtesy help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/courtesy-crawler/courtesy/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.Stdio(), os.Args[1:])
	stop()
	os.Exit(code)
}
