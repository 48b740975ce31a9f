package frontier

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

var (
	modelSeeds = flag.Int("model.seeds", 50, "seeds TestReadAheadModel runs")
	modelOps   = flag.Int("model.ops", 2000, "operations per seed of TestReadAheadModel")
)

// modelPair drives two frontiers with the same operations and clock: on
// with read-ahead, off without; every answer must be the same.
type modelPair struct {
	t        *testing.T
	rng      *rand.Rand
	clk      *clock
	on, off  *Frontier
	dbs      []*kv.DB
	hosts    []string
	urls     []string // every URL put so far
	leased   []Lease  // leases handed out and not acknowledged or released
	step     int
	lastOp   string
	checkAll bool // compare Stats after every step
}

func newModelPair(t *testing.T, seed uint64, on Options) *modelPair {
	t.Helper()
	m := &modelPair{t: t, rng: rand.New(rand.NewPCG(seed, 0x5eed)), clk: newClock()}
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		m.hosts = append(m.hosts, h+".test")
	}
	open := func(o Options) *Frontier {
		db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		o.Now = m.clk.Now
		// DeleteQueue clears the seen cache: keep it small.
		o.SeenCacheEntries = 1 << 10
		f, err := Open(db, o)
		if err != nil {
			db.Close()
			t.Fatal(err)
		}
		m.dbs = append(m.dbs, db)
		t.Cleanup(func() { f.Close(); db.Close() })
		return f
	}
	m.on = open(on)
	m.off = open(Options{ReadAhead: -1})
	return m
}

func (m *modelPair) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("step %d (%s): %s", m.step, m.lastOp, fmt.Sprintf(format, args...))
}

// both runs fn on each frontier and fails unless the results are equal.
func both[T any](m *modelPair, what string, fn func(f *Frontier) (T, error)) T {
	m.t.Helper()
	a, errA := fn(m.on)
	b, errB := fn(m.off)
	if (errA == nil) != (errB == nil) {
		m.fatalf("%s: errors differ: read-ahead %v, without %v", what, errA, errB)
	}
	if errA != nil {
		m.fatalf("%s: %v", what, errA)
	}
	if !reflect.DeepEqual(a, b) {
		m.fatalf("%s differs:\nread-ahead %s\nwithout    %s", what, brief(a), brief(b))
	}
	return a
}

// brief renders leases as their URLs and queues, anything else as is.
func brief(v any) string {
	ls, ok := v.([]Lease)
	if !ok {
		return fmt.Sprintf("%+v", v)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.URL+"@"+l.Key)
	}
	return fmt.Sprint(out)
}

func (m *modelPair) host() string { return m.hosts[m.rng.IntN(len(m.hosts))] }

func (m *modelPair) randomItem() Item {
	u := fmt.Sprintf("http://%s/%d", m.host(), m.rng.IntN(80))
	it := Item{Info: URLInfo{URL: u, Priority: int8(m.rng.IntN(4) - 1), Depth: m.rng.IntN(4)}}
	if m.rng.IntN(4) == 0 {
		it.Info.Metadata = map[string][]string{"n": {fmt.Sprint(m.step)}}
	}
	return it
}

// knownItem returns a Known item for a URL put before: completed, due now,
// due later, sometimes under another queue key.
func (m *modelPair) knownItem(u string) Item {
	it := Item{Info: URLInfo{URL: u, Priority: int8(m.rng.IntN(3) - 1), Depth: m.rng.IntN(3)}, Known: true}
	switch m.rng.IntN(4) {
	case 0:
	case 1:
		it.RefetchFrom = m.clk.Now()
	case 2:
		it.RefetchFrom = m.clk.Now().Add(time.Duration(m.rng.IntN(40)) * time.Second)
	case 3:
		it.RefetchFrom = m.clk.Now().Add(-time.Duration(m.rng.IntN(40)) * time.Second)
	}
	if m.rng.IntN(6) == 0 {
		it.Info.Key = m.host() // moves the URL to another queue
	}
	return it
}

func (m *modelPair) randomParams() GetParams {
	p := GetParams{MaxQueues: m.rng.IntN(4), MaxURLsPerQueue: m.rng.IntN(4), Lease: time.Duration(5+m.rng.IntN(60)) * time.Second}
	if m.rng.IntN(5) == 0 {
		p.Key = m.host()
	}
	return p
}

func (m *modelPair) get(what string, p GetParams) {
	m.t.Helper()
	ls := both(m, what, func(f *Frontier) ([]Lease, error) { return f.Get(context.Background(), p) })
	m.leased = append(m.leased, ls...)
}

// takeLease removes and returns a random outstanding lease.
func (m *modelPair) takeLease() (Lease, bool) {
	if len(m.leased) == 0 {
		return Lease{}, false
	}
	i := m.rng.IntN(len(m.leased))
	l := m.leased[i]
	m.leased = slices.Delete(m.leased, i, i+1)
	return l, true
}

func (m *modelPair) put(items []Item) {
	m.t.Helper()
	for _, it := range items {
		if !it.Known {
			m.urls = append(m.urls, it.Info.URL)
		}
	}
	both(m, "Put", func(f *Frontier) ([]Status, error) { return f.Put(context.Background(), items) })
}

// windowPut puts items while a Get runs inside the commit: after the batch
// is built and before it is applied (the Get reads the old store), or
// after it is applied and before the committer updates the read-aheads.
func (m *modelPair) windowPut(items []Item, afterApply bool) {
	m.t.Helper()
	p := m.randomParams()
	got := map[*Frontier][]Lease{}
	errs := map[*Frontier]error{}
	for _, f := range []*Frontier{m.on, m.off} {
		hook := func() {
			got[f], errs[f] = f.Get(context.Background(), p)
			m.refill(f, false) // in the committer: no put
		}
		if afterApply {
			f.testHookAfterApply = func() { f.testHookAfterApply = nil; hook() }
		} else {
			f.testHookBeforeApply = func() { f.testHookBeforeApply = nil; hook() }
		}
	}
	m.put(items)
	for _, f := range []*Frontier{m.on, m.off} {
		if errs[f] != nil {
			m.fatalf("Get in the commit window: %v", errs[f])
		}
	}
	if !reflect.DeepEqual(got[m.on], got[m.off]) {
		m.fatalf("Get in the commit window (after apply %v) differs:\nread-ahead %s\nwithout    %s", afterApply, brief(got[m.on]), brief(got[m.off]))
	}
	m.leased = append(m.leased, got[m.on]...)
}

// refill runs f's refiller when the test drives it (manualRefill), on
// half of the calls, so that refills land between any two steps and inside
// commit windows.
//
// With puts, on a quarter of those a put (to both frontiers) lands between
// the refiller's store read and its taking the lock again.
func (m *modelPair) refill(f *Frontier, puts bool) {
	if !f.opts.manualRefill || m.rng.IntN(2) != 0 {
		return
	}
	if puts && m.rng.IntN(4) == 0 {
		item := m.randomItem()
		if len(m.urls) > 0 && m.rng.IntN(2) == 0 {
			item = m.knownItem(m.urls[m.rng.IntN(len(m.urls))])
		}
		f.testHookRefillRead = func() { f.testHookRefillRead = nil; m.put([]Item{item}) }
	}
	for f.refillOnce() {
	}
	f.testHookRefillRead = nil
}

func (m *modelPair) run(ops int) {
	m.t.Helper()
	ctx := context.Background()
	for m.step = 0; m.step < ops; m.step++ {
		r := m.rng.IntN(1000)
		switch {
		case r < 220:
			m.lastOp = "put discovered"
			items := make([]Item, 1+m.rng.IntN(4))
			for i := range items {
				items[i] = m.randomItem()
			}
			m.put(items)
		case r < 520:
			m.lastOp = "get"
			m.get("Get", m.randomParams())
		case r < 640:
			m.lastOp = "ack"
			if l, ok := m.takeLease(); ok {
				var refetch time.Time
				if m.rng.IntN(3) == 0 {
					refetch = m.clk.Now().Add(time.Duration(m.rng.IntN(30)) * time.Second)
				}
				m.put([]Item{{Info: l.URLInfo, Known: true, RefetchFrom: refetch}})
			}
		case r < 730:
			m.lastOp = "advance clock"
			m.clk.Advance(time.Duration(m.rng.IntN(30_000)) * time.Millisecond)
		case r < 800:
			m.lastOp = "known put"
			if len(m.urls) > 0 {
				m.put([]Item{m.knownItem(m.urls[m.rng.IntN(len(m.urls))])})
			}
		case r < 840:
			m.lastOp = "release"
			if l, ok := m.takeLease(); ok {
				m.on.Release(l.URLInfo)
				m.off.Release(l.URLInfo)
			}
		case r < 870:
			m.lastOp = "block"
			h, t := m.host(), m.clk.Now().Add(time.Duration(m.rng.IntN(20))*time.Second)
			both(m, "BlockQueueUntil", func(f *Frontier) (struct{}, error) {
				return struct{}{}, f.BlockQueueUntil(ctx, "", h, t)
			})
		case r < 935:
			m.lastOp = "window put"
			var items []Item
			for range 1 + m.rng.IntN(3) {
				if len(m.urls) > 0 && m.rng.IntN(2) == 0 {
					items = append(items, m.knownItem(m.urls[m.rng.IntN(len(m.urls))]))
				} else {
					items = append(items, m.randomItem())
				}
			}
			m.windowPut(items, m.rng.IntN(2) == 0)
		case r < 945:
			m.lastOp = "delete queue"
			h := m.host()
			both(m, "DeleteQueue", func(f *Frontier) (uint64, error) { return f.DeleteQueue(ctx, "", h) })
		case r < 950:
			m.lastOp = "set crawl limit"
			h, n := m.host(), uint64(m.rng.IntN(40))
			both(m, "SetCrawlLimit", func(f *Frontier) (bool, error) {
				err := f.SetCrawlLimit(ctx, "", h, n)
				return err == nil, nil
			})
		default:
			m.lastOp = "get one per queue"
			m.get("Get", GetParams{MaxQueues: 2, MaxURLsPerQueue: 1, Lease: time.Minute})
		}
		m.refill(m.on, true)
		if m.checkAll || m.step%50 == 0 {
			both(m, "Stats", func(f *Frontier) (Stats, error) { return f.Stats("", ""), nil })
		}
	}
	// Drain: everything left is served in the same order.
	m.lastOp = "drain"
	for range 500 {
		m.clk.Advance(time.Minute)
		ls := both(m, "Get", func(f *Frontier) ([]Lease, error) { return f.Get(ctx, GetParams{Lease: time.Hour}) })
		if len(ls) == 0 {
			break
		}
		for _, l := range ls {
			m.put([]Item{{Info: l.URLInfo, Known: true}})
		}
	}
	both(m, "Stats", func(f *Frontier) (Stats, error) { return f.Stats("", ""), nil })
}

// TestReadAheadModel runs random sequences of Puts, Gets, acks (with and
// without refetch), lease expiry and release, Known puts from other paths
// (also moving URLs between queues), blocks, queue deletion and Gets
// inside a commit against a frontier with read-ahead and one without, and
// requires the same answer from both at every step.
func TestReadAheadModel(t *testing.T) {
	configs := []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"k=1", Options{ReadAhead: 1}},
		{"k=3", Options{ReadAhead: 3}},
		// The refiller run between steps and inside commit windows.
		{"k=4,refill", Options{ReadAhead: 4, manualRefill: true}},
		{"k=2,refill,small", Options{ReadAhead: 2, ReadAheadBytes: 1500, manualRefill: true}},
		// Two queues' read-aheads fit: they are dropped (trimmed and
		// stale) all the time.
		{"k=2,small", Options{ReadAhead: 2, ReadAheadBytes: 1500}},
	}
	for i := range *modelSeeds {
		cfg := configs[i%len(configs)]
		t.Run(fmt.Sprintf("seed=%d/%s", i, cfg.name), func(t *testing.T) {
			t.Parallel()
			m := newModelPair(t, uint64(i), cfg.opts)
			m.run(*modelOps)
			s := m.on.aheadStats()
			if s.hits == 0 {
				t.Errorf("no Get served from read-ahead: %+v", s)
			}
			if cfg.opts.manualRefill && s.refills == 0 {
				t.Errorf("no read-ahead refilled: %+v", s)
			}
			if s.bytes > m.on.opts.ReadAheadBytes {
				t.Errorf("read-ahead holds %d bytes, bound %d", s.bytes, m.on.opts.ReadAheadBytes)
			}
			if cfg.opts.ReadAheadBytes > 0 && s.trimmed == 0 {
				t.Errorf("small bound: no read-ahead trimmed: %+v", s)
			}
			checkAheadExact(t, m.on)
		})
	}
}

// checkAheadExact compares every read-ahead with the store and its byte
// accounting with its entries.
func checkAheadExact(t *testing.T, f *Frontier) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	for r := f.mu.ahead.head; r != nil; r = r.next {
		q := r.q
		var want []aheadEntry
		err := scan(f.db, entryPrefix(q.crawl.cid, q.rec.qid), func(k, v []byte) error {
			pos, err := decodeEntryKey(k)
			if err != nil {
				return err
			}
			if r.complete || (r.hasEnd && cmpPos(pos, r.end) <= 0) {
				want = append(want, aheadEntry{pos: pos, val: slices.Clone(v)})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.entries, want) && (len(r.entries) != 0 || len(want) != 0) {
			t.Errorf("queue %s: read-ahead %d entries, store %d in its range", q.key, len(r.entries), len(want))
		}
		b := aheadQueueOverhead
		for _, e := range r.entries {
			b += entryCost(e.val)
		}
		if b != r.bytes {
			t.Errorf("queue %s: read-ahead accounts %d bytes, holds %d", q.key, r.bytes, b)
		}
		total += b
		if q.ahead != r {
			t.Errorf("queue %s: listed read-ahead not the queue's", q.key)
		}
	}
	if total != f.mu.ahead.bytes {
		t.Errorf("read-aheads account %d bytes in all, hold %d", f.mu.ahead.bytes, total)
	}
}

// putQueue puts URLs http://h.test/00 to /n-1, in one queue.
func putQueue(fx *fixture, n int) {
	for i := range n {
		fx.put(disc(fmt.Sprintf("http://h.test/%02d", i)))
	}
}

// serveQueue serves putQueue's n URLs one per Get, in order, acknowledging
// each and running between (if not nil) after each, and checks that
// nothing is left.
func serveQueue(t *testing.T, fx *fixture, n int, between func()) {
	t.Helper()
	for i := range n {
		got := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour})
		if want := fmt.Sprintf("http://h.test/%02d", i); len(got) != 1 || got[0] != want {
			t.Fatalf("Get %d = %v, want [%s]", i, got, want)
		}
		fx.ack(got[0], time.Time{})
		if between != nil {
			between()
		}
	}
	if got := fx.get(GetParams{Lease: time.Hour}); got != nil {
		t.Fatalf("Get after the last ack = %v", got)
	}
}

// TestReadAheadHits serves a queue of 20 URLs one per Get, acknowledging
// each: the store is read at most ceil(20/K)+1 times, and not once per URL
// as without read-ahead.
func TestReadAheadHits(t *testing.T) {
	const urls = 20
	for _, k := range []int{-1, 1, 4, 8, 16} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			fx := newFixtureWith(t, Options{ReadAhead: k})
			f := fx.f
			putQueue(fx, urls)
			before := f.aheadStats()
			serveQueue(t, fx, urls, nil)
			reads := f.aheadStats().storeReads - before.storeReads
			if k < 0 {
				if reads != urls {
					t.Errorf("store reads without read-ahead = %d, want one per URL", reads)
				}
				return
			}
			// Each store read hands out one URL and keeps k more: at most
			// ceil(20/(k+1))+1 reads, within the ceil(20/k)+1 read-ahead bound.
			if want := uint64((urls+k)/(k+1) + 1); reads > want {
				t.Errorf("store reads = %d, want at most %d", reads, want)
			}
			if s := f.aheadStats(); s.hits < urls-reads {
				t.Errorf("read-ahead hits = %d, want at least %d", s.hits, urls-reads)
			}
			checkAheadExact(t, f)
		})
	}
}

// TestReadAheadBounded fills the read-aheads of many queues and checks
// the bound on their memory, that the queues holding one keep it and are
// served from it round after round, and that an admin operation (here
// deleting a queue) drops them all.
func TestReadAheadBounded(t *testing.T) {
	const bound = 20_000
	fx := newFixtureWith(t, Options{ReadAhead: 8, ReadAheadBytes: bound})
	f := fx.f
	const hosts = 100
	var items []Item
	for h := range hosts {
		for i := range 12 {
			items = append(items, disc(fmt.Sprintf("http://h%03d.test/%d", h, i)))
		}
	}
	fx.put(items...)
	var prev aheadStats
	for round := range 4 {
		ls := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour})
		if len(ls) != hosts {
			t.Fatalf("Get served %d queues, want %d", len(ls), hosts)
		}
		for _, u := range ls {
			fx.ack(u, time.Time{})
		}
		s := f.aheadStats()
		if s.bytes > bound || s.queues == 0 || s.queues >= hosts {
			t.Fatalf("round %d: read-aheads %+v; want some queues, at most %d bytes", round, s, bound)
		}
		if round > 0 && s.hits-prev.hits < uint64(prev.queues) {
			t.Errorf("round %d: %d queues served from read-ahead, %d held one", round, s.hits-prev.hits, prev.queues)
		}
		prev = s
	}
	checkAheadExact(t, f)
	if _, err := f.DeleteQueue(context.Background(), "", "h000.test"); err != nil {
		t.Fatal(err)
	}
	if s := f.aheadStats(); s.queues != 0 || s.bytes != 0 {
		t.Errorf("after an admin operation: %+v, want no read-ahead", s)
	}
	fx.put(disc("http://h000.test/again"))
	if got := fx.get(GetParams{Key: "h000.test", Lease: time.Hour}); !slices.Equal(got, []string{"http://h000.test/again"}) {
		t.Errorf("deleted queue put again serves %v", got)
	}
}

// TestReadAheadConcurrent runs Gets, acks (some with refetch), discovered
// puts and Known puts from other paths from several goroutines at once, so
// that Gets run while the committer builds and applies batches; between
// rounds, with everything quiet, every read-ahead must equal the store.
func TestReadAheadConcurrent(t *testing.T) {
	fx := newFixtureWith(t, Options{ReadAhead: 4})
	f := fx.f
	ctx := context.Background()
	url := func(r *rand.Rand) string { return fmt.Sprintf("http://h%d.test/%d", r.IntN(4), r.IntN(60)) }
	for round := range 20 {
		var wg sync.WaitGroup
		for w := range 4 {
			r := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			wg.Go(func() {
				for range 40 {
					var err error
					switch w {
					case 0, 1: // crawler: Get, then ack
						var ls []Lease
						ls, err = f.Get(ctx, GetParams{MaxURLsPerQueue: 1 + r.IntN(2), Lease: time.Minute})
						for _, l := range ls {
							if err != nil {
								break
							}
							var refetch time.Time
							if r.IntN(4) == 0 {
								refetch = fx.clk.Now().Add(time.Duration(r.IntN(3)) * time.Second)
							}
							err = f.Ack(ctx, l.URLInfo, refetch)
						}
					case 2: // discoveries
						_, err = f.Put(ctx, []Item{{Info: URLInfo{URL: url(r), Priority: int8(r.IntN(3))}}})
					case 3: // Known puts from another path, and time
						_, err = f.Put(ctx, []Item{known(url(r), fx.clk.Now())})
						fx.clk.Advance(time.Duration(r.IntN(500)) * time.Millisecond)
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		checkAheadExact(t, f)
		checkConsistent(t, fx)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
	if s := f.aheadStats(); s.hits == 0 {
		t.Errorf("no Get served from read-ahead: %+v", s)
	}
}

// TestReadAheadAdmission: when the bound is reached, a queue without a
// read-ahead reads the store as without read-ahead, rather than evict the
// read-ahead of a queue served recently (round robin would evict each just
// before its turn); a read-ahead unused for long (its queue blocked) is
// dropped for it.
func TestReadAheadAdmission(t *testing.T) {
	// One read-ahead of K=2 fits (admission assumes 128+3*192 bytes).
	fx := newFixtureWith(t, Options{ReadAhead: 2, ReadAheadBytes: 1000})
	f := fx.f
	var items []Item
	for i := range 5 {
		items = append(items, disc(fmt.Sprintf("http://a.test/%d", i)))
	}
	for i := range 200 {
		items = append(items, disc(fmt.Sprintf("http://b.test/%03d", i)))
	}
	fx.put(items...)
	one := GetParams{Key: "a.test", MaxURLsPerQueue: 1, Lease: time.Hour}
	got := fx.get(one)
	if len(got) != 1 {
		t.Fatalf("Get a.test = %v", got)
	}
	fx.ack(got[0], time.Time{})
	if err := f.BlockQueueUntil(context.Background(), "", "a.test", fx.clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	aheadOf := func(key string) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.findLocked("", key).ahead != nil
	}
	if !aheadOf("a.test") {
		t.Fatal("a.test has no read-ahead")
	}
	admittedAt := -1
	for i := range 100 {
		got := fx.get(GetParams{MaxURLsPerQueue: 1, Lease: time.Hour})
		if want := fmt.Sprintf("http://b.test/%03d", i); len(got) != 1 || got[0] != want {
			t.Fatalf("Get %d = %v, want [%s]", i, got, want)
		}
		fx.ack(got[0], time.Time{})
		if admittedAt < 0 && aheadOf("b.test") {
			admittedAt = i
		}
	}
	s := f.aheadStats()
	// a.test is stale after 2*(queues servable or leased)+64 serves.
	if admittedAt < 64 || admittedAt > 70 || s.stale != 1 || aheadOf("a.test") {
		t.Errorf("b.test got a read-ahead at serve %d (want 64-70), a.test's kept %v; %+v", admittedAt, aheadOf("a.test"), s)
	}
	checkAheadExact(t, f)
}
