package frontier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// maxGroup bounds the operations one commit gathers.
const maxGroup = 512

// commitSlice bounds the items (or read-ahead patches, or lease releases)
// the committer handles in one hold of Frontier.mu: a group of 512
// acknowledgements of ten URLs each held the lock for milliseconds, and
// every Get waited behind it. Between two slices the committer lets the
// lock go (yieldLocked), so a Get waits at most about one slice for it
// (Go's mutex hands the lock to a waiter that waited over a millisecond).
// Everything a Get can see between two slices it could already see in the
// windows before and after the batch is applied: queue records counting
// entries not yet in the store (served from the store: the queue's
// read-ahead is held), leases being acknowledged (kept until the commit),
// leases released after it (a Get made then reads the applied batch).
const commitSlice = 64

// yieldLocked lets Frontier.mu go and takes it again (committer only),
// so that the callers waiting for it go first.
func (f *Frontier) yieldLocked() {
	f.mu.Unlock()
	if f.testHookYield != nil {
		f.testHookYield()
	}
	f.mu.Lock()
}

// op is one mutation handed to the committer.
type op struct {
	// put: items and their statuses (statuses[i] is preset to Skipped for
	// items rejected before submission; those are not applied).
	items    []Item
	statuses []Status
	norm     []normItem

	// fn (admin operations) runs under Frontier.mu while the batch is
	// built; after runs under Frontier.mu once the batch committed.
	fn    func(b *pebble.Batch) error
	after func()

	// done receives the outcome; nil for fire-and-forget operations (their
	// writes ride on the next commit and need no fsync of their own).
	done chan error
	err  error
}

// normItem is an item after validation, with what the committer looked up.
type normItem struct {
	skip  bool
	gen   uint64 // groups committed before the caller's seen-test
	crawl string
	key   string
	hash  urlHash
	// filled by the committer before it takes the lock:
	found bool
	rec   urlRecord
	// leased (Known only) is set when rec was taken from the URL's lease
	// rather than read from the store.
	leased bool
}

// submit hands o to the committer and waits for its commit.
func (f *Frontier) submit(ctx context.Context, o *op) error {
	select {
	case f.ops <- o:
	case <-f.doneCh:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	if o.done == nil {
		return nil
	}
	select {
	case err := <-o.done:
		return err
	case <-f.doneCh:
		select {
		case err := <-o.done:
			return err
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// syncQueue bounds the groups whose WAL fsync is in flight: the committer
// applies group n+1 while group n's fsync runs (pebble ApplyNoSyncWait), so
// the fsync latency no longer serializes the committer.
const syncQueue = 8

// synced is a committed group waiting for its WAL fsync before its callers
// are told the outcome.
type synced struct {
	b   *pebble.Batch // nil when the group wrote nothing or needs no sync
	ops []*op
}

func (f *Frontier) commitLoop() {
	// The sync waiter is owned by the committer: it ends when the committer
	// closes syncCh, and doneCh closes only after both are done.
	syncCh := make(chan synced, syncQueue)
	syncDone := make(chan struct{})
	go f.syncLoop(syncCh, syncDone)
	defer func() {
		close(syncCh)
		<-syncDone
		close(f.doneCh)
	}()
	var broken error
	group := make([]*op, 0, maxGroup)
	for {
		group = group[:0]
		select {
		case o := <-f.ops:
			group = append(group, o)
		case <-f.stop:
			for {
				select {
				case o := <-f.ops:
					group = append(group, o)
					if len(group) == maxGroup {
						broken = f.runGroup(group, broken, syncCh)
						group = group[:0]
					}
					continue
				default:
				}
				break
			}
			if len(group) > 0 {
				f.runGroup(group, broken, syncCh)
			}
			return
		}
	drain:
		for len(group) < maxGroup {
			select {
			case o := <-f.ops:
				group = append(group, o)
			default:
				break drain
			}
		}
		broken = f.runGroup(group, broken, syncCh)
	}
}

// syncLoop waits, in commit order, for each group's WAL fsync and then
// tells its callers. A failed fsync makes that group and every later one
// fail (f.syncErr), as a failed commit does.
func (f *Frontier) syncLoop(in <-chan synced, done chan<- struct{}) {
	defer close(done)
	for g := range in {
		var err error
		if g.b != nil {
			if err = g.b.SyncWait(); err != nil {
				err = fmt.Errorf("frontier: commit: %w", err)
				f.syncErr.CompareAndSwap(nil, &err)
			}
			g.b.Close()
		}
		if p := f.syncErr.Load(); p != nil && err == nil {
			err = *p
		}
		for _, o := range g.ops {
			if o.done == nil {
				continue
			}
			e := o.err
			if e == nil {
				e = err
			}
			o.done <- e
		}
	}
}

// runGroup applies and commits one group and hands it to the sync waiter,
// which reports the outcome to the callers once the WAL is synced. After a
// failed commit the in-memory state no longer matches the disk, so every
// later operation fails with the same error (broken) until the process
// restarts and reloads.
func (f *Frontier) runGroup(group []*op, broken error, syncCh chan<- synced) error {
	if broken == nil {
		if p := f.syncErr.Load(); p != nil {
			broken = *p
		}
	}
	var b *pebble.Batch
	if broken == nil {
		b, broken = f.commitGroup(group)
	}
	if broken != nil {
		for _, o := range group {
			if o.err == nil {
				o.err = broken
			}
		}
	}
	// The group slice is reused by the committer; the waiter gets a copy
	// of the operations that wait for an answer.
	var waiting []*op
	for _, o := range group {
		if o.done != nil {
			waiting = append(waiting, o)
		}
	}
	if b == nil && len(waiting) == 0 {
		return broken
	}
	syncCh <- synced{b: b, ops: waiting}
	return broken
}

// recentGroups is how many committed groups' inserts the committer
// remembers exactly, so that it need not repeat a caller's seen-test on disk.
const recentGroups = 64

// maxRecent bounds the inserts remembered (about 70 bytes each with their
// map entry): groups of 32,000 URLs (eight PutDiscovered streams with
// four batches of 1,000 each in flight) made 64 groups hold 2 M of them,
// 140 MiB. Beyond it the oldest groups are forgotten early, and a caller
// whose seen-test predates the oldest one remembered is checked on disk.
const maxRecent = 1 << 18

// forgetRecentGroup forgets the inserts of the group that made gen v
// (committer only); the groups before it are forgotten already.
func (f *Frontier) forgetRecentGroup(v uint64) {
	slot := &f.recentRing[(v-1)%recentGroups]
	for _, k := range *slot {
		if f.recent[k] == v {
			delete(f.recent, k)
		}
	}
	f.recentCount -= len(*slot)
	*slot = (*slot)[:0]
	f.recentFloor = max(f.recentFloor, v+1)
}

type seenKey struct {
	cid uint32
	h   urlHash
}

// queueCounts are the counters of a queue record that items change.
type queueCounts struct{ queued, completed uint64 }

// commitScratch is the working memory of one commit group, kept from one
// group to the next so that a group of acknowledgements does not allocate
// its maps again (committer only).
type commitScratch struct {
	// written holds the URL records the group wrote, for a later item
	// of the group about the same URL (a discovered copy is then known;
	// an acknowledgement finds the record).
	written map[seenKey]urlRecord
	// touched holds the queues the group's items write, with their
	// counters before the group.
	touched map[*queue]queueCounts
	// ahead lists the group's entry writes, in batch order, for the
	// queues' read-aheads (ahead.go).
	ahead []aheadOp
	// release lists the leases the group's acknowledgements end; sweep
	// the URLs whose entry a Known item deletes while no lease holds them
	// (sweepLeasesLocked).
	release []*lease
	sweep   []leaseRef
	// inserted lists the URLs new to the store, for Frontier.recent.
	inserted []seenKey
}

// scratchKeep bounds the entries a scratch map or slice keeps its room
// for after a group: a group of many large puts (up to 512 × 1,000 items)
// would otherwise pin its maps' memory for good.
const scratchKeep = 4096

// reset empties s for the next group.
func (s *commitScratch) reset() {
	if s.written == nil || len(s.written) > scratchKeep {
		s.written = map[seenKey]urlRecord{}
	} else {
		clear(s.written)
	}
	if s.touched == nil || len(s.touched) > scratchKeep {
		s.touched = map[*queue]queueCounts{}
	} else {
		clear(s.touched)
	}
	s.ahead = resetSlice(s.ahead)
	s.release = resetSlice(s.release)
	s.sweep = resetSlice(s.sweep)
	s.inserted = resetSlice(s.inserted)
}

// resetSlice empties a scratch slice, dropping what it points to, or
// forgets it when it grew past scratchKeep.
func resetSlice[T any](v []T) []T {
	if cap(v) > scratchKeep {
		return nil
	}
	clear(v)
	return v[:0]
}

// commitGroup applies group to the store. When an operation of the group
// waits for an answer, the batch is committed with a WAL fsync whose wait is
// left to the caller (the returned batch, to SyncWait and Close); otherwise
// it returns nil.
func (f *Frontier) commitGroup(group []*op) (*pebble.Batch, error) {
	// Complete the seen-test outside the lock. The committer is the only
	// writer, so what it reads here is still true when it commits. A
	// caller's disk lookup saw every group up to n.gen; inserts of later
	// groups are in f.recent as long as they are recent enough.
	//
	// An acknowledgement (a Known item) of a URL leased from this frontier
	// needs no lookup at all: the lease was made from the URL's queue
	// entry, which with its key is the URL record (queued in the lease's
	// queue at the entry's position, created at the entry's trailer). It
	// is still the stored record: every later write of the URL, made by
	// this goroutine, ends the lease (see release below) and clears the
	// record of any lease a concurrent Get made from an entry that write
	// deleted (sweep below). Nothing is written between here and the
	// batch below, so a lease that expires or is re-leased meanwhile
	// leaves that record true. A URL acknowledged under another key, or
	// whose entry predates the created trailer, is read as before.
	gen := f.gen.Load()
	f.mu.Lock()
	cids := make(map[string]uint32, 1)
	units := 0
	for _, o := range group {
		for i := range o.norm {
			if units++; units%commitSlice == 0 {
				f.yieldLocked()
			}
			n := &o.norm[i]
			c := f.mu.crawls[n.crawl]
			if c == nil {
				continue
			}
			cids[c.name] = c.cid
			if n.skip || !o.items[i].Known {
				continue
			}
			if q := c.queues[n.key]; q != nil {
				if l := q.leased[n.hash]; l != nil && l.hasRec && !l.acking {
					n.found, n.rec, n.leased = true, l.record(), true
				}
			}
		}
	}
	f.mu.Unlock()
	for _, o := range group {
		for i := range o.norm {
			n := &o.norm[i]
			if n.skip || n.leased {
				continue
			}
			cid, ok := cids[n.crawl]
			if !ok {
				continue
			}
			if !o.items[i].Known {
				if _, ok := f.recent[seenKey{cid, n.hash}]; ok {
					n.found = true
					continue
				}
				if gen-n.gen <= recentGroups && n.gen+1 >= f.recentFloor {
					continue
				}
			}
			if f.absent(cid, n.hash) {
				continue
			}
			f.recordReads.Add(1)
			v, closer, err := f.db.Get(urlKey(cid, n.hash))
			if errors.Is(err, pebble.ErrNotFound) {
				continue
			}
			if err != nil {
				o.err = fmt.Errorf("frontier: seen-test: %w", err)
				break
			}
			rec, derr := decodeURLRecord(v)
			closer.Close()
			if derr != nil {
				o.err = corrupt("url record", derr)
				break
			}
			n.found, n.rec = true, rec
		}
	}
	sc := &f.scratch
	sc.reset()

	b := f.db.NewBatch()
	pending := false // b is handed to the sync waiter
	defer func() {
		if !pending {
			b.Close()
		}
	}()
	sync := false
	// touch records the counters of a queue the group's items write
	// before they change them: a queue whose counters the group leaves as
	// they were (a refetch acknowledged in its own queue takes one URL out
	// and puts one back) has its record written only if something else
	// marked it dirty.
	touch := func(q *queue) {
		if _, ok := sc.touched[q]; !ok {
			sc.touched[q] = queueCounts{q.rec.queued, q.rec.completed}
		}
	}
	// recordAhead lists the group's entry writes in sc.ahead; holdAll is
	// set by an admin operation.
	holdAll := false
	aheadOn := f.aheadOn()
	recordAhead := func(q *queue, pos entryPos, val []byte) {
		if aheadOn {
			q.aheadHold++
			q.aheadGen++
			sc.ahead = append(sc.ahead, aheadOp{q: q, pos: pos, val: val})
		}
	}

	f.mu.Lock()
	units = 0
	now := f.opts.Now()
	for _, o := range group {
		if o.done != nil {
			sync = true
		}
		if o.err != nil {
			continue
		}
		if o.fn != nil {
			if aheadOn && !holdAll {
				// Admin operations are rare: rather than tell which
				// entries they write, forget every read-ahead and fill
				// none until the batch is applied. (None of today's
				// writes the entries of a queue that stays served:
				// DeleteQueue and DeleteCrawl drop the queue, a new one
				// gets a new id. So this is for safety, and frees the
				// memory of dropped and retired queues.)
				holdAll = true
				f.mu.ahead.holdAll++
				f.mu.ahead.gen++
				f.dropAllAheadLocked()
			}
			o.err = o.fn(b)
			continue
		}
		for i := range o.items {
			n := &o.norm[i]
			if n.skip {
				continue
			}
			if units++; units%commitSlice == 0 {
				f.yieldLocked()
			}
			it := &o.items[i]
			c := f.crawlLocked(n.crawl, true)
			q := f.queueLocked(c, n.key, true)
			if !it.Known {
				sk := seenKey{c.cid, n.hash}
				if _, ok := sc.written[sk]; n.found || ok {
					o.statuses[i] = Skipped
					continue
				}
				sc.inserted = append(sc.inserted, sk)
				f.mu.seq++
				pos := entryPos{prio: it.Info.Priority, depth: clampDepth(it.Info.Depth), seq: f.mu.seq}
				if it.Dated {
					// To the second, the resolution of URLFrontier's
					// dates: a second's URLs share the key's due bytes
					// (smaller store blocks), in order of arrival.
					pos.due = now.Truncate(time.Second).UnixNano()
				}
				rec := urlRecord{state: stateQueued, qid: q.rec.qid, pos: pos, created: now.Unix()}
				b.Set(urlKey(c.cid, n.hash), rec.encode(), nil)
				sc.written[sk] = rec
				val := encodeEntry(n.hash, it.Info.URL, it.Info.Metadata, rec.created)
				b.Set(entryKey(c.cid, q.rec.qid, pos), val, nil)
				recordAhead(q, pos, val)
				touch(q)
				q.rec.queued++
				o.statuses[i] = OK
				continue
			}
			// Known: overwrite, ending any lease.
			created := now.Unix()
			if r, ok := sc.written[seenKey{c.cid, n.hash}]; ok {
				n.found, n.rec = true, r
			} else if n.leased && f.mu.purged[seenKey{c.cid, n.hash}] {
				// PurgeURLs removed the URL earlier in this group, after
				// its record was taken from the lease.
				n.found = false
			}
			if n.found {
				created = n.rec.created
				if oq := c.byQID(n.rec.qid); oq != nil {
					touch(oq)
					switch n.rec.state {
					case stateQueued:
						// An entry key is set once (its sequence number is
						// new: Frontier.mu.seq starts from the clock at
						// Open, past the last run's) and deleted once, so a
						// single delete may annihilate with the set in a
						// flush or compaction instead of leaving a tombstone
						// that Get's iterators step over until it reaches
						// the last level.
						b.SingleDelete(entryKey(c.cid, n.rec.qid, n.rec.pos), nil)
						recordAhead(oq, n.rec.pos, nil)
						if oq.rec.queued > 0 {
							oq.rec.queued--
						}
					case stateCompleted:
						b.Delete(doneKey(c.cid, n.rec.qid, n.hash), nil)
						if oq.rec.completed > 0 {
							oq.rec.completed--
						}
					}
					if l := oq.leased[n.hash]; l != nil {
						l.acking = true
						sc.release = append(sc.release, l)
					} else if n.rec.state == stateQueued {
						sc.sweep = append(sc.sweep, leaseRef{oq, n.hash})
					}
				}
			}
			touch(q)
			if h := it.Hold.UnixNano(); !it.Hold.IsZero() && h > q.rec.blocked {
				q.rec.blocked = h // rescheduled with the touched queues below
				f.mu.dirty[q] = struct{}{}
			}
			rec := urlRecord{qid: q.rec.qid, created: created}
			if it.RefetchFrom.IsZero() {
				rec.state = stateCompleted
				q.rec.completed++
				// The URL and its metadata, for ListURLs (a queued URL's
				// are in its queue entry).
				b.Set(doneKey(c.cid, q.rec.qid, n.hash), encodeEntry(n.hash, it.Info.URL, it.Info.Metadata, rec.created), nil)
			} else {
				f.mu.seq++
				rec.state = stateQueued
				rec.pos = entryPos{due: it.RefetchFrom.UnixNano(), prio: it.Info.Priority, depth: clampDepth(it.Info.Depth), seq: f.mu.seq}
				val := encodeEntry(n.hash, it.Info.URL, it.Info.Metadata, rec.created)
				b.Set(entryKey(c.cid, q.rec.qid, rec.pos), val, nil)
				recordAhead(q, rec.pos, val)
				q.rec.queued++
			}
			b.Set(urlKey(c.cid, n.hash), rec.encode(), nil)
			// The written record also stops a later discovered copy in
			// this group.
			sc.written[seenKey{c.cid, n.hash}] = rec
			o.statuses[i] = OK
			if !n.found {
				// A URL new to the store, as a discovered one. (One that
				// was stored already, the common case of an
				// acknowledgement, is known to every seen-test since its
				// first insert, which is remembered for them.)
				sc.inserted = append(sc.inserted, seenKey{c.cid, n.hash})
			}
		}
	}
	for q, r := range sc.touched {
		if (queueCounts{q.rec.queued, q.rec.completed}) != r {
			f.mu.dirty[q] = struct{}{}
		}
	}
	for c := range f.mu.dirtyCrw {
		if c.deleted {
			continue
		}
		b.Set(crawlKey(c.name), crawlRecord{cid: c.cid, nextQID: c.nextQID}.encode(), nil)
	}
	for q := range f.mu.dirty {
		if q.crawl.deleted || q.crawl.queues[q.key] != q {
			continue
		}
		b.Set(queueKey(q.crawl.cid, q.key), q.rec.encode(), nil)
		f.queueWrites.Add(1)
	}
	clear(f.mu.dirtyCrw)
	clear(f.mu.dirty)
	f.mu.purged = nil
	f.mu.Unlock()
	// The seen cache is lock-free, and adding to it is a cache miss per
	// URL (32 MiB of slots): it is done after the lock, still before the
	// batch is applied, as it was under the lock.
	for _, k := range sc.inserted {
		f.seen.add(fingerprint(k.cid, k.h))
		if f.filter != nil {
			f.filter.add(k.cid, k.h)
		}
	}

	if f.testHookBeforeApply != nil {
		f.testHookBeforeApply()
	}
	// A failed apply returns with the read-ahead holds in place: Get then
	// reads those queues from the store, which is all it can trust.
	if !b.Empty() {
		if sync {
			if err := f.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
				return nil, fmt.Errorf("frontier: commit: %w", err)
			}
			pending = true
		} else if err := b.Commit(pebble.NoSync); err != nil {
			return nil, fmt.Errorf("frontier: commit: %w", err)
		}
	}
	// Remember this group's inserts for the next recentGroups groups, or
	// fewer when they add up to more than recentMax.
	if gen+1 > recentGroups {
		f.forgetRecentGroup(gen + 1 - recentGroups)
	}
	slot := &f.recentRing[gen%recentGroups]
	*slot = append((*slot)[:0], sc.inserted...)
	f.recentCount += len(sc.inserted)
	for _, k := range sc.inserted {
		f.recent[k] = gen + 1
	}
	for f.recentCount > f.recentMax && f.recentFloor <= gen {
		f.forgetRecentGroup(max(f.recentFloor, 1))
	}
	f.gen.Store(gen + 1)
	if f.testHookAfterApply != nil {
		f.testHookAfterApply()
	}

	f.mu.Lock()
	// The batch is applied: bring the read-aheads of the queues it wrote
	// up to date and let Get use them again. (A queue whose patches are
	// not all applied is still held: Get reads the applied store.)
	units = 0
	for _, a := range sc.ahead {
		if units++; units%commitSlice == 0 {
			f.yieldLocked()
		}
		a.q.aheadHold--
		f.patchAheadLocked(a)
	}
	if holdAll {
		f.mu.ahead.holdAll--
	}
	f.trimAheadLocked()
	for _, l := range sc.release {
		if units++; units%commitSlice == 0 {
			f.yieldLocked()
		}
		l.acking = false
		f.releaseLocked(l)
	}
	// A lease made between two slices above read the applied batch: the
	// sweep clears its record too, which only costs its ack a read.
	sweepLeasesLocked(sc.sweep)
	for q := range sc.touched {
		if units++; units%commitSlice == 0 {
			f.yieldLocked()
		}
		f.unparkLocked(q)
		q.nextDue = 0
		f.rescheduleLocked(q)
	}
	for _, o := range group {
		if o.after != nil && o.err == nil {
			o.after()
		}
	}
	f.wakeLocked()
	f.mu.Unlock()
	if pending {
		return b, nil
	}
	return nil, nil
}

// leaseRef names a URL of a queue, whose lease (if any) the committer
// checks after a commit.
type leaseRef struct {
	q *queue
	h urlHash
}

// sweepLeasesLocked runs once a group's batch is applied and the leases it
// acknowledged are released. A Get that ran while the batch was being
// applied (Frontier.mu is free then) may have read the store as it was
// before, and leased a URL from an entry the batch deleted: that lease must
// not stand for the URL record. It can happen only to a URL that no lease
// held when the group was built (a Known put by another path than the
// lease holder's ack): a held lease keeps Get off the URL until it is
// released here, and the entry the batch writes instead (a refetch) is
// either not yet visible to such a Get or already the committed one. So
// refs lists just those URLs, in the queue whose entry was deleted; any
// lease now held on them comes from that window and loses its record (its
// ack reads the store). Leases made later read the committed batch.
func sweepLeasesLocked(refs []leaseRef) {
	for _, r := range refs {
		if l := r.q.leased[r.h]; l != nil {
			l.hasRec = false
		}
	}
}

func clampDepth(d int) uint16 {
	if d < 0 {
		return 0
	}
	if d > 65535 {
		return 65535
	}
	return uint16(d)
}

// byQID finds a queue by id (linear in the crawl's queues only on a miss of
// the index, which is rebuilt lazily).
func (c *crawl) byQID(qid uint32) *queue {
	if q := c.qidIndex[qid]; q != nil {
		return q
	}
	if c.qidIndex == nil {
		c.qidIndex = make(map[uint32]*queue, len(c.queues))
	}
	for _, q := range c.queues {
		c.qidIndex[q.rec.qid] = q
	}
	return c.qidIndex[qid]
}
