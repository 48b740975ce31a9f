package frontier

import (
	"context"
	"testing"
	"time"
)

// While serving is paused a ready queue does not end WaitReady early (a
// crawler waiting on a paused frontier would otherwise spin); a resume
// wakes it.
func TestWaitReadyPaused(t *testing.T) {
	fx := newFixture(t)
	fx.put(Item{Info: URLInfo{URL: "http://a.test/"}})
	if _, ok := fx.f.NextReady(); !ok {
		t.Fatal("no ready queue")
	}
	fx.f.SetActive(false)
	returned := make(chan struct{})
	go func() {
		fx.f.WaitReady(context.Background(), time.Hour)
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("WaitReady returned at once on a paused frontier with a ready queue")
	case <-time.After(200 * time.Millisecond):
	}
	fx.f.SetActive(true)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("resume did not wake WaitReady")
	}
}
