package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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

func TestSlot(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	cases := map[string]uint16{"foo": 12182, "123456789": 12739, "{user1000}.following": Slot("user1000"), "a{}b": Slot("a{}b")}
	for k, want := range cases {
		if got := Slot(k); got != want {
			t.Errorf("Slot(%q) = %d, want %d", k, got, want)
		}
	}
	if crc16("123456789") != 0x31C3 {
		t.Errorf("crc16 check value = %#x, want 0x31c3", crc16("123456789"))
	}
}

func TestClusterFailover(t *testing.T) {
	c := StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer cl.Close()
	if err := cl.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	slot, err := cl.ClusterKeySlot(ctx, "{tag}x").Result()
	if err != nil || uint16(slot) != Slot("{tag}x") {
		t.Fatalf("CLUSTER KEYSLOT = %d, %v; Slot = %d", slot, err, Slot("{tag}x"))
	}
	master, err := c.MasterFor(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := cl.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	if err := c.Kill(master); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	nm, err := c.WaitFailover(ctx, master)
	if err != nil {
		t.Fatal(err)
	}
	if nm == master || nm == "" {
		t.Fatalf("new master %q after killing %s", nm, master)
	}
	t.Logf("failover of %s to %s in %v", master, nm, time.Since(start))
	var got string
	for i := range 50 {
		got, err = cl.Get(ctx, "k").Result()
		if err == nil {
			break
		}
		// go-redis reloads its slot map on MOVED, not on a refused
		// connection to the dead master: ask for it.
		cl.ReloadState(ctx)
		time.Sleep(time.Duration(i+1) * 20 * time.Millisecond)
	}
	if got != "v" {
		t.Fatalf("after failover GET k = %q, %v", got, err)
	}
}
