package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/courtesy-crawler/courtesy/internal/search"
)

// runSearch serves the search site over a data directory's index, and by
// default keeps indexing in the same process (the stores take one writer
// process at a time).
func runSearch(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "search", "--data DIR [--listen ADDR]", `
Serve the search site and its JSON API over the structured-data index of a
crawl's data directory (DIR/index, filled by 'courtesy index'). By default
it also follows the crawl's files and indexes them as they come, like
'courtesy index' (which must not run at the same time on the same DIR:
the stores admit one process); --follow=false only serves.`)
	data := fs.String("data", "", "the crawl's data `DIR` (required)")
	indexDir := fs.String("index-dir", "", "`DIR` of the stores (default DIR/index)")
	listen := fs.String("listen", "127.0.0.1:8484", "`ADDR` to serve on")
	follow := fs.Bool("follow", true, "keep indexing new files while serving")
	poll := fs.Duration("poll", 2*time.Second, "how often to look for new files when following")
	ix, _, err := openIndex(env, fs, args, "search", data, indexDir, poll)
	if err != nil {
		return err
	}
	defer ix.Close()
	srv, err := search.New(ix)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	fmt.Fprintf(env.Stdout, "search: serving http://%s/\n", ln.Addr())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("search: %w", err)
		}
		return nil
	})
	if *follow {
		g.Go(func() error { return ix.Run(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	})
	return g.Wait()
}
