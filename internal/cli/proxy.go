package cli

import (
	"context"
	"errors"
)

// runProxy is not built yet; its issue is open.
func runProxy(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "proxy", "", "Not built yet.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return errors.New("not built yet")
}
