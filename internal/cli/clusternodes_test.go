package cli

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/console"
	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/redistest"
)

// TestListedNodes: ListNodes gives the live serve nodes' addresses first
// (sorted, once each), then the live crawl nodes as crawl/ID; dead nodes
// and nodes of no known role are left out.
func TestListedNodes(t *testing.T) {
	t.Parallel()
	st := func(id, role, host string, dead bool) cluster.NodeStatus {
		return cluster.NodeStatus{NodeInfo: cluster.NodeInfo{ID: id, Role: role, Host: host}, Dead: dead}
	}
	tests := []struct {
		name string
		in   []cluster.NodeStatus
		want []string
	}{
		{"none", nil, nil},
		{"serve only", []cluster.NodeStatus{st("s2", "serve", "b:2", false), st("s1", "serve", "a:1", false)}, []string{"a:1", "b:2"}},
		{"serve and crawl", []cluster.NodeStatus{
			st("h-9-bb", "crawl", "h", false), st("s1", "serve", "z:1", false), st("h-7-aa", "crawl", "h", false)},
			[]string{"z:1", "crawl/h-7-aa", "crawl/h-9-bb"}},
		{"dead left out", []cluster.NodeStatus{
			st("h-9-bb", "crawl", "h", true), st("s1", "serve", "a:1", true), st("s2", "serve", "b:2", false)},
			[]string{"b:2"}},
		{"one address once", []cluster.NodeStatus{st("s1", "serve", "a:1", false), st("s2", "serve", "a:1", false)}, []string{"a:1"}},
		{"unknown role and empty address", []cluster.NodeStatus{st("x", "", "c:3", false), st("s", "serve", "", false)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := listedNodes(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("listedNodes = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestClusterNodesLiveness runs the membership on a real Redis with an
// injected clock: a crawl node is listed (by ListNodes and the console)
// while its heartbeats come, is dead 5 s after its last one (ListNodes
// drops it; the console keeps it, marked dead, with its last fields), and
// a node that leaves is gone from both at once. The console's CPU column
// is the CPU time between two heartbeats over the time between them.
func TestClusterNodesLiveness(t *testing.T) {
	srv := redistest.Start(t)
	rc, err := cluster.Dial(context.Background(), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	clk := fakeclock.New(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC))
	mem, err := cluster.NewMembership(rc, cluster.MembershipOptions{Prefix: "liveness:", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := cluster.New(context.Background(), rc, cluster.Options{Prefix: "liveness-frontier:"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	started := clk.Now()
	serve := cluster.NodeInfo{ID: "s", Role: "serve", Host: "127.0.0.1:7071", Version: "v9", Started: started, CPUSeconds: 1}
	crawl := cluster.NodeInfo{ID: "h-42-ab", Role: "crawl", Host: "h", PID: 42, Version: "v9", CrawlID: "c1", Started: started,
		CPUSeconds: 2, PagesPerSec: 7.5, InFlight: 3, LastError: "redis: i/o timeout"}
	publish := func(ns ...cluster.NodeInfo) {
		t.Helper()
		for _, n := range ns {
			if err := mem.Publish(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	cn := &clusterNodes{mem: mem, fr: fr, crawlID: "c1"}
	check := func(step string, wantListed []string, wantDead map[string]bool, wantCPU map[string]float64) {
		t.Helper()
		ns, err := mem.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := listedNodes(ns); !slices.Equal(got, wantListed) {
			t.Errorf("%s: ListNodes = %q, want %q", step, got, wantListed)
		}
		rows, err := cn.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		dead := map[string]bool{}
		for _, r := range rows {
			dead[r.ID] = r.Dead
			if want, ok := wantCPU[r.ID]; ok && r.CPU != want {
				t.Errorf("%s: node %s CPU %.3f cores, want %.3f", step, r.ID, r.CPU, want)
			}
			if r.ID == crawl.ID && (r.PID != 42 || r.Role != "crawl" || r.CrawlID != "c1" || r.Version != "v9" ||
				r.PagesPerSec != 7.5 || r.InFlight != 3 || r.LastError != crawl.LastError || r.Addr != "") {
				t.Errorf("%s: crawl node row %+v", step, r)
			}
			if r.ID == serve.ID && r.Addr != serve.Host {
				t.Errorf("%s: serve node address %q, want %q", step, r.Addr, serve.Host)
			}
		}
		if len(dead) != len(wantDead) {
			t.Errorf("%s: console rows %v, want %v", step, dead, wantDead)
		}
		for id, d := range wantDead {
			if got, ok := dead[id]; !ok || got != d {
				t.Errorf("%s: node %s listed %v dead %v, want dead %v", step, id, ok, got, d)
			}
		}
	}

	// t = 10 s: the first heartbeats. CPU is the average since start.
	clk.Advance(10 * time.Second)
	publish(serve, crawl)
	check("first heartbeats", []string{serve.Host, "crawl/" + crawl.ID}, map[string]bool{"s": false, crawl.ID: false},
		map[string]float64{"s": 0.1, crawl.ID: 0.2})
	// t = 12 s: 1.5 s more CPU in 2 s.
	clk.Advance(2 * time.Second)
	crawl.CPUSeconds = 3.5
	publish(serve, crawl)
	check("next heartbeats", []string{serve.Host, "crawl/" + crawl.ID}, map[string]bool{"s": false, crawl.ID: false},
		map[string]float64{crawl.ID: 0.75})
	// The crawl node goes silent; at t = 17 s (5 s after its last
	// heartbeat) it is still live, at 17.001 s dead.
	clk.Advance(5 * time.Second)
	publish(serve)
	check("5 s silent", []string{serve.Host, "crawl/" + crawl.ID}, map[string]bool{"s": false, crawl.ID: false}, nil)
	clk.Advance(time.Millisecond)
	publish(serve)
	check("dead", []string{serve.Host}, map[string]bool{"s": false, crawl.ID: true}, map[string]float64{crawl.ID: 0.75})
	// A node that leaves is gone from both.
	if err := mem.Leave(ctx, serve.ID); err != nil {
		t.Fatal(err)
	}
	check("serve left", nil, map[string]bool{crawl.ID: true}, nil)
	if _, ok := cn.cpu["s"]; ok {
		t.Error("the console still keeps the CPU sample of a node the membership forgot")
	}

	// The totals are the crawl's as `cluster status` prints them: a
	// crawl node's console shows its crawl, a serve node's every crawl.
	var items []frontier.Item
	for i, u := range []string{"http://a.test/1", "http://a.test/2", "http://b.test/1", "http://c.test/1"} {
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: u, CrawlID: []string{"c1", "c1", "c1", "c2"}[i]}})
	}
	if _, err := fr.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	tot, err := cn.Totals(ctx)
	if err != nil || len(tot) != 1 || tot[0].CrawlID != "c1" || tot[0].Queued != 3 || tot[0].Queues != 2 {
		t.Errorf("crawl node's totals = %+v, %v; want crawl c1 alone, 3 queued in 2 queues", tot, err)
	}
	all := &clusterNodes{mem: mem, fr: fr}
	tot, err = all.Totals(ctx)
	if err != nil || len(tot) != 2 || tot[0].CrawlID != "c1" || tot[1].CrawlID != "c2" || tot[1].Queued != 1 {
		t.Errorf("serve node's totals = %+v, %v; want c1 and c2, 1 queued in c2", tot, err)
	}
}

// TestClusterHosts: the console's hosts views over a crawl of the cluster
// frontier (a real Redis): the table lists each queue with its counts from
// the crawl's index, one host has its row and its URLs, an unknown host
// is ErrUnknownHost (a 404 in the console), and retiring, pausing and
// seeding reach the shared frontier.
func TestClusterHosts(t *testing.T) {
	srv := redistest.Start(t)
	rc, err := cluster.Dial(context.Background(), []string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	ctx := context.Background()
	fr, err := cluster.New(ctx, rc, cluster.Options{Prefix: "hosts:"})
	if err != nil {
		t.Fatal(err)
	}
	var items []frontier.Item
	for _, u := range []string{"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1", "http://other.test/x"} {
		crawl := "c1"
		if strings.Contains(u, "other") {
			crawl = "c2"
		}
		items = append(items, frontier.Item{Info: frontier.URLInfo{URL: u, CrawlID: crawl, Depth: 1}})
	}
	if _, err := fr.Put(ctx, items); err != nil {
		t.Fatal(err)
	}
	ls, err := fr.Get(ctx, frontier.GetParams{CrawlID: "c1", Key: "a.test", MaxQueues: 1, MaxURLsPerQueue: 1, Lease: time.Minute})
	if err != nil || len(ls) != 1 {
		t.Fatalf("lease one URL of a.test: %v, %v", ls, err)
	}
	if err := fr.Ack(ctx, ls[0].URLInfo, time.Time{}); err != nil {
		t.Fatal(err)
	}
	h := &clusterHosts{f: fr, crawl: "c1"}
	var rows []console.HostRow
	h.Hosts(func(r console.HostRow) bool { rows = append(rows, r); return true })
	want := []console.HostRow{{Host: "a.test", Queued: 2, Fetched: 1}, {Host: "b.test", Queued: 1}}
	if !slices.Equal(rows, want) {
		t.Errorf("hosts = %+v, want %+v", rows, want)
	}
	if st := h.Stats(); st.Queued != 3 || st.Completed != 1 || st.Hosts != 2 {
		t.Errorf("stats = %+v, want 3 queued, 1 completed, 2 hosts", st)
	}
	if r, err := h.Host("a.test"); err != nil || r != want[0] {
		t.Errorf("Host(a.test) = %+v, %v; want %+v", r, err, want[0])
	}
	head, err := h.Head(ctx, "a.test", 10)
	if err != nil || len(head) != 2 || head[0].Depth != 1 || !strings.HasPrefix(head[0].URL, "http://a.test/") {
		t.Errorf("Head(a.test) = %+v, %v; want its 2 URLs not completed", head, err)
	}
	for _, name := range []string{"other.test", "nowhere.test"} { // another crawl's host is unknown here
		if _, err := h.Host(name); !errors.Is(err, console.ErrUnknownHost) {
			t.Errorf("Host(%s) = %v, want ErrUnknownHost", name, err)
		}
		if _, err := h.Head(ctx, name, 10); !errors.Is(err, console.ErrUnknownHost) {
			t.Errorf("Head(%s) = %v, want ErrUnknownHost", name, err)
		}
		if err := h.Retire(ctx, name, "test"); !errors.Is(err, console.ErrUnknownHost) {
			t.Errorf("Retire(%s) = %v, want ErrUnknownHost", name, err)
		}
	}
	if err := h.Retire(ctx, "b.test", "operator"); err != nil {
		t.Fatal(err)
	}
	if r, err := h.Host("b.test"); err != nil || r.Retired == "" || r.Queued != 1 {
		t.Errorf("Host(b.test) after retiring = %+v, %v; want retired with its URL", r, err)
	}
	if n, err := h.AddSeeds(ctx, []string{"http://c.test/", "http://a.test/1"}); err != nil || n != 1 {
		t.Errorf("AddSeeds = %d, %v; want 1 new (a.test/1 is known)", n, err)
	}
	h.SetPaused(true)
	if !h.Paused() {
		t.Error("not paused after SetPaused(true)")
	}
	h.SetPaused(false)
	if h.Paused() {
		t.Error("paused after SetPaused(false)")
	}
}
