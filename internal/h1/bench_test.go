package h1

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkClientGetPut measures taking an idle connection and putting
// it back, the client's own cost per request on a kept-alive connection
// (reaper bookkeeping included), over 64 origins.
func BenchmarkClientGetPut(b *testing.B) {
	o := New(Options{MaxIdlePerHost: 4, MaxIdle: 4096, IdleTimeout: time.Minute})
	defer o.CloseIdle()
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "h" + strconv.Itoa(i) + ".test:80"
		c, s := net.Pipe()
		defer s.Close()
		o.put(newConn(c, keys[i]))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		oc, ok := o.get(keys[i%len(keys)])
		if !ok {
			b.Fatal("no idle connection")
		}
		o.put(oc)
	}
}
