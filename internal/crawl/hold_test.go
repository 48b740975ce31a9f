package crawl

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// recordingFrontier records the crawler's blocks and releases.
type recordingFrontier struct {
	Frontier
	mu    sync.Mutex
	calls []string
}

func (r *recordingFrontier) record(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recordingFrontier) BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error {
	r.record(fmt.Sprintf("block %s %d", key, t.Unix()))
	return r.Frontier.BlockQueueUntil(ctx, crawlID, key, t)
}

func (r *recordingFrontier) Release(info frontier.URLInfo) {
	r.record("release " + info.URL)
	r.Frontier.Release(info)
}

func (r *recordingFrontier) taken() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// TestEndHold: after a fetch the gate's next time for the host travels
// with the URL's acknowledgement (no frontier call of its own), raised
// to an operator's later block; a URL given back unacknowledged blocks
// its queue first, until the later of its hold and its stage's time.
func TestEndHold(t *testing.T) {
	c := openTestCrawler(t, Config{DataDir: t.TempDir()})
	defer c.close()
	rec := &recordingFrontier{Frontier: c.fr}
	c.fr = rec
	l := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://a.test/1", Key: "a.test"}}
	base := time.Unix(1_900_000_000, 0)
	hold, later, op := base.Add(time.Second), base.Add(time.Minute), base.Add(time.Hour)
	completed := func() next { return c.complete(l, nil, &crawllog.Entry{Status: 200}, -1) }
	tests := []struct {
		name     string
		n        func() next
		hold     time.Time
		operator time.Time // an operator's block of a.test
		wantHold time.Time // the acknowledgement's hold (acknowledged)
		want     []string  // the frontier calls of end
	}{
		{name: "acknowledged after a fetch", n: completed, hold: hold, wantHold: hold},
		{name: "acknowledged, an operator's later block", n: completed, hold: hold, operator: op, wantHold: op},
		{name: "acknowledged, an operator's earlier block", n: completed, hold: later, operator: hold, wantHold: later},
		{name: "acknowledged without a fetch", n: completed, operator: op},
		{name: "retried after a fetch", n: func() next { return c.retry(l, &crawllog.Entry{Status: 500}, nil, -1, 0) }, hold: hold, wantHold: hold},
		{name: "given back after a fetch", n: func() next { return next{back: backCanceled} }, hold: hold,
			want: []string{fmt.Sprintf("block a.test %d", hold.Unix()), "release http://a.test/1"}},
		{name: "given back before a fetch", n: func() next { return next{back: backNotYet, until: later} },
			want: []string{fmt.Sprintf("block a.test %d", later.Unix()), "release http://a.test/1"}},
		{name: "given back, its stage's time later than the hold", n: func() next { return next{back: backRobotsRetry, until: later} }, hold: hold,
			want: []string{fmt.Sprintf("block a.test %d", later.Unix()), "release http://a.test/1"}},
		{name: "given back, an operator's later block", n: func() next { return next{back: backWARCFailed} }, hold: hold, operator: op,
			want: []string{fmt.Sprintf("block a.test %d", op.Unix()), "release http://a.test/1"}},
		{name: "given back without a time", n: func() next { return next{back: backCanceled} },
			want: []string{"release http://a.test/1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.cons.blockMu.Lock()
			c.cons.blocks = map[string]time.Time{}
			if !tc.operator.IsZero() {
				c.cons.blocks["a.test"] = tc.operator
			}
			c.cons.blockMu.Unlock()
			n := tc.n()
			acked := c.end(context.Background(), l, n, tc.hold)
			if acked != (n.ack != nil) {
				t.Fatalf("end = %v for %+v", acked, n)
			}
			if got := rec.taken(); !slices.Equal(got, tc.want) {
				t.Errorf("frontier calls %q, want %q", got, tc.want)
			}
			if !acked {
				return
			}
			a := <-c.acks
			if !a.final.Hold.Equal(tc.wantHold) || !a.final.Known {
				t.Errorf("acknowledgement %+v, want the hold %v", a.final, tc.wantHold)
			}
		})
	}
}

// TestGiveBackUnwritten: a URL whose WARC records were lost is given back
// unacknowledged, its queue blocked first until the hold its
// acknowledgement carried.
func TestGiveBackUnwritten(t *testing.T) {
	c := openTestCrawler(t, Config{DataDir: t.TempDir()})
	defer c.close()
	rec := &recordingFrontier{Frontier: c.fr}
	c.fr = rec
	l := frontier.Lease{URLInfo: frontier.URLInfo{URL: "http://a.test/1", Key: "a.test"}}
	hold := time.Unix(1_900_000_000, 0)
	for _, tc := range []struct {
		hold time.Time
		want []string
	}{
		{hold, []string{fmt.Sprintf("block a.test %d", hold.Unix()), "release http://a.test/1"}},
		{time.Time{}, []string{"release http://a.test/1"}},
	} {
		a := &ack{lease: l, final: frontier.Item{Info: l.URLInfo, Known: true, Hold: tc.hold}}
		c.giveBackUnwritten(context.Background(), a)
		if got := rec.taken(); !slices.Equal(got, tc.want) {
			t.Errorf("hold %v: frontier calls %q, want %q", tc.hold, got, tc.want)
		}
	}
}
