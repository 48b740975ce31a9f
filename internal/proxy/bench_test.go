package proxy

import (
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// benchProxy measures the proxy's own cost per request over loopback, the
// gate open (no delay, many in flight), with 1 KB pages.
func benchProxy(b *testing.B, cacheable bool, parallelism int) {
	page := make([]byte, 1024)
	o := newOrigin(&testing.T{}, "", func(w http.ResponseWriter, r *http.Request) {
		if cacheable {
			w.Header().Set("Cache-Control", "max-age=3600")
		} else {
			w.Header().Set("Cache-Control", "max-age=3600")
		}
		w.Write(page)
	})
	defer o.Close()
	t := &testing.T{}
	e := newEnv(t, envOpts{cache: true, pol: politeness.Config{MaxInFlight: 1024}, cfg: Config{MaxQueuePerHost: 100000, MaxQueue: 100000}})
	defer func() { e.front.Close(); e.proxy.Close(); e.closeDB() }()
	c := e.client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
	var n atomic.Int64
	get := func() {
		i := n.Add(1)
		u := o.URL + "/p/" + strconv.FormatInt(i, 10)
		if cacheable {
			u = o.URL + "/p/" + strconv.FormatInt(i%100, 10)
		}
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for range 200 {
		get()
	}
	b.ReportAllocs()
	b.ResetTimer()
	if parallelism == 0 {
		for range b.N {
			get()
		}
		return
	}
	b.SetParallelism(parallelism)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			get()
		}
	})
}

func BenchmarkProxyMiss(b *testing.B) { benchProxy(b, false, 32) }
func BenchmarkProxyHit(b *testing.B)  { benchProxy(b, true, 32) }

// BenchmarkProxyMissSerial is one client asking one request at a time: the
// shape of the latency bar (miss-1c in bench/proxy/run.sh).
func BenchmarkProxyMissSerial(b *testing.B) { benchProxy(b, false, 0) }
