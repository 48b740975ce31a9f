package console

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestEventsStream(t *testing.T) {
	fx := newFixture(t, Config{MaxSubscribers: 1})
	fx.crawl.set(func(p *Progress) { p.Pages = 7 })
	srv := httptest.NewServer(fx.h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	next := func() Overview {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var o Overview
				if err := json.Unmarshal([]byte(data), &o); err != nil {
					t.Fatal(err)
				}
				return o
			}
		}
	}
	if o := next(); o.Pages != 7 {
		t.Errorf("first event: pages %d, want 7", o.Pages)
	}
	// The one subscriber allowed is taken: a second stream is refused.
	resp2, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second subscriber: %d, want 503", resp2.StatusCode)
	}
	fx.crawl.set(func(p *Progress) { p.Pages = 9 })
	fx.s.hub.publish(fx.s.overviewEvent())
	if o := next(); o.Pages != 9 {
		t.Errorf("published event: pages %d, want 9", o.Pages)
	}
}

// TestUpdateRate runs the console for a minute of fake time and counts the
// updates a subscriber gets: at most one per second, even when a faster
// interval is asked for.
func TestUpdateRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Config{UpdateInterval: 100 * time.Millisecond}, Sources{Crawl: &progress{}})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := s.hub.subscribe()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		got := 0
		for range 60 {
			time.Sleep(time.Second)
			synctest.Wait()
			select {
			case <-ch:
				got++
			default:
			}
		}
		cancel()
		<-done
		if got < 55 || got > 60 {
			t.Errorf("%d updates in 60 s, want about one per second", got)
		}
		if _, ok := <-ch; ok {
			t.Error("subscriber channel still open after Run returned")
		}
	})
}

func TestHubBounded(t *testing.T) {
	t.Parallel()
	h := newHub(2)
	a, _ := h.subscribe()
	b, _ := h.subscribe()
	if _, err := h.subscribe(); err == nil {
		t.Fatal("third subscriber accepted")
	}
	h.publish([]byte("1"))
	h.publish([]byte("2")) // a and b have not read: dropped, not blocked
	if got := string(<-a); got != "1" {
		t.Errorf("a got %q, want the first update", got)
	}
	h.unsubscribe(b)
	if _, err := h.subscribe(); err != nil {
		t.Errorf("a freed slot was not reused: %v", err)
	}
}
