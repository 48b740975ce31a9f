package redisbackend_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// BenchmarkAcquireRelease: one Acquire and one Release script on a hot
// key, against a local redis-server (two round trips per fetch).
func BenchmarkAcquireRelease(b *testing.B) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { c.Close() })
	s := redisbackend.NewState(c, redisbackend.Options{})
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		id := fmt.Sprint(i)
		g, err := s.Acquire(ctx, "hot.example", politeness.AcquireRequest{LeaseID: id, Limit: 1, Lease: time.Minute})
		if err != nil || !g.OK {
			b.Fatalf("Acquire: %+v, %v", g, err)
		}
		if err := s.Release(ctx, "hot.example", politeness.ReleaseRequest{LeaseID: id, Used: true, Backoff: politeness.BackoffReset}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
