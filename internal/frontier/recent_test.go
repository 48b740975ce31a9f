package frontier

import (
	"context"
	"fmt"
	"testing"
)

// The committer's memory of recent inserts is bounded by recentMax; a
// caller whose seen-test predates the oldest group still remembered is
// checked on disk, so a URL inserted in a forgotten group is not stored
// twice.
func TestRecentInsertsBounded(t *testing.T) {
	fx := newFixture(t)
	fx.f.recentMax = 4 // set before the first Put: the committer reads it after
	for g := range 10 {
		st := fx.put(disc(fmt.Sprintf("http://a.test/%d/1", g)), disc(fmt.Sprintf("http://a.test/%d/2", g)), disc(fmt.Sprintf("http://a.test/%d/3", g)))
		for i, s := range st {
			if s != OK {
				t.Fatalf("group %d item %d = %v, want OK", g, i, s)
			}
		}
	}
	// Reading the committer's fields is safe once every Put returned
	// (their answers come after the commit).
	if fx.f.recentCount > 4 || len(fx.f.recent) > 4 {
		t.Errorf("remembered %d inserts (%d in the map), want at most 4", fx.f.recentCount, len(fx.f.recent))
	}
	if fx.f.recentFloor < 9 {
		t.Errorf("recentFloor = %d, want at least 9 (groups 1-8 forgotten)", fx.f.recentFloor)
	}

	// A put whose seen-test ran before the first group (gen 0) and found
	// nothing: the committer must read the record of the URL it names.
	u := "http://a.test/0/1"
	o := &op{
		items:    []Item{disc(u)},
		statuses: make([]Status, 1),
		norm:     []normItem{{crawl: DefaultCrawl, key: "a.test", hash: hashURL(u), gen: 0}},
		done:     make(chan error, 1),
	}
	before := fx.f.recordReads.Load()
	if err := fx.f.submit(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if o.statuses[0] != Skipped {
		t.Errorf("stale seen-test of a URL of a forgotten group = %v, want SKIPPED", o.statuses[0])
	}
	if n := fx.f.recordReads.Load() - before; n != 1 {
		t.Errorf("records read = %d, want 1", n)
	}
	if s := fx.f.Stats("", ""); s.Size != 30 {
		t.Errorf("size = %d, want 30", s.Size)
	}
}
