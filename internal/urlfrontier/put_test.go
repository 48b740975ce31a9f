package urlfrontier

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/courtesy-crawler/courtesy/internal/frontier"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// slowAckStream is a PutURLs stream whose client sends total items at once
// but reads no ack until released: it records, at each Recv, how many
// items the server has read without acking them.
type slowAckStream struct {
	grpc.ServerStream
	ctx     context.Context
	total   int
	release chan struct{}

	mu       sync.Mutex
	recvd    int
	acked    int
	maxAhead int
	reached  chan struct{} // closed when recvd reaches the bound
	bound    int
}

func (s *slowAckStream) Context() context.Context { return s.ctx }

func (s *slowAckStream) Recv() (*pb.URLItem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recvd == s.total {
		return nil, io.EOF
	}
	s.recvd++
	s.maxAhead = max(s.maxAhead, s.recvd-s.acked)
	if s.recvd == s.bound {
		close(s.reached)
	}
	u := fmt.Sprintf("http://h%d.test/", s.recvd)
	return discovered(u, info(u)), nil
}

func (s *slowAckStream) Send(*pb.AckMessage) error {
	<-s.release
	s.mu.Lock()
	s.acked++
	s.mu.Unlock()
	return nil
}

// TestPutURLsFlowControl: the server stops reading a PutURLs stream once
// MaxPutInFlight items wait for their ack.
func TestPutURLsFlowControl(t *testing.T) {
	fx := newFixture(t)
	const bound = 32
	srv, err := NewServer(Options{Frontier: fx.f, MaxPutInFlight: bound})
	if err != nil {
		t.Fatal(err)
	}
	st := &slowAckStream{ctx: context.Background(), total: 5 * bound, bound: bound, release: make(chan struct{}), reached: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- srv.PutURLs(st) }()
	<-st.reached
	// While no ack can be sent, the reader is held at the bound: every
	// Recv so far saw at most bound items unacked.
	st.mu.Lock()
	ahead := st.maxAhead
	st.mu.Unlock()
	close(st.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st.maxAhead > bound || ahead > bound {
		t.Errorf("items read ahead of their acks = %d, bound %d", st.maxAhead, bound)
	}
	if st.acked != st.total {
		t.Errorf("acks = %d, want %d", st.acked, st.total)
	}
}

// TestPutDispatch: a burst of items joins one worker's batch; an item of a
// URL with an item queued or in flight goes to that item's worker, behind
// it; other items go to an idle worker while the first is busy, and in
// turn to busy ones when none is idle.
func TestPutDispatch(t *testing.T) {
	item := func(u string) putItem {
		return putItem{id: u, item: frontier.Item{Info: frontier.URLInfo{URL: u}}}
	}
	queued := func(d *putDispatch) []int {
		var n []int
		for i := range d.workers {
			n = append(n, len(d.workers[i].queue))
		}
		return n
	}
	d := newPutDispatch()
	for i := range 10 {
		d.add(item(fmt.Sprint("http://a.test/", i)))
	}
	if got := queued(d); !slices.Equal(got, []int{10, 0, 0, 0}) {
		t.Fatalf("burst of 10 queued %v, want all with the first worker", got)
	}
	batch, done := d.take(0, nil)
	if len(batch) != 10 || done {
		t.Fatalf("take = %d items, done %v", len(batch), done)
	}
	d.add(item("http://a.test/3")) // in flight with worker 0
	d.add(item("http://b.test/"))  // new: an idle worker
	d.add(item("http://c.test/"))  // joins b's batch
	if got := queued(d); !slices.Equal(got, []int{1, 2, 0, 0}) {
		t.Fatalf("queued %v, want [1 2 0 0]", got)
	}
	for i := 1; i < putWorkers; i++ {
		d.add(item(fmt.Sprint("http://w", i, ".test/")))
		if b, _ := d.take(i, nil); len(b) == 0 {
			t.Fatalf("worker %d took nothing", i)
		}
	}
	// Every worker busy: new URLs go to them in turn.
	for i := range putWorkers {
		d.add(item(fmt.Sprint("http://x.test/", i)))
	}
	if got := queued(d); !slices.Equal(got, []int{2, 1, 1, 1}) {
		t.Fatalf("all busy: queued %v, want one new item each", got)
	}
	d.finish(0, batch)
	if o := d.owner["http://a.test/3"]; o.items != 1 || o.worker != 0 {
		t.Errorf("owner of a URL with one item left = %+v", o)
	}
	if _, ok := d.owner["http://a.test/4"]; ok {
		t.Error("a stored URL keeps its owner")
	}
	d.close()
	for i := range d.workers {
		for {
			b, done := d.take(i, nil)
			if done {
				break
			}
			if len(b) == 0 {
				t.Fatalf("worker %d: empty queue, not done after close", i)
			}
			d.finish(i, b)
		}
	}
}

// TestPutDiscoveredSameURLInOrder: a URL in two batches of one
// PutDiscovered stream is stored from the batch sent first (OK there,
// SKIPPED in the later one), as PutURLs applies the items of one URL in
// the order sent. The batches went to four workers at once, so a small
// batch could overtake a large one sent before it (seen by the Python
// client, tools/pygrpc, about one run in fifteen).
func TestPutDiscoveredSameURLInOrder(t *testing.T) {
	fx := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := fx.c.PutDiscovered(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const pairs = 100
	for k := range pairs {
		big := &pb.DiscoveredBatch{ID: fmt.Sprint("big", k)}
		for j := range 40 {
			big.Items = append(big.Items, info(fmt.Sprintf("http://b%d.test/%d", k, j)))
		}
		shared := fmt.Sprintf("http://shared.test/%d", k)
		big.Items = append(big.Items, &pb.URLInfo{Url: shared, Metadata: map[string]*pb.StringList{"from": {Values: []string{"big"}}}})
		small := &pb.DiscoveredBatch{ID: fmt.Sprint("small", k), Items: []*pb.URLInfo{{Url: shared, Metadata: map[string]*pb.StringList{"from": {Values: []string{"small"}}}}}}
		if err := s.Send(big); err != nil {
			t.Fatal(err)
		}
		if err := s.Send(small); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	acks := map[string][]pb.AckMessage_Status{}
	for {
		a, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		acks[a.GetID()] = a.GetStatuses()
	}
	bad := 0
	for k := range pairs {
		big, small := acks[fmt.Sprint("big", k)], acks[fmt.Sprint("small", k)]
		if len(big) != 41 || big[40] != pb.AckMessage_OK || !slices.Equal(small, []pb.AckMessage_Status{pb.AckMessage_SKIPPED}) {
			if bad++; bad <= 3 {
				t.Errorf("pair %d: shared URL acked %v in the batch sent first, %v in the later one; want OK, SKIPPED", k, big[len(big)-1:], small)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pairs stored the later batch's URL", bad, pairs)
	}
}
