package urlfrontier

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// Streaming puts. A reader takes items off the stream only while fewer than
// the in-flight bound are waiting for their ack (a semaphore taken before
// each Recv), so a client that sends faster than the frontier stores is held
// back by HTTP/2 flow control instead of filling memory. A few workers
// each hand what the reader queued for them to one frontier.Put, so that
// items of one stream share commits (and their fsync) with each other and
// with other streams. Items of one URL are applied in the order they were
// sent; acks may come back in another order (they carry the item's ID).

// putWorkers is the number of frontier.Put calls one stream may have in
// flight.
const putWorkers = 4

// maxGather bounds the items one worker hands to one frontier.Put.
const maxGather = 512

// putItem is a PutURLs item read and validated.
type putItem struct {
	id   string
	item frontier.Item
	skip bool // invalid: acked SKIPPED without reaching the frontier
}

// putDispatch hands a PutURLs stream's items to its workers. An item joins
// the queue of a worker that already has an item of its URL queued or in
// flight (so that the items of one URL are applied in the order sent); any
// other item joins the queue of a worker that has not yet taken its queue,
// or else an idle worker's, or else a busy one's, in turn. So a burst of
// acknowledgements (a crawler's ten URLs of one GetURLs) goes to the frontier
// in one Put, one commit group operation and one wakeup of one worker,
// instead of being spread over every worker by a hash of its URL, and a
// stream that keeps every worker busy still has putWorkers Puts in flight.
type putDispatch struct {
	mu      sync.Mutex
	workers [putWorkers]struct {
		queue []putItem
		busy  bool          // in frontier.Put with the queue it took
		wake  chan struct{} // capacity 1: the queue was empty and is not
	}
	// owner maps each URL with items queued or in flight to its worker
	// and the number of those items.
	owner  map[string]putOwner
	next   int  // the busy worker the next unowned item joins, when all are busy
	closed bool // the reader is done: workers end once their queue is empty
}

type putOwner struct{ worker, items int }

func newPutDispatch() *putDispatch {
	d := &putDispatch{owner: map[string]putOwner{}}
	for i := range d.workers {
		d.workers[i].wake = make(chan struct{}, 1)
	}
	return d
}

// add queues it for a worker.
func (d *putDispatch) add(it putItem) {
	u := it.item.Info.URL
	d.mu.Lock()
	o, owned := d.owner[u]
	if !owned {
		o.worker = d.pickLocked()
	}
	o.items++
	d.owner[u] = o
	w := &d.workers[o.worker]
	w.queue = append(w.queue, it)
	first := len(w.queue) == 1
	d.mu.Unlock()
	if first {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// pickLocked chooses the worker of an item whose URL has none.
func (d *putDispatch) pickLocked() int {
	idle := -1
	for i := range d.workers {
		w := &d.workers[i]
		if w.busy {
			continue
		}
		if len(w.queue) > 0 {
			return i // gathering: join its batch
		}
		if idle < 0 {
			idle = i
		}
	}
	if idle >= 0 {
		return idle
	}
	d.next = (d.next + 1) % putWorkers
	return d.next
}

// close tells the workers that no item will come.
func (d *putDispatch) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	for i := range d.workers {
		select {
		case d.workers[i].wake <- struct{}{}:
		default:
		}
	}
}

// take returns up to maxGather items of worker i's queue, and marks it
// busy; done reports that the reader is done and the queue empty.
func (d *putDispatch) take(i int, batch []putItem) (_ []putItem, done bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := &d.workers[i]
	n := min(len(w.queue), maxGather)
	batch = append(batch[:0], w.queue[:n]...)
	clear(w.queue[:n])
	w.queue = append(w.queue[:0], w.queue[n:]...)
	w.busy = n > 0
	return batch, n == 0 && d.closed
}

// finish records that worker i stored batch.
func (d *putDispatch) finish(i int, batch []putItem) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, it := range batch {
		u := it.item.Info.URL
		if o := d.owner[u]; o.items > 1 {
			o.items--
			d.owner[u] = o
		} else {
			delete(d.owner, u)
		}
	}
	d.workers[i].busy = false
}

// PutURLs stores discovered and known URLs, one ack per item.
func (s *Server) PutURLs(stream pb.URLFrontier_PutURLsServer) error {
	ctx := stream.Context()
	sem := make(chan struct{}, s.o.MaxPutInFlight)
	d := newPutDispatch()
	var sendMu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer d.close()
		for {
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			in, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			d.add(s.readItem(in))
		}
	})
	for i := range putWorkers {
		g.Go(func() error {
			batch := make([]putItem, 0, 16)
			wake := d.workers[i].wake
			for {
				select {
				case <-wake:
				case <-gctx.Done():
					return nil
				}
				// Take the queue until it is empty (a wakeup may have
				// been spent on a batch taken earlier).
				for {
					var done bool
					batch, done = d.take(i, batch)
					if done {
						return nil
					}
					if len(batch) == 0 {
						break
					}
					statuses := s.putBatch(gctx, "PutURLs", batch)
					sendMu.Lock()
					var err error
					for j, it := range batch {
						if err = stream.Send(&pb.AckMessage{ID: it.id, Status: pb.AckMessage_Status(statuses[j])}); err != nil {
							break
						}
					}
					sendMu.Unlock()
					d.finish(i, batch)
					for range batch {
						<-sem
					}
					if err != nil {
						return err
					}
				}
			}
		})
	}
	return g.Wait()
}

// readItem validates one PutURLs item.
func (s *Server) readItem(in *pb.URLItem) putItem {
	var info *pb.URLInfo
	var it putItem
	switch x := in.GetItem().(type) {
	case *pb.URLItem_Discovered:
		info = x.Discovered.GetInfo()
	case *pb.URLItem_Known:
		info = x.Known.GetInfo()
		it.item.Known = true
		if d := x.Known.GetRefetchableFromDate(); d > 0 {
			it.item.RefetchFrom = time.Unix(int64(min(d, maxBlockSeconds)), 0)
		}
	}
	it.id = in.GetID()
	if it.id == "" {
		it.id = info.GetUrl()
	}
	if info == nil {
		it.skip = true
		s.log.Debug("put: item skipped", "id", truncate(it.id), "reason", "neither discovered nor known")
		return it
	}
	var err error
	if it.item.Info, err = toItem(info); err != nil {
		it.skip = true
		s.log.Debug("put: item skipped", "id", truncate(it.id), "reason", err.Error())
	}
	return it
}

// putBatch stores the valid items of batch and returns one status each;
// when the frontier fails they are FAIL (the client may resend).
func (s *Server) putBatch(ctx context.Context, method string, batch []putItem) []frontier.Status {
	statuses := make([]frontier.Status, len(batch))
	items := make([]frontier.Item, 0, len(batch))
	idx := make([]int, 0, len(batch))
	for i, it := range batch {
		if it.skip {
			statuses[i] = frontier.Skipped
			continue
		}
		// A discovered URL is dated now, as URLFrontier sets its next
		// fetch date, so that a queue serves it after the URLs due before.
		it.item.Dated = !it.item.Known
		items = append(items, it.item)
		idx = append(idx, i)
	}
	if len(items) > 0 {
		st, err := s.f.Put(ctx, items)
		for j, i := range idx {
			if err != nil {
				statuses[i] = frontier.Fail
			} else {
				statuses[i] = st[j]
			}
		}
		if err != nil && ctx.Err() == nil {
			s.log.Error("put failed", "items", len(items), "err", err)
		}
	}
	s.o.Metrics.urlsIn(method, len(batch))
	return statuses
}

// PutDiscovered stores batches of discovered URLs, one ack per batch.
func (s *Server) PutDiscovered(stream pb.URLFrontier_PutDiscoveredServer) error {
	ctx := stream.Context()
	// A batch waits for the earlier batches of the stream, still in
	// flight, that hold one of its URLs (after), so that the items of one
	// URL are applied in the order sent, as in PutURLs; batches without a
	// URL in common are stored concurrently. The workers take batches in
	// the order read, so the earliest batch in flight never waits.
	type batch struct {
		id    string
		items []putItem
		after []chan struct{}
		done  chan struct{}
	}
	queued := make(chan batch, s.o.MaxBatchesInFlight)
	sem := make(chan struct{}, s.o.MaxBatchesInFlight)
	var sendMu sync.Mutex
	var lastMu sync.Mutex
	last := map[string]chan struct{}{} // URL → done of the last batch in flight holding it
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(queued)
		for {
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			in, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			b := batch{id: in.GetID(), items: make([]putItem, len(in.GetItems())), done: make(chan struct{})}
			for i, info := range in.GetItems() {
				it := &b.items[i]
				var err error
				if it.item.Info, err = toItem(info); err != nil {
					it.skip = true
				}
			}
			lastMu.Lock()
			for _, it := range b.items {
				if it.skip {
					continue
				}
				u := it.item.Info.URL
				if c, ok := last[u]; ok && c != b.done && !slices.Contains(b.after, c) {
					b.after = append(b.after, c)
				}
				last[u] = b.done
			}
			lastMu.Unlock()
			queued <- b
		}
	})
	for range putWorkers {
		g.Go(func() error {
			for b := range queued {
				for _, c := range b.after {
					select {
					case <-c:
					case <-gctx.Done():
					}
				}
				st := s.putBatch(gctx, "PutDiscovered", b.items)
				lastMu.Lock()
				for _, it := range b.items {
					if u := it.item.Info.URL; !it.skip && last[u] == b.done {
						delete(last, u)
					}
				}
				lastMu.Unlock()
				close(b.done)
				ack := &pb.BatchAck{ID: b.id, Statuses: make([]pb.AckMessage_Status, len(st))}
				for i, v := range st {
					ack.Statuses[i] = pb.AckMessage_Status(v)
				}
				sendMu.Lock()
				err := stream.Send(ack)
				sendMu.Unlock()
				<-sem
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}
