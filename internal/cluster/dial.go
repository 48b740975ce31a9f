package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Dial connects to the Redis deployment at addrs (host:port, comma
// separated allowed): a Redis Cluster (any of its nodes as seeds), or,
// when the one address given is a plain server (cluster_enabled:0), that
// server. The caller closes the client.
func Dial(ctx context.Context, addrs []string) (redis.UniversalClient, error) {
	var seeds []string
	for _, a := range addrs {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				seeds = append(seeds, s)
			}
		}
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("cluster: no Redis address given")
	}
	if len(seeds) == 1 {
		c := redis.NewClient(&redis.Options{Addr: seeds[0], DialTimeout: 5 * time.Second})
		info, err := c.Info(ctx, "cluster").Result()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("cluster: connecting to %s: %w", seeds[0], err)
		}
		if !strings.Contains(info, "cluster_enabled:1") {
			return c, nil
		}
		c.Close()
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds, DialTimeout: 5 * time.Second})
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("cluster: connecting to %s: %w", strings.Join(seeds, ","), err)
	}
	return c, nil
}
