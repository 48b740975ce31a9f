package cli

import (
	"context"
	"slices"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestRedisSeedHosts: the seed hosts one node adds are read by another
// (a node that joins a crawl without seeds must know them, or its seeds
// scope drops every link it alone finds); a read after no change reads
// nothing; crawl IDs with braces stay in one hash slot of their own.
func TestRedisSeedHosts(t *testing.T) {
	ctx := context.Background()
	rc, err := cluster.Dial(ctx, []string{redistest.StartCluster(t).Addrs[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	a := &redisSeedHosts{rc: rc, key: seedHostsKey("c}1")}
	b := &redisSeedHosts{rc: rc, key: seedHostsKey("c}1")}
	other := &redisSeedHosts{rc: rc, key: seedHostsKey("c2")}
	steps := []struct {
		name        string
		add         []string
		want        []string
		wantChanged bool
	}{
		{"empty", nil, nil, false},
		{"first seeds", []string{"a.test", "b.test", "a.test"}, []string{"a.test", "b.test"}, true},
		{"unchanged", nil, nil, false},
		{"same seeds again", []string{"b.test"}, nil, false},
		{"a new host", []string{"c.test"}, []string{"a.test", "b.test", "c.test"}, true},
	}
	for _, st := range steps {
		if err := a.Add(ctx, st.add); err != nil {
			t.Fatalf("%s: add: %v", st.name, err)
		}
		got, changed, err := b.Hosts(ctx)
		slices.Sort(got)
		if err != nil || changed != st.wantChanged || !slices.Equal(got, st.want) {
			t.Errorf("%s: Hosts = %v, %v, %v; want %v, %v", st.name, got, changed, err, st.want, st.wantChanged)
		}
	}
	if got, _, err := other.Hosts(ctx); err != nil || len(got) != 0 {
		t.Errorf("another crawl's seed hosts = %v, %v; want none", got, err)
	}
	if redistest.Slot(seedHostsKey("c}1")) == redistest.Slot(seedHostsKey("c")) {
		t.Errorf("crawl IDs c}1 and c share a hash slot: the brace was not escaped")
	}
}
