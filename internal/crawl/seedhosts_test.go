package crawl

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// memSeedHosts is an in-memory SeedHostSet standing in for the other
// processes of a shared crawl.
type memSeedHosts struct {
	hosts []string
	size  int // at the last Hosts
	reads int
	err   error
}

func (m *memSeedHosts) Add(_ context.Context, hosts []string) error {
	for _, h := range hosts {
		if !slices.Contains(m.hosts, h) {
			m.hosts = append(m.hosts, h)
		}
	}
	return nil
}

func (m *memSeedHosts) Hosts(context.Context) ([]string, bool, error) {
	m.reads++
	if m.err != nil {
		return nil, false, m.err
	}
	if len(m.hosts) == m.size {
		return nil, false, nil
	}
	m.size = len(m.hosts)
	return slices.Clone(m.hosts), true, nil
}

// TestSeedHostsShared: a crawl with Options.SeedHosts shares its seeds'
// hosts and takes the other processes' into its seeds scope, read again
// at most once a second (an injected clock), and a failed read changes
// nothing.
func TestSeedHostsShared(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	set := &memSeedHosts{}
	c, err := New(Config{Scope: Scope{Mode: ScopeSeeds}}, Options{SeedHosts: set, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	items := []frontier.Item{{Info: frontier.URLInfo{URL: "http://e.test/x"}}, {Info: frontier.URLInfo{URL: "http://e.test/y"}}, {Info: frontier.URLInfo{URL: "http://f.test/"}}}
	if err := c.shareSeedHosts(ctx, items); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(set.hosts, []string{"e.test", "f.test"}) {
		t.Errorf("shared hosts %v, want [e.test f.test]", set.hosts)
	}
	// Another process seeds g.test.
	set.Add(ctx, []string{"g.test"})
	steps := []struct {
		name      string
		advance   time.Duration
		force     bool
		wantReads int
	}{
		{"forced read", 0, true, 1},
		{"within a second: no read", 500 * time.Millisecond, false, 1},
		{"a second later", 500 * time.Millisecond, false, 2},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		c.syncSeedHosts(ctx, st.force)
		if set.reads != st.wantReads {
			t.Errorf("%s: %d reads, want %d", st.name, set.reads, st.wantReads)
		}
	}
	for host, want := range map[string]bool{"e.test": true, "g.test": true, "h.test": false} {
		if got := c.scope.inScope(mustURL(t, "http://"+host+"/p")); got != want {
			t.Errorf("inScope(%s) = %v, want %v", host, got, want)
		}
	}
	set.err = errors.New("redis down")
	set.Add(ctx, []string{"h.test"})
	c.syncSeedHosts(ctx, true)
	if c.scope.inScope(mustURL(t, "http://h.test/p")) {
		t.Error("h.test in scope after a failed read")
	}
	set.err = nil
	c.syncSeedHosts(ctx, true)
	if !c.scope.inScope(mustURL(t, "http://h.test/p")) {
		t.Error("h.test not in scope once the read works again")
	}
}
