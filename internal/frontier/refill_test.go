package frontier

import (
	"fmt"
	"testing"
	"time"
)

// TestRefillServesAhead serves a queue of 40 URLs one per Get with the
// refiller run between Gets: Get reads the store once, for the first
// URL, and every later URL comes from a read-ahead the refiller extended.
func TestRefillServesAhead(t *testing.T) {
	const urls = 40
	fx := newFixtureWith(t, Options{ReadAhead: 4, manualRefill: true})
	f := fx.f
	putQueue(fx, urls)
	before := f.aheadStats()
	serveQueue(t, fx, urls, func() {
		for f.refillOnce() {
		}
	})
	s := f.aheadStats()
	if reads := s.storeReads - before.storeReads; reads != 1 {
		t.Errorf("Get read the store %d times, want once", reads)
	}
	if s.refills == 0 {
		t.Errorf("no refill: %+v", s)
	}
	checkAheadExact(t, f)
}

// TestRefillDroppedOnWrite: a commit that writes the queue's entries
// between the refiller's read and its taking the lock again makes it drop
// what it read (here a Known put moves URL 10 away from where the refiller
// read it); the read-ahead stays exact, and every URL is served once, in
// order.
func TestRefillDroppedOnWrite(t *testing.T) {
	const urls = 20
	fx := newFixtureWith(t, Options{ReadAhead: 4, manualRefill: true})
	f := fx.f
	putQueue(fx, urls)
	var served []string
	get := func() {
		got := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour})
		if len(got) != 1 {
			t.Fatalf("Get = %v", got)
		}
		served = append(served, got[0])
		fx.ack(got[0], time.Time{})
	}
	// The first Get reads URLs 0-4; after the third, two are left and the
	// refill is asked for, which would read URLs 5-8.
	for range 4 {
		get()
	}
	if len(f.mu.refill) == 0 {
		t.Fatal("no refill asked for")
	}
	moved := fx.clk.Now().Add(time.Hour)
	f.testHookRefillRead = func() { fx.put(known("http://h.test/06", moved)) }
	f.refillOnce()
	f.testHookRefillRead = nil
	if s := f.aheadStats(); s.refills != 0 {
		t.Errorf("refill applied over a write: %+v", s)
	}
	checkAheadExact(t, f)
	for range urls - 5 {
		get()
	}
	if got := fx.get(GetParams{Lease: time.Hour}); got != nil {
		t.Fatalf("Get = %v, want nothing before the moved URL is due", got)
	}
	for i, u := range served {
		want := i
		if i >= 6 {
			want = i + 1
		}
		if u != fmt.Sprintf("http://h.test/%02d", want) {
			t.Fatalf("served %v", served)
		}
	}
	checkAheadExact(t, f)
}
