package testweb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// plainDigest crawls w from hub.test and the generic home pages and hashes
// every URL, status and body it fetched, in URL order.
func plainDigest(t *testing.T, w *Web) string {
	t.Helper()
	seeds := []string{}
	for _, s := range w.Sites() {
		seeds = append(seeds, s.SeedPages...)
	}
	res := crawl(t, w, seeds, 20000)
	urls := make([]string, 0, len(res.status))
	for u := range res.status {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	h := sha256.New()
	for _, u := range urls {
		fmt.Fprintf(h, "%s %d\n", u, res.status[u])
		h.Write([]byte(body(t, get(t, w.Handler(), u))))
	}
	return fmt.Sprintf("%d:%s", len(urls), hex.EncodeToString(h.Sum(nil))[:16])
}

// The plain profile (the default) serves the same bytes as testweb did
// before profiles existed: these digests were taken from that version.
func TestPlainProfileUnchanged(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"default web", Config{SlowDelay: time.Millisecond, EndlessBytes: 1000}, "924:c828336fcf869959"},
		{"plain web", Config{Seed: 7, Sites: 5, PagesPerSite: 30, Plain: true}, "180:61bbd01b50f9f0e6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := plainDigest(t, mustNew(t, tc.cfg)); got != tc.want {
				t.Errorf("digest %s, want %s", got, tc.want)
			}
		})
	}
}

func realWeb(t testing.TB, sites, pages int) *Web {
	t.Helper()
	return mustNew(t, Config{Seed: 3, Sites: sites, PagesPerSite: pages, Plain: true, Profile: ProfileRealistic})
}

func TestProfileValidate(t *testing.T) {
	if _, err := New(Config{Profile: "fancy"}); err == nil || !strings.Contains(err.Error(), "testweb: Profile") {
		t.Errorf("New(Profile fancy) = %v, want a Profile error", err)
	}
	for _, p := range Profiles {
		if _, err := New(Config{Profile: p}); err != nil {
			t.Errorf("New(Profile %s): %v", p, err)
		}
	}
}

// The fates of a large realistic web come out at the documented rates, and
// Lookup classifies each one as the handler serves it.
func TestRealisticRates(t *testing.T) {
	w := realWeb(t, 40, 500)
	count := map[fate]int{}
	hops := map[int]int{}
	retry := map[bool]int{}
	total := 0
	for _, s := range w.Sites() {
		for n := 1; n < s.Pages; n++ {
			f := w.fateOf(s, n)
			count[f.fate]++
			total++
			if f.fate == fateRedirect {
				hops[f.param]++
			}
			if f.fate == fate503 {
				retry[f.retry]++
			}
			res := w.Lookup(s.Host, genericPath(n))
			wantClass := map[fate]Class{fate404: ClassError, fate500: ClassError, fateRedirect: ClassRedirect}[f.fate]
			if wantClass == "" {
				wantClass = ClassPage
			}
			if res.Class != wantClass {
				t.Fatalf("%s%s: fate %d, Lookup class %s, want %s", s.Host, genericPath(n), f.fate, res.Class, wantClass)
			}
		}
	}
	tests := []struct {
		name     string
		f        fate
		perMille int
	}{
		{"404", fate404, Real404PerMille},
		{"500", fate500, Real500PerMille},
		{"503", fate503, Real503PerMille},
		{"redirect", fateRedirect, RealRedirectPerMille},
		{"duplicate", fateDup, RealDuplicatePerMille},
		{"slow", fateSlow, RealSlowPerMille},
	}
	for _, tc := range tests {
		got := float64(count[tc.f]) * 1000 / float64(total)
		// 20,000 draws: 4 standard deviations of a binomial is under
		// 30 % of the rate for every rate here.
		if d := got - float64(tc.perMille); d > 0.3*float64(tc.perMille) || d < -0.3*float64(tc.perMille) {
			t.Errorf("%s: %.1f per mille, want about %d", tc.name, got, tc.perMille)
		}
	}
	if hops[1] == 0 || hops[2] == 0 || hops[3] == 0 || hops[4] != 0 {
		t.Errorf("redirect chain lengths %v, want 1, 2 and 3 hops", hops)
	}
	if retry[true] == 0 || retry[false] == 0 {
		t.Errorf("503s with and without Retry-After: %v", retry)
	}
}

// Page sizes are heavy-tailed around the documented median, links number
// 20 to 60, and every page of a site carries the same boilerplate.
func TestRealisticPageShape(t *testing.T) {
	w := realWeb(t, 4, 300)
	var sizes []int
	footers := map[string]string{}
	for _, s := range w.Sites() {
		for n := 0; n < s.Pages; n++ {
			if w.fateOf(s, n).fate != fateOK {
				continue
			}
			b := string(w.renderRealistic(nil, s, n, genericPath(n)))
			sizes = append(sizes, len(b))
			nl := len(hrefRE.FindAllString(b, -1))
			if nl < RealMinLinks || nl > RealMaxLinks+1 { // +1: the members-only copy
				t.Errorf("%s%s: %d links", s.Host, genericPath(n), nl)
			}
			foot := b[strings.Index(b, "<footer"):]
			if prev, ok := footers[s.Host]; ok && prev != foot {
				t.Fatalf("%s: footers differ between pages", s.Host)
			}
			footers[s.Host] = foot
			if !strings.Contains(b, "<nav class=\"main-nav\">") || !strings.Contains(b, "<aside") {
				t.Fatalf("%s%s: no navigation or sidebar", s.Host, genericPath(n))
			}
		}
	}
	if footers["site-0000.test"] == footers["site-0001.test"] {
		t.Error("two sites share a footer")
	}
	slices.Sort(sizes)
	med, p99, top := sizes[len(sizes)/2], sizes[len(sizes)*99/100], sizes[len(sizes)-1]
	if med < 24_000 || med > 38_000 {
		t.Errorf("median page %d bytes, want about %d", med, RealMedianBytes)
	}
	if p99 < 150_000 {
		t.Errorf("99th percentile %d bytes: the tail is not heavy", p99)
	}
	if top > RealMaxBytes+64<<10 {
		t.Errorf("largest page %d bytes, over the %d bound", top, RealMaxBytes)
	}
}

// A transient page answers 503 (with Retry-After or without) as often as
// its fate says, then 200; a duplicate serves another page's bytes; a
// redirect chain ends at its moved page.
func TestRealisticServing(t *testing.T) {
	w := realWeb(t, 20, 200)
	h := w.Handler()
	var saw503, sawDup, sawChain bool
	for _, s := range w.Sites() {
		for n := 1; n < s.Pages; n++ {
			f := w.fateOf(s, n)
			u := "http://" + s.Host + genericPath(n)
			switch f.fate {
			case fate503:
				for i := 0; i < f.param; i++ {
					resp := get(t, h, u)
					if resp.StatusCode != 503 || (resp.Header.Get("Retry-After") != "") != f.retry {
						t.Fatalf("%s try %d: %d Retry-After %q, want 503 retry=%v", u, i, resp.StatusCode, resp.Header.Get("Retry-After"), f.retry)
					}
				}
				if resp := get(t, h, u); resp.StatusCode != 200 {
					t.Fatalf("%s after %d 503s: %d", u, f.param, resp.StatusCode)
				}
				saw503 = true
			case fateDup:
				got := body(t, get(t, h, u))
				want := body(t, get(t, h, "http://"+s.Host+genericPath(f.param)))
				if w.fateOf(s, f.param).fate == fateOK && got != want {
					t.Fatalf("%s: not the bytes of page %d", u, f.param)
				}
				sawDup = true
			case fateRedirect:
				cur, hopsSeen := u, 0
				for {
					resp := get(t, h, cur)
					if resp.StatusCode == 200 {
						break
					}
					if resp.StatusCode/100 != 3 || hopsSeen > 3 {
						t.Fatalf("%s: hop %d answers %d", u, hopsSeen, resp.StatusCode)
					}
					loc := resp.Header.Get("Location")
					if !strings.HasPrefix(loc, "http") {
						loc = "http://" + s.Host + loc
					}
					cur = loc
					hopsSeen++
				}
				if hopsSeen != f.param || cur != "http://"+s.Host+movedPath(n) {
					t.Fatalf("%s: %d hops to %s, want %d to %s", u, hopsSeen, cur, f.param, movedPath(n))
				}
				sawChain = sawChain || hopsSeen > 1
			}
		}
	}
	if !saw503 || !sawDup || !sawChain {
		t.Errorf("saw 503 %v, duplicate %v, chain %v", saw503, sawDup, sawChain)
	}
}

// Reachable lists exactly the pages a crawler that retries 503s, follows
// redirects and skips /private/ fetches with a 200. Slow pages wait on the
// bubble's fake clock.
func TestRealisticReachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := mustNew(t, Config{Seed: 5, Sites: 3, PagesPerSite: 120, Plain: true, NoExternal: true, Profile: ProfileRealistic})
		h := w.Handler()
		for _, s := range w.Sites() {
			got := map[string]bool{}
			queue := []string{s.SeedPages[0]}
			queued := map[string]bool{queue[0]: true}
			for len(queue) > 0 && len(queued) < 5000 {
				u := queue[0]
				queue = queue[1:]
				if strings.Contains(u, "/private/") {
					continue
				}
				var resp *http.Response
				for try := 0; try < 4; try++ {
					if resp = get(t, h, u); resp.StatusCode != 503 {
						break
					}
				}
				b := body(t, resp)
				var out []string
				if loc := resp.Header.Get("Location"); loc != "" {
					pu, _ := url.Parse(u)
					ref, _ := url.Parse(loc)
					out = append(out, pu.ResolveReference(ref).String())
				}
				if resp.StatusCode == 200 {
					got[u] = true
					out = append(out, links(t, u, b)...)
				}
				for _, l := range out {
					if !queued[l] && strings.HasPrefix(l, "http://"+s.Host+"/") {
						queued[l] = true
						queue = append(queue, l)
					}
				}
			}
			want := w.Reachable(s)
			if len(want) != len(got) {
				t.Errorf("%s: crawl got %d pages, Reachable says %d", s.Host, len(got), len(want))
			}
			for _, u := range want {
				if !got[u] {
					t.Errorf("%s: Reachable lists %s, the crawl never got it", s.Host, u)
				}
			}
			if len(want) < s.Pages*8/10 {
				t.Errorf("%s: only %d of %d pages reachable", s.Host, len(want), s.Pages)
			}
		}
	})
}

// FuzzLookupRealistic: any request to a realistic web is classified
// without a panic, and served with the status Lookup gives (a transient
// page's 503s excepted; slow pages are not served, they would wait).
func FuzzLookupRealistic(f *testing.F) {
	for _, s := range []string{"/", "/docs/a/page-1.html", "/moved/page-7.html", "/moved/hop-7-1.html", "/moved/hop-0-1.html",
		"/moved/page-.html", "/moved/hop-1-2-3.html", "/private/page-6.html", "/news/b/page-12.html?x=1", "/moved/page-099.html"} {
		f.Add("site-0000.test", s)
	}
	w := realWeb(f, 2, 200)
	h := w.Handler()
	f.Fuzz(func(t *testing.T, host, target string) {
		r := w.Lookup(host, target)
		if (r.Site == nil) != (r.Class == ClassUnknownHost) {
			t.Fatalf("site %v for class %s", r.Site, r.Class)
		}
		if r.Delay > 0 || !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \x00\r\n#") ||
			strings.ContainsAny(host, " /?#@\\%\x00\r\n") || host == "" {
			return
		}
		pu, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.Host, req.URL, req.RequestURI = host, pu, target
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := w.Lookup(host, pu.RequestURI())
		if rec.Code != got.Status && got.Class != ClassUnknownHost && !(got.Transient > 0 && rec.Code == 503) {
			t.Fatalf("served %d, Lookup says %d (%s)", rec.Code, got.Status, got.Class)
		}
	})
}
