package cli

import (
	"context"
	"errors"
)

// runDemo is not built yet; its issue is open.
func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "demo", "", "Not built yet.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return errors.New("not built yet")
}
