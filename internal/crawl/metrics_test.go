package crawl

import (
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// TestStalledAt: the progress line says the crawl waits when nothing is
// due for a second or more, even with slow fetches still in flight.
func TestStalledAt(t *testing.T) {
	now := time.Date(2026, 11, 28, 16, 8, 8, 0, time.UTC)
	tests := []struct {
		name string
		st   frontier.Stats
		want bool
	}{
		{"retries due in 30 s", frontier.Stats{Size: 2234, WaitingQueues: 1363, NextDue: now.Add(30 * time.Second)}, true},
		{"a queue ready now", frontier.Stats{Size: 2234, ReadyQueues: 1, WaitingQueues: 1362, NextDue: now.Add(30 * time.Second)}, false},
		{"next due within the second (a host's delay)", frontier.Stats{Size: 10, WaitingQueues: 10, NextDue: now.Add(200 * time.Millisecond)}, false},
		{"all in flight", frontier.Stats{Size: 5, InProcess: 5}, false},
		{"nothing queued", frontier.Stats{}, false},
		{"a remote frontier (no queue counts)", frontier.Stats{Size: 100, ActiveQueues: 40}, false},
	}
	for _, tt := range tests {
		if got := stalledAt(tt.st, now); got != tt.want {
			t.Errorf("%s: stalledAt = %v, want %v", tt.name, got, tt.want)
		}
	}
}
