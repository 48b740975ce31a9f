package redistest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a running local Redis Cluster: 3 masters with one replica
// each, six real redis-server processes on 127.0.0.1, made with
// `redis-cli --cluster create --cluster-replicas 1` as
// scripts/redis-cluster does. Its node timeout is short (NodeTimeout), so
// that a killed master fails over within a few seconds.
type Cluster struct {
	// Addrs are the six nodes' "127.0.0.1:port", in start order (the
	// first three were made masters).
	Addrs []string
	nodes []*clusterNode
	// killedSlot maps a killed master's address to one slot it served.
	killedSlot map[string]int
}

type clusterNode struct {
	addr   string
	cmd    *exec.Cmd
	exited chan error
	dir    string
}

// NodeTimeout is the cluster-node-timeout of StartCluster's nodes: a
// master unreachable for this long is marked failing and its replica
// promoted soon after.
const NodeTimeout = 1000 * time.Millisecond

// StartCluster starts a 6-node Redis Cluster and registers its shutdown
// with t.Cleanup. It fails the test (never skips) when redis-server or
// redis-cli is missing.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server not found in PATH (%v); install Debian's redis-server package, e.g. with scripts/install-test-deps", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redistest: redis-cli not found in PATH (%v); install Debian's redis-tools package", err)
	}
	var lastErr error
	for range 3 {
		c, err := startCluster(t, bin, cli)
		if err == nil {
			return c
		}
		lastErr = err
	}
	t.Fatalf("redistest: cluster: %v", lastErr)
	return nil
}

func startCluster(t testing.TB, bin, cli string) (*Cluster, error) {
	c := &Cluster{}
	ok := false
	defer func() {
		if !ok {
			c.stop()
		}
	}()
	ports, err := clusterPorts(6)
	if err != nil {
		return nil, err
	}
	root := t.TempDir()
	for _, port := range ports {
		dir := filepath.Join(root, strconv.Itoa(port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		n := &clusterNode{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited: make(chan error, 1), dir: dir}
		n.cmd = exec.Command(bin,
			"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(int(NodeTimeout/time.Millisecond)),
			// A replica may take over however long its link was down:
			// a test kills a master right after the cluster forms.
			"--cluster-replica-validity-factor", "0",
			"--save", "", "--appendonly", "no", "--daemonize", "no",
			"--logfile", filepath.Join(dir, "redis.log"))
		n.cmd.Dir = dir
		if err := n.cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting %s: %w", bin, err)
		}
		go func() { n.exited <- n.cmd.Wait() }() // owned by n; ends when the server exits
		c.nodes = append(c.nodes, n)
		c.Addrs = append(c.Addrs, n.addr)
	}
	for _, n := range c.nodes {
		if err := waitReady(n.addr, n.exited); err != nil {
			log, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
			return nil, fmt.Errorf("node %s: %w\n%s", n.addr, err, tail(string(log), 2000))
		}
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	out, err := exec.Command(cli, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, tail(string(out), 2000))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.waitOK(ctx, ""); err != nil {
		return nil, err
	}
	if err := c.waitReplicas(ctx); err != nil {
		return nil, err
	}
	ok = true
	t.Cleanup(c.stop)
	return c, nil
}

// waitReplicas waits until every replica's link to its master is up (its
// first sync done), so that a master killed by a test has an up-to-date
// replica to fail over to.
func (c *Cluster) waitReplicas(ctx context.Context) error {
	for _, n := range c.nodes {
		cl := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1, DialTimeout: time.Second})
		for {
			info, err := cl.Info(ctx, "replication").Result()
			if err == nil && (strings.Contains(info, "role:master") || strings.Contains(info, "master_link_status:up")) {
				break
			}
			select {
			case <-ctx.Done():
				cl.Close()
				return fmt.Errorf("replica %s not in sync: %v (%w)", n.addr, err, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
		cl.Close()
	}
	return nil
}

// clusterPorts finds n ports p that are free together with p+10000 (the
// cluster bus port).
func clusterPorts(n int) ([]int, error) {
	var ports []int
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		p := 20000 + rand.IntN(30000)
		if slices.Contains(ports, p) || slices.Contains(ports, p+10000) || slices.Contains(ports, p-10000) {
			continue
		}
		if portFree(p) && portFree(p+10000) {
			ports = append(ports, p)
		}
	}
	if len(ports) < n {
		return nil, errors.New("no free port pairs for a cluster")
	}
	return ports, nil
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func (c *Cluster) stop() {
	for _, n := range c.nodes {
		if n.cmd.Process == nil {
			continue
		}
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, n := range c.nodes {
		if n.cmd.Process == nil {
			continue
		}
		select {
		case <-n.exited:
			n.exited <- nil // later stops return at once
		case <-time.After(5 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.exited
			n.exited <- nil
		}
	}
}

// ClusterNode is one line of CLUSTER NODES.
type ClusterNode struct {
	ID     string
	Addr   string
	Master bool
	Failed bool
	// Slots are the slot ranges served ("0-5460"); masters only.
	Slots []string
}

// Nodes returns the cluster's view of its nodes, asked of a live node.
func (c *Cluster) Nodes(ctx context.Context) ([]ClusterNode, error) {
	var lastErr error
	for _, n := range c.live() {
		cl := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1, DialTimeout: time.Second})
		s, err := cl.ClusterNodes(ctx).Result()
		cl.Close()
		if err != nil {
			lastErr = err
			continue
		}
		return parseClusterNodes(s), nil
	}
	return nil, fmt.Errorf("redistest: cluster nodes: no live node answered: %v", lastErr)
}

func parseClusterNodes(s string) []ClusterNode {
	var out []ClusterNode
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr := f[1]
		if i := strings.IndexByte(addr, '@'); i >= 0 {
			addr = addr[:i]
		}
		flags := f[2]
		out = append(out, ClusterNode{
			ID:     f[0],
			Addr:   addr,
			Master: strings.Contains(flags, "master"),
			Failed: strings.Contains(flags, "fail") && !strings.Contains(flags, "fail?"),
			Slots:  f[8:],
		})
	}
	return out
}

// MasterFor returns the address of the master serving key's slot now.
func (c *Cluster) MasterFor(ctx context.Context, key string) (string, error) {
	slot := int(Slot(key))
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		if !n.Master || n.Failed {
			continue
		}
		if servesSlot(n.Slots, slot) {
			return n.Addr, nil
		}
	}
	return "", fmt.Errorf("redistest: no master serves slot %d", slot)
}

// servesSlot reports whether the CLUSTER NODES slot ranges hold slot.
func servesSlot(ranges []string, slot int) bool {
	for _, r := range ranges {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil && slot >= a && slot <= b {
			return true
		}
	}
	return false
}

// Kill ends the node at addr with SIGKILL (as a crash would) and waits
// for the process to exit.
func (c *Cluster) Kill(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if nodes, err := c.Nodes(ctx); err == nil {
		for _, n := range nodes {
			if n.Addr == addr && n.Master && len(n.Slots) > 0 {
				lo, _, _ := strings.Cut(n.Slots[0], "-")
				if s, err := strconv.Atoi(lo); err == nil {
					if c.killedSlot == nil {
						c.killedSlot = map[string]int{}
					}
					c.killedSlot[addr] = s
				}
			}
		}
	}
	for _, n := range c.nodes {
		if n.addr != addr {
			continue
		}
		if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			return fmt.Errorf("redistest: kill %s: %w", addr, err)
		}
		err := <-n.exited
		n.exited <- err
		return nil
	}
	return fmt.Errorf("redistest: no node %s", addr)
}

func (c *Cluster) live() []*clusterNode {
	var out []*clusterNode
	for _, n := range c.nodes {
		select {
		case err := <-n.exited:
			n.exited <- err
		default:
			out = append(out, n)
		}
	}
	return out
}

// WaitFailover waits until the slots served by dead (a killed master) are
// served by another master and every live node says cluster_state:ok, and
// returns that master's address.
func (c *Cluster) WaitFailover(ctx context.Context, dead string) (string, error) {
	return c.waitOKNew(ctx, dead)
}

func (c *Cluster) waitOK(ctx context.Context, dead string) error {
	_, err := c.waitOKNew(ctx, dead)
	return err
}

func (c *Cluster) waitOKNew(ctx context.Context, dead string) (string, error) {
	var last error
	for {
		newMaster, err := c.checkOK(ctx, dead)
		if err == nil {
			return newMaster, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("redistest: cluster not ok: %v (%w)", last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkOK returns nil when every live node reports cluster_state:ok and
// all 16384 slots are served by live masters; with dead set, it also
// returns the master that took over dead's slots.
func (c *Cluster) checkOK(ctx context.Context, dead string) (string, error) {
	live := c.live()
	for _, n := range live {
		cl := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1, DialTimeout: time.Second})
		info, err := cl.ClusterInfo(ctx).Result()
		cl.Close()
		if err != nil {
			return "", err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return "", fmt.Errorf("%s: cluster_state not ok", n.addr)
		}
	}
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return "", err
	}
	liveAddr := map[string]bool{}
	for _, n := range live {
		liveAddr[n.addr] = true
	}
	served := 0
	newMaster := ""
	for _, n := range nodes {
		if !n.Master || len(n.Slots) == 0 {
			continue
		}
		if !liveAddr[n.Addr] {
			return "", fmt.Errorf("dead node %s still serves slots", n.Addr)
		}
		for _, r := range n.Slots {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				continue // slots being migrated: "[...]"
			}
			served += b - a + 1
		}
		if slot, ok := c.killedSlot[dead]; ok && servesSlot(n.Slots, slot) {
			newMaster = n.Addr
		}
	}
	if served != 16384 {
		return "", fmt.Errorf("%d of 16384 slots served", served)
	}
	if _, ok := c.killedSlot[dead]; ok && newMaster == "" {
		return "", errors.New("no replica promoted yet")
	}
	return newMaster, nil
}

// Slot returns the Redis Cluster hash slot of key (CRC16 of the key, or of
// its {hash tag}, modulo 16384).
func Slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021), the one Redis Cluster uses.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
