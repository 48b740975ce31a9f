package politeness

import (
	"context"
	"fmt"

	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// Rules is an origin's robots.txt as the gate reads it: the one parse that
// every caller shares, so that nothing parses a robots.txt twice or with
// other options than the gate's.
type Rules struct {
	// Origin is "scheme://host[:port]" (see Origin).
	Origin string
	// Entry is the stored result of the last robots.txt fetch: Result,
	// Status, Fetched and Expires say what the origin answered and until
	// when it holds. Its Body is shared: do not modify it.
	Entry RobotsEntry
	// File is the robots.txt in force, parsed with the gate's options
	// (Sitemap lines resolved against the file's URL, Ip-allow and
	// Ip-disallow matched against Config.ParseOptions.EgressIPs): the
	// fetched file, the last good copy while a failure is within
	// RobotsConfig.StaleMax, robots.AllowAll for a missing file, or
	// robots.DisallowAll while the origin is blocked.
	File *robots.File
	// Group is File's group for Config.Agent.
	Group *robots.Group
	// Blocked is true when every URL of the origin is refused
	// (ReasonRobotsUnavailable).
	Blocked bool
}

// Rules returns the latest stored robots.txt rules of origin
// ("scheme://host[:port]", see Origin), fresh or expired, without fetching
// anything (one read of the RobotsStore, so that a fetch by another
// process sharing the store is seen at once); ok is false when the gate
// has none. A Permit for a URL of the origin guarantees that
// the rules it was granted under are cached.
func (g *Gate) Rules(ctx context.Context, origin string) (r Rules, ok bool, err error) {
	if origin == "" {
		return Rules{}, false, fmt.Errorf("politeness: rules: empty origin")
	}
	v, err := g.readView(ctx, origin, g.now(), true)
	if err != nil {
		return Rules{}, false, err
	}
	if v == nil {
		return Rules{}, false, nil
	}
	return Rules{Origin: origin, Entry: v.entry, File: v.file, Group: v.group, Blocked: v.blocked}, true, nil
}
