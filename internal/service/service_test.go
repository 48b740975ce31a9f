package service

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

const token = "t0ken"

type fixture struct {
	t      *testing.T
	origin *httptest.Server
	gate   *politeness.Gate
	svc    *Service
	api    *httptest.Server
	clk    *fakeclock.Clock // the gate's clock
}

// newFixture: an origin whose robots.txt disallows /suche/ (the polite-proxy thesis'
// Listing 8), a gate with delay, and the service in front.
func newFixture(t *testing.T, delay time.Duration) *fixture {
	t.Helper()
	return newFixtureRobots(t, delay, "User-agent: *\nDisallow: /suche/\n")
}

// newFixtureRobots is newFixture with the origin's robots.txt.
func newFixtureRobots(t *testing.T, delay time.Duration, robots string) *fixture {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(origin.Close)
	clk := fakeclock.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	g, err := politeness.New(politeness.Config{DefaultDelay: delay}, politeness.Backend{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "courtesy_test_total", Help: "x"}))
	svc, err := New(Options{Gate: g, Gatherer: reg, AdminToken: token, Config: func() any { return map[string]string{"mode": "wait"} }})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(svc)
	t.Cleanup(api.Close)
	return &fixture{t: t, origin: origin, gate: g, svc: svc, api: api, clk: clk}
}

// warm fetches the origin's robots.txt (which takes the host's slot) and
// lets the delay after it pass on the gate's clock.
func (f *fixture) warm(delay time.Duration) {
	u, _ := url.Parse(f.origin.URL + "/")
	if _, err := f.gate.Peek(context.Background(), u); err != nil {
		f.t.Fatal(err)
	}
	f.clk.Advance(max(delay, 0) + time.Millisecond)
}

func (f *fixture) call(method, path, body string, hdr ...string) (*http.Response, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.api.URL+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestVerboseListing8(t *testing.T) {
	f := newFixture(t, time.Second)
	f.warm(time.Second)
	h := f.origin.URL
	body, _ := json.Marshal([]string{h + "/Lifestyle", h + "/Karriere", h + "/suche/12312"}) // Listing 7
	resp, b := f.call("POST", "/politeness/verbose", string(body))
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	delayMsg := "There must be a delay of 1000 milliseconds between each request."
	robotsMsg := "Blocked because URL is excluded from allowed URLs."
	want := []Result{
		{URL: h + "/Lifestyle", Allowed: true, RetryAfter: -1},
		{URL: h + "/Karriere", Error: &delayMsg, Allowed: false, RetryAfter: 1000},
		{URL: h + "/suche/12312", Error: &robotsMsg, Allowed: false, RetryAfter: -1},
	}
	var got []Result
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s", b)
	}
	// Field order and null error exactly as Listing 8.
	if !bytes.HasPrefix(b, []byte(`[{"url":"`+h+`/Lifestyle","error":null,"allowed":true,"retryAfter":-1}`)) {
		t.Errorf("shape: %s", b)
	}
}

func TestFilterServices(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond)
	f.warm(300 * time.Millisecond)
	h := f.origin.URL
	for _, tt := range []struct {
		name, method, path, body string
	}{
		{"POST array", "POST", "/politeness", `["` + h + `/a","` + h + `/b","` + h + `/suche/x","not a url"]`},
		{"POST object", "POST", "/politeness", `{"urls":["` + h + `/a","` + h + `/b"]}`},
		{"POST Listing 7 trailing comma", "POST", "/politeness", "[\n  \"" + h + "/a\",\n  \"" + h + "/b\",\n]\n"},
		{"GET list", "GET", "/politeness?urls=" + url.QueryEscape(h+"/a,"+h+"/b"), ""},
		{"GET bracketed", "GET", "/politeness?urls=" + url.QueryEscape("["+h+"/a,"+h+"/b]"), ""},
		{"GET JSON array", "GET", "/politeness?urls=" + url.QueryEscape(`["`+h+`/a","`+h+`/b"]`), ""},
		{"GET repeated", "GET", "/politeness?urls=" + url.QueryEscape(h+"/a") + "&urls=" + url.QueryEscape(h+"/b"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.call(tt.method, tt.path, tt.body)
			var got []string
			if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if len(got) != 1 || got[0] != h+"/a" {
				t.Errorf("allowed %v, want only the first URL of the host", got)
			}
		})
	}
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"bad json", "POST", "/politeness", `{"x":`, 400},
		{"numbers", "POST", "/politeness", `[1,2]`, 400},
		{"null", "POST", "/politeness", `null`, 400},
		{"only a comma", "POST", "/politeness", `[,]`, 400},
		{"two commas", "POST", "/politeness", `["http://a/",,]`, 400},
		{"null verbose", "POST", "/politeness/verbose", ` null `, 400},
		{"empty body", "POST", "/politeness/verbose", ``, 400},
		{"form body", "POST", "/politeness", `urls=` + url.QueryEscape(h+"/a"), 400},
		{"too many", "POST", "/politeness", `[` + strings.Repeat(`"http://a/",`, MaxURLs) + `"http://a/"]`, 413},
		{"huge body", "POST", "/politeness/verbose", `["` + strings.Repeat("a", MaxBodyBytes) + `"]`, 413},
		{"missing urls", "GET", "/politeness", "", 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := f.call(tt.method, tt.path, tt.body)
			if resp.StatusCode != tt.status || !strings.Contains(string(b), "error") {
				t.Errorf("got %d %s", resp.StatusCode, b)
			}
		})
	}
}

func TestReserve(t *testing.T) {
	f := newFixture(t, 200*time.Millisecond)
	f.warm(200 * time.Millisecond)
	h := f.origin.URL
	body := `["` + h + `/a"]`
	resp, b := f.call("POST", "/politeness?reserve=true", body)
	if string(bytes.TrimSpace(b)) != `["`+h+`/a"]` {
		t.Fatalf("first crawler: %s", b)
	}
	tok := resp.Header.Get(HeaderReservation)
	if len(tok) != 32 {
		t.Fatalf("reservation token %q", tok)
	}
	// A second crawler asking at once is not allowed the same host.
	_, b = f.call("POST", "/politeness/verbose?reserve=true", body)
	var res []Result
	json.Unmarshal(b, &res)
	if len(res) != 1 || res[0].Allowed || res[0].RetryAfter <= 0 || res[0].Reservation != "" {
		t.Fatalf("second crawler: %s", b)
	}
	// The first reports its fetch: the slot frees, the delay runs from now.
	_, b = f.call("POST", "/politeness/done", `[{"url":"`+h+`/a","status":200},{"url":"http://unknown/","status":200}]`,
		HeaderReservation, tok)
	if string(bytes.TrimSpace(b)) != `{"ended":1,"ignored":1}` {
		t.Errorf("done: %s", b)
	}
	f.clk.Advance(250 * time.Millisecond)
	_, b = f.call("POST", "/politeness?reserve=true", body)
	if string(bytes.TrimSpace(b)) != `["`+h+`/a"]` {
		t.Errorf("after the delay: %s", b)
	}
}

func TestAdminAPI(t *testing.T) {
	f := newFixture(t, time.Second)
	auth := []string{"Authorization", "Bearer " + token}
	for _, tt := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"no token", nil, 401},
		{"wrong token", []string{"Authorization", "Bearer nope"}, 401},
		{"header token", []string{"X-Courtesy-Token", token}, 200},
		{"bearer", auth, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if resp, b := f.call("GET", "/admin/config", "", tt.hdr...); resp.StatusCode != tt.status {
				t.Errorf("got %d %s", resp.StatusCode, b)
			}
		})
	}
	resp, b := f.call("PUT", "/admin/delays/derstandard.at", `{"delay": 1500}`, auth...)
	if resp.StatusCode != 200 {
		t.Fatalf("put: %d %s", resp.StatusCode, b)
	}
	f.call("PUT", "/admin/delays/orf.at", `{"delay": "5s", "override": true}`, auth...)
	resp, b = f.call("GET", "/admin/delays/derstandard.at", "", auth...)
	var st struct {
		Effective int64  `json:"effective"`
		Manual    *int64 `json:"manual"`
	}
	if json.Unmarshal(b, &st); resp.StatusCode != 200 || st.Effective != 1500 || st.Manual == nil || *st.Manual != 1500 {
		t.Errorf("get: %d %s", resp.StatusCode, b)
	}
	_, b = f.call("GET", "/delays", "", auth...)
	var list []delayJSON
	if err := json.Unmarshal(b, &list); err != nil || len(list) != 3 || list[0].Domain != "default" || list[0].Delay != 1000 ||
		list[1].Domain != "derstandard.at" || list[2].Domain != "orf.at" || !list[2].Override || list[2].Delay != 5000 {
		t.Errorf("/delays: %s", b)
	}
	if resp, _ := f.call("DELETE", "/admin/delays/derstandard.at", "", auth...); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	_, b = f.call("GET", "/admin/delays", "", auth...)
	if strings.Contains(string(b), "derstandard") {
		t.Errorf("deleted delay still listed: %s", b)
	}
	if resp, _ := f.call("PUT", "/admin/delays/default", `{"delay": 250}`, auth...); resp.StatusCode != 200 {
		t.Errorf("default: %d", resp.StatusCode)
	}
	if d, _ := f.gate.DefaultDelay(context.Background()); d != 250*time.Millisecond {
		t.Errorf("default delay %v", d)
	}
	for _, body := range []string{`{"delay": -1}`, `{"delay": "forever"}`, `{"delay": true}`, `{`} {
		if resp, _ := f.call("PUT", "/admin/delays/x.org", body, auth...); resp.StatusCode != 400 {
			t.Errorf("%s: %d", body, resp.StatusCode)
		}
	}
	// A key is a host name, not a URL: one would never match a request.
	for _, key := range []string{"http:%2F%2Fx.org%2F", "x.org%2Fpath", "user@x.org", "x.org%3Fq"} {
		if resp, b := f.call("PUT", "/admin/delays/"+key, `{"delay": 100}`, auth...); resp.StatusCode != 400 {
			t.Errorf("PUT key %s: %d %s", key, resp.StatusCode, b)
		}
		if resp, b := f.call("GET", "/admin/delays/"+key, "", auth...); resp.StatusCode != 400 {
			t.Errorf("GET key %s: %d %s", key, resp.StatusCode, b)
		}
	}
	f.svc.SetAdminToken("")
	if resp, _ := f.call("GET", "/admin/config", "", auth...); resp.StatusCode != 403 {
		t.Errorf("disabled admin: %d", resp.StatusCode)
	}
}

// TestAdminDelayRobots: a key's live status counts the Crawl-delay of its
// robots.txt, as /delays does, though the admin API knows only the key.
func TestAdminDelayRobots(t *testing.T) {
	auth := []string{"Authorization", "Bearer " + token}
	for _, tt := range []struct {
		name                     string
		robots, put              string
		effective, robotsDelay   int64
		wantManual, wantOverride bool
	}{
		{"crawl-delay above default", "User-agent: *\nCrawl-delay: 3\n", "", 3000, 3000, false, false},
		{"no crawl-delay", "User-agent: *\nDisallow: /x\n", "", 1000, 0, false, false},
		{"manual below robots", "User-agent: *\nCrawl-delay: 3\n", `{"delay": 2000}`, 3000, 3000, true, false},
		{"override", "User-agent: *\nCrawl-delay: 3\n", `{"delay": 2000, "override": true}`, 2000, 3000, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureRobots(t, time.Second, tt.robots)
			f.warm(time.Second)
			ou, _ := url.Parse(f.origin.URL)
			key := ou.Hostname()
			if tt.put != "" {
				if resp, b := f.call("PUT", "/admin/delays/"+key, tt.put, auth...); resp.StatusCode != 200 {
					t.Fatalf("put: %d %s", resp.StatusCode, b)
				}
			}
			resp, b := f.call("GET", "/admin/delays/"+key, "", auth...)
			var st struct {
				Effective int64  `json:"effective"`
				Delay     int64  `json:"delay"`
				Robots    int64  `json:"robots"`
				Manual    *int64 `json:"manual"`
				Override  bool   `json:"override"`
			}
			if err := json.Unmarshal(b, &st); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if st.Effective != tt.effective || st.Delay != tt.effective || st.Robots != tt.robotsDelay ||
				(st.Manual != nil) != tt.wantManual || st.Override != tt.wantOverride {
				t.Errorf("status %s; want effective %d, robots %d", b, tt.effective, tt.robotsDelay)
			}
			// The listing agrees.
			_, b = f.call("GET", "/delays", "", auth...)
			var list []delayJSON
			json.Unmarshal(b, &list)
			for _, d := range list {
				if d.Domain == key && (d.Delay != tt.effective || d.Robots != tt.robotsDelay) {
					t.Errorf("/delays %s; want delay %d, robots %d", b, tt.effective, tt.robotsDelay)
				}
			}
		})
	}
}

func TestMonitoring(t *testing.T) {
	f := newFixture(t, time.Second)
	auth := []string{"Authorization", "Bearer " + token}
	for _, tt := range []struct {
		path, want string
		hdr        []string
	}{
		{"/health", `{"status":"ok"}`, nil},
		{"/metrics", "courtesy_test_total 0", nil},
		{"/trace", "[]", auth},
		{"/cache", `{"enabled":false}`, nil},
	} {
		resp, b := f.call("GET", tt.path, "", tt.hdr...)
		if resp.StatusCode != 200 || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %d %s", tt.path, resp.StatusCode, b)
		}
	}
}

func TestSplitURLList(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"http://a/x,http://b/y":          {"http://a/x", "http://b/y"},
		"[http://a/x, https://b/y]":      {"http://a/x", "https://b/y"},
		"http://a/x?q=1,2,http://b/":     {"http://a/x?q=1,2", "http://b/"},
		"":                               nil,
		",,,":                            {",,,"},
		"http://a/,":                     {"http://a/,"},
		`["http://a/x", "http://b/y,z"]`: {"http://a/x", "http://b/y,z"},
		`[" http://a/x ", ""]`:           {"http://a/x"},
	} {
		if got := SplitURLList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitURLList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDelay(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{`1000`: time.Second, `"1.5s"`: 1500 * time.Millisecond, `0`: 0, `0.5`: 500 * time.Microsecond} {
		if got, err := ParseDelay(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("ParseDelay(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{`-1`, `"-1s"`, `"25h"`, `1e12`, `null`, `[]`, `"x"`} {
		if _, err := ParseDelay(json.RawMessage(in)); err == nil {
			t.Errorf("ParseDelay(%s): no error", in)
		}
	}
}

// FuzzParseURLList: the services' JSON input never panics and respects
// the URL bound.
func FuzzParseURLList(f *testing.F) {
	for _, s := range []string{`["http://a/"]`, `{"urls":["x"]}`, `[`, `null`, `[1]`, `{"urls":null}`, `"s"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		urls, err := ParseURLList(b)
		if err == nil && len(urls) > MaxURLs {
			t.Fatalf("%d URLs accepted", len(urls))
		}
		for _, u := range SplitURLList(string(b)) {
			if u == "" {
				t.Fatal("empty URL from SplitURLList")
			}
		}
		_, _ = ParseDelay(b)
	})
}
