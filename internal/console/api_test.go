package console

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// TestOverviewHistoryBeforeFirstSample: before the first sample the
// history's series are empty arrays, not null (the page read their length
// and failed to show the overview when it loaded within the first second).
func TestOverviewHistoryBeforeFirstSample(t *testing.T) {
	fx := newFixture(t, Config{})
	var raw map[string]json.RawMessage
	if code := fx.do("GET", "/api/overview?history=1", "", nil, &raw); code != 200 {
		t.Fatalf("GET /api/overview: %d", code)
	}
	var h map[string]json.RawMessage
	if err := json.Unmarshal(raw["history"], &h); err != nil {
		t.Fatalf("history %s: %v", raw["history"], err)
	}
	for _, k := range []string{"t", "pages_per_s", "bytes_per_s"} {
		if got := string(h[k]); got != "[]" {
			t.Errorf("history.%s = %s, want []", k, got)
		}
	}
}

func TestOverview(t *testing.T) {
	fx := newFixture(t, Config{})
	fx.put("http://a.test/1", "http://a.test/2", "http://b.test/1")
	start := fx.clk.Now()
	fx.crawl.set(func(p *Progress) {
		p.Start, p.MaxPages = start, 100
		p.Status = map[string]int64{"200": 3, "404": 1}
		p.MIME = map[string]int64{"text/html": 4}
	})
	for i := range 11 {
		fx.crawl.set(func(p *Progress) { p.Pages, p.Bytes = int64(i*2), int64(i*2000) })
		fx.s.sample()
		fx.clk.Advance(time.Second)
	}
	var o Overview
	if code := fx.do("GET", "/api/overview?history=1", "", nil, &o); code != 200 {
		t.Fatalf("GET /api/overview: %d", code)
	}
	if o.Pages != 20 || o.Queued != 3 || o.Hosts != 2 || o.ActiveHosts != 2 || o.State != "running" {
		t.Errorf("overview = %+v", o)
	}
	if o.PagesPerSec != 2 || o.BytesPerSec != 2000 {
		t.Errorf("rates = %v pages/s, %v bytes/s, want 2 and 2000", o.PagesPerSec, o.BytesPerSec)
	}
	if o.ETASec == nil || *o.ETASec != 40 {
		t.Errorf("ETA = %v, want 40 s (80 pages left at 2/s)", o.ETASec)
	}
	if o.Status["404"] != 1 || o.MIME["text/html"] != 4 || o.ElapsedSec != 11 {
		t.Errorf("status %v, mime %v, elapsed %v", o.Status, o.MIME, o.ElapsedSec)
	}
	if o.History == nil || len(o.History.T) != 10 || o.History.PagesPerSec[9] != 2 {
		t.Errorf("history = %+v", o.History)
	}

	// Everything blocked for a minute and nothing in flight: waiting.
	until := fx.clk.Now().Add(time.Minute)
	for _, h := range []string{"a.test", "b.test"} {
		if err := fx.fr.BlockQueueUntil(context.Background(), "", h, until); err != nil {
			t.Fatal(err)
		}
	}
	fx.do("GET", "/api/overview", "", nil, &o)
	if o.State != "waiting" || !o.WaitingUntil.Equal(until) {
		t.Errorf("state %q until %v, want waiting until %v", o.State, o.WaitingUntil, until)
	}
	fx.crawl.set(func(p *Progress) { p.WaitingUntil = until.Add(time.Hour) })
	fx.do("GET", "/api/overview", "", nil, &o)
	if !o.WaitingUntil.Equal(until.Add(time.Hour)) {
		t.Errorf("crawler's waiting time not shown: %v", o.WaitingUntil)
	}
	fx.crawl.set(func(p *Progress) { p.Finished = true })
	fx.do("GET", "/api/overview", "", nil, &o)
	if o.State != "finished" || o.ETASec != nil {
		t.Errorf("finished crawl: state %q, eta %v", o.State, o.ETASec)
	}
}

func TestHostsTable(t *testing.T) {
	fx := newFixture(t, Config{})
	var urls []string
	for i := range 30 {
		for j := 0; j <= i%5; j++ {
			urls = append(urls, fmt.Sprintf("http://h%02d.test/%d", i, j))
		}
	}
	fx.put(urls...)
	var p HostPage
	if code := fx.do("GET", "/api/hosts?limit=10&offset=10", "", nil, &p); code != 200 {
		t.Fatalf("status %d", code)
	}
	if p.Total != 30 || len(p.Rows) != 10 || p.Rows[0].Host != "h10.test" || p.Rows[9].Host != "h19.test" {
		t.Fatalf("page 2 by host: total %d rows %v", p.Total, hostsOf(p))
	}
	fx.do("GET", "/api/hosts?sort=queued&order=desc&limit=3", "", nil, &p)
	if got := hostsOf(p); got != "h04.test h09.test h14.test" || p.Rows[0].Queued != 5 {
		t.Errorf("top by queued = %s", got)
	}
	fx.do("GET", "/api/hosts?q=H2&limit=100", "", nil, &p)
	if p.Total != 10 || !strings.HasPrefix(hostsOf(p), "h20.test h21.test") {
		t.Errorf("search h2: total %d, %s", p.Total, hostsOf(p))
	}
	if p.Rows[0].Politeness == nil {
		t.Errorf("rows shown carry no politeness state")
	}
	for _, bad := range []string{"sort=nope", "limit=0x", "limit=501", "offset=-1", "order=up", "q=" + strings.Repeat("x", 300)} {
		if code := fx.do("GET", "/api/hosts?"+bad, "", nil, nil); code != http.StatusBadRequest {
			t.Errorf("GET /api/hosts?%s: %d, want 400", bad, code)
		}
	}
}

func hostsOf(p HostPage) string {
	var s []string
	for _, r := range p.Rows {
		s = append(s, r.Host)
	}
	return strings.Join(s, " ")
}

func TestHostDetail(t *testing.T) {
	fx := newFixture(t, Config{Agent: "courtesy"})
	fx.put("http://a.test/private/x", "http://a.test/ok")
	body := "User-agent: other\nDisallow: /\n\nUser-agent: courtesy\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n"
	err := fx.robots.PutRobots(context.Background(), politeness.RobotsEntry{Origin: "http://a.test", Result: politeness.RobotsOK,
		Status: 200, Body: []byte(body), Fetched: fx.clk.Now().Add(-time.Minute), Expires: fx.clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var d HostDetail
	if code := fx.do("GET", "/api/hosts/a.test", "", nil, &d); code != 200 {
		t.Fatalf("status %d", code)
	}
	if d.Queued != 2 || len(d.Head) != 2 || d.Robots == nil {
		t.Fatalf("detail = %+v", d)
	}
	if len(d.Robots.Group) != 1 || d.Robots.Group[0] != (LineRange{4, 6}) || d.Robots.AgeSec != 60 {
		t.Errorf("robots group %v age %d, want lines 4-6, 60 s", d.Robots.Group, d.Robots.AgeSec)
	}
	verdicts := map[string]Verdict{}
	for _, v := range d.Robots.Decisions {
		verdicts[v.URL] = v
	}
	if v := verdicts["http://a.test/private/x"]; v.Allowed || v.Line != 5 {
		t.Errorf("verdict for /private/x = %+v, want disallowed by line 5", v)
	}
	if code := fx.do("GET", "/api/hosts/nope.test", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("unknown host: %d, want 404", code)
	}
	if code := fx.do("GET", "/api/hosts/"+strings.Repeat("a", 300), "", nil, nil); code != http.StatusBadRequest {
		t.Errorf("overlong host: %d, want 400", code)
	}
}

func TestActionsNeedToken(t *testing.T) {
	fx := newFixture(t, Config{})
	fx.put("http://a.test/")
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"missing token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, http.StatusUnauthorized},
		{"token in a cookie", map[string]string{"Cookie": "token=" + testToken}, http.StatusUnauthorized},
		{"cross-site fetch", map[string]string{"Authorization": "Bearer " + testToken, "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.test"}, http.StatusForbidden},
		{"null origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "null"}, http.StatusForbidden},
		{"same origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://example.com", "Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"header token", map[string]string{"X-Courtesy-Token": testToken}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx.fr.SetActive(true)
			code := fx.do("POST", "/api/pause", "{}", c.hdr, nil)
			if code != c.want {
				t.Fatalf("status %d, want %d", code, c.want)
			}
			if paused := !fx.fr.Active(); paused != (c.want == http.StatusOK) {
				t.Errorf("frontier paused = %v after a %d", paused, code)
			}
		})
	}
	var log struct{ Actions []ActionRecord }
	fx.do("GET", "/api/actions", "", nil, &log)
	if len(log.Actions) != len(cases) || log.Actions[0].TokenID != fx.s.TokenID() || log.Actions[0].Remote == "" ||
		log.Actions[len(cases)-1].Status != http.StatusUnauthorized || log.Actions[len(cases)-1].TokenID != "" {
		t.Errorf("action log = %+v", log.Actions)
	}
	if !strings.Contains(fx.logs.String(), "console action") || strings.Contains(fx.logs.String(), testToken) {
		t.Errorf("log lines missing, or the token leaked into them:\n%s", fx.logs.String())
	}
}

func TestActions(t *testing.T) {
	fx := newFixture(t, Config{MaxSeeds: 5, LogLevel: new(slog.LevelVar)})
	fx.put("http://a.test/")
	ctx := context.Background()
	huge := `{"urls":[` + strings.TrimSuffix(strings.Repeat(`"http://x.test/",`, 6), ",") + `]}`
	cases := []struct {
		name, path, body string
		want             int
		check            func(t *testing.T)
	}{
		{"pause", "/api/pause", "", 200, func(t *testing.T) {
			if fx.fr.Active() {
				t.Error("still active")
			}
		}},
		{"resume", "/api/resume", "", 200, func(t *testing.T) {
			if !fx.fr.Active() {
				t.Error("still paused")
			}
		}},
		{"seeds", "/api/seeds", `{"urls":["http://new.test/","http://a.test/"]}`, 200, func(t *testing.T) {
			if st := fx.fr.Stats("", "new.test"); st.Size != 1 {
				t.Errorf("new.test holds %d URLs", st.Size)
			}
		}},
		{"huge seed list", "/api/seeds", huge, 400, nil},
		{"body over 1 MiB", "/api/seeds", `{"urls":["http://a.test/` + strings.Repeat("a", 2<<20) + `"]}`, 400, nil},
		{"overlong seed URL", "/api/seeds", `{"urls":["http://a.test/` + strings.Repeat("a", 9000) + `"]}`, 400, nil},
		{"no seeds", "/api/seeds", `{"urls":[]}`, 400, nil},
		{"relative seed", "/api/seeds", `{"urls":["/x"]}`, 400, nil},
		{"ftp seed", "/api/seeds", `{"urls":["ftp://a.test/"]}`, 400, nil},
		{"unknown field", "/api/seeds", `{"url":"http://a.test/"}`, 400, nil},
		{"not JSON", "/api/seeds", `urls=1`, 400, nil},
		{"delay", "/api/delay", `{"key":"A.test","delay":"2500ms"}`, 200, func(t *testing.T) {
			st, err := fx.gate.Status(ctx, "a.test", "")
			if err != nil || st.Delays.Configured != 2500*time.Millisecond || !st.Delays.Manual {
				t.Errorf("gate delays %+v, %v", st.Delays, err)
			}
		}},
		{"delay in ms with override", "/api/delay", `{"key":"example.org","delay":700,"override":true}`, 200, func(t *testing.T) {
			st, _ := fx.gate.Status(ctx, "example.org", "")
			if st.Delays.Configured != 700*time.Millisecond || !st.Delays.Override {
				t.Errorf("gate delays %+v", st.Delays)
			}
		}},
		{"negative delay", "/api/delay", `{"key":"a.test","delay":"-1s"}`, 400, nil},
		{"delay over a day", "/api/delay", `{"key":"a.test","delay":"25h"}`, 400, nil},
		{"bad delay", "/api/delay", `{"key":"a.test","delay":"soon"}`, 400, nil},
		{"delay without key", "/api/delay", `{"delay":"1s"}`, 400, nil},
		{"delay missing", "/api/delay", `{"key":"a.test"}`, 400, nil},
		{"clear delay", "/api/delay", `{"key":"a.test","clear":true}`, 200, func(t *testing.T) {
			st, _ := fx.gate.Status(ctx, "a.test", "")
			if st.Delays.Manual {
				t.Errorf("manual delay still set: %+v", st.Delays)
			}
		}},
		{"block", "/api/block", `{"host":"a.test","for":"1h"}`, 200, func(t *testing.T) {
			q, _ := fx.fr.Queue("", "a.test")
			if !q.BlockedUntil.Equal(fx.clk.Now().Add(time.Hour)) {
				t.Errorf("blocked until %v", q.BlockedUntil)
			}
		}},
		{"block unknown host", "/api/block", `{"host":"nope.test","for":"1h"}`, 404, nil},
		{"block in the past", "/api/block", `{"host":"a.test","until":"2020-01-01T00:00:00Z"}`, 400, nil},
		{"block both", "/api/block", `{"host":"a.test","for":"1h","until":"2030-01-01T00:00:00Z"}`, 400, nil},
		{"block negative", "/api/block", `{"host":"a.test","for":"-1h"}`, 400, nil},
		{"unblock", "/api/unblock", `{"host":"a.test"}`, 200, func(t *testing.T) {
			if q, _ := fx.fr.Queue("", "a.test"); !q.BlockedUntil.IsZero() {
				t.Errorf("still blocked until %v", q.BlockedUntil)
			}
		}},
		{"unblock unknown host", "/api/unblock", `{"host":"nope.test"}`, 404, nil},
		{"retire bad reason", "/api/retire", `{"host":"a.test","reason":"a\nb"}`, 400, nil},
		{"retire", "/api/retire", `{"host":"a.test","reason":"asked to stop"}`, 200, func(t *testing.T) {
			if r := fx.fr.Retired("", "a.test"); r != "asked to stop" {
				t.Errorf("retired = %q", r)
			}
		}},
		{"retire unknown host", "/api/retire", `{"host":"nope.test"}`, 404, nil},
		{"log level", "/api/log-level", `{"level":"debug"}`, 200, func(t *testing.T) {
			if l := fx.s.cfg.LogLevel.Level(); l != slog.LevelDebug {
				t.Errorf("level %v", l)
			}
		}},
		{"bad log level", "/api/log-level", `{"level":"loud"}`, 400, nil},
		{"unknown action", "/api/explode", `{}`, 404, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code := fx.act(c.path, c.body, nil); code != c.want {
				t.Fatalf("POST %s %s: %d, want %d", c.path, c.body, code, c.want)
			}
			if c.check != nil {
				c.check(t)
			}
		})
	}
}

func TestReadOnlyViews(t *testing.T) {
	fx := newFixture(t, Config{DeadAfter: time.Minute})
	var nodes struct {
		Nodes []NodeView
	}
	if code := fx.do("GET", "/api/nodes", "", nil, &nodes); code != 200 || len(nodes.Nodes) != 1 || nodes.Nodes[0].Goroutines == 0 || nodes.Nodes[0].RSS <= 0 {
		t.Errorf("nodes: %d %+v", code, nodes)
	}
	if code := fx.do("GET", "/api/proxy", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("proxy view without a proxy: %d, want 404", code)
	}
	if code := fx.do("GET", "/api/delays?limit=0", "", nil, nil); code != http.StatusBadRequest {
		t.Errorf("delays limit 0: %d, want 400", code)
	}
	if code := fx.do("GET", "/", "", nil, nil); code != 200 {
		t.Errorf("GET /: %d", code)
	}
}
