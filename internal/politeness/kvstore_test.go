package politeness_test

import (
	"context"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/statetest"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

func openKV(t *testing.T, dir string) *kv.DB {
	t.Helper()
	db, err := kv.Open(dir, kv.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestKVRobotsStore(t *testing.T) {
	statetest.RobotsStore(t, func(t *testing.T) politeness.RobotsStore {
		db := openKV(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return politeness.NewKVRobotsStore(db)
	})
}

func TestKVDelayStore(t *testing.T) {
	statetest.DelayStore(t, func(t *testing.T) politeness.DelayStore {
		db := openKV(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		// A neighbouring bucket must not leak into the listing.
		if err := db.Bucket("politeness/delays0").Set([]byte("x"), []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if err := db.Bucket("politeness/delay/").Set([]byte("y"), []byte("{}")); err != nil {
			t.Fatal(err)
		}
		return politeness.NewKVDelayStore(db)
	})
}

// TestKVRestart: robots.txt results and delays survive a restart of the
// process (a new Gate on the reopened store).
func TestKVRestart(t *testing.T) {
	o := newOrigin(t, serve(200, privateRobots))
	dir := t.TempDir()
	c := newClock()
	ctx := context.Background()
	start := func() (*politeness.Gate, *kv.DB) {
		db := openKV(t, dir)
		g := newGate(t, politeness.Config{}, politeness.Backend{
			Robots: politeness.NewKVRobotsStore(db), Delays: politeness.NewKVDelayStore(db), Now: c.Now})
		return g, db
	}
	g, db := start()
	tryRefused(t, g, o.url("/page"))
	if err := g.SetDelay(ctx, "example.org", 3*time.Second, true); err != nil {
		t.Fatal(err)
	}
	if err := g.SetDefaultDelay(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	c.Advance(time.Hour)
	g, db = start()
	defer db.Close()
	if d := tryRefused(t, g, o.url("/private")); d.Reason != politeness.ReasonRobots {
		t.Fatalf("after restart: %+v, want robots from the stored copy", d)
	}
	if got := o.hits("/robots.txt"); got != 1 {
		t.Fatalf("robots.txt fetched %d times across a restart, want 1", got)
	}
	if def, err := g.DefaultDelay(ctx); err != nil || def != 2*time.Second {
		t.Fatalf("DefaultDelay after restart = %v, %v", def, err)
	}
	list, err := g.ListDelays(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != "example.org" || list[0].Manual != 3*time.Second || !list[0].Override {
		t.Fatalf("ListDelays after restart = %+v", list)
	}
	// The gate's default now is 2s: the page waits 2s after robots.txt
	// ended... an hour ago, so it goes now.
	tryGranted(t, g, o.url("/page"))
}

// FuzzDecodeRobotsEntry: whatever a store hands back, decoding returns an
// entry within bounds or an error, and a decoded entry re-encodes.
func FuzzDecodeRobotsEntry(f *testing.F) {
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for _, e := range []politeness.RobotsEntry{
		{Origin: "http://a.example", Result: politeness.RobotsOK, Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"), Fetched: at, Expires: at.Add(time.Hour)},
		{Origin: "https://b.example:8443", Result: politeness.RobotsUnavailable, Err: "eof", Failures: 2, Good: []byte{0xff, 0}, GoodFetched: at},
	} {
		v, err := politeness.EncodeRobotsEntry(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	f.Add([]byte(`{"failures":-1}`))
	f.Add([]byte(`{"body":"!!"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, v []byte) {
		e, err := politeness.DecodeRobotsEntry(v)
		if err != nil {
			return
		}
		if e.Failures < 0 || len(e.Body) > robots.MaxSize || len(e.Good) > robots.MaxSize {
			t.Fatalf("decoded entry out of bounds: %+v", e)
		}
		if _, err := politeness.EncodeRobotsEntry(e); err != nil {
			t.Fatalf("re-encoding a decoded entry: %v", err)
		}
	})
}
