package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestProxy(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "host="+r.Host+" path="+r.URL.Path)
	}))
	defer origin.Close()
	addr := strings.TrimPrefix(origin.URL, "http://")
	h, err := newProxy("*.test=" + addr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	viaProxy := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}

	tests := []struct {
		name       string
		client     *http.Client
		url        string
		wantStatus int
		wantBody   string
	}{
		{"absolute form to a .test host", viaProxy, "http://site-0001.test:8080/a/b", 200, "host=site-0001.test:8080 path=/a/b"},
		{"origin form refused", http.DefaultClient, proxy.URL + "/a", 400, "httputilproxy: only absolute-form"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.client.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || !strings.HasPrefix(string(b), tc.wantBody) {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, b, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

func TestResolveRule(t *testing.T) {
	for _, bad := range []string{"=127.0.0.1:1", "*.test", "*.test=127.0.0.1"} {
		if _, err := newProxy(bad); err == nil {
			t.Errorf("newProxy(%q): no error", bad)
		}
	}
}
