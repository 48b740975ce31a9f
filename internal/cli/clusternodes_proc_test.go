package cli

// Real processes: a `courtesy serve --redis-cluster` node with its console
// and two `courtesy crawl --redis-cluster` nodes (this test binary,
// COURTESY_CLI_HELPER=1), on a Redis Cluster and on one plain Redis
// server. ListNodes and both consoles list every node from the
// heartbeats; a node killed with SIGKILL is dead 5 s after its last
// heartbeat, a node stopped cleanly leaves at once.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/poll"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// child runs the command line in a child process until the test ends;
// its stdout is returned, readable while it runs.
func child(t *testing.T, args ...string) (*exec.Cmd, *safeBuffer, <-chan error) {
	t.Helper()
	out, errb := &safeBuffer{}, &safeBuffer{}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "COURTESY_CLI_HELPER=1")
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill() // an error once it has exited
		}
		select {
		case <-done:
		case <-time.After(20 * time.Second):
		}
		if t.Failed() {
			t.Logf("%s %s stderr:\n%s", args[0], strings.Join(args[1:4], " "), tail(errb.String(), 20))
		}
	})
	return cmd, out, done
}

// await waits (bounded) until re matches out and returns the submatches.
func await(t *testing.T, out *safeBuffer, re *regexp.Regexp, what string) []string {
	t.Helper()
	var m []string
	poll.Until(t, 90*time.Second, what, func() bool {
		m = re.FindStringSubmatch(out.String())
		return m != nil
	})
	return m
}

// nodeIDOf is the start of the node ID a process on this machine has.
func nodeIDOf(pid int) string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-", h, pid)
}

func TestClusterNodesProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis and child processes")
	}
	tests := []struct {
		name  string
		redis func(t *testing.T) string
	}{
		{"cluster", func(t *testing.T) string {
			c := redistest.StartCluster(t)
			return c.Addrs[0] + "," + c.Addrs[1]
		}},
		{"plain", func(t *testing.T) string { return redistest.Start(t).Addr }},
	}
	grpcRE := regexp.MustCompile(`URLFrontier gRPC on (\S+)`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addrs := tc.redis(t)
			_, webAddr, _, seeds := sharedWeb(t)
			serveCmd, serveOut, serveDone := child(t, "serve", "--listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0",
				"--data", t.TempDir(), "--redis-cluster", addrs, "--console-crawl", "nodes", "--log-level", "warn")
			serveAddr := await(t, serveOut, grpcRE, "serve's gRPC address")[1]
			serveConsole := "http://" + await(t, serveOut, consoleRE, "serve's console line")[1]
			// A 3 s delay over 10 pages a host: the crawl lasts 30 s or
			// more, longer than the test needs its nodes.
			crawlArgs := func(name string, more ...string) []string {
				a := []string{"crawl", "--redis-cluster", addrs, "--crawl-id", "nodes", "--data", filepath.Join(t.TempDir(), name),
					"--resolve", "*.test=" + webAddr, "--delay", "3s", "--workers", "4", "--max-duration", "3m", "--log-level", "warn"}
				return append(append(a, more...), seeds...)
			}
			aCmd, aOut, aDone := child(t, crawlArgs("a", "--console", "127.0.0.1:0")...)
			aConsole := "http://" + await(t, aOut, consoleRE, "crawl node a's console line")[1]
			bCmd, _, bDone := child(t, crawlArgs("b")...)
			aID, bID := nodeIDOf(aCmd.Process.Pid), nodeIDOf(bCmd.Process.Pid)

			fc := dialFrontier(t, serveAddr)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			listNodes := func() []string {
				nodes, err := fc.ListNodes(ctx, &pb.Empty{})
				if err != nil {
					t.Fatalf("ListNodes: %v", err)
				}
				return nodes.GetValues()
			}
			// matches says whether ListNodes's entries are the serve node
			// and the crawl nodes whose ID starts so, in that order.
			matches := func(got []string, crawlIDs ...string) bool {
				if len(got) != 1+len(crawlIDs) || got[0] != serveAddr {
					return false
				}
				for _, id := range crawlIDs {
					if !slices.ContainsFunc(got[1:], func(e string) bool { return strings.HasPrefix(e, crawlNodePrefix+id) }) {
						return false
					}
				}
				return true
			}
			var got []string
			poll.Until(t, 30*time.Second, "ListNodes lists the serve node and both crawl nodes", func() bool {
				got = listNodes()
				return matches(got, aID, bID)
			})

			// Both consoles list the three nodes with their heartbeats,
			// and the crawl's totals.
			nodesOf := func(base string) console.NodesView {
				var v console.NodesView
				if code := call(t, "GET", base+"/api/nodes", "", nil, &v); code != 200 {
					t.Fatalf("GET %s/api/nodes: %d", base, code)
				}
				return v
			}
			row := func(v console.NodesView, prefix string) (console.NodeView, bool) {
				for _, n := range v.Nodes {
					if strings.HasPrefix(n.ID, prefix) {
						return n, true
					}
				}
				return console.NodeView{}, false
			}
			for name, base := range map[string]string{"serve": serveConsole, "crawl node a": aConsole} {
				var v console.NodesView
				poll.Until(t, 30*time.Second, name+"'s console lists three live nodes and the crawl's totals", func() bool {
					v = nodesOf(base)
					return v.Live == 3 && v.Dead == 0 && slices.ContainsFunc(v.Crawls, func(c console.CrawlTotals) bool {
						return c.CrawlID == "nodes" && c.Queued+c.InFlight+c.Completed > 0
					})
				})
				if name == "crawl node a" && len(v.Crawls) != 1 {
					t.Errorf("crawl node's console shows the totals of %d crawls, want its own only: %+v", len(v.Crawls), v.Crawls)
				}
				for _, want := range []struct {
					prefix, role string
					pid          int
				}{{aID, "crawl", aCmd.Process.Pid}, {bID, "crawl", bCmd.Process.Pid}, {"", "serve", serveCmd.Process.Pid}} {
					n, ok := row(v, want.prefix)
					if want.role == "serve" {
						n, ok = console.NodeView{}, false
						for _, x := range v.Nodes {
							if x.Role == "serve" {
								n, ok = x, true
							}
						}
					}
					if !ok || n.Role != want.role || n.PID != want.pid || n.Version != Version || n.RSS <= 0 || n.Goroutines <= 0 ||
						n.CPUSeconds <= 0 || n.LastSeen.IsZero() || n.Dead {
						t.Errorf("%s's console, %s node pid %d: %+v (found %v)", name, want.role, want.pid, n, ok)
					}
					if want.role == "crawl" && (n.CrawlID != "nodes" || n.Addr != "") {
						t.Errorf("%s's console, crawl node %s: crawl %q address %q; want crawl nodes, no address", name, n.ID, n.CrawlID, n.Addr)
					}
					if want.role == "serve" && n.Addr != serveAddr {
						t.Errorf("%s's console, serve node: address %q, want %q", name, n.Addr, serveAddr)
					}
				}
			}

			// Both consoles' hosts views read the crawl's queues in Redis:
			// the web's 4 hosts, each with URLs queued or fetched.
			for name, base := range map[string]string{"serve": serveConsole, "crawl node a": aConsole} {
				hosts := waitHosts(t, base, name+"'s console", 4)
				for _, r := range hosts.Rows {
					if !strings.HasSuffix(r.Host, ".test") || r.Queued+r.InFlight+r.Fetched == 0 {
						t.Errorf("%s's console, hosts row %+v", name, r)
					}
				}
				var one map[string]any
				if code := call(t, "GET", base+"/api/hosts/"+hosts.Rows[0].Host, "", nil, &one); code != 200 {
					t.Errorf("%s's console, host %s: %d", name, hosts.Rows[0].Host, code)
				}
				if code := call(t, "GET", base+"/api/hosts/nowhere.test", "", nil, nil); code != 404 {
					t.Errorf("%s's console, unknown host: %d, want 404", name, code)
				}
			}

			// Node b is killed: it stays listed until 5 s after its last
			// heartbeat, then ListNodes drops it and the consoles mark it
			// dead (a node dead for less than an hour stays in view).
			if err := bCmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-bDone
			killed := time.Now()
			poll.Until(t, 30*time.Second, "ListNodes drops the killed crawl node", func() bool {
				got = listNodes()
				return matches(got, aID)
			})
			if after := time.Since(killed); after < 3*time.Second {
				t.Errorf("the killed node left ListNodes %s after the kill; want it listed until 5 s after its last heartbeat", after)
			}
			for name, base := range map[string]string{"serve": serveConsole, "crawl node a": aConsole} {
				v := nodesOf(base)
				if n, ok := row(v, bID); !ok || !n.Dead || n.SilenceSec < 4 || v.Live != 2 || v.Dead != 1 {
					t.Errorf("%s's console after the kill: node b %+v (found %v), %d live, %d dead; want b dead, 2 live", name, n, ok, v.Live, v.Dead)
				}
			}

			// Node a stops cleanly: it leaves the membership at once.
			aCmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-aDone:
			case <-time.After(60 * time.Second):
				t.Fatal("crawl node a did not stop within 60 s of SIGTERM")
			}
			if got = listNodes(); !matches(got) {
				t.Errorf("ListNodes after crawl node a stopped = %q, want [%s]", got, serveAddr)
			}
			if v := nodesOf(serveConsole); v.Live != 1 || v.Dead != 1 {
				t.Errorf("serve's console after a stopped: %d live, %d dead; want the serve node live and b dead", v.Live, v.Dead)
			}
			serveCmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-serveDone:
				if err != nil {
					t.Errorf("serve after SIGTERM: %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Error("serve did not stop within 60 s of SIGTERM")
			}
		})
	}
}
