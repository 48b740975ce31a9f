package politeness_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// benchGate is a memory gate with robots.txt seeded for n hosts, no delay.
func benchGate(b *testing.B, n int, delay time.Duration) (*politeness.Gate, []*url.URL) {
	b.Helper()
	rs := politeness.NewMemoryRobotsStore()
	urls := make([]*url.URL, n)
	now := time.Now()
	for i := range urls {
		origin := fmt.Sprintf("http://h%05d.example", i)
		seedRobots(b, rs, origin, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n", now)
		urls[i] = mustURL(b, origin+"/page?id=1")
	}
	g := newGate(b, politeness.Config{DefaultDelay: delay, Robots: politeness.RobotsConfig{MaxCached: n}}, politeness.Backend{Robots: rs})
	return g, urls
}

func benchTryDone(b *testing.B, g *politeness.Gate, urls []*url.URL) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p, d, err := g.Try(ctx, urls[i%len(urls)])
		if err != nil || p == nil {
			b.Fatalf("Try: %+v, %v", d, err)
		}
		if err := p.Done(politeness.Outcome{Status: 200, Duration: time.Millisecond}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// Crawl-delay 0.1 s applies, so these use a policy without delay: a
// manual zero delay with override on every key.
func zeroDelays(b *testing.B, g *politeness.Gate, urls []*url.URL) {
	b.Helper()
	for _, u := range urls {
		if err := g.SetDelay(context.Background(), u.Hostname(), 0, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTryDoneHotKey(b *testing.B) {
	g, urls := benchGate(b, 1, -1)
	zeroDelays(b, g, urls)
	benchTryDone(b, g, urls)
}

func BenchmarkTryDone10kKeys(b *testing.B) {
	g, urls := benchGate(b, 10_000, -1)
	zeroDelays(b, g, urls)
	benchTryDone(b, g, urls)
}

// BenchmarkTryRefusedHotKey: the common answer under load, "not yet".
func BenchmarkTryRefusedHotKey(b *testing.B) {
	g, urls := benchGate(b, 1, time.Hour)
	ctx := context.Background()
	p, _, err := g.Try(ctx, urls[0])
	if err != nil || p == nil {
		b.Fatal(err)
	}
	_ = p.Done(politeness.Outcome{Status: 200})
	b.ReportAllocs()
	for b.Loop() {
		if p, _, _ := g.Try(ctx, urls[0]); p != nil {
			b.Fatal("granted")
		}
	}
}

func BenchmarkTryDone10kKeysParallel(b *testing.B) {
	g, urls := benchGate(b, 10_000, -1)
	zeroDelays(b, g, urls)
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := urls[int(next.Add(1))%len(urls)]
			p, _, err := g.Try(ctx, u)
			if err != nil {
				b.Error(err)
				return
			}
			if p != nil { // another goroutine may hold the key
				_ = p.Done(politeness.Outcome{Status: 200, Duration: time.Millisecond})
			}
		}
	})
}

// BenchmarkTryDoneScaled is TryDone over 1,000 keys with popularity tiers
// (a 10,000-domain list) and bandwidth classes on: the cost of the
// lookups on every ask and of the rate sample on every Done.
func BenchmarkTryDoneScaled(b *testing.B) {
	const n = 1000
	rs := politeness.NewMemoryRobotsStore()
	urls := make([]*url.URL, n)
	now := time.Now()
	var list strings.Builder
	for i := range 10 * n {
		fmt.Fprintf(&list, "%d,h%05d.example\n", i+1, i)
	}
	file := filepath.Join(b.TempDir(), "top.csv")
	if err := os.WriteFile(file, []byte(list.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	for i := range urls {
		origin := fmt.Sprintf("http://www.h%05d.example", i*7)
		seedRobots(b, rs, origin, "User-agent: *\nDisallow: /private\n", now)
		urls[i] = mustURL(b, origin+"/page?id=1")
	}
	cfg := politeness.Config{DefaultDelay: -1, Robots: politeness.RobotsConfig{MaxCached: n},
		Popularity: politeness.PopularityConfig{List: file, Tiers: []politeness.PopularityTier{{Top: 100, Factor: 0.25}, {Top: 5000, Factor: 0.5}}},
		Bandwidth:  politeness.BandwidthConfig{Classes: []politeness.BandwidthClass{{Name: "slow", Factor: 2}, {Name: "fast", MinBytesPerSecond: 1 << 20, Factor: 0.5}}, MinBytes: 1}}
	g := newGate(b, cfg, politeness.Backend{Robots: rs})
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p, d, err := g.Try(ctx, urls[i%len(urls)])
		if err != nil || p == nil {
			b.Fatalf("Try: %+v, %v", d, err)
		}
		if err := p.Done(politeness.Outcome{Status: 200, Duration: time.Millisecond, Bytes: 4096}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
