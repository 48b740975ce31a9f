package testweb

// The hazard sites: duplicate hosts, near-duplicates, session ids, slow and endless pages, reordered listings.

import (
	"context"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestDuplicateHostsServeSameBytes(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	for _, p := range []string{"/", genericPath(4)} {
		a := body(t, get(t, h, "http://dup.test"+p))
		for _, alias := range []string{"www.dup.test", "mirror-dup.test"} {
			if b := body(t, get(t, h, "http://"+alias+p)); a != b {
				t.Errorf("%s%s differs from dup.test%s", alias, p, p)
			}
		}
	}
}

func TestNearDuplicatesDifferOnlyInStamp(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	strip := regexp.MustCompile(`(?m)^<p class="stamp">.*$|/item/\d+`)
	a := body(t, get(t, h, "http://neardup.test/item/1"))
	b := body(t, get(t, h, "http://neardup.test/item/2"))
	if a == b {
		t.Fatal("items identical")
	}
	if strip.ReplaceAllString(a, "") != strip.ReplaceAllString(b, "") {
		t.Error("items differ beyond the stamp and the next link")
	}
}

func TestSessionIDs(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	resp := get(t, h, "http://session.test/")
	page := body(t, resp)
	if !strings.Contains(resp.Header.Get("Set-Cookie"), "PHPSESSID=") {
		t.Error("no session cookie")
	}
	ls := links(t, "http://session.test/", page)
	if len(ls) == 0 {
		t.Fatal("no links")
	}
	for _, l := range ls {
		if !strings.Contains(l, "PHPSESSID=") {
			t.Errorf("link %s lacks a session id", l)
		}
	}
	next := get(t, h, ls[0])
	if next.StatusCode != 200 {
		t.Fatalf("%s: %d", ls[0], next.StatusCode)
	}
	ls2 := links(t, ls[0], body(t, next))
	if len(ls2) == 0 || sessionID(strings.SplitN(ls2[0], "?", 2)[1]) == sessionID(strings.SplitN(ls[0], "?", 2)[1]) {
		t.Error("the session id does not change from page to page")
	}
	cookie := strings.SplitN(resp.Header.Get("Set-Cookie"), ";", 2)[0]
	withCookie := body(t, get(t, h, "http://session.test/", "Cookie", cookie))
	if strings.Contains(withCookie, "PHPSESSID") {
		t.Error("links carry session ids although the cookie came back")
	}
}

func TestSlowPageWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := mustNew(t, Config{SlowDelay: 5 * time.Second})
		h := w.Handler()
		done := make(chan int)
		start := time.Now()
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://slow.test/slow/2.html", nil))
			done <- rec.Code
		}()
		code := <-done
		if code != 200 {
			t.Errorf("status %d", code)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("answered after %v, want 5s", waited)
		}
	})
}

func TestSlowPageStopsWithClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := mustNew(t, Config{SlowDelay: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		rec := httptest.NewRecorder()
		w.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://slow.test/slow/1.html", nil).WithContext(ctx))
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("handler returned after %v, want 1s (when the client left)", waited)
		}
	})
}

func TestEndlessIsBounded(t *testing.T) {
	w := mustNew(t, Config{EndlessBytes: 100_000})
	for _, p := range []string{"/stream.html", "/radio.mp3"} {
		resp := get(t, w.Handler(), "http://endless.test"+p)
		if n := len(body(t, resp)); n != 100_000 {
			t.Errorf("%s: %d bytes, want 100000", p, n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://endless.test/radio.mp3", nil).WithContext(ctx))
	if n := rec.Body.Len(); n > 32<<10 {
		t.Errorf("wrote %d bytes to a client that had gone", n)
	}
}

func TestDirListReorders(t *testing.T) {
	w := mustNew(t, Config{})
	h := w.Handler()
	entries := regexp.MustCompile(`<td><a href="([^"?]+)">`)
	order := func(q string) []string {
		var out []string
		for _, m := range entries.FindAllStringSubmatch(body(t, get(t, h, "http://dirlist.test/pub/"+q)), -1) {
			out = append(out, m[1])
		}
		return out
	}
	byName := order("")
	if !slices.Equal(byName, []string{"CHANGES.txt", "README.txt", "docs/", "src/"}) {
		t.Errorf("by name: %q", byName)
	}
	desc := order("?C=N;O=D")
	slices.Reverse(desc)
	if !slices.Equal(desc, byName) {
		t.Errorf("descending is not the reverse: %q", desc)
	}
	if old := body(t, get(t, h, "http://dirlist.test/pub/docs/")); !strings.Contains(old, `href="?N=D"`) {
		t.Error("Apache 1.3 style links missing under /pub/docs/")
	}
}
