package frontier

// What the store keeps across a close and a reopen: URLs, leases, blocks and holds, and a corrupt entry.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

func TestPersistenceAcrossReopen(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"), disc("http://h.test/b"), disc("http://h.test/c"), disc("http://g.test/"))
	got := fx.get(GetParams{MaxURLsPerQueue: 2, Lease: time.Hour})
	if len(got) != 3 {
		t.Fatalf("get = %v", got)
	}
	fx.ack("http://h.test/a", time.Time{})
	if err := fx.f.BlockQueueUntil(context.Background(), "", "g.test", fx.clk.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := fx.f.Retire(context.Background(), "", "h.test", "test"); err != nil {
		t.Fatal(err)
	}
	if err := fx.f.Retire(context.Background(), "", "h.test", ""); err != nil {
		t.Fatal(err)
	}
	fx.reopen()
	s := fx.f.Stats("", "")
	if s.Completed != 1 || s.Retired != 2 || s.Size != 1 || s.InProcess != 0 {
		t.Errorf("stats after reopen = %+v", s)
	}
	if r := fx.f.Retired("", "h.test"); r != "retired" {
		t.Errorf("Retired = %q", r)
	}
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("blocked or retired queue served: %v", got)
	}
	fx.clk.Advance(time.Minute)
	if got := fx.get(GetParams{}); !slices.Equal(got, []string{"http://g.test/"}) {
		t.Errorf("lease not void after reopen: get = %v", got)
	}
	if st := fx.put(disc("http://h.test/a"), disc("http://h.test/b")); !slices.Equal(st, []Status{Skipped, Skipped}) {
		t.Errorf("seen-test lost on reopen: %v", st)
	}
}

func TestLeasedURLServedAgainAfterReopen(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"))
	if got := fx.get(GetParams{Lease: time.Hour}); len(got) != 1 {
		t.Fatalf("get = %v", got)
	}
	fx.reopen()
	if got := fx.get(GetParams{}); !slices.Equal(got, []string{"http://h.test/a"}) {
		t.Errorf("after reopen get = %v", got)
	}
}

// TestBlockPersistedByClose: a block rides on the next commit; Close makes
// that commit, so the block survives a clean reopen.
func TestBlockPersistedByClose(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"))
	if err := fx.f.BlockQueueUntil(context.Background(), "", "h.test", fx.clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	fx.reopen()
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("block lost on reopen: served %v", got)
	}
	fx.clk.Advance(time.Hour)
	if got := fx.get(GetParams{}); len(got) != 1 {
		t.Errorf("not served after the block: %v", got)
	}
}

// TestGetCorruptEntry: Get checks an entry under its lock (checkEntry) and
// decodes it after; a corrupt entry fails the Get before anything is
// leased, and other queues are still served.
func TestGetCorruptEntry(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://a.test/"), disc("http://b.test/"))
	var key []byte
	if err := scan(fx.f.db, []byte(prefixEntry), func(k, v []byte) error {
		if e, err := decodeEntry(v); err == nil && e.url == "http://a.test/" {
			key = slices.Clone(k)
		}
		return nil
	}); err != nil || key == nil {
		t.Fatalf("entry of a.test not found (%v)", err)
	}
	h := hashURL("http://a.test/")
	if err := fx.f.db.Set(key, append(h[:], 0x7f, 'x'), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	fx.reopen()
	if _, err := fx.f.Get(context.Background(), GetParams{Key: "a.test"}); !errors.Is(err, errCorrupt) {
		t.Errorf("Get of the corrupt entry: %v, want errCorrupt", err)
	}
	if s := fx.f.Stats("", "a.test"); s.InProcess != 0 {
		t.Errorf("corrupt entry leased: %+v", s)
	}
	if got := fx.get(GetParams{Key: "b.test"}); !slices.Equal(got, []string{"http://b.test/"}) {
		t.Errorf("Get of another queue = %v", got)
	}
}

// TestHoldPersisted: the hold an acknowledgement carries is written with
// it, so that a restart does not serve the queue before the hold.
func TestHoldPersisted(t *testing.T) {
	fx := newFixture(t)
	fx.put(disc("http://h.test/a"), disc("http://h.test/b"))
	got := fx.get(GetParams{MaxURLsPerQueue: 1})
	if len(got) != 1 {
		t.Fatalf("served %v", got)
	}
	// Queued again in its own queue: the queue's counters do not change,
	// only its block.
	ack := Item{Info: URLInfo{URL: got[0]}, Known: true, RefetchFrom: fx.clk.Now().Add(2 * time.Hour), Hold: fx.clk.Now().Add(time.Hour)}
	if st := fx.put(ack); st[0] != OK {
		t.Fatalf("ack: %v", st)
	}
	fx.reopen()
	if got := fx.get(GetParams{}); got != nil {
		t.Errorf("hold lost on reopen: served %v", got)
	}
	fx.clk.Advance(time.Hour)
	if got := fx.get(GetParams{}); len(got) != 1 {
		t.Errorf("not served after the hold: %v", got)
	}
}
