package httpcache

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

func openDB(t *testing.T, dir string) *kv.DB {
	t.Helper()
	db, err := kv.Open(dir, kv.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func openCache(t *testing.T, opts Options) (*Cache, *kv.DB) {
	t.Helper()
	db := openDB(t, t.TempDir())
	t.Cleanup(func() { db.Close() })
	c, err := Open(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() }) // runs before db.Close
	return c, db
}

func get(url string, kv ...string) *http.Request {
	r := httptest.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Add(kv[i], kv[i+1])
	}
	return r
}

func mustStore(t *testing.T, c *Cache, req *http.Request, status int, h http.Header, body string, at time.Time) {
	t.Helper()
	ok, why, err := c.Store(req, status, h, []byte(body), at, at)
	if err != nil || !ok {
		t.Fatalf("Store(%s) = %v %q %v", req.URL, ok, why, err)
	}
}

func TestCacheFreshStaleMiss(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	u := "http://example.org/page"
	mustStore(t, c, get(u), 200, hdr("Cache-Control", "max-age=60", "Content-Type", "text/html"), "hello", t0)

	tests := []struct {
		name string
		req  *http.Request
		at   time.Time
		want Action
	}{
		{"fresh", get(u), t0.Add(30 * time.Second), Fresh},
		{"head from get", httptest.NewRequest("HEAD", u, nil), t0.Add(30 * time.Second), Fresh},
		{"stale", get(u), t0.Add(2 * time.Minute), Stale},
		{"other url", get(u + "?x"), t0, Miss},
		{"post bypasses", httptest.NewRequest("POST", u, nil), t0, Miss},
		{"range bypasses", get(u, "Range", "bytes=0-1"), t0, Miss},
		{"only-if-cached miss → 504", get(u+"/nope", "Cache-Control", "only-if-cached"), t0, GatewayTimeout},
		{"only-if-cached fresh", get(u, "Cache-Control", "only-if-cached"), t0, Fresh},
		{"client no-cache", get(u, "Cache-Control", "no-cache"), t0, Stale},
		{"accept mismatch (the polite-proxy thesis §5.4)", get(u, "Accept", "application/json"), t0, Miss},
		{"accept match", get(u, "Accept", "text/html"), t0, Fresh},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Lookup(tt.req, tt.at)
			if res.Action != tt.want {
				t.Fatalf("Lookup = %v, want %v", res.Action, tt.want)
			}
			if (res.Action == Fresh || res.Action == Stale) && string(res.Entry.Body) != "hello" {
				t.Errorf("body %q", res.Entry.Body)
			}
		})
	}
	s := c.Stats()
	if s.Entries != 1 || s.Hits != 4 || s.Misses != 5 || s.Stale != 2 || s.Stores != 1 {
		t.Errorf("stats = %+v", s)
	}
	if want := 4.0 / 11; s.HitRatio != want {
		t.Errorf("hit ratio %v, want %v", s.HitRatio, want)
	}
}

func TestCacheOverride(t *testing.T) {
	t.Parallel()
	u := "http://example.org/nocache"
	h := hdr("Cache-Control", "no-cache, no-store", "Expires", "Tue, 31 Mar 1981 05:00:00 GMT") // the polite-proxy thesis' Listing 2
	on, _ := openCache(t, Options{})
	mustStore(t, on, get(u), 200, h, "x", t0)
	if a := on.Lookup(get(u), t0.Add(23*time.Hour)).Action; a != Fresh {
		t.Errorf("override: after 23h %v, want fresh", a)
	}
	if a := on.Lookup(get(u), t0.Add(25*time.Hour)).Action; a != Stale {
		t.Errorf("override: after 25h %v, want stale", a)
	}
	// A request with credentials is never answered from an overridden
	// entry: that entry was fetched without them.
	for _, kv := range [][]string{{"Cookie", "session=bob"}, {"Authorization", "Bearer bob"}} {
		if a := on.Lookup(get(u, kv...), t0.Add(time.Hour)).Action; a != Miss {
			t.Errorf("override: request with %s: %v, want miss", kv[0], a)
		}
	}
	// Nor is a response to a request with a cookie stored by the override.
	if ok, why, _ := on.Store(get(u+"/me", "Cookie", "session=alice"), 200, h, []byte("alice"), t0, t0); ok {
		t.Error("override stored a no-store response to a request with Cookie")
	} else if !strings.Contains(why, "Cookie") {
		t.Errorf("refusal %q does not name the cookie", why)
	}
	off, _ := openCache(t, Options{Policy: Policy{DisableOverride: true}})
	if ok, _, _ := off.Store(get(u), 200, h, []byte("x"), t0, t0); ok {
		t.Error("strict cache stored a no-store response")
	}
}

func TestCacheVary(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	u := "http://example.org/lang"
	h := hdr("Cache-Control", "max-age=60", "Vary", "accept-language")
	mustStore(t, c, get(u, "Accept-Language", "de"), 200, h, "hallo", t0)
	mustStore(t, c, get(u, "Accept-Language", "en"), 200, h, "hello", t0)
	for lang, want := range map[string]string{"de": "hallo", "en": "hello"} {
		res := c.Lookup(get(u, "Accept-Language", lang), t0)
		if res.Action != Fresh || string(res.Entry.Body) != want {
			t.Errorf("%s: %v %q, want fresh %q", lang, res.Action, bodyOf(res), want)
		}
	}
	if a := c.Lookup(get(u, "Accept-Language", "fr"), t0).Action; a != Miss {
		t.Errorf("fr: %v, want miss", a)
	}
	if a := c.Lookup(get(u), t0).Action; a != Miss {
		t.Errorf("no Accept-Language: %v, want miss", a)
	}
}

// TestCacheCookieVariants: a response to a request with cookies is kept as
// a variant of those cookies, even without Vary: Cookie; only the same
// cookies find it, a request with cookies never gets a page stored for
// none, and the cookie itself is kept only as a digest.
func TestCacheCookieVariants(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	u := "http://example.org/me"
	h := hdr("Cache-Control", "max-age=60")
	mustStore(t, c, get(u, "Cookie", "session=s3cret-alice"), 200, h, "alice", t0)
	for _, tc := range []struct {
		name   string
		cookie string
		want   Action
	}{
		{"alice", "session=s3cret-alice", Fresh},
		{"bob", "session=bob", Miss},
		{"no cookie", "", Miss},
	} {
		req := get(u)
		if tc.cookie != "" {
			req.Header.Set("Cookie", tc.cookie)
		}
		res := c.Lookup(req, t0)
		if res.Action != tc.want || (tc.want == Fresh && bodyOf(res) != "alice") {
			t.Errorf("%s: %v %q, want %v", tc.name, res.Action, bodyOf(res), tc.want)
		}
		if res.Entry != nil && strings.Contains(strings.Join(res.Entry.VaryValues, " "), "s3cret") {
			t.Errorf("%s: the cookie is kept in the clear: %q", tc.name, res.Entry.VaryValues)
		}
	}
	mustStore(t, c, get(u), 200, h, "anonymous", t0)
	if res := c.Lookup(get(u, "Cookie", "session=s3cret-alice"), t0); bodyOf(res) != "alice" {
		t.Errorf("alice after an anonymous store: %v %q, want her page", res.Action, bodyOf(res))
	}
	if res := c.Lookup(get(u, "Cookie", "session=carol"), t0); res.Action != Miss {
		t.Errorf("carol: %v %q, want a miss", res.Action, bodyOf(res))
	}
	if res := c.Lookup(get(u), t0); bodyOf(res) != "anonymous" {
		t.Errorf("no cookie: %v %q, want the anonymous page", res.Action, bodyOf(res))
	}
}

func TestImplicitVary(t *testing.T) {
	for _, tc := range []struct {
		name      string
		req, resp http.Header
		want      []string
	}{
		{"plain", hdr(), hdr("Content-Type", "text/html"), nil},
		{"cookie", hdr("Cookie", "a=b"), hdr(), []string{"Cookie"}},
		{"authorization and cookie", hdr("Authorization", "Bearer x", "Cookie", "a=b"), hdr(), []string{"Authorization", "Cookie"}},
		{"gzip", hdr("Accept-Encoding", "gzip"), hdr("Content-Encoding", "gzip"), []string{"Accept-Encoding"}},
		{"identity coding", hdr(), hdr("Content-Encoding", "identity"), nil},
	} {
		if got := implicitVary(tc.req, tc.resp); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func bodyOf(r Result) string {
	if r.Entry == nil {
		return ""
	}
	return string(r.Entry.Body)
}

func TestCacheContentTypeVariants(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{MaxVariants: 2})
	u := "http://example.org/neg"
	mustStore(t, c, get(u, "Accept", "text/html"), 200, hdr("Cache-Control", "max-age=60", "Content-Type", "text/html"), "html", t0)
	mustStore(t, c, get(u, "Accept", "application/json"), 200, hdr("Cache-Control", "max-age=60", "Content-Type", "application/json"), "json", t0)
	for accept, want := range map[string]string{"text/html": "html", "application/json": "json", "": "json", "*/*": "json"} {
		r := get(u)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := bodyOf(c.Lookup(r, t0)); got != want {
			t.Errorf("Accept %q: %q, want %q (newest variant for no preference)", accept, got, want)
		}
	}
	// A third content type pushes out the oldest (MaxVariants 2).
	mustStore(t, c, get(u), 200, hdr("Cache-Control", "max-age=60", "Content-Type", "text/plain"), "plain", t0)
	if a := c.Lookup(get(u, "Accept", "text/html"), t0).Action; a != Miss {
		t.Errorf("oldest variant still served: %v", a)
	}
	if n := c.Stats().Entries; n != 2 {
		t.Errorf("entries %d, want 2", n)
	}
}

func TestCacheEvictionAndMemoryBound(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 1000)
	c, _ := openCache(t, Options{MaxBytes: 20_000, MemoryBytes: 5_000 * 8})
	h := hdr("Cache-Control", "max-age=600")
	for i := range 100 {
		mustStore(t, c, get(fmt.Sprintf("http://h/%d", i)), 200, h, body, t0)
		// Keep 0 in use: the least recently used go first.
		c.Lookup(get("http://h/0"), t0)
	}
	s := c.Stats()
	if s.Bytes > 20_000 || s.Entries >= 100 || s.Evictions == 0 {
		t.Fatalf("not bounded: %+v", s)
	}
	if s.HotBytes > 40_000 {
		t.Errorf("memory tier %d bytes over its bound", s.HotBytes)
	}
	if a := c.Lookup(get("http://h/0"), t0).Action; a != Fresh {
		t.Errorf("recently used entry evicted: %v", a)
	}
	if a := c.Lookup(get("http://h/1"), t0).Action; a != Miss {
		t.Errorf("old entry kept: %v", a)
	}
	if a := c.Lookup(get("http://h/99"), t0).Action; a != Fresh {
		t.Errorf("newest entry evicted: %v", a)
	}
}

func TestCacheSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, dir)
	c, err := Open(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustStore(t, c, get("http://example.org/keep"), 200, hdr("Cache-Control", "max-age=600", "Content-Type", "text/plain"), "kept", t0)
	mustStore(t, c, get("http://example.org/gone"), 200, hdr("Cache-Control", "max-age=600"), "gone", t0)
	if err := c.Invalidate("http://example.org/gone"); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, dir)
	defer db.Close()
	c, err = Open(db, Options{MemoryBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := c.Lookup(get("http://example.org/keep"), t0.Add(time.Minute))
	if res.Action != Fresh || string(res.Entry.Body) != "kept" || res.Entry.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("after restart: %v %q", res.Action, bodyOf(res))
	}
	if a := c.Lookup(get("http://example.org/gone"), t0).Action; a != Miss {
		t.Errorf("invalidated entry came back: %v", a)
	}
	if s := c.Stats(); s.Entries != 1 || s.HotEntries != 0 {
		t.Errorf("stats after restart %+v", s)
	}
}

func TestCacheCorruptDataDropped(t *testing.T) {
	t.Parallel()
	c, db := openCache(t, Options{MemoryBytes: -1})
	mustStore(t, c, get("http://example.org/x"), 200, hdr("Cache-Control", "max-age=600"), "x", t0)
	// Damage the data record behind the cache's back.
	var vk []byte
	_ = db.Bucket(DefaultPrefix).Scan([]byte("d"), func(k, v []byte) error { vk = append([]byte(nil), k...); return nil })
	if err := db.Bucket(DefaultPrefix).Set(vk, []byte{42}); err != nil {
		t.Fatal(err)
	}
	if a := c.Lookup(get("http://example.org/x"), t0).Action; a != Miss {
		t.Errorf("corrupt entry served: %v", a)
	}
	if n := c.Stats().Entries; n != 0 {
		t.Errorf("corrupt entry kept in index: %d", n)
	}
}

func TestCacheFreshen(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	u := "http://example.org/etag"
	mustStore(t, c, get(u), 200, hdr("Cache-Control", "max-age=10", "ETag", `"v1"`, "Content-Length", "4"), "body", t0)
	res := c.Lookup(get(u), t0.Add(time.Minute))
	if res.Action != Stale {
		t.Fatalf("want stale, got %v", res.Action)
	}
	later := t0.Add(time.Minute)
	e, err := c.Freshen(res.Entry, hdr("Cache-Control", "max-age=100", "ETag", `"v1"`, "Content-Length", "0"), later, later)
	if err != nil {
		t.Fatal(err)
	}
	if e.Header.Get("Content-Length") != "4" || string(e.Body) != "body" {
		t.Errorf("freshen changed framing or body: %v %q", e.Header, e.Body)
	}
	if a := c.Lookup(get(u), later.Add(50*time.Second)).Action; a != Fresh {
		t.Errorf("after freshen: %v, want fresh", a)
	}
	if res.Entry.Lifetime != 10*time.Second {
		t.Error("Freshen mutated the old entry")
	}
	if c.Stats().Revalidated != 1 {
		t.Error("revalidation not counted")
	}
}

// TestCacheFreshenKeepsSetCookieOut: a 304 that sets a cookie hands it to
// the client whose validation it answers, and never to later clients.
func TestCacheFreshenKeepsSetCookieOut(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	u := "http://example.org/etag"
	mustStore(t, c, get(u), 200, hdr("Cache-Control", "max-age=10", "ETag", `"v1"`), "body", t0)
	later := t0.Add(time.Minute)
	res := c.Lookup(get(u), later)
	e, err := c.Freshen(res.Entry, hdr("Cache-Control", "max-age=100", "ETag", `"v1"`, "Set-Cookie", "session=first"), later, later)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Header.Get("Set-Cookie"); got != "session=first" {
		t.Errorf("the validating client's answer lacks its cookie: %q", got)
	}
	next := c.Lookup(get(u), later.Add(time.Second))
	if next.Action != Fresh {
		t.Fatalf("after freshen: %v, want fresh", next.Action)
	}
	if got := next.Entry.Header.Values("Set-Cookie"); len(got) != 0 {
		t.Errorf("a later client is handed the cookie: %q", got)
	}
}

// TestCacheFreshenDropsUnshareable: a 304 that makes the stored response
// private (or no-store, or Vary: *) answers the validating client, and the
// response is no longer stored: before, the next client got a hit on a
// response the origin had marked private.
func TestCacheFreshenDropsUnshareable(t *testing.T) {
	t.Parallel()
	for _, cc := range []string{"private, max-age=100", "no-store, max-age=100"} {
		c, _ := openCache(t, Options{Policy: Policy{DisableOverride: true}})
		u := "http://example.org/p"
		mustStore(t, c, get(u), 200, hdr("Cache-Control", "max-age=10", "ETag", `"v1"`), "body", t0)
		later := t0.Add(time.Minute)
		res := c.Lookup(get(u), later)
		e, err := c.Freshen(res.Entry, hdr("Cache-Control", cc, "ETag", `"v1"`), later, later)
		if err != nil || e == nil || string(e.Body) != "body" {
			t.Fatalf("%s: Freshen = %v, %v; want the entry for the validating client", cc, e, err)
		}
		if next := c.Lookup(get(u), later.Add(time.Second)); next.Action != Miss {
			t.Errorf("%s: the next client: %v, want a miss", cc, next.Action)
		}
	}
}

func TestCacheStoreRefusals(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{MaxEntryBytes: 10})
	tests := []struct {
		name string
		h    http.Header
		body string
	}{
		{"too-big", hdr("Cache-Control", "max-age=60"), strings.Repeat("y", 11)},
		{"too-many-vary", hdr("Vary", strings.Repeat("a,b,c,d,e,f,g,h,", 3)), ""},
		{"private", hdr("Cache-Control", "private"), ""},
	}
	for _, tt := range tests {
		ok, why, err := c.Store(get("http://example.org/"+tt.name), 200, tt.h, []byte(tt.body), t0, t0)
		if ok || err != nil || why == "" {
			t.Errorf("%s: Store = %v %q %v, want refusal", tt.name, ok, why, err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{MaxBytes: -1}, {MaxEntryBytes: -1}, {MaxVariants: -1}, {Policy: Policy{HeuristicFraction: 2}}, {Policy: Policy{OverrideLifetime: -1}}} {
		if o.Validate() == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
}

func BenchmarkLookupHit(b *testing.B) {
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := Open(db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := get("http://example.org/bench")
	if ok, _, _ := c.Store(req, 200, hdr("Cache-Control", "max-age=600", "Content-Type", "text/html"), make([]byte, 1024), t0, t0); !ok {
		b.Fatal("not stored")
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if c.Lookup(req, t0).Action != Fresh {
				b.Fatal("miss")
			}
		}
	})
}

func TestCacheClosed(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Store(get("http://example.org/late"), 200, hdr("Cache-Control", "max-age=60"), []byte("x"), t0, t0); !errors.Is(err, ErrClosed) {
		t.Errorf("Store after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// BenchmarkStoreMiss stores 1 KiB responses under new URLs, as a proxy
// does on every cache miss; the writer goroutine's encoding and commits
// are part of the cost (its queue is bounded, so Store waits for it).
func BenchmarkStoreMiss(b *testing.B) {
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := Open(db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	h := hdr("Cache-Control", "public, max-age=86400", "Content-Type", "text/html; charset=utf-8",
		"Date", "Sun, 22 Nov 2026 11:00:00 GMT", "Content-Length", "1024")
	body := make([]byte, 1024)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := get("http://example.org/p/" + strconv.FormatInt(n.Add(1), 10))
			if ok, why, err := c.Store(req, 200, h, body, t0, t0); !ok || err != nil {
				b.Fatalf("not stored: %s %v", why, err)
			}
		}
	})
}

// A lookup of a reserved URL waits for the store instead of missing, and
// misses once reserveWait has passed without it.
// TestInvalidateDuringReservedStore: a response reserved (sent to its
// client) before an unsafe request invalidated its URL is not stored when
// its store comes after the invalidation (RFC 9111 §4.4); the next
// reservation stores again.
func TestInvalidateDuringReservedStore(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	h := hdr("Cache-Control", "max-age=60", "Content-Type", "text/plain")
	u := "http://example.org/invalidated-while-reserved"
	mustStore(t, c, get(u), 200, h, "old", t0)

	release := c.Reserve(u)
	if err := c.Invalidate(u); err != nil {
		t.Fatal(err)
	}
	ok, why, err := c.Store(get(u), 200, h, []byte("sent before the POST"), t0, t0)
	release()
	if err != nil || ok || why == "" {
		t.Fatalf("Store after Invalidate = %v %q %v, want not stored with a reason", ok, why, err)
	}
	if r := c.Lookup(get(u), t0); r.Action != Miss {
		t.Fatalf("after invalidation: %v, want Miss", r.Action)
	}

	release = c.Reserve(u)
	mustStore(t, c, get(u), 200, h, "new", t0)
	release()
	if r := c.Lookup(get(u), t0); r.Action != Fresh || string(r.Entry.Body) != "new" {
		t.Fatalf("a later reservation: %v, want Fresh \"new\"", r.Action)
	}
}

func TestCacheReserve(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	h := hdr("Cache-Control", "max-age=60", "Content-Type", "text/plain")
	tests := []struct {
		name     string
		store    bool // store and release while the lookup waits
		want     Action
		wantWait time.Duration // fake time the lookup took
	}{
		{"stored-meanwhile", true, Fresh, 0},
		{"released-without-store", false, Miss, 0},
		{"never-released", false, Miss, reserveWait},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				u := fmt.Sprintf("http://example.org/reserved/%d", i)
				release := c.Reserve(u)
				got := make(chan Result, 1)
				start := time.Now()
				var took time.Duration
				go func() {
					r := c.Lookup(get(u), t0)
					took = time.Since(start)
					got <- r
				}()
				synctest.Wait()
				if tc.wantWait == 0 {
					select {
					case r := <-got:
						t.Fatalf("lookup answered %v before the release", r.Action)
					default:
					}
					if tc.store {
						mustStore(t, c, get(u), 200, h, "body", t0)
					}
					release()
				}
				r := <-got
				if r.Action != tc.want {
					t.Errorf("Action = %v, want %v", r.Action, tc.want)
				}
				if took != tc.wantWait {
					t.Errorf("lookup took %v, want %v", took, tc.wantWait)
				}
				if tc.wantWait != 0 {
					release()
				}
				c.mu.Lock()
				n := len(c.mu.reserved)
				c.mu.Unlock()
				if n != 0 {
					t.Errorf("%d reservations left", n)
				}
			})
		})
	}
}
