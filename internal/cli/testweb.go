package cli

import (
	"context"
	"errors"
)

// runTestweb is not built yet; its issue is open.
func runTestweb(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "testweb", "", "Not built yet.")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return errors.New("not built yet")
}
