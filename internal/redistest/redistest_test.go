package redistest

import (
	"testing"
)

func TestStart(t *testing.T) {
	srv := Start(t)
	if err := ping(srv.Addr); err != nil {
		t.Fatalf("PING %s: %v", srv.Addr, err)
	}
	// Two servers side by side get different ports.
	other := Start(t)
	if other.Addr == srv.Addr {
		t.Fatalf("two servers on %s", srv.Addr)
	}
}

func TestStoppedAtCleanup(t *testing.T) {
	var addr string
	t.Run("inner", func(t *testing.T) {
		addr = Start(t).Addr
	})
	if err := ping(addr); err == nil {
		t.Fatalf("redis-server on %s still answers after its test ended", addr)
	}
}
