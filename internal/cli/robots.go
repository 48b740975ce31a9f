package cli

import (
	"context"
	"errors"
)

// runRobots is not built yet; its issue is open.
func runRobots(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "robots", "", "Not built yet.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return errors.New("not built yet")
}
