package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/index"
)

// runIndex follows a crawl's data directory and fills the structured-data
// index (triple store and full-text index) under DATA/index.
func runIndex(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "index", "--data DIR", `
Index the structured data and pages of a crawl: read DIR/rdf/*.nq.gz and
DIR/warc/*.warc.gz as the crawl writes them, fill the triple store and the
full-text index in DIR/index (or --index-dir), and keep following until
interrupted (or, with --once, until caught up). It can run on another
machine that reads the same files; a restart goes on where it stopped.
'courtesy search' serves what it indexed.`)
	data := fs.String("data", "", "the crawl's data `DIR` (required)")
	indexDir := fs.String("index-dir", "", "`DIR` of the stores (default DIR/index)")
	once := fs.Bool("once", false, "index what is there, then exit")
	poll := fs.Duration("poll", 2*time.Second, "how often to look for new files")
	ix, log, err := openIndex(env, fs, args, "index", data, indexDir, poll)
	if err != nil {
		return err
	}
	start := time.Now()
	if *once {
		err = ix.CatchUp(ctx)
	} else {
		log.Info("index: following", "data", *data)
		err = ix.Run(ctx)
	}
	st := ix.Stats()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(env.Stdout, "index: %d files, %d quads (%d new), %d pages, %d bad lines, %.1f MB in %.1fs (%.1f MB/s, %.0f quads/s)\n",
		st.Files, st.Quads, st.NewQuads, st.Pages, st.BadLines, float64(st.Bytes)/1e6, secs,
		float64(st.Bytes)/1e6/secs, float64(st.Quads)/secs)
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return err
}

// openIndex parses the flags of index and search (with the log flags of
// commonFlags, and --config for the section of the file named for the
// command), checks them and opens the crawl's index.
func openIndex(env *Env, fs *flag.FlagSet, args []string, section string, data, indexDir *string, poll *time.Duration) (*index.Indexer, *slog.Logger, error) {
	var common commonFlags
	fs.StringVar(&common.logFormat, "log-format", "text", "log line `format`: text (logfmt) or json")
	fs.StringVar(&common.logLevel, "log-level", "info", "minimum log `level`: debug, info, warn, error")
	if err := parseFlagsConfig(env, fs, args, section); err != nil {
		return nil, nil, err
	}
	if err := noArgs(fs); err != nil {
		return nil, nil, err
	}
	if *data == "" {
		return nil, nil, usagef("--data is required")
	}
	if *poll <= 0 {
		return nil, nil, usagef("--poll must be positive")
	}
	log, err := common.logger(env.Stderr)
	if err != nil {
		return nil, nil, err
	}
	ix, err := index.Open(index.Options{DataDir: *data, IndexDir: *indexDir, Poll: *poll,
		Logf: func(f string, a ...any) { log.Warn(fmt.Sprintf(f, a...)) }})
	if err != nil {
		return nil, nil, err
	}
	return ix, log, nil
}
