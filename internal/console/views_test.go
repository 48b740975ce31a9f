package console

import (
	"context"
	"errors"
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
