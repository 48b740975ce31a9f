package cli

import (
	"context"
	"errors"
)

// runServe is not built yet; its issue is open.
func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "", "Not built yet.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return errors.New("not built yet")
}
