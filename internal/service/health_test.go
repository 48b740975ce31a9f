package service

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/politeness/redisbackend"
)

// TestHealthDegradedWithoutRedis: with its Redis down, the service says
// degraded (503) on /health, and no client-facing answer names the Redis
// address. Through curl.
func TestHealthDegradedWithoutRedis(t *testing.T) {
	// Nothing listens here: a listener taken and closed.
	l := httptest.NewUnstartedServer(nil)
	dead := l.Listener.Addr().String()
	l.Close()
	rc := redis.NewClient(&redis.Options{Addr: dead, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rc.Close()
	g, err := politeness.New(politeness.Config{DefaultDelay: -1}, redisbackend.Backend(rc, redisbackend.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Gate: g, AdminToken: token, Check: func(ctx context.Context) error { return rc.Ping(ctx).Err() }})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(svc)
	defer api.Close()
	f := &fixture{t: t, api: api}
	code, _, body := f.curl(api.URL + "/health")
	if code != "503" || !strings.Contains(body, `"degraded"`) {
		t.Errorf("/health: %s %s", code, body)
	}
	_, port, _ := strings.Cut(dead, ":")
	for _, args := range [][]string{
		{api.URL + "/health"},
		{"-X", "POST", "--data", `["http://example.org/"]`, api.URL + "/politeness/verbose"},
		{"-H", "X-Courtesy-Token: " + token, api.URL + "/delays"},
	} {
		code, _, body := f.curl(args...)
		if strings.Contains(body, port) || strings.Contains(body, "dial") {
			t.Errorf("%v: %s answer names the Redis: %s", args, code, body)
		}
		if !strings.Contains(body, "unavailable") {
			t.Errorf("%v: %s %s: no word of the unavailable state", args, code, body)
		}
	}
	// A healthy check says ok.
	svc2, _ := New(Options{Gate: g, Check: func(context.Context) error { return nil }})
	ok := httptest.NewServer(svc2)
	defer ok.Close()
	if code, _, body := f.curl(ok.URL + "/health"); code != "200" || !strings.Contains(body, `"ok"`) {
		t.Errorf("healthy: %s %s", code, body)
	}
}

// TestAdminDelayFromFile: GET /admin/delays/{key} says fromFile as
// /delays does for a delay from the config file.
func TestAdminDelayFromFile(t *testing.T) {
	g, err := politeness.New(politeness.Config{DefaultDelay: -1, Delays: []politeness.DelayRule{{Key: "file.test", Delay: 2 * time.Second}}}, politeness.Backend{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Gate: g, AdminToken: token})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(svc)
	defer api.Close()
	f := &fixture{t: t, api: api}
	_, _, body := f.curl("-H", "X-Courtesy-Token: "+token, api.URL+"/admin/delays/file.test")
	var one struct {
		FromFile bool `json:"fromFile"`
		Delay    int64
	}
	if err := json.Unmarshal([]byte(body), &one); err != nil || !one.FromFile || one.Delay != 2000 {
		t.Errorf("/admin/delays/file.test: %s", body)
	}
	_, _, body = f.curl("-H", "X-Courtesy-Token: "+token, api.URL+"/delays")
	if !strings.Contains(body, `"domain":"file.test","delay":2000`) || !strings.Contains(body, `"fromFile":true`) {
		t.Errorf("/delays: %s", body)
	}
	// A delay set through the API is not from the file.
	f.curl("-X", "PUT", "-H", "X-Courtesy-Token: "+token, "--data", `{"delay": 500}`, api.URL+"/admin/delays/api.test")
	if _, _, body := f.curl("-H", "X-Courtesy-Token: "+token, api.URL+"/admin/delays/api.test"); !strings.Contains(body, `"fromFile":false`) {
		t.Errorf("/admin/delays/api.test: %s", body)
	}
}
