package frontier

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestQueuesAndHead(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	items := []Item{
		{Info: URLInfo{URL: "http://a.test/1"}},
		{Info: URLInfo{URL: "http://a.test/2", Priority: 2}},
		{Info: URLInfo{URL: "http://a.test/3"}},
		{Info: URLInfo{URL: "http://b.test/1"}},
	}
	if _, err := fx.f.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	until := fx.clk.Now().Add(time.Hour)
	if err := fx.f.BlockQueueUntil(ctx, "", "b.test", until); err != nil {
		t.Fatal(err)
	}
	if err := fx.f.Retire(ctx, "", "b.test", "dns"); err != nil {
		t.Fatal(err)
	}
	got := map[string]QueueInfo{}
	fx.f.Queues("", func(q QueueInfo) bool { got[q.Key] = q; return true })
	if len(got) != 2 || got["a.test"].Queued != 3 || got["b.test"].Retired != "dns" || !got["b.test"].BlockedUntil.Equal(until) {
		t.Fatalf("Queues = %+v", got)
	}
	if got["a.test"].Delay >= 0 {
		t.Errorf("a.test delay = %v, want negative (default)", got["a.test"].Delay)
	}
	n := 0
	fx.f.Queues("", func(QueueInfo) bool { n++; return false })
	if n != 1 {
		t.Errorf("Queues did not stop when fn returned false: %d calls", n)
	}
	head, err := fx.f.Head(ctx, "", "a.test", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(head) != 2 || head[0].URL != "http://a.test/2" || head[0].Priority != 2 || head[1].URL != "http://a.test/1" {
		t.Fatalf("Head = %+v", head)
	}
	leases, err := fx.f.Get(ctx, GetParams{Key: "a.test", MaxURLsPerQueue: 1})
	if err != nil || len(leases) != 1 {
		t.Fatalf("Get = %v, %v", leases, err)
	}
	head, err = fx.f.Head(ctx, "", "a.test", 10)
	if err != nil || len(head) != 3 || !head[0].Leased || head[1].Leased {
		t.Fatalf("Head after Get = %+v, %v", head, err)
	}
	if q, err := fx.f.Queue("", "a.test"); err != nil || q.InFlight != 1 {
		t.Errorf("Queue = %+v, %v", q, err)
	}
	if _, err := fx.f.Head(ctx, "", "nope.test", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Head of unknown queue: %v, want ErrNotFound", err)
	}
	if _, err := fx.f.Queue("", "nope.test"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Queue of unknown queue: %v, want ErrNotFound", err)
	}
}
