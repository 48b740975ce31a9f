package redisbackend_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
	"github.com/courtesy-crawler/courtesy/internal/politeness/statetest"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

var prefixN atomic.Int64

func client(t *testing.T) (redis.UniversalClient, redisbackend.Options) {
	t.Helper()
	s := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { c.Close() })
	return c, redisbackend.Options{Prefix: fmt.Sprintf("t%d:", prefixN.Add(1))}
}

func TestState(t *testing.T) {
	c, o := client(t)
	statetest.State(t, statetest.Options{}, func(t *testing.T) politeness.State {
		o.Prefix = fmt.Sprintf("t%d:", prefixN.Add(1))
		return redisbackend.NewState(c, o)
	})
}

func TestRobotsStore(t *testing.T) {
	c, o := client(t)
	statetest.RobotsStore(t, func(t *testing.T) politeness.RobotsStore {
		o.Prefix = fmt.Sprintf("t%d:", prefixN.Add(1))
		return redisbackend.NewRobotsStore(c, o)
	})
}

func TestDelayStore(t *testing.T) {
	c, o := client(t)
	statetest.DelayStore(t, func(t *testing.T) politeness.DelayStore {
		o.Prefix = fmt.Sprintf("t%d:", prefixN.Add(1))
		return redisbackend.NewDelayStore(c, o)
	})
}
