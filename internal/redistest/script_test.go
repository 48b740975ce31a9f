package redistest

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisClusterScript: scripts/redis-cluster starts a working 6-node
// cluster on BASE_PORT..BASE_PORT+5 and stops exactly its processes.
func TestRedisClusterScript(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "redis-cluster")
	base := 0
	for p := 21000; p < 29000 && base == 0; p += 97 {
		ok := true
		for i := range 6 {
			if !portFree(p+i) || !portFree(p+i+10000) {
				ok = false
				break
			}
		}
		if ok {
			base = p
		}
	}
	if base == 0 {
		t.Fatal("no 6 free consecutive ports")
	}
	dir := t.TempDir()
	out, err := exec.Command(script, "start", dir, strconv.Itoa(base)).CombinedOutput()
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	addrs := strings.Split(strings.TrimSpace(string(out)), ",")
	if len(addrs) != 6 || addrs[0] != "127.0.0.1:"+strconv.Itoa(base) {
		t.Fatalf("start printed %q", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs[:1]})
	defer c.Close()
	for i := range 100 {
		if err := c.Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6") {
		t.Fatalf("cluster info %q, %v", info, err)
	}
	if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	for _, a := range addrs {
		if err := ping(a); err == nil {
			t.Errorf("%s still answers after stop", a)
		}
	}
	if out, err := exec.Command(script, "start", dir, "80").CombinedOutput(); err == nil {
		t.Fatalf("start on port 80 accepted: %s", out)
	}
}
