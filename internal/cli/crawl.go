package cli

import (
	"context"
	"errors"
)

// runCrawl is not built yet; its issue is open.
func runCrawl(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "crawl", "", "Not built yet.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return errors.New("not built yet")
}
