package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

func TestClusterStatus(t *testing.T) {
	rc := redistest.StartCluster(t)
	ctx := context.Background()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs})
	defer c.Close()
	f, err := cluster.New(ctx, c, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "http://a.example/1", CrawlID: "walk"}}, {Info: frontier.URLInfo{URL: "http://b.example/1", CrawlID: "walk"}}}); err != nil {
		t.Fatal(err)
	}
	m, err := cluster.NewMembership(c, cluster.MembershipOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Publish(ctx, cluster.NodeInfo{ID: "node-1", Role: "crawl", CrawlID: "walk", PagesPerSec: 3, LastError: "dial\ntcp"}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errOut}
	if code := Main(ctx, env, []string{"cluster", "status", "--redis-cluster", strings.Join(rc.Addrs[:2], ",")}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"node-1", "crawl", "live", "walk", "dial tcp"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := Main(ctx, env, []string{"cluster", "status", "--redis-cluster", rc.Addrs[3], "--crawl-id", "walk", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Nodes  []map[string]any
		Crawls []frontier.Stats
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if len(got.Nodes) != 1 || len(got.Crawls) != 1 || got.Crawls[0].Size != 2 || got.Crawls[0].Queues != 2 {
		t.Fatalf("json %+v", got)
	}
	if code := Main(ctx, env, []string{"cluster", "status"}); code != 2 {
		t.Fatalf("without --redis-cluster: exit %d", code)
	}
}
