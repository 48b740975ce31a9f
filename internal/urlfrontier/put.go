package urlfrontier

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
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
// gather what the reader queued into one frontier.Put each, so that items
// of one stream share commits (and their fsync) with each other and with
// other streams. Items of one URL are applied in the order they were sent;
// acks may come back in another order (they carry the item's ID).

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

// PutURLs stores discovered and known URLs, one ack per item.
func (s *Server) PutURLs(stream pb.URLFrontier_PutURLsServer) error {
	ctx := stream.Context()
	sem := make(chan struct{}, s.o.MaxPutInFlight)
	// Items of one URL go to one worker, so that they are applied in the
	// order they were sent (a refetch date, then completed).
	var workers [putWorkers]chan putItem
	for i := range workers {
		workers[i] = make(chan putItem, s.o.MaxPutInFlight)
	}
	var sendMu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer func() {
			for _, w := range workers {
				close(w)
			}
		}()
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
			it := s.readItem(in)
			h := fnv.New32a()
			h.Write([]byte(it.item.Info.URL))
			workers[h.Sum32()%putWorkers] <- it
		}
	})
	for _, queued := range workers {
		g.Go(func() error {
			batch := make([]putItem, 0, maxGather)
			for first := range queued {
				batch = append(batch[:0], first)
			gather:
				for len(batch) < maxGather {
					select {
					case it, ok := <-queued:
						if !ok {
							break gather
						}
						batch = append(batch, it)
					default:
						break gather
					}
				}
				statuses := s.putBatch(gctx, "PutURLs", batch)
				sendMu.Lock()
				var err error
				for i, it := range batch {
					if err = stream.Send(&pb.AckMessage{ID: it.id, Status: pb.AckMessage_Status(statuses[i])}); err != nil {
						break
					}
				}
				sendMu.Unlock()
				for range batch {
					<-sem
				}
				if err != nil {
					return err
				}
			}
			return nil
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
	type batch struct {
		id    string
		items []putItem
	}
	queued := make(chan batch, s.o.MaxBatchesInFlight)
	sem := make(chan struct{}, s.o.MaxBatchesInFlight)
	var sendMu sync.Mutex
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
			b := batch{id: in.GetID(), items: make([]putItem, len(in.GetItems()))}
			for i, info := range in.GetItems() {
				it := &b.items[i]
				var err error
				if it.item.Info, err = toItem(info); err != nil {
					it.skip = true
				}
			}
			queued <- b
		}
	})
	for range putWorkers {
		g.Go(func() error {
			for b := range queued {
				st := s.putBatch(gctx, "PutDiscovered", b.items)
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
