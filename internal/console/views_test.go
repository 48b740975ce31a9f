package console

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// fixedProxy is a proxy whose counters the test sets.
type fixedProxy struct{ st ProxyStats }

func (p *fixedProxy) ProxyStats() ProxyStats { return p.st }

// fixedNodes is a cluster whose heartbeats the test sets.
type fixedNodes struct {
	nodes []Node
	err   error
}

func (n fixedNodes) Nodes(context.Context) ([]Node, error) { return n.nodes, n.err }

func TestProxyView(t *testing.T) {
	clk := newClock()
	px := &fixedProxy{st: ProxyStats{Requests: 100, CacheHits: 30, CacheMisses: 90, Clients: map[string]int64{"127.0.0.1": 100},
		Trace: []TraceEntry{{Client: "127.0.0.1", Method: "GET", URL: "http://a.test/", Outcome: "waited", Wait: time.Second}}}}
	s, err := New(Config{Now: clk.Now}, Sources{Proxy: px})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, h: s.Handler()}
	for range 11 {
		s.sample()
		clk.Advance(time.Second)
		px.st.Requests += 5
	}
	var v ProxyView
	if code := fx.do("GET", "/api/proxy", "", nil, &v); code != 200 {
		t.Fatalf("status %d", code)
	}
	if v.RequestsPerSec != 5 || v.HitRatio == nil || *v.HitRatio != 0.25 || v.Clients["127.0.0.1"] != 100 || len(v.Trace) != 1 {
		t.Errorf("proxy view = %+v (ratio %v)", v, v.HitRatio)
	}
	var in Info
	fx.do("GET", "/api/info", "", nil, &in)
	if !in.Views["proxy"] || in.Views["hosts"] || in.LogLevel != "" {
		t.Errorf("info = %+v", in)
	}
	// Without a frontier the crawl actions and views are not here.
	if code := fx.do("GET", "/api/hosts", "", nil, nil); code != 404 {
		t.Errorf("hosts without a frontier: %d, want 404", code)
	}
	if code := fx.do("POST", "/api/pause", "{}", map[string]string{"Authorization": "Bearer " + s.Token()}, nil); code != 404 {
		t.Errorf("pause without a frontier: %d, want 404", code)
	}
	if len(s.Token()) < 32 {
		t.Errorf("generated token %q too short", s.Token())
	}
}

func TestNodesDead(t *testing.T) {
	clk := newClock()
	now := clk.Now()
	src := fixedNodes{nodes: []Node{{ID: "b", LastSeen: now.Add(-time.Minute)}, {ID: "a", LastSeen: now.Add(-time.Second)}}}
	s, err := New(Config{Now: clk.Now, DeadAfter: 30 * time.Second}, Sources{Nodes: src})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, h: s.Handler()}
	var out struct{ Nodes []NodeView }
	fx.do("GET", "/api/nodes", "", nil, &out)
	if len(out.Nodes) != 2 || out.Nodes[0].ID != "a" || out.Nodes[0].Dead || !out.Nodes[1].Dead || out.Nodes[1].SilenceSec != 60 {
		t.Errorf("nodes = %+v", out.Nodes)
	}
	s2, _ := New(Config{}, Sources{Nodes: fixedNodes{err: errors.New("redis down")}})
	fx.h = s2.Handler()
	if code := fx.do("GET", "/api/nodes", "", nil, nil); code != 502 {
		t.Errorf("failing heartbeat source: %d, want 502", code)
	}
}

// fixedCluster is a cluster's nodes source with totals.
type fixedCluster struct {
	fixedNodes
	totals []CrawlTotals
	err    error
}

func (c fixedCluster) Totals(context.Context) ([]CrawlTotals, error) { return c.totals, c.err }

// TestNodesCluster: a cluster's nodes view keeps the source's dead
// verdict (its heartbeats say dead after 5 s, well within the console's
// own 30 s), lists live nodes first, counts both, and carries the crawls'
// totals; a view without totals has no crawls field, and a failing totals
// source is a 502.
func TestNodesCluster(t *testing.T) {
	clk := newClock()
	now := clk.Now()
	nodes := fixedNodes{nodes: []Node{
		{ID: "a-crawl", Role: "crawl", CrawlID: "c1", LastSeen: now.Add(-8 * time.Second), Dead: true, LastError: "redis: timeout"},
		{ID: "b-serve", Role: "serve", Addr: "127.0.0.1:7071", LastSeen: now.Add(-time.Second)},
		{ID: "c-crawl", Role: "crawl", CrawlID: "c1", PID: 42, Version: "v1", LastSeen: now},
	}}
	totals := []CrawlTotals{{CrawlID: "c1", Queued: 10, InFlight: 2, Completed: 30, Queues: 4, ActiveQueues: 3}}
	tests := []struct {
		name      string
		src       Nodes
		code      int
		wantOrder []string
		wantDead  []bool
		crawls    bool
	}{
		{"cluster", fixedCluster{fixedNodes: nodes, totals: totals}, 200, []string{"b-serve", "c-crawl", "a-crawl"}, []bool{false, false, true}, true},
		{"no totals", nodes, 200, []string{"b-serve", "c-crawl", "a-crawl"}, []bool{false, false, true}, false},
		{"totals fail", fixedCluster{fixedNodes: nodes, err: errors.New("redis down")}, 502, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Now: clk.Now, DeadAfter: 30 * time.Second}, Sources{Nodes: tc.src})
			if err != nil {
				t.Fatal(err)
			}
			fx := &fixture{t: t, h: s.Handler()}
			var out NodesView
			code := fx.do("GET", "/api/nodes", "", nil, &out)
			if code != tc.code {
				t.Fatalf("GET /api/nodes = %d, want %d", code, tc.code)
			}
			if code != 200 {
				return
			}
			var ids []string
			var dead []bool
			for _, n := range out.Nodes {
				ids, dead = append(ids, n.ID), append(dead, n.Dead)
			}
			if !slices.Equal(ids, tc.wantOrder) || !slices.Equal(dead, tc.wantDead) {
				t.Errorf("nodes %v dead %v, want %v %v", ids, dead, tc.wantOrder, tc.wantDead)
			}
			if out.Live != 2 || out.Dead != 1 {
				t.Errorf("live %d dead %d, want 2 and 1", out.Live, out.Dead)
			}
			if n := out.Nodes[2]; n.LastError != "redis: timeout" || n.SilenceSec != 8 || n.Role != "crawl" {
				t.Errorf("dead node row %+v", n)
			}
			if tc.crawls != (out.Crawls != nil) || (tc.crawls && !slices.Equal(out.Crawls, totals)) {
				t.Errorf("crawls %+v, want present %v (%+v)", out.Crawls, tc.crawls, totals)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{{Token: "short"}, {UpdateInterval: -1}, {MaxSubscribers: -1}, {MaxSeeds: -1}} {
		if _, err := New(c, Sources{}); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

func FuzzDuration(f *testing.F) {
	for _, s := range []string{`"1.5s"`, `1500`, `-1`, `"soon"`, `1e300`, `null`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Duration
		if err := d.UnmarshalJSON(b); err == nil && b[0] != '"' && (time.Duration(d) > maxBlock || time.Duration(d) < -maxBlock) {
			t.Fatalf("%q gave %v, outside ±%v", b, time.Duration(d), maxBlock)
		}
	})
}

func FuzzTailFetches(f *testing.F) {
	f.Add([]byte("2026-11-22T09:30:15.123Z   200      11429 http://a.test/a LL http://a.test/ text/html #007 20261122093014900+223 - - -\n"), true)
	f.Add([]byte("garbage\n\n"), false)
	f.Fuzz(func(t *testing.T, b []byte, partial bool) {
		for _, fe := range tailFetches(b, partial, "a.test", 10) {
			if fe.URL == "" {
				t.Fatal("fetch without URL")
			}
		}
	})
}

func TestWithSeeds(t *testing.T) {
	fx := newFixture(t, Config{})
	var got []string
	f := WithSeeds(FrontierSource(fx.fr, ""), func(_ context.Context, urls []string) (int, error) {
		got = append(got, urls...)
		return 1, nil
	})
	s, err := New(Config{Token: testToken}, Sources{Frontier: f})
	if err != nil {
		t.Fatal(err)
	}
	fx.h = s.Handler()
	var out map[string]int
	if code := fx.act("/api/seeds", `{"urls":["http://a.test/","http://b.test/"]}`, &out); code != 200 || out["added"] != 1 || len(got) != 2 {
		t.Errorf("seeds through the crawler's seeding: %d %v, seeder got %v", code, out, got)
	}
	if st := fx.fr.Stats("", ""); st.Size != 0 {
		t.Errorf("the frontier got %d URLs directly", st.Size)
	}
}

func TestDelaySource(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name string
		d    politeness.Delays
		want DelaySource
	}{
		{"default", politeness.Delays{Configured: s, Default: s, Effective: s}, SourceDefault},
		{"manual", politeness.Delays{Configured: 3 * s, Manual: true, Effective: 3 * s}, SourceConfig},
		{"manual override under robots", politeness.Delays{Configured: s, Manual: true, Override: true, Robots: 5 * s, Effective: s}, SourceConfig},
		{"robots over manual", politeness.Delays{Configured: s, Manual: true, Robots: 5 * s, Effective: 5 * s}, SourceRobots},
		{"request-rate", politeness.Delays{Configured: s, Rate: 4 * s, Effective: 4 * s}, SourceRate},
		{"adaptive", politeness.Delays{Configured: s, Adaptive: 2 * s, Effective: 2 * s}, SourceAdaptive},
		{"backoff", politeness.Delays{Configured: s, Effective: s, Backoff: 30 * s}, SourceBackoff},
	}
	for _, c := range cases {
		if got := delaySource(c.d); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestHostPoliteness(t *testing.T) {
	fx := newFixture(t, Config{})
	fx.put("http://a.test/")
	if code := fx.act("/api/delay", `{"key":"a.test","delay":"2500ms"}`, nil); code != 200 {
		t.Fatalf("set delay: %d", code)
	}
	var d HostDetail
	fx.do("GET", "/api/hosts/a.test", "", nil, &d)
	if d.Politeness == nil || d.Politeness.Delay != 2500*time.Millisecond || d.Politeness.Source != SourceConfig {
		t.Errorf("politeness = %+v", d.Politeness)
	}
	var rows struct{ Delays []DelayRow }
	fx.do("GET", "/api/delays", "", nil, &rows)
	if len(rows.Delays) != 1 || rows.Delays[0].Key != "a.test" || rows.Delays[0].Manual != 2500*time.Millisecond {
		t.Errorf("delays = %+v", rows.Delays)
	}
}
