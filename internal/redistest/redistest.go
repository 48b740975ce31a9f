// Package redistest starts a real Redis server for tests: Debian's
// redis-server on a free 127.0.0.1 port, with its files in a temporary
// directory, stopped when the test ends. There is no mock: a test that
// needs Redis fails (never skips) when redis-server is not installed;
// scripts/install-test-deps installs it.
//
//	srv := redistest.Start(t)
//	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
//
// StartCluster starts a local Redis Cluster of six processes (3 masters, 3
// replicas), as scripts/redis-cluster does; Kill and WaitFailover let a
// test crash a master and wait for its replica to take over:
//
//	c := redistest.StartCluster(t)
//	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
//	master, _ := c.MasterFor(ctx, "{tag}key")
//	c.Kill(master)
//	c.WaitFailover(ctx, master)
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	// Addr is "127.0.0.1:port".
	Addr string
	// Dir holds the server's files (log, no persistence).
	Dir string
}

// Start starts redis-server and registers its shutdown with t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server not found in PATH (%v); install Debian's redis-server package, e.g. with scripts/install-test-deps", err)
	}
	dir := t.TempDir()
	var lastErr error
	// A port found free may be taken before redis binds it: try again.
	for attempt := range 3 {
		srv, err := start(t, bin, dir, attempt)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, dir string, attempt int) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, fmt.Sprintf("redis-%d.log", attempt))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin,
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", logFile,
	)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // owned here; ends when the server exits
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	if err := waitReady(addr, exited); err != nil {
		stop()
		log, _ := os.ReadFile(logFile)
		return nil, fmt.Errorf("redis-server on %s did not start: %w\n%s", addr, err, tail(string(log), 2000))
	}
	t.Cleanup(stop)
	return &Server{Addr: addr, Dir: dir}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls PING for up to 10 s.
func waitReady(addr string, exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server exited: %v", err)
		default:
		}
		if last = ping(addr); last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within 10s: %w", last)
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return errors.New("unexpected answer " + strconv.Quote(line))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
