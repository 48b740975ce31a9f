// Package statetest is the conformance suite every politeness backend
// (memory, embedded kv, Redis) must pass: State, RobotsStore and
// DelayStore. A backend's test calls the suite with a constructor:
//
//	func TestState(t *testing.T) {
//		statetest.State(t, statetest.Options{}, func(t *testing.T) politeness.State { ... })
//	}
//
// The suite passes time with time.Sleep. A backend on the process clock
// sets Options.Run to run each case inside testing/synctest, so the sleeps
// are instant and exact; a backend on another clock (Redis server time)
// runs on real time, and the suite only asserts bounds that hold however
// late the test is scheduled: lower bounds subtract the time measured
// since before the call that started the interval, and a "still closed"
// check after a sleep keeps several units of margin.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// Options tunes the suite.
type Options struct {
	// Run runs one case's body; nil calls it directly. Memory backends
	// pass synctest.Test.
	Run func(t *testing.T, body func(t *testing.T))
	// Unit scales every duration the suite uses. Default 100ms: small
	// enough for real time, large against scheduling noise.
	Unit time.Duration
}

func (o Options) withDefaults() Options {
	if o.Run == nil {
		o.Run = func(t *testing.T, body func(t *testing.T)) { body(t) }
	}
	if o.Unit <= 0 {
		o.Unit = 100 * time.Millisecond
	}
	return o
}

var leaseSeq atomic.Int64

func lease() string { return fmt.Sprintf("lease-%d", leaseSeq.Add(1)) }

// State runs the State conformance suite. newState must return an empty
// State for each call (distinct keys are used anyway); it is called inside
// Options.Run.
func State(t *testing.T, o Options, newState func(t *testing.T) politeness.State) {
	t.Helper()
	o = o.withDefaults()
	u := o.Unit
	long := 100 * u
	ctx := context.Background()
	run := func(name string, body func(t *testing.T)) {
		t.Run(name, func(t *testing.T) { o.Run(t, body) })
	}

	acquire := func(t *testing.T, s politeness.State, key string, req politeness.AcquireRequest) politeness.Grant {
		t.Helper()
		if req.LeaseID == "" && !req.DryRun {
			req.LeaseID = lease()
		}
		if req.Limit == 0 {
			req.Limit = 1
		}
		if req.Lease == 0 {
			req.Lease = long
		}
		g, err := s.Acquire(ctx, key, req)
		if err != nil {
			t.Fatalf("Acquire(%s): %v", key, err)
		}
		return g
	}
	take := func(t *testing.T, s politeness.State, key string, req politeness.AcquireRequest) string {
		t.Helper()
		req.LeaseID = lease()
		if g := acquire(t, s, key, req); !g.OK {
			t.Fatalf("Acquire(%s) = %+v, want OK", key, g)
		}
		return req.LeaseID
	}
	release := func(t *testing.T, s politeness.State, key string, req politeness.ReleaseRequest) {
		t.Helper()
		if err := s.Release(ctx, key, req); err != nil {
			t.Fatalf("Release(%s): %v", key, err)
		}
	}
	wantRefused := func(t *testing.T, g politeness.Grant, reason politeness.Reason, lo, hi time.Duration) {
		t.Helper()
		if g.OK || g.Reason != reason {
			t.Fatalf("grant = %+v, want refused for %q", g, reason)
		}
		if g.Wait < lo || g.Wait > hi {
			t.Fatalf("grant.Wait = %v, want in [%v, %v]", g.Wait, lo, hi)
		}
	}

	run("first acquire", func(t *testing.T) {
		s := newState(t)
		g := acquire(t, s, "first.example", politeness.AcquireRequest{Delay: u})
		if !g.OK || g.InFlight != 1 || g.SinceEnd != -1 || g.Backoff != 0 || g.BackoffLevel != 0 {
			t.Fatalf("grant = %+v, want OK, 1 in flight, no end, no backoff", g)
		}
	})
	run("concurrency limit 1", func(t *testing.T) {
		s := newState(t)
		mark := time.Now()
		take(t, s, "c1.example", politeness.AcquireRequest{})
		g := acquire(t, s, "c1.example", politeness.AcquireRequest{})
		wantRefused(t, g, politeness.ReasonConcurrency, long-time.Since(mark), long)
		if g.InFlight != 1 {
			t.Fatalf("InFlight = %d, want 1", g.InFlight)
		}
	})
	run("concurrency limit 3", func(t *testing.T) {
		s := newState(t)
		for i := range 3 {
			g := acquire(t, s, "c3.example", politeness.AcquireRequest{Limit: 3})
			if !g.OK || g.InFlight != i+1 {
				t.Fatalf("acquire %d = %+v, want OK with %d in flight", i, g, i+1)
			}
		}
		g := acquire(t, s, "c3.example", politeness.AcquireRequest{Limit: 3})
		wantRefused(t, g, politeness.ReasonConcurrency, 0, long)
	})
	run("keys are independent", func(t *testing.T) {
		s := newState(t)
		take(t, s, "a.example", politeness.AcquireRequest{})
		take(t, s, "b.example", politeness.AcquireRequest{})
	})
	run("delay after used release", func(t *testing.T) {
		s := newState(t)
		id := take(t, s, "d.example", politeness.AcquireRequest{Delay: 10 * u})
		mark := time.Now()
		release(t, s, "d.example", politeness.ReleaseRequest{LeaseID: id, Used: true})
		g := acquire(t, s, "d.example", politeness.AcquireRequest{Delay: 10 * u})
		wantRefused(t, g, politeness.ReasonDelay, 10*u-time.Since(mark), 10*u)
		if g.InFlight != 0 || g.SinceEnd < 0 || g.SinceEnd > time.Since(mark) {
			t.Fatalf("grant = %+v, want 0 in flight and a fresh end", g)
		}
		time.Sleep(u)
		g = acquire(t, s, "d.example", politeness.AcquireRequest{Delay: 10 * u})
		wantRefused(t, g, politeness.ReasonDelay, 10*u-time.Since(mark), 9*u)
		// A larger delay asked later counts from the same end.
		g = acquire(t, s, "d.example", politeness.AcquireRequest{Delay: 12 * u})
		wantRefused(t, g, politeness.ReasonDelay, 12*u-time.Since(mark), 11*u)
		time.Sleep(2 * u)
		take(t, s, "d.example", politeness.AcquireRequest{Delay: 3 * u})
	})
	run("zero delay", func(t *testing.T) {
		s := newState(t)
		id := take(t, s, "z.example", politeness.AcquireRequest{})
		release(t, s, "z.example", politeness.ReleaseRequest{LeaseID: id, Used: true})
		take(t, s, "z.example", politeness.AcquireRequest{})
	})
	run("unused release leaves no gap", func(t *testing.T) {
		s := newState(t)
		id := take(t, s, "r.example", politeness.AcquireRequest{Delay: long})
		release(t, s, "r.example", politeness.ReleaseRequest{LeaseID: id})
		take(t, s, "r.example", politeness.AcquireRequest{Delay: long})
	})
	run("release of unknown lease records the fetch", func(t *testing.T) {
		s := newState(t)
		mark := time.Now()
		release(t, s, "unknown.example", politeness.ReleaseRequest{LeaseID: "nobody", Used: true})
		g := acquire(t, s, "unknown.example", politeness.AcquireRequest{Delay: long})
		wantRefused(t, g, politeness.ReasonDelay, long-time.Since(mark), long)
		release(t, s, "unknown2.example", politeness.ReleaseRequest{LeaseID: "nobody"})
		take(t, s, "unknown2.example", politeness.AcquireRequest{Delay: long})
	})
	run("lease expiry", func(t *testing.T) {
		s := newState(t)
		mark := time.Now()
		take(t, s, "l.example", politeness.AcquireRequest{Lease: 2 * u})
		g := acquire(t, s, "l.example", politeness.AcquireRequest{Delay: u})
		wantRefused(t, g, politeness.ReasonConcurrency, 3*u-time.Since(mark), 3*u)
		time.Sleep(2*u + u/2)
		// The dead holder's lease counts as a fetch that ended at expiry.
		g = acquire(t, s, "l.example", politeness.AcquireRequest{Delay: 10 * u})
		wantRefused(t, g, politeness.ReasonDelay, 12*u-time.Since(mark), 10*u-u/2)
		if g.InFlight != 0 {
			t.Fatalf("InFlight = %d after expiry, want 0", g.InFlight)
		}
		take(t, s, "l.example", politeness.AcquireRequest{})
	})
	run("dry run takes nothing", func(t *testing.T) {
		s := newState(t)
		for range 3 {
			g := acquire(t, s, "dry.example", politeness.AcquireRequest{DryRun: true})
			if !g.OK || g.InFlight != 0 {
				t.Fatalf("dry grant = %+v, want OK with 0 in flight", g)
			}
		}
		take(t, s, "dry.example", politeness.AcquireRequest{})
		g := acquire(t, s, "dry.example", politeness.AcquireRequest{DryRun: true})
		wantRefused(t, g, politeness.ReasonConcurrency, 0, long)
		if g.InFlight != 1 {
			t.Fatalf("InFlight = %d, want 1", g.InFlight)
		}
	})
	run("backoff with Retry-After", func(t *testing.T) {
		s := newState(t)
		id := take(t, s, "ra.example", politeness.AcquireRequest{})
		mark := time.Now()
		release(t, s, "ra.example", politeness.ReleaseRequest{LeaseID: id, Used: true,
			Backoff: politeness.BackoffGrow, RetryAfter: 5 * u, BackoffBase: u, BackoffMax: long})
		g := acquire(t, s, "ra.example", politeness.AcquireRequest{Delay: u})
		wantRefused(t, g, politeness.ReasonBackoff, 5*u-time.Since(mark), 5*u)
		if g.BackoffLevel != 1 || g.Backoff > 5*u || g.Backoff < 5*u-time.Since(mark) {
			t.Fatalf("grant = %+v, want level 1 and about %v of backoff", g, 5*u)
		}
		time.Sleep(5*u + u/2)
		take(t, s, "ra.example", politeness.AcquireRequest{Delay: u / 4})
	})
	run("exponential backoff and reset", func(t *testing.T) {
		s := newState(t)
		key := "exp.example"
		for i, want := range []time.Duration{u, 2 * u, 4 * u, 4 * u} {
			id := lease()
			g := acquire(t, s, key, politeness.AcquireRequest{LeaseID: id, Lease: long})
			if !g.OK {
				time.Sleep(g.Wait + u/10)
				g = acquire(t, s, key, politeness.AcquireRequest{LeaseID: id})
				if !g.OK {
					t.Fatalf("step %d: %+v, want OK after waiting", i, g)
				}
			}
			mark := time.Now()
			release(t, s, key, politeness.ReleaseRequest{LeaseID: id, Used: true,
				Backoff: politeness.BackoffGrow, BackoffBase: u, BackoffMax: 4 * u})
			g = acquire(t, s, key, politeness.AcquireRequest{DryRun: true})
			wantRefused(t, g, politeness.ReasonBackoff, want-time.Since(mark), want)
			if g.BackoffLevel != i+1 {
				t.Fatalf("step %d: level %d, want %d", i, g.BackoffLevel, i+1)
			}
		}
		// Keep changes nothing; Reset clears level and time.
		release(t, s, key, politeness.ReleaseRequest{LeaseID: "x", Used: true, Backoff: politeness.BackoffKeep})
		g := acquire(t, s, key, politeness.AcquireRequest{DryRun: true})
		if g.BackoffLevel != 4 || g.Reason != politeness.ReasonBackoff {
			t.Fatalf("after keep: %+v, want level 4 in backoff", g)
		}
		release(t, s, key, politeness.ReleaseRequest{LeaseID: "y", Used: true, Backoff: politeness.BackoffReset})
		g = acquire(t, s, key, politeness.AcquireRequest{DryRun: true})
		if !g.OK || g.BackoffLevel != 0 || g.Backoff != 0 {
			t.Fatalf("after reset: %+v, want OK, level 0", g)
		}
	})
	run("unused release keeps backoff", func(t *testing.T) {
		s := newState(t)
		mark := time.Now()
		release(t, s, "ub.example", politeness.ReleaseRequest{LeaseID: "a", Used: true,
			Backoff: politeness.BackoffGrow, RetryAfter: long})
		release(t, s, "ub.example", politeness.ReleaseRequest{LeaseID: "b", Backoff: politeness.BackoffReset})
		g := acquire(t, s, "ub.example", politeness.AcquireRequest{})
		wantRefused(t, g, politeness.ReasonBackoff, long-time.Since(mark), long)
	})
	run("adaptive delay", func(t *testing.T) {
		s := newState(t)
		id := take(t, s, "ad.example", politeness.AcquireRequest{})
		mark := time.Now()
		release(t, s, "ad.example", politeness.ReleaseRequest{LeaseID: id, Used: true, Adaptive: 3 * u})
		g := acquire(t, s, "ad.example", politeness.AcquireRequest{Delay: u})
		wantRefused(t, g, politeness.ReasonDelay, 3*u-time.Since(mark), 3*u)
		if g.Adaptive != 3*u {
			t.Fatalf("Adaptive = %v, want %v", g.Adaptive, 3*u)
		}
		// Override ignores it.
		g = acquire(t, s, "ad.example", politeness.AcquireRequest{Delay: 0, Override: true, DryRun: true})
		if !g.OK {
			t.Fatalf("override grant = %+v, want OK", g)
		}
		// A later fetch without adaptive clears it.
		release(t, s, "ad.example", politeness.ReleaseRequest{LeaseID: "z", Used: true})
		g = acquire(t, s, "ad.example", politeness.AcquireRequest{DryRun: true})
		if !g.OK || g.Adaptive != 0 {
			t.Fatalf("grant = %+v, want OK and no adaptive delay", g)
		}
	})
	run("concurrent acquirers", func(t *testing.T) {
		s := newState(t)
		const n = 16
		var ok atomic.Int32
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				g, err := s.Acquire(ctx, "race.example", politeness.AcquireRequest{LeaseID: lease(), Limit: 2, Lease: long})
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				if g.OK {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if got := ok.Load(); got != 2 {
			t.Fatalf("%d of %d concurrent acquirers got a slot, want 2", got, n)
		}
	})
	run("canceled context", func(t *testing.T) {
		s := newState(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Acquire(cctx, "ctx.example", politeness.AcquireRequest{LeaseID: lease(), Limit: 1, Lease: long}); err == nil {
			t.Fatal("Acquire with a canceled context succeeded")
		}
		if err := s.Release(cctx, "ctx.example", politeness.ReleaseRequest{LeaseID: "x", Used: true}); err == nil {
			t.Fatal("Release with a canceled context succeeded")
		}
	})
}

// RobotsStore runs the RobotsStore conformance suite.
func RobotsStore(t *testing.T, newStore func(t *testing.T) politeness.RobotsStore) {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	full := politeness.RobotsEntry{
		Origin: "https://example.org", Result: politeness.RobotsUnavailable, Status: 503,
		Err: "boom", Fetched: base, Expires: base.Add(time.Hour), Failures: 3,
		Good: []byte("User-agent: *\nDisallow: /x\n"), GoodFetched: base.Add(-48 * time.Hour),
	}
	cases := []struct {
		name string
		e    politeness.RobotsEntry
	}{
		{"ok", politeness.RobotsEntry{Origin: "http://a.example", Result: politeness.RobotsOK, Status: 200,
			Body: []byte("User-agent: *\nDisallow: /private\n"), Fetched: base, Expires: base.Add(24 * time.Hour)}},
		{"not found", politeness.RobotsEntry{Origin: "http://b.example:8080", Result: politeness.RobotsNotFound, Status: 404,
			Fetched: base, Expires: base.Add(6 * time.Hour)}},
		{"unavailable with good copy", full},
		{"max size body", politeness.RobotsEntry{Origin: "http://big.example", Result: politeness.RobotsOK, Status: 200,
			Body: bytes.Repeat([]byte("Disallow: /a\n"), robots.MaxSize/13), Fetched: base, Expires: base.Add(time.Hour)}},
		{"binary body", politeness.RobotsEntry{Origin: "http://bin.example", Result: politeness.RobotsOK, Status: 200,
			Body: []byte{0xff, 0xfe, 0, 'U', 0}, Fetched: base, Expires: base.Add(time.Hour)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if _, err := s.GetRobots(ctx, tc.e.Origin); !errors.Is(err, politeness.ErrNotFound) {
				t.Fatalf("GetRobots before Put: err = %v, want ErrNotFound", err)
			}
			if err := s.PutRobots(ctx, tc.e); err != nil {
				t.Fatalf("PutRobots: %v", err)
			}
			got, err := s.GetRobots(ctx, tc.e.Origin)
			if err != nil {
				t.Fatalf("GetRobots: %v", err)
			}
			if d := diffRobots(got, tc.e); d != "" {
				t.Fatalf("round trip: %s", d)
			}
		})
	}
	t.Run("overwrite and delete", func(t *testing.T) {
		s := newStore(t)
		e := full
		if err := s.PutRobots(ctx, e); err != nil {
			t.Fatal(err)
		}
		e2 := politeness.RobotsEntry{Origin: e.Origin, Result: politeness.RobotsOK, Status: 200, Body: []byte("x"), Fetched: base.Add(time.Hour), Expires: base.Add(25 * time.Hour)}
		if err := s.PutRobots(ctx, e2); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetRobots(ctx, e.Origin)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffRobots(got, e2); d != "" {
			t.Fatalf("after overwrite: %s", d)
		}
		if err := s.DeleteRobots(ctx, e.Origin); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRobots(ctx, e.Origin); !errors.Is(err, politeness.ErrNotFound) {
			t.Fatalf("GetRobots after delete: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteRobots(ctx, "http://never.example"); err != nil {
			t.Fatalf("DeleteRobots of a missing origin: %v", err)
		}
	})
	t.Run("returned entry is a copy", func(t *testing.T) {
		s := newStore(t)
		e := cases[0].e
		e.Body = bytes.Clone(e.Body)
		if err := s.PutRobots(ctx, e); err != nil {
			t.Fatal(err)
		}
		e.Body[0] = 'X'
		got, err := s.GetRobots(ctx, e.Origin)
		if err != nil {
			t.Fatal(err)
		}
		got.Body[1] = 'Y'
		again, err := s.GetRobots(ctx, e.Origin)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Body, cases[0].e.Body) {
			t.Fatalf("stored body changed through a caller's slice: %q", again.Body[:10])
		}
	})
}

func diffRobots(got, want politeness.RobotsEntry) string {
	var d []string
	if got.Origin != want.Origin || got.Result != want.Result || got.Status != want.Status || got.Err != want.Err || got.Failures != want.Failures {
		d = append(d, fmt.Sprintf("fields %+v != %+v", []any{got.Origin, got.Result, got.Status, got.Err, got.Failures}, []any{want.Origin, want.Result, want.Status, want.Err, want.Failures}))
	}
	if !bytes.Equal(got.Body, want.Body) || !bytes.Equal(got.Good, want.Good) {
		d = append(d, "bodies differ")
	}
	if !got.Fetched.Equal(want.Fetched) || !got.Expires.Equal(want.Expires) || !got.GoodFetched.Equal(want.GoodFetched) {
		d = append(d, fmt.Sprintf("times %v %v %v != %v %v %v", got.Fetched, got.Expires, got.GoodFetched, want.Fetched, want.Expires, want.GoodFetched))
	}
	return strings.Join(d, "; ")
}

// DelayStore runs the DelayStore conformance suite.
func DelayStore(t *testing.T, newStore func(t *testing.T) politeness.DelayStore) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	t.Run("get put delete", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.GetDelay(ctx, "a.example"); !errors.Is(err, politeness.ErrNotFound) {
			t.Fatalf("GetDelay before Put: err = %v, want ErrNotFound", err)
		}
		e := politeness.DelayEntry{Key: "a.example", HasManual: true, Manual: 1500 * time.Millisecond, Override: true, Robots: 10 * time.Second, Updated: at}
		if err := s.PutDelay(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetDelay(ctx, "a.example")
		if err != nil {
			t.Fatal(err)
		}
		if !sameDelay(got, e) {
			t.Fatalf("GetDelay = %+v, want %+v", got, e)
		}
		zero := politeness.DelayEntry{Key: "a.example", HasManual: true, Updated: at}
		if err := s.PutDelay(ctx, zero); err != nil {
			t.Fatal(err)
		}
		if got, err = s.GetDelay(ctx, "a.example"); err != nil || !sameDelay(got, zero) {
			t.Fatalf("after overwrite: %+v, %v; want %+v", got, err, zero)
		}
		if err := s.DeleteDelay(ctx, "a.example"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetDelay(ctx, "a.example"); !errors.Is(err, politeness.ErrNotFound) {
			t.Fatalf("GetDelay after delete: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteDelay(ctx, "never.example"); err != nil {
			t.Fatalf("DeleteDelay of a missing key: %v", err)
		}
	})
	t.Run("list", func(t *testing.T) {
		s := newStore(t)
		keys := []string{"*", "b.example", "a.example", "c.example:8080", "a.example.org"}
		for i, k := range keys {
			if err := s.PutDelay(ctx, politeness.DelayEntry{Key: k, HasManual: true, Manual: time.Duration(i) * time.Second, Updated: at}); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name  string
			after string
			limit int
			want  []string
		}{
			{"all", "", 0, []string{"*", "a.example", "a.example.org", "b.example", "c.example:8080"}},
			{"limit", "", 2, []string{"*", "a.example"}},
			{"after", "a.example", 2, []string{"a.example.org", "b.example"}},
			{"after last", "c.example:8080", 10, nil},
			{"after missing key", "aa", 10, []string{"b.example", "c.example:8080"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.ListDelays(ctx, tc.after, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				var gotKeys []string
				for _, e := range got {
					gotKeys = append(gotKeys, e.Key)
				}
				if strings.Join(gotKeys, ",") != strings.Join(tc.want, ",") {
					t.Fatalf("ListDelays(%q, %d) = %v, want %v", tc.after, tc.limit, gotKeys, tc.want)
				}
				for _, e := range got {
					if !e.HasManual || e.Updated.IsZero() {
						t.Fatalf("listed entry lost fields: %+v", e)
					}
				}
			})
		}
	})
	t.Run("list bound", func(t *testing.T) {
		s := newStore(t)
		for i := range politeness.DefaultListLimit + 5 {
			if err := s.PutDelay(ctx, politeness.DelayEntry{Key: fmt.Sprintf("h%04d.example", i), Updated: at}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.ListDelays(ctx, "", -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != politeness.DefaultListLimit {
			t.Fatalf("ListDelays with limit -1 returned %d, want %d", len(got), politeness.DefaultListLimit)
		}
	})
}

func sameDelay(a, b politeness.DelayEntry) bool {
	return a.Key == b.Key && a.HasManual == b.HasManual && a.Manual == b.Manual &&
		a.Override == b.Override && a.Robots == b.Robots && a.Updated.Equal(b.Updated)
}
