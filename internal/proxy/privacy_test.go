package proxy

import (
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestOverrideNeverSharesPrivatePages: with the no-store override on (the
// default), a response tied to one user is never stored and served to
// another. Each case fetches /me as alice with curl, then without
// credentials and as bob; neither may get alice's page, and each must
// reach the origin.
func TestOverrideNeverSharesPrivatePages(t *testing.T) {
	tests := []struct {
		name  string
		alice []string // curl arguments that make the request alice's
		resp  []string // extra response fields
	}{
		{"request Cookie", []string{"-b", "session=alice"}, nil},
		{"request Authorization", []string{"-H", "Authorization: Bearer alice"}, nil},
		{"response Set-Cookie", []string{"-H", "X-User: alice"}, []string{"Set-Cookie", "session=alice"}},
		{"response private", []string{"-H", "X-User: alice"}, []string{"Cache-Control", "private, no-store"}},
		{"response Vary: Cookie", []string{"-H", "X-User: alice"}, []string{"Vary", "Cookie"}},
		{"response Vary: *", []string{"-H", "X-User: alice"}, []string{"Vary", "*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
				user := requestUser(r)
				if u := r.Header.Get("X-User"); user == "anonymous" && u != "" && len(tt.resp) > 0 {
					user = u // the response's own fields mark it private
				}
				w.Header().Set("Cache-Control", "no-store")
				for i := 0; i+1 < len(tt.resp); i += 2 {
					w.Header().Set(tt.resp[i], tt.resp[i+1])
				}
				io.WriteString(w, "page of "+user)
			})
			e := newEnv(t, envOpts{cache: true})
			u := o.URL + "/me"
			first := e.curl(append(tt.alice, u)...)
			if first.exit != 0 || first.body != "page of alice" {
				t.Fatalf("alice: exit %d %q %s", first.exit, first.body, first.stderr)
			}
			for _, other := range []struct {
				name, want string
				args       []string
			}{
				{"anonymous", "page of anonymous", nil},
				{"bob", "page of bob", []string{"-b", "session=bob"}},
			} {
				got := e.curl(append(other.args, u)...)
				if got.exit != 0 || got.body != other.want {
					t.Errorf("%s got %q (X-Cache %s), want %q", other.name, got.body, got.header.Get(HeaderCache), other.want)
				}
				if xc := got.header.Get(HeaderCache); xc == "HIT" {
					t.Errorf("%s: X-Cache %s", other.name, xc)
				}
			}
			if n := len(o.pages()); n != 3 {
				t.Errorf("origin saw %d requests, want 3 (nothing shared)", n)
			}
		})
	}
}

// TestOverrideStillAppliesToAnonymousPages: the override is narrowed, not
// gone: a no-store page fetched without credentials is stored and served
// to the next client (the thesis' bandwidth saving), but never to a
// request that carries a cookie.
func TestOverrideStillAppliesToAnonymousPages(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		user := "anonymous"
		if c, err := r.Cookie("session"); err == nil {
			user = c.Value
		}
		io.WriteString(w, "page of "+user)
	})
	e := newEnv(t, envOpts{cache: true})
	u := o.URL + "/news"
	if r := e.curl(u); r.body != "page of anonymous" || r.header.Get(HeaderCache) != "MISS" {
		t.Fatalf("first: %q %s", r.body, r.header.Get(HeaderCache))
	}
	if r := e.curl(u); r.body != "page of anonymous" || r.header.Get(HeaderCache) != "HIT" {
		t.Errorf("second: %q %s, want a hit", r.body, r.header.Get(HeaderCache))
	}
	if r := e.curl("-b", "session=carol", u); r.body != "page of carol" || r.header.Get(HeaderCache) == "HIT" {
		t.Errorf("with a cookie: %q %s, want carol's page from the origin", r.body, r.header.Get(HeaderCache))
	}
	if n := len(o.pages()); n != 2 {
		t.Errorf("origin saw %d requests, want 2", n)
	}
}

// TestCookiedPagesAreNotShared: a page that the origin lets a shared cache
// keep (max-age, no private, no Vary; must-revalidate on an authenticated
// answer, which RFC 9111 §3.5 lets a shared cache reuse) but renders for
// the request's cookie or credentials is stored as their variant: alice
// gets her page again from the cache, and bob and a client without them
// get their own from the origin, never hers.
func TestCookiedPagesAreNotShared(t *testing.T) {
	for _, tc := range []struct {
		name       string
		alice, bob []string
		cc         string
	}{
		{"cookie", []string{"-b", "session=alice"}, []string{"-b", "session=bob"}, "max-age=600"},
		{"authorization", []string{"-H", "Authorization: Bearer alice"}, []string{"-H", "Authorization: Bearer bob"}, "must-revalidate, max-age=600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", tc.cc)
				io.WriteString(w, "page of "+requestUser(r))
			})
			e := newEnv(t, envOpts{cache: true})
			u := o.URL + "/me"
			for i, c := range []struct {
				args    []string
				want    string
				wantHit bool
			}{
				{tc.alice, "page of alice", false},
				{tc.bob, "page of bob", false},
				{nil, "page of anonymous", false},
				{tc.alice, "page of alice", true},
				{nil, "page of anonymous", true},
			} {
				r := e.curl(append(slices.Clone(c.args), u)...)
				if r.exit != 0 || r.body != c.want {
					t.Errorf("request %d %v: exit %d %q (X-Cache %s), want %q", i, c.args, r.exit, r.body, r.header.Get(HeaderCache), c.want)
				}
				if hit := r.header.Get(HeaderCache) == "HIT"; hit != c.wantHit {
					t.Errorf("request %d %v: X-Cache %s, want a hit: %v", i, c.args, r.header.Get(HeaderCache), c.wantHit)
				}
			}
			if n := len(o.pages()); n != 3 {
				t.Errorf("origin saw %d requests, want 3 (one per user)", n)
			}
		})
	}
}

// TestRevalidationCookieNotShared: an origin that sets a cookie on the
// 304 answering one client's revalidation gives that client the cookie;
// the clients after it, answered from the same freshened entry, do not
// get it (before, every later client was handed the first one's session).
// Through curl.
func TestRevalidationCookieNotShared(t *testing.T) {
	var validations atomic.Int32
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=0")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			if validations.Add(1) == 1 {
				w.Header().Set("Set-Cookie", "session=first-client")
			}
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "public page")
	})
	e := newEnv(t, envOpts{cache: true})
	u := o.URL + "/page"
	for i, want := range []struct{ xCache, cookie string }{
		{"MISS", ""},
		{"REVALIDATED", "session=first-client"},
		{"REVALIDATED", ""},
		{"REVALIDATED", ""},
	} {
		r := e.curl(u)
		if r.exit != 0 || r.body != "public page" {
			t.Fatalf("request %d: exit %d %q %s", i, r.exit, r.body, r.stderr)
		}
		if xc, c := r.header.Get(HeaderCache), r.header.Get("Set-Cookie"); xc != want.xCache || c != want.cookie {
			t.Errorf("request %d: X-Cache %s, Set-Cookie %q; want %s, %q", i, xc, c, want.xCache, want.cookie)
		}
	}
}

// TestUnsolicitedResponseNotRelayed: an origin that sends a second
// response on a keep-alive connection after the one it owed (here alice's
// page, then a page meant for her alone) must not have that second
// response read as the answer to the next client's request on the pooled
// connection. Through curl.
func TestUnsolicitedResponseNotRelayed(t *testing.T) {
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/alice" {
			io.WriteString(w, "page of "+r.URL.Path)
			return
		}
		c, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\npage of alice")
		bw.Flush()
		time.Sleep(50 * time.Millisecond) // the proxy has pooled the connection
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nalice secret")
		bw.Flush()
		time.Sleep(200 * time.Millisecond)
	})
	e := newEnv(t, envOpts{})
	if r := e.curl(o.URL + "/alice"); r.exit != 0 || r.body != "page of alice" {
		t.Fatalf("alice: exit %d %q %s", r.exit, r.body, r.stderr)
	}
	time.Sleep(100 * time.Millisecond)
	if r := e.curl(o.URL + "/bob"); r.exit != 0 || r.body != "page of /bob" {
		t.Errorf("bob: exit %d %q, want his own page", r.exit, r.body)
	}
}

// TestEncodedPagesNotServedToPlainClients: an origin that gzips for the
// clients that ask for it, without Vary: Accept-Encoding, never has its
// gzip served from the cache to a client that did not ask (curl without
// --compressed, as Python's urllib): the compressed response is a variant
// of the request's Accept-Encoding. Through curl.
func TestEncodedPagesNotServedToPlainClients(t *testing.T) {
	const text = "plain text of the page"
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("Content-Type", "text/plain")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, text)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, text)
		zw.Close()
	})
	e := newEnv(t, envOpts{cache: true})
	u := o.URL + "/page"
	for i, c := range []struct {
		args     []string
		encoding string // Content-Encoding the client must get
		hit      bool
	}{
		{[]string{"--compressed"}, "gzip", false},
		{nil, "", false}, // not the gzip stored just before
		{[]string{"--compressed"}, "", true},
		{nil, "", true},
	} {
		r := e.curl(append(slices.Clone(c.args), u)...)
		if r.exit != 0 || r.body != text {
			t.Errorf("request %d %v: exit %d body %q, want the text", i, c.args, r.exit, r.body)
		}
		if got := r.header.Get("Content-Encoding"); got != c.encoding {
			t.Errorf("request %d %v: Content-Encoding %q, want %q", i, c.args, got, c.encoding)
		}
		if hit := r.header.Get(HeaderCache) == "HIT"; hit != c.hit {
			t.Errorf("request %d %v: X-Cache %s, want a hit: %v", i, c.args, r.header.Get(HeaderCache), c.hit)
		}
	}
}

// TestTraceRedactsCredentials: a raw request with user:password in its
// URL (curl moves them to Authorization; other clients do not) never
// shows them in the trace, nor caches the answer.
func TestTraceRedactsCredentials(t *testing.T) {
	o := newOrigin(t, "", hello)
	e := newEnv(t, envOpts{cache: true})
	host := strings.TrimPrefix(o.URL, "http://")
	line := e.rawRequest("GET http://alice:s3cret@" + host + "/x HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("got %q", line)
	}
	waitFor(t, "the trace entry", func() bool { return len(e.proxy.Trace()) > 0 })
	for _, te := range e.proxy.Trace() {
		if strings.Contains(te.URL, "s3cret") || strings.Contains(te.URL, "alice") {
			t.Errorf("trace shows credentials: %s", te.URL)
		}
	}
	if s := e.cache.Stats(); s.Stores != 0 {
		t.Errorf("a response to a URL with credentials was stored: %+v", s)
	}
}

// requestUser is the user a test origin renders a page for: the session
// cookie, else the bearer token, else "anonymous".
func requestUser(r *http.Request) string {
	if c, err := r.Cookie("session"); err == nil {
		return c.Value
	}
	if a := r.Header.Get("Authorization"); a != "" {
		return strings.TrimPrefix(a, "Bearer ")
	}
	return "anonymous"
}
