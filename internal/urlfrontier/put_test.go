package urlfrontier

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"google.golang.org/grpc"

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
