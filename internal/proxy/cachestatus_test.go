package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCacheStatus: every response through the cache says what the cache
// did in Cache-Status (RFC 9211), beside X-Cache, after the members of
// caches nearer the origin. Through curl.
func TestCacheStatus(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fresh":
			w.Header().Set("Cache-Control", "max-age=3600")
			w.Header().Set("Cache-Status", "upstream-cdn; hit")
		case "/validate":
			w.Header().Set("Cache-Control", "max-age=0")
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		io.WriteString(w, "body of "+r.URL.Path)
	})
	e := newEnv(t, envOpts{cache: true})
	status := func(args ...string) (string, string) {
		t.Helper()
		r := e.curl(args...)
		if r.exit != 0 {
			t.Fatalf("curl %v: exit %d %s", args, r.exit, r.stderr)
		}
		return strings.Join(r.header.Values("Cache-Status"), ", "), r.header.Get(HeaderCache)
	}
	for _, tt := range []struct {
		name    string
		args    []string
		want    string
		xCache  string
		wantPre string // members before ours
	}{
		{"first: miss", []string{o.URL + "/fresh"}, "courtesy; fwd=miss; fwd-status=200", "MISS", "upstream-cdn; hit, "},
		{"second: hit", []string{o.URL + "/fresh"}, "courtesy; hit; ttl=", "HIT", "upstream-cdn; hit, "},
		{"stale entry stored", []string{o.URL + "/validate"}, "courtesy; fwd=miss; fwd-status=200", "MISS", ""},
		{"revalidated", []string{o.URL + "/validate"}, "courtesy; fwd=stale; fwd-status=304; ttl=", "REVALIDATED", ""},
		{"method", []string{"-X", "POST", "--data", "x", o.URL + "/post"}, "courtesy; fwd=method; fwd-status=200", "MISS", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs, xc := status(tt.args...)
			if !strings.HasPrefix(cs, tt.wantPre+tt.want) || xc != tt.xCache {
				t.Errorf("Cache-Status %q, X-Cache %q; want %q…, %q", cs, xc, tt.wantPre+tt.want, tt.xCache)
			}
		})
	}
	// Without a cache, the proxy says it did not look.
	e2 := newEnv(t, envOpts{})
	if r := e2.curl(o.URL + "/fresh"); !strings.HasSuffix(strings.Join(r.header.Values("Cache-Status"), ", "), "courtesy; fwd=bypass; fwd-status=200") {
		t.Errorf("no cache: Cache-Status %q", r.header.Values("Cache-Status"))
	}
}

// TestNotModifiedHopByHopNotStored: the connection fields of a 304 that
// revalidated an entry are not merged into it, so later hits do not carry
// them.
func TestNotModifiedHopByHopNotStored(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=0")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.Header().Set("Cache-Control", "max-age=3600")
			w.Header().Set("Connection", "keep-alive, X-Hop")
			w.Header().Set("Keep-Alive", "timeout=5, max=100")
			w.Header().Set("X-Hop", "only this hop")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "page")
	})
	e := newEnv(t, envOpts{cache: true})
	u := o.URL + "/p"
	for i, want := range []string{"MISS", "REVALIDATED", "HIT"} {
		r := e.curl(u)
		if r.header.Get(HeaderCache) != want || r.body != "page" {
			t.Fatalf("request %d: X-Cache %q body %q, want %s", i, r.header.Get(HeaderCache), r.body, want)
		}
		if i > 0 {
			for _, k := range []string{"Keep-Alive", "X-Hop"} {
				if v := r.header.Get(k); v != "" {
					t.Errorf("request %d (%s): %s: %q from the 304", i, want, k, v)
				}
			}
			if c := r.header.Get("Connection"); strings.Contains(strings.ToLower(c), "x-hop") {
				t.Errorf("request %d: Connection %q from the 304", i, c)
			}
		}
	}
}
