package traps

import (
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

func check(t *testing.T, c *Checker, site, raw string, depth int) Verdict {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return c.CheckURL(site, u, nil, raw, depth)
}

func TestURLLevelLimits(t *testing.T) {
	c, err := Open(nil, Limits{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		url   string
		depth int
		want  Kind
	}{
		{"ordinary", "http://a.test/x/y.html", 3, ""},
		{"depth 20 ok", "http://a.test/x", 20, ""},
		{"depth 21", "http://a.test/x", 21, Depth},
		{"numbered depth 5 ok", "http://a.test/calendar/2026/11/", 5, ""},
		{"numbered depth 6", "http://a.test/calendar/2026/12/", 6, Depth},
		{"named depth 6 ok", "http://a.test/doc/a01120.html", 6, ""},
		{"200 characters ok", "http://a.test/" + strings.Repeat("x", 200-len("http://a.test/")), 1, ""},
		{"201 characters", "http://a.test/" + strings.Repeat("x", 201-len("http://a.test/")), 1, URLLength},
		{"59 Cyrillic characters in 259 bytes ok", "http://a.test/wiki/" + strings.Repeat("%D0%9C", 40), 1, ""},
		{"201 Cyrillic characters", "http://a.test/wiki/" + strings.Repeat("%D0%9C", 201-len("http://a.test/wiki/")), 1, URLLength},
		{"segment twice ok", "http://a.test/a/b/a/", 1, ""},
		{"growing path", "http://a.test/spider/spider/spider/", 1, RepeatedSegments},
		{"interleaved repeat", "http://a.test/a/b/a/b/a/b", 1, RepeatedSegments},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(t, c, "a.test", tc.url, tc.depth); got.Kind != tc.want {
				t.Errorf("verdict = %v, want %q", got, tc.want)
			}
		})
	}
	r := c.Report()
	if r.Hits[Depth] != 2 || r.Hits[URLLength] != 2 || r.Hits[RepeatedSegments] != 2 {
		t.Errorf("hits = %v", r.Hits)
	}
}

func TestNumbered(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"http://a.test/", false},
		{"http://a.test/calendar/2026/11/", true},
		{"http://a.test/archive/2026-11-29/", true},
		{"http://a.test/item/12345.html", true},
		{"http://a.test/news/12:30", true},
		{"http://a.test/docs/3.11/library/", true},
		{"http://a.test/list?page=3", true},
		{"http://a.test/list?sort=asc;p=3", true},
		{"http://a.test/list?p=", false},
		{"http://a.test/list?12345", true},
		{"http://a.test/list?print", false},
		{"http://a.test/page-2.html", false},
		{"http://a.test/doc/a01120.html", false},
		{"http://a.test/v1.2/", false},
		{"http://a.test/dir/?C=M;O=A", false},
		{"http://a.test/x.tar.gz", false},
		{"http://a.test/---/", false},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Numbered(u); got != tc.want {
			t.Errorf("Numbered(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// TestNumberedFrom: numbers a URL shares with its referrer at the same
// place (a version directory) are inherited; a number the link changed
// (the next month, the next page) makes it numbered.
func TestNumberedFrom(t *testing.T) {
	tests := []struct {
		url, via string
		want     bool
	}{
		{"http://a.test/docs/15/ddl.html", "http://a.test/docs/15/index.html", false},
		{"http://a.test/3.11/library/os.html", "http://a.test/3.11/library/", false},
		{"http://a.test/3.11/library/os.html", "http://a.test/3.11/", false},
		{"http://b.test/3.11/os.html", "http://www.b.test/3.11/", false}, // hosts are not compared
		{"http://a.test/docs/16/ddl.html", "http://a.test/docs/15/ddl.html", true},
		{"http://a.test/docs/15/ddl.html", "http://a.test/docs/current/ddl.html", true},
		{"http://a.test/docs/15/release-15-1.html", "http://a.test/docs/15/release.html", false},
		{"http://a.test/docs/15/15.4.html", "http://a.test/docs/15/release.html", true},
		{"http://a.test/calendar/2026/12/", "http://a.test/calendar/2026/11/", true},
		{"http://a.test/calendar/2026/11/", "http://a.test/calendar/", true},
		{"http://a.test/archive/2026-11-29", "http://a.test/archive/2026-11-28", true},
		{"http://a.test/item/12345.html", "http://a.test/item/12345.htm", false}, // same stem
		{"http://a.test/list?page=4", "http://a.test/list?page=3", true},
		{"http://a.test/list?v=15&q=x", "http://a.test/list?v=15", false},
		{"http://a.test/list?q=x;v=15", "http://a.test/list?v=15&q=y", false},
		{"http://a.test/list?12", "http://a.test/list?12", false},
		{"http://a.test/docs/15/", "", true},
		{"http://a.test/x.html", "http://a.test/2026/", false},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		var via *url.URL
		if tc.via != "" {
			if via, err = url.Parse(tc.via); err != nil {
				t.Fatal(err)
			}
		}
		if got := NumberedFrom(u, via); got != tc.want {
			t.Errorf("NumberedFrom(%s, %s) = %v, want %v", tc.url, tc.via, got, tc.want)
		}
		if strings.Contains(tc.url, "?") {
			continue // DynamicFrom counts every query
		}
		if got := DynamicFrom(tc.url, tc.via); got != tc.want {
			t.Errorf("DynamicFrom(%s, %s) = %v, want %v", tc.url, tc.via, got, tc.want)
		}
	}
	c, err := Open(nil, Limits{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://a.test/docs/15/c9.html")
	via, _ := url.Parse("http://a.test/docs/15/c8.html")
	if v := c.CheckURL("a.test", u, via, u.String(), 10); !v.OK() {
		t.Errorf("versioned page at depth 10: %v, want admitted", v)
	}
	if v := c.CheckURL("a.test", u, nil, u.String(), 10); v.Kind != Depth {
		t.Errorf("versioned page at depth 10 without referrer: %v, want cut for depth", v)
	}
}

func TestNumberedDepthLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		url    string
		depth  int
		want   Kind
	}{
		{"numbered limit raised", Limits{MaxNumberedDepth: 8}, "http://a.test/2026/", 8, ""},
		{"numbered limit disabled", Limits{MaxNumberedDepth: -1}, "http://a.test/2026/", 20, ""},
		{"general limit still applies", Limits{MaxNumberedDepth: -1}, "http://a.test/2026/", 21, Depth},
		{"general limit below numbered", Limits{MaxDepth: 3}, "http://a.test/x", 4, Depth},
		{"both disabled", Limits{MaxDepth: -1, MaxNumberedDepth: -1}, "http://a.test/2026/", 99, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Open(nil, tc.limits, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := check(t, c, "a.test", tc.url, tc.depth); got.Kind != tc.want {
				t.Errorf("verdict = %v, want %q", got, tc.want)
			}
		})
	}
}

func TestCustomAndDisabledLimits(t *testing.T) {
	c, err := Open(nil, Limits{MaxDepth: -1, MaxURLLength: 30, MaxSegmentRepeats: -1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := check(t, c, "a.test", "http://a.test/a/a/a/a", 99); !v.OK() {
		t.Errorf("disabled limits cut: %v", v)
	}
	if v := check(t, c, "a.test", "http://a.test/"+strings.Repeat("x", 20), 0); v.Kind != URLLength {
		t.Errorf("custom length not applied: %v", v)
	}
	if _, err := Open(nil, Limits{MaxURLLength: 3}, Options{}); err == nil {
		t.Error("absurd max-url-length accepted")
	}
}

func TestSiteLimitsPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	opts := Options{OnTrap: func(site string, k Kind, detail string) {
		mu.Lock()
		events = append(events, site+" "+string(k))
		mu.Unlock()
	}}
	c, err := Open(db, Limits{MaxURLsPerSite: 10, MaxDuplicatesPerSite: 2}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.Admitted("big.test", 6, 0)
	if _, stopped := c.Stopped("big.test"); stopped {
		t.Fatal("stopped below the limit")
	}
	c.Admitted("big.test", 4, 0)
	if k, stopped := c.Stopped("big.test"); !stopped || k != URLsPerSite {
		t.Fatalf("not stopped at 10 URLs: %v %v", k, stopped)
	}
	if v := check(t, c, "big.test", "http://big.test/new", 1); v.Kind != URLsPerSite {
		t.Errorf("stopped site admitted a URL: %v", v)
	}
	// A chain: item i+1 found on item i, a copy of item 0.
	for i := range 3 {
		d := Dup{URL: fmt.Sprintf("http://dup.test/item/%d", i+1), Via: fmt.Sprintf("http://dup.test/item/%d", i), Of: "http://dup.test/item/0"}
		stopped := c.DuplicateOf("dup.test", d)
		if want := i == 2; stopped != want {
			t.Errorf("duplicate %d: stopped = %v, want %v", i+1, stopped, want)
		}
	}
	c.DuplicateOf("dup.test", Dup{URL: "http://dup.test/item/9", Via: "http://dup.test/item/3"})
	if len(events) != 2 || events[0] != "big.test urls-per-site" || events[1] != "dup.test duplicates" {
		t.Errorf("events = %v, want one per stopped site", events)
	}
	c.Admitted("small.test", 3, 0)
	// Reopen: counters survive.
	c, _ = reopen(t, c, db, dir, Limits{MaxURLsPerSite: 10, MaxDuplicatesPerSite: 2})
	if k, stopped := c.Stopped("dup.test"); !stopped || k != Duplicates {
		t.Errorf("dup.test after reopen: %v %v", k, stopped)
	}
	if ss := c.StoppedSites(); len(ss) != 2 || ss[1].Site != "dup.test" || len(ss[1].Examples) != 3 || ss[1].Chained != 4 || ss[1].Duplicates != 4 {
		t.Errorf("stopped sites after reopen = %+v", ss)
	}
	c.Admitted("small.test", 6, 0)
	if _, stopped := c.Stopped("small.test"); stopped {
		t.Error("small.test stopped early")
	}
	c.Admitted("small.test", 1, 0)
	if _, stopped := c.Stopped("small.test"); !stopped {
		t.Error("small.test count lost on reopen (3+7 = 10)")
	}
	// urls-per-site: big.test stopped, one URL refused there, small.test stopped.
	if r := c.Report(); r.Hits[Duplicates] != 1 || r.Hits[URLsPerSite] != 3 {
		t.Errorf("hits after reopen = %v", r.Hits)
	}
}

func TestHostsPerDomain(t *testing.T) {
	c, err := Open(nil, Limits{MaxHostsPerDomain: 3}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		h := fmt.Sprintf("h%d.wild.test", i)
		if v := check(t, c, h, "http://"+h+"/", 1); !v.OK() {
			t.Fatalf("host %d refused: %v", i, v)
		}
		c.Admitted(h, 1, 0)
	}
	if v := check(t, c, "h9.wild.test", "http://h9.wild.test/", 1); v.Kind != HostsPerDomain {
		t.Errorf("4th host of a wildcard domain: %v", v)
	}
	if v := check(t, c, "h1.wild.test", "http://h1.wild.test/more", 1); !v.OK() {
		t.Errorf("known host refused: %v", v)
	}
	if v := check(t, c, "other.test", "http://other.test/", 1); !v.OK() {
		t.Errorf("other domain refused: %v", v)
	}
}

func FuzzMostRepeated(f *testing.F) {
	for _, s := range []string{"/a/a/a", "", "/", "//x//x//x", "/%2F/%2F/%2F/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		seg, n := mostRepeated(p)
		if n > 0 && strings.Count(p, seg) < n {
			t.Errorf("segment %q claimed %d times in %q", seg, n, p)
		}
	})
}

// FuzzNumbered: a numbered URL has a digit, and stays numbered when a
// named segment is added to its path; a URL inherits all its numbers from
// itself, and with no referrer NumberedFrom and DynamicFrom are Numbered
// and Dynamic.
func FuzzNumbered(f *testing.F) {
	for _, s := range []string{"http://a.test/2026/11/", "http://a.test/x.html?p=3", "http://a.test/a01120.html", "http://a.test/?;&==", "http://a.test/.../"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if NumberedFrom(u, u) || NumberedFrom(u, nil) != Numbered(u) || DynamicFrom(raw, "") != Dynamic(raw) {
			t.Fatalf("%q: NumberedFrom itself %v, from nil %v, Numbered %v, DynamicFrom %v, Dynamic %v",
				raw, NumberedFrom(u, u), NumberedFrom(u, nil), Numbered(u), DynamicFrom(raw, ""), Dynamic(raw))
		}
		if !Numbered(u) {
			return
		}
		if !strings.ContainsAny(u.EscapedPath()+u.RawQuery, "0123456789") {
			t.Fatalf("%q numbered without a digit", raw)
		}
		v := *u
		v.Path, v.RawPath = strings.TrimSuffix(u.Path, "/")+"/name", ""
		if !Numbered(&v) {
			t.Fatalf("%q numbered, %q not", raw, v.String())
		}
	})
}

func TestDynamic(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://a.test/", false},
		{"http://a.test", false},
		{"http://a.test/manual/a01120.html", false},
		{"http://a.test/classstd_1_1vector.html", false},
		{"http://a.test/search?q=x", true},
		{"http://a.test/dir/?C=M;O=A", true},
		{"http://a.test/list?", false},
		{"http://a.test/calendar/2026/11/", true},
		{"http://a.test/item/12345.html", true},
		{"http://a.test/page.html#2026", false},
		{"not a url", false},
	} {
		if got := Dynamic(tc.url); got != tc.want {
			t.Errorf("Dynamic(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// TestStaticURLsPerSite: dynamic and static URLs are counted apart, each
// against its own limit, and the static count survives a reopen; counters
// written before it existed read as no static URLs.
func TestStaticURLsPerSite(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxURLsPerSite: 3, MaxStaticURLsPerSite: 5}
	c, err := Open(db, lim, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Admitted("docs.test", 2, 3)
	c.Admitted("search.test", 3, 0)
	if _, stopped := c.Stopped("docs.test"); stopped {
		t.Error("docs.test stopped below both limits")
	}
	if k, stopped := c.Stopped("search.test"); !stopped || k != URLsPerSite {
		t.Errorf("search.test not stopped at 3 dynamic URLs: %v %v", k, stopped)
	}
	// A counter in the encoding before the static count (version 2).
	old := binary.AppendUvarint([]byte{countersV2}, 2)
	for range 4 {
		old = binary.AppendUvarint(old, 0)
	}
	if err := db.Bucket(bucketName).Set([]byte("old.test"), old); err != nil {
		t.Fatal(err)
	}
	c, _ = reopen(t, c, db, dir, lim)
	c.Admitted("docs.test", 0, 1)
	if _, stopped := c.Stopped("docs.test"); stopped {
		t.Error("docs.test stopped at 4 static URLs")
	}
	c.Admitted("docs.test", 0, 1)
	if k, stopped := c.Stopped("docs.test"); !stopped || k != URLsPerSite {
		t.Errorf("docs.test not stopped at 5 static URLs (count lost on reopen?): %v %v", k, stopped)
	}
	c.Admitted("old.test", 0, 4)
	if _, stopped := c.Stopped("old.test"); stopped {
		t.Error("old.test stopped: its old counter read wrong")
	}
	c.Admitted("old.test", 1, 0)
	if _, stopped := c.Stopped("old.test"); !stopped {
		t.Error("old.test not stopped at 2+1 dynamic URLs")
	}
}

// reopen persists c, closes db and opens both again on dir with lim.
func reopen(t *testing.T, c *Checker, db *kv.DB, dir string, lim Limits) (*Checker, *kv.DB) {
	t.Helper()
	if err := c.Persist(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err = Open(db, lim, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, db
}
