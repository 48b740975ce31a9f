package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
	"google.golang.org/grpc/metadata"
)

// getIDs numbers the Gets of a traced run.
var getIDs atomic.Int64

// worker is one client of the cycle and latency workloads.
type worker struct {
	s   *store
	c   pb.URLFrontierClient // nil on the direct path
	ack pb.URLFrontier_PutURLsClient
	got chan struct{}
	out atomic.Int64 // acks sent, not yet collected (gRPC)
	// pending counts the direct path's acks in flight (ackLater).
	pending sync.WaitGroup
}

func (s *store) newWorker() *worker {
	w := &worker{s: s}
	if s.c != nil {
		w.c = s.client()
		st, err := w.c.PutURLs(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		w.ack = st
		w.got = make(chan struct{}, 1<<16)
		go func() {
			for {
				if _, err := st.Recv(); err != nil {
					return
				}
				w.got <- struct{}{}
			}
		}()
	}
	return w
}

// get leases up to queues × perQueue URLs.
func (w *worker) get(queues, perQueue int) []frontier.URLInfo {
	ctx := context.Background()
	if w.c == nil {
		ls, err := w.s.f.Get(ctx, frontier.GetParams{MaxQueues: queues, MaxURLsPerQueue: perQueue, Lease: time.Minute})
		if err != nil {
			log.Fatal(err)
		}
		out := make([]frontier.URLInfo, len(ls))
		for i, l := range ls {
			out[i] = l.URLInfo
		}
		return out
	}
	if trace.IsEnabled() {
		// Name the call in the trace on both sides (the service's
		// interceptor logs the same id), so that a slow Get can be split
		// into its request, the handler and its response.
		id := fmt.Sprint(getIDs.Add(1))
		ctx = metadata.AppendToOutgoingContext(ctx, "x-bench-get", id)
		trace.Log(ctx, "get-send", id)
		defer trace.Log(ctx, "get-done", id)
	}
	st, err := w.c.GetURLs(ctx, &pb.GetParams{MaxQueues: uint32(queues), MaxUrlsPerQueue: uint32(perQueue), DelayRequestable: 60,
		Item: &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}})
	if err != nil {
		log.Fatal(err)
	}
	var out []frontier.URLInfo
	for {
		u, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			log.Fatal(err)
		}
		out = append(out, frontier.URLInfo{URL: u.GetUrl(), Key: u.GetKey(), CrawlID: u.GetCrawlID()})
	}
}

// ackAll acknowledges the URLs, completed or (requeue) due again now, and
// waits for the acks.
func (w *worker) ackAll(urls []frontier.URLInfo, requeue bool) {
	if w.c == nil {
		w.put(urls, requeue)
		return
	}
	w.send(urls, requeue)
	w.wait()
}

// ackLater acknowledges the URLs as due again now without waiting for the
// acks, as a crawler's acker does while its workers go on leasing; wait
// collects them.
func (w *worker) ackLater(urls []frontier.URLInfo) {
	if w.c == nil {
		w.pending.Add(1)
		go func() {
			defer w.pending.Done()
			w.put(urls, true)
		}()
		return
	}
	w.send(urls, true)
}

// due is when acknowledged URLs are due again: now with requeue, else
// never (completed).
func due(requeue bool) time.Time {
	if requeue {
		return time.Now()
	}
	return time.Time{}
}

// put acknowledges the URLs on the direct path.
func (w *worker) put(urls []frontier.URLInfo, requeue bool) {
	if len(urls) == 0 {
		return
	}
	at := due(requeue)
	items := make([]frontier.Item, len(urls))
	for i, u := range urls {
		items[i] = frontier.Item{Info: u, Known: true, RefetchFrom: at}
	}
	if _, err := w.s.f.Put(context.Background(), items); err != nil {
		log.Fatal(err)
	}
}

// send acknowledges the URLs over gRPC; wait collects the acks.
func (w *worker) send(urls []frontier.URLInfo, requeue bool) {
	var sec uint64
	if at := due(requeue); !at.IsZero() {
		sec = uint64(at.Unix())
	}
	for _, u := range urls {
		if err := w.ack.Send(&pb.URLItem{Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: &pb.URLInfo{Url: u.URL, Key: u.Key, CrawlID: u.CrawlID}, RefetchableFromDate: sec}}}); err != nil {
			log.Fatal(err)
		}
	}
	w.out.Add(int64(len(urls)))
}

// wait waits for the acks sent and the direct path's acks in flight.
func (w *worker) wait() {
	w.pending.Wait()
	for range w.out.Swap(0) {
		<-w.got
	}
}

func (w *worker) close() {
	if w.ack != nil {
		w.ack.CloseSend()
	}
}
