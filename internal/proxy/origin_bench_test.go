package proxy

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkOriginPoolGetPut measures taking an idle connection and putting
// it back, the pool's own cost per request on a kept-alive connection
// (reaper bookkeeping included), over 64 origins.
func BenchmarkOriginPoolGetPut(b *testing.B) {
	o := newOriginPool(nil, 4, 4096, time.Minute, 0, 64<<10)
	defer o.closeIdle()
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "h" + strconv.Itoa(i) + ".test:80"
		c, s := net.Pipe()
		defer s.Close()
		o.put(&originConn{c: c, key: keys[i]})
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
