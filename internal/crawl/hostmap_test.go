// The crawler side of host rewriting, end to end (robots.txt through the
// gate, the store, resume, the crawl log), with the fixtures these tests
// share; the rules themselves are tested in package hostmap. Long because
// each case is a crawl.

package crawl

import (
	"context"
	"fmt"
	"github.com/courtesy-crawler/courtesy/internal/hostmap"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// openTestCrawler opens a crawler's state in dir (no crawl is run).
func openTestCrawler(t *testing.T, cfg Config) *Crawler {
	t.Helper()
	c, err := New(cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.open(context.Background()); err != nil {
		c.close()
		t.Fatal(err)
	}
	c.acks = make(chan *ack, 100)
	return c
}

// TestLearnHostRules reads robots.txt files as firstContact does and
// checks which origins are moved where, with the scope rules of
// hostmap.go.
func TestLearnHostRules(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		seeds  []string
		origin string
		robots string
		url    string // a URL to resolve afterwards
		want   string // "" means not moved
	}{
		{"Host to the bare domain joins the seed hosts", Config{}, []string{"www.a.test"}, "http://www.a.test",
			"User-agent: *\nDisallow:\nHost: a.test\n", "http://www.a.test/p", "http://a.test/p"},
		{"Host naming itself", Config{}, []string{"a.test"}, "http://a.test",
			"User-agent: *\nHost: a.test\n", "http://a.test/p", ""},
		{"Host with https", Config{}, []string{"www.a.test"}, "http://www.a.test",
			"Host: https://a.test\n", "http://www.a.test/p", "https://a.test/p"},
		{"Host in another domain, out of scope", Config{}, []string{"a.test"}, "http://a.test",
			"Host: b.test\n", "http://a.test/p", ""},
		{"Host in another domain, in scope", Config{}, []string{"a.test", "b.test"}, "http://a.test",
			"Host: b.test\n", "http://a.test/p", "http://b.test/p"},
		{"Host in scope by domains mode", Config{Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}}, nil, "http://a.test",
			"Host: b.test\n", "http://a.test/p", "http://b.test/p"},
		{"Host excluded by a pattern", Config{Scope: Scope{Exclude: []string{`^http://a\.test/`}}}, []string{"www.a.test"}, "http://www.a.test",
			"Host: a.test\n", "http://www.a.test/p", ""},
		{"robots-host off", Config{RobotsHost: new(bool)}, []string{"www.a.test"}, "http://www.a.test",
			"Host: a.test\n", "http://www.a.test/p", ""},
		{"bad Host value", Config{}, []string{"www.a.test"}, "http://www.a.test",
			"Host: a.test/path\n", "http://www.a.test/p", ""},
		{"Mirror-site moves the declaring site", Config{}, []string{"a.test", "m.test"}, "http://a.test",
			"Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: m.test\n", "http://a.test/p", "http://m.test/p"},
		{"first mirror in scope", Config{}, []string{"a.test", "m2.test"}, "http://a.test",
			"Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: m1.test\nMirror-site: m2.test\n", "http://a.test/p", "http://m2.test/p"},
		{"mirror out of scope", Config{}, []string{"a.test"}, "http://a.test",
			"Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: m.test\n", "http://a.test/p", ""},
		{"mirror-sites off", Config{MirrorSites: new(bool)}, []string{"a.test", "m.test"}, "http://a.test",
			"Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: m.test\n", "http://a.test/p", ""},
		{"Host wins over Mirror-site", Config{}, []string{"www.a.test", "m.test"}, "http://www.a.test",
			"Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: m.test\nHost: a.test\n", "http://www.a.test/p", "http://a.test/p"},
		{"a mirror cannot take another site's URLs", Config{}, []string{"evil.test", "victim.test"}, "http://evil.test",
			"Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: victim.test\n", "http://victim.test/p", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.DataDir = t.TempDir()
			c := openTestCrawler(t, cfg)
			defer c.close()
			for _, s := range tc.seeds {
				c.scope.addSeedHost(s)
			}
			o := normURL(t, tc.origin+"/")
			f := robots.Parse([]byte(tc.robots))
			learnFile(c, o, f)
			got, from := c.moveHost(normURL(t, tc.url))
			gotS := ""
			if from != "" {
				gotS = got.String()
				if !c.scope.inScope(got) {
					t.Errorf("moved to %s, out of scope", gotS)
				}
			}
			if gotS != tc.want {
				t.Errorf("%s moved to %q, want %q", tc.url, gotS, tc.want)
			}
		})
	}
}

// TestHostRulesPersist: a rule learned from robots.txt survives a
// restart; a later robots.txt without the directive removes it.
func TestHostRulesPersist(t *testing.T) {
	dir := t.TempDir()
	c := openTestCrawler(t, Config{DataDir: dir})
	c.scope.addSeedHost("www.a.test")
	o := normURL(t, "http://www.a.test/")
	f := robots.Parse([]byte("Host: a.test\n"))
	learnFile(c, o, f)
	if err := c.close(); err != nil {
		t.Fatal(err)
	}

	c = openTestCrawler(t, Config{DataDir: dir})
	u := normURL(t, "http://www.a.test/x")
	// A stored rule is due at once: URLs stay on the origin until one is
	// leased, to re-read its robots.txt; the next ones are moved meanwhile.
	if _, from := c.moveHost(u); from != "" {
		t.Errorf("after reopening, a link to the origin was moved, want it kept until a probe is leased")
	}
	if _, from := c.moveHostProbe(u, hostmap.ProbeClaim); from != "" {
		t.Errorf("after reopening, the first lease of the origin was moved, want it kept as the probe")
	}
	if got, from := c.moveHost(u); from == "" || got.String() != "http://a.test/x" {
		t.Fatalf("after reopening, %s moved to %v (from %q)", u, got, from)
	}
	if !c.scope.inScope(normURL(t, "http://a.test/")) {
		t.Error("the Host target is no seed host after reopening")
	}
	f = robots.Parse([]byte("User-agent: *\nDisallow: /private\n"))
	learnFile(c, o, f)
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	c = openTestCrawler(t, Config{DataDir: dir})
	defer c.close()
	if _, from := c.moveHost(u); from != "" {
		t.Error("a rule robots.txt dropped came back after reopening")
	}
}

// TestOutlinksRewritten: links are rewritten before the scope, trap and
// seen checks, and say where they came from.
func TestOutlinksRewritten(t *testing.T) {
	c := openTestCrawler(t, Config{DataDir: t.TempDir(), DuplicateHosts: []string{"www.a.test=a.test", "alias.test=out.test"}})
	defer c.close()
	c.scope.addSeedHost("a.test")
	c.scope.addSeedHost("alias.test")
	src := normURL(t, "http://a.test/")
	l := frontier.Lease{URLInfo: frontier.URLInfo{URL: src.String(), Key: "a.test", Metadata: map[string][]string{mdPath: {""}}}}
	var links []extract.Link
	for _, s := range []string{"http://www.a.test/one", "http://a.test/two", "http://alias.test/three", "http://www.a.test/two"} {
		u := normURL(t, s)
		links = append(links, extract.Link{URL: u, Abs: u.String(), Hop: extract.HopLink})
	}
	items := c.outlinks(l, src, links, false)
	got := map[string]string{}
	for _, it := range items {
		got[it.Info.URL] = md1(it.Info.Metadata, mdMoved)
		if it.Info.Key != "a.test" {
			t.Errorf("%s queued under %q, want a.test", it.Info.URL, it.Info.Key)
		}
	}
	want := map[string]string{"http://a.test/one": "www.a.test", "http://a.test/two": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outlinks %v, want %v (alias.test moves out of scope: dropped)", got, want)
	}
	if n := c.hostRewrites(); n != 3 {
		t.Errorf("%d rewrites counted, want 3", n)
	}
}

// TestMoveLeased: a URL queued under a host before its rule was known is
// completed without a fetch and its rewritten URL queued in its place.
func TestMoveLeased(t *testing.T) {
	c := openTestCrawler(t, Config{DataDir: t.TempDir(), DuplicateHosts: []string{"www.a.test=a.test"}})
	defer c.close()
	c.scope.addSeedHost("a.test")
	tests := []struct {
		name  string
		url   string
		moved bool
		want  string
	}{
		{"moved", "http://www.a.test/x?y=1", true, "http://a.test/x?y=1"},
		{"stays", "http://a.test/x", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := normURL(t, tc.url)
			l := frontier.Lease{URLInfo: frontier.URLInfo{URL: u.String(), Key: u.Hostname(), Depth: 2, Priority: 1,
				Metadata: map[string][]string{mdPath: {"LL"}, mdVia: {"http://a.test/"}, mdTry: {"1"}}}}
			n, got := c.moveLeased(7, l, u, nil)
			if got != tc.moved {
				t.Fatalf("moveLeased = %v, want %v", got, tc.moved)
			}
			if !tc.moved {
				return
			}
			a := n.ack
			if !a.done || a.entry.Status != -5002 || len(a.items) != 1 {
				t.Fatalf("ack done %v status %d items %d", a.done, a.entry.Status, len(a.items))
			}
			if ann := strings.Join(a.entry.Annotations, ","); ann != annotationMovedTo+"a.test" {
				t.Errorf("annotations %q", ann)
			}
			it := a.items[0].Info
			if it.URL != tc.want || it.Key != "a.test" || it.Depth != 2 || it.Priority != 1 {
				t.Errorf("queued %+v, want %s under a.test, depth and priority kept", it, tc.want)
			}
			if md1(it.Metadata, mdMoved) != "www.a.test" || md1(it.Metadata, mdTry) != "" || md1(it.Metadata, mdPath) != "LL" {
				t.Errorf("metadata %v", it.Metadata)
			}
			if md1(l.Metadata, mdMoved) != "" {
				t.Error("the lease's metadata was changed")
			}
		})
	}
}

// TestNearIndexResume: the crawl's near-duplicate index is in its store:
// hashes added before a restart are found after it.
func TestNearIndexResume(t *testing.T) {
	dir := t.TempDir()
	c := openTestCrawler(t, Config{DataDir: dir})
	hashes := []uint64{0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321, 0xffff_0000_ffff_0000}
	for _, h := range hashes {
		if _, _, near := c.near.Check("neardup.test", h); near {
			t.Fatalf("%x near before it was added", h)
		}
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	c = openTestCrawler(t, Config{DataDir: dir})
	defer c.close()
	for _, h := range hashes {
		if _, d, ok := c.near.Check("neardup.test", h^0b11); !ok || d != 2 {
			t.Errorf("%x: near = %v dist %d after resume, want distance 2", h, ok, d)
		}
	}
	if _, _, ok := c.near.Check("other.test", hashes[0]); ok {
		t.Error("hash of one site found in another")
	}
}

// TestCrawlHostRewrites crawls a small web on loopback where
// www.a.test's robots.txt names a.test as its Host, orig.test (REGP)
// names mirror.test as its Mirror-site, and the operator maps alias.test
// to a.test: the moved hosts see no request but for robots.txt (alias.test
// not even that), their pages are fetched on the target hosts, and every
// move is in the summary and the crawl log.
func TestCrawlHostRewrites(t *testing.T) {
	robotsOf := map[string]string{
		"www.a.test":  "User-agent: *\nDisallow:\nHost: a.test\n",
		"orig.test":   "Robot-version: 3.0\nUser-agent: *\nDisallow: /private\nMirror-site: mirror.test\n",
		"a.test":      "User-agent: *\nDisallow:\n",
		"mirror.test": "User-agent: *\nDisallow:\n",
		"alias.test":  "User-agent: *\nDisallow:\n",
	}
	pages := map[string]string{
		"/":   `<a href="/p1">one</a> <a href="http://www.a.test/p3">three</a> <a href="http://alias.test/p4">four</a>`,
		"/p1": `page one <a href="/">home</a>`,
		"/p3": `page three`,
		"/p4": `page four`,
		"/o1": `page o1 <a href="/o2">o2</a>`,
		"/o2": `page o2`,
	}
	var reqs hostRequests
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Lock()
		host := reqs.addLocked(r)
		reqs.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robotsOf[host])
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><p>%s on %s, text of its own: %s</p></body></html>", body, host, r.URL.Path)
	})
	res := serveTest(t, h)
	dir := t.TempDir()
	c, err := New(Config{DataDir: dir, Delay: 20 * time.Millisecond, Workers: 4, MaxDuration: 60 * time.Second,
		DuplicateHosts: []string{"alias.test=a.test"}}, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sum, err := c.Run(ctx, []string{"http://www.a.test/", "http://orig.test/o1", "http://mirror.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Finished {
		t.Fatalf("crawl did not finish: %+v", sum)
	}
	reqs.Lock()
	defer reqs.Unlock()
	t.Logf("requests: %v", reqs.paths)
	if testing.Verbose() {
		if b, err := os.ReadFile(sum.CrawlLog); err == nil {
			t.Logf("crawl.log:\n%s", b)
		}
	}
	for _, host := range []string{"www.a.test", "orig.test"} {
		if got := strings.Join(reqs.paths[host], " "); got != "/robots.txt" {
			t.Errorf("%s got requests %q, want only /robots.txt", host, got)
		}
	}
	if got := reqs.paths["alias.test"]; len(got) != 0 {
		t.Errorf("alias.test got requests %q, want none", got)
	}
	has := func(host, path string) bool {
		for _, p := range reqs.paths[host] {
			if p == path {
				return true
			}
		}
		return false
	}
	for _, want := range []struct{ host, path string }{
		{"a.test", "/"}, {"a.test", "/p1"}, {"a.test", "/p3"}, {"a.test", "/p4"},
		{"mirror.test", "/o1"}, {"mirror.test", "/o2"},
	} {
		if !has(want.host, want.path) {
			t.Errorf("%s%s not fetched", want.host, want.path)
		}
	}
	if sum.HostRewrites < 3 {
		t.Errorf("summary counts %d host rewrites, want at least 3", sum.HostRewrites)
	}
	log, err := os.ReadFile(sum.CrawlLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"host-rewrite:to=a.test", "host-rewrite:to=mirror.test", "host-rewrite:from=www.a.test", "host-rewrite:from=alias.test", "host-rewrite:from=orig.test"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("crawl.log has no %q:\n%s", want, log)
		}
	}
}

// TestHostMapConfigFile: the keys decode from YAML (a list, since host
// names hold the dots that separate config keys).
func TestHostMapConfigFile(t *testing.T) {
	var file struct {
		Crawl Config `yaml:"crawl"`
	}
	if err := config.Load(filepath.Join("testdata", "hostmap.yaml"), &file); err != nil {
		t.Fatal(err)
	}
	cfg := file.Crawl
	if got := strings.Join(cfg.DuplicateHosts, " "); got != "www.example.org=example.org old.example.org=https://example.org" {
		t.Errorf("duplicate-hosts %q", got)
	}
	if boolOr(cfg.RobotsHost, true) || !boolOr(cfg.MirrorSites, false) || cfg.MaxHostRewrites != 500 {
		t.Errorf("robots-host %v mirror-sites %v max-host-rewrites %d", cfg.RobotsHost, cfg.MirrorSites, cfg.MaxHostRewrites)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	if d := (Config{}).withDefaults(); d.MaxHostRewrites != defaultMaxHostRewrites {
		t.Errorf("default max-host-rewrites %d", d.MaxHostRewrites)
	}
}

// putRobots stores a robots.txt entry for origin as the gate would after
// a fetch, and tells the crawler as the gate's observer does.
func putRobots(t *testing.T, c *Crawler, origin string, e politeness.RobotsEntry) {
	t.Helper()
	e.Origin = origin
	if e.Fetched.IsZero() {
		e.Fetched = time.Now()
	}
	if e.Expires.IsZero() {
		e.Expires = e.Fetched.Add(time.Hour)
	}
	if err := c.rstore.PutRobots(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	c.robotsRefreshed(origin)
}

// TestHostRuleRefresh: when the robots.txt that gave a
// rule is fetched again, a 2xx file without the directive, a 4xx, 401 or
// 403 drops the rule from memory and store; a 5xx or a network error
// keeps it (RFC 9309 §2.3.1.4).
func TestHostRuleRefresh(t *testing.T) {
	const origin = "http://www.a.test"
	hostLine := politeness.RobotsEntry{Result: politeness.RobotsOK, Status: 200, Body: []byte("User-agent: *\nDisallow: /private/\nHost: a.test\n")}
	tests := []struct {
		name  string
		entry politeness.RobotsEntry
		want  string // where http://www.a.test/x goes afterwards; "" stays
	}{
		{"2xx still naming the host", hostLine, "http://a.test/x"},
		{"2xx naming another host", politeness.RobotsEntry{Result: politeness.RobotsOK, Status: 200, Body: []byte("Host: b.a.test\n")}, "http://b.a.test/x"},
		{"2xx without the line", politeness.RobotsEntry{Result: politeness.RobotsOK, Status: 200, Body: []byte("User-agent: *\nDisallow: /private/\n")}, ""},
		{"2xx empty", politeness.RobotsEntry{Result: politeness.RobotsOK, Status: 200}, ""},
		{"404", politeness.RobotsEntry{Result: politeness.RobotsNotFound, Status: 404}, ""},
		{"410", politeness.RobotsEntry{Result: politeness.RobotsNotFound, Status: 410}, ""},
		{"403", politeness.RobotsEntry{Result: politeness.RobotsUnauthorized, Status: 403}, ""},
		{"503 keeps the rule", politeness.RobotsEntry{Result: politeness.RobotsUnavailable, Status: 503, Failures: 1}, "http://a.test/x"},
		{"500 keeps the rule", politeness.RobotsEntry{Result: politeness.RobotsUnavailable, Status: 500, Failures: 1}, "http://a.test/x"},
		{"unreachable keeps the rule", politeness.RobotsEntry{Result: politeness.RobotsUnavailable, Err: "connection refused", Failures: 1}, "http://a.test/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openTestCrawler(t, Config{DataDir: dir})
			c.scope.addSeedHost("www.a.test")
			u := normURL(t, origin+"/x")
			ctx := context.Background()
			putRobots(t, c, origin, hostLine)
			c.recheckHostRules(ctx, u) // first contact
			if got, from := c.moveHostProbe(u, hostmap.ProbeNone); from == "" || got.String() != "http://a.test/x" {
				t.Fatalf("rule not learned: %v", got)
			}
			putRobots(t, c, origin, tc.entry)
			c.recheckHostRules(ctx, u)
			check := func(when string) {
				t.Helper()
				got, from := c.moveHostProbe(u, hostmap.ProbeNone)
				gotS := ""
				if from != "" {
					gotS = got.String()
				}
				if gotS != tc.want {
					t.Errorf("%s: %s goes to %q, want %q", when, u, gotS, tc.want)
				}
			}
			check("after the refresh")
			stored, err := c.hostRules.Get([]byte(origin))
			if found := err == nil; found != (tc.want != "") {
				t.Errorf("stored rule %q (err %v), want one: %v", stored, err, tc.want != "")
			}
			if dropped := c.hostRulesDropped.Load(); (dropped == 1) != (tc.want == "") {
				t.Errorf("%d rules counted dropped", dropped)
			}
			if err := c.close(); err != nil {
				t.Fatal(err)
			}
			c = openTestCrawler(t, Config{DataDir: dir})
			defer c.close()
			check("after reopening")
		})
	}
}

// TestMirrorSpread: several mirrors share the load of
// the declaring origin; a URL always goes to the same mirror, whatever
// the order of the Mirror-site lines, across a restart too; at most
// hostmap.MaxMirrors are used.
func TestMirrorSpread(t *testing.T) {
	dir := t.TempDir()
	c := openTestCrawler(t, Config{DataDir: dir, Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}})
	o := normURL(t, "http://a.test/")
	learn := func(c *Crawler, mirrors ...string) {
		t.Helper()
		body := "Robot-version: 3.0\nUser-agent: *\nDisallow: /private/\n"
		for _, m := range mirrors {
			body += "Mirror-site: " + m + "\n"
		}
		f := robots.Parse([]byte(body))
		learnFile(c, o, f)
	}
	const n = 600
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("/dir%d/page-%d.html", i%7, i)
	}
	where := func(c *Crawler) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, p := range paths {
			got, from := c.moveHostProbe(normURL(t, "http://a.test"+p), hostmap.ProbeNone)
			if from != "a.test" {
				t.Fatalf("%s not moved", p)
			}
			if got.Path != p {
				t.Fatalf("%s moved to %s: path changed", p, got)
			}
			out[p] = got.Host
		}
		return out
	}
	learn(c, "m1.test", "m2.test", "m3.test", "m1.test", "a.test")
	first := where(c)
	load := map[string]int{}
	for _, h := range first {
		load[h]++
	}
	if len(load) != 3 {
		t.Fatalf("load %v, want 3 mirrors", load)
	}
	for h, k := range load {
		if k < n/3-n/10 || k > n/3+n/10 {
			t.Errorf("mirror %s got %d of %d URLs, want about %d", h, k, n, n/3)
		}
	}
	if again := where(c); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Error("the same URL went to different mirrors")
	}
	// Another order of the lines: the same mapping.
	learn(c, "m3.test", "m1.test", "m2.test")
	if again := where(c); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Error("reordering the Mirror-site lines moved URLs")
	}
	// A mirror removed: only its URLs move.
	learn(c, "m1.test", "m2.test")
	for p, h := range where(c) {
		if first[p] != "m3.test" && h != first[p] {
			t.Errorf("%s moved from %s to %s though its mirror stayed", p, first[p], h)
		}
	}
	learn(c, "m1.test", "m2.test", "m3.test")
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	c = openTestCrawler(t, Config{DataDir: dir, Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}})
	defer c.close()
	if again := where(c); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Error("after reopening, URLs go to other mirrors")
	}
	// At most hostmap.MaxMirrors are used.
	var many []string
	for i := range hostmap.MaxMirrors + 8 {
		many = append(many, fmt.Sprintf("m%02d.test", i))
	}
	learn(c, many...)
	used := map[string]bool{}
	for _, h := range where(c) {
		used[h] = true
	}
	if len(used) > hostmap.MaxMirrors || len(used) < hostmap.MaxMirrors/2 {
		t.Errorf("%d mirrors used, want at most %d (and most of them)", len(used), hostmap.MaxMirrors)
	}
	if used["m20.test"] || used["m23.test"] {
		t.Error("a mirror past the bound was used")
	}
}

// TestCrawlHostRuleRefresh crawls twice over one state
// directory with a short robots.txt TTL. The first run learns www.a.test's
// Host rule; between the runs its robots.txt changes. A 404 or a file
// without the line drops the rule at the re-check, and the second run's
// URL is fetched on www.a.test; a 503 keeps it (RFC 9309 §2.3.1.4), and
// the URL goes to a.test.
func TestCrawlHostRuleRefresh(t *testing.T) {
	tests := []struct {
		name   string
		status int    // www.a.test's robots.txt in the second run
		body   string // its body when 200
		kept   bool
	}{
		{"404 drops the rule", http.StatusNotFound, "", false},
		{"file without the line drops the rule", http.StatusOK, "User-agent: *\nDisallow: /private/\n", false},
		{"503 keeps the rule", http.StatusServiceUnavailable, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var reqs hostRequests
			second := false
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reqs.Lock()
				host := reqs.addLocked(r)
				changed := second && host == "www.a.test"
				reqs.Unlock()
				if r.URL.Path == "/robots.txt" {
					switch {
					case changed && tc.status != http.StatusOK:
						http.Error(w, "robots.txt changed", tc.status)
					case changed:
						fmt.Fprint(w, tc.body)
					case host == "www.a.test":
						fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nHost: a.test\n")
					default:
						fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
					}
					return
				}
				if r.URL.Path == "/sitemap.xml" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><body><p>%s on %s</p></body></html>", r.URL.Path, host)
			})
			res := serveTest(t, h)
			dir := t.TempDir()
			const ttl = 300 * time.Millisecond
			// The crawl's clock: the second run's is 2×ttl ahead, so the
			// robots.txt entry of the first run has expired for it.
			var skew atomic.Int64
			now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
			run := func(seed string) {
				t.Helper()
				cfg := Config{DataDir: dir, Delay: 10 * time.Millisecond, Workers: 2, MaxDuration: 30 * time.Second}
				cfg.Politeness.Robots.TTL, cfg.Politeness.Robots.NegativeTTL = ttl, ttl
				cfg.Politeness.Robots.RetryBase, cfg.Politeness.Robots.RetryMax = ttl, ttl
				c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				sum, err := c.Run(ctx, []string{seed})
				if err != nil {
					t.Fatal(err)
				}
				if !sum.Finished {
					t.Fatalf("crawl of %s did not finish", seed)
				}
			}
			run("http://www.a.test/one")
			reqs.Lock()
			if got := strings.Join(reqs.paths["www.a.test"], " "); got != "/robots.txt" {
				t.Fatalf("first run: www.a.test got %q, want only /robots.txt", got)
			}
			reqs.paths = nil
			second = true
			reqs.Unlock()
			// The robots.txt entry of the first run expires (its TTL is
			// ttl) before the second run starts, on the crawl's clock:
			// that is what makes the second run fetch the file again.
			skew.Store(int64(2 * ttl))
			run("http://www.a.test/two")

			reqs.Lock()
			defer reqs.Unlock()
			t.Logf("second run: %v", reqs.paths)
			www := strings.Join(reqs.paths["www.a.test"], " ")
			onA := slices.Contains(reqs.paths["a.test"], "/two")
			if tc.kept {
				if !strings.HasPrefix(www, "/robots.txt") || strings.Contains(www, "/two") || !onA {
					t.Errorf("rule kept: www.a.test got %q and a.test/two fetched %v; want only robots.txt there and /two on a.test", www, onA)
				}
			} else if !strings.Contains(www, "/robots.txt") || !strings.Contains(www, "/two") || onA {
				t.Errorf("rule dropped: www.a.test got %q and a.test/two fetched %v; want /two on www.a.test", www, onA)
			}
			c := openTestCrawler(t, Config{DataDir: dir})
			defer c.close()
			if _, err := c.hostRules.Get([]byte("http://www.a.test")); (err == nil) != tc.kept {
				t.Errorf("stored rule present %v, want %v", err == nil, tc.kept)
			}
		})
	}
}

// TestHomeOfMovedLink: the home page queued with a moved link (combined
// policy) is the home of the link's origin moved by the same rules, not
// the home of the mirror the link went to.
func TestHomeOfMovedLink(t *testing.T) {
	c := openTestCrawler(t, Config{DataDir: t.TempDir(), Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}})
	defer c.close()
	o := normURL(t, "http://a.test/")
	f := robots.Parse([]byte("Robot-version: 3.0\nUser-agent: *\nMirror-site: m1.test\nMirror-site: m2.test\nMirror-site: m3.test\n"))
	learnFile(c, o, f)
	home, _ := c.moveHostProbe(o, hostmap.ProbeNone)
	for i := range 30 {
		orig := normURL(t, fmt.Sprintf("http://a.test/p%d", i))
		moved, _ := c.moveHostProbe(orig, hostmap.ProbeNone)
		if got := c.homeOf(orig, moved); got.String() != home.String() {
			t.Errorf("home with %s (moved to %s) = %s, want %s", orig, moved, got, home)
		}
	}
	plain := normURL(t, "http://b.test/x")
	if got := c.homeOf(plain, plain); got.String() != "http://b.test/" {
		t.Errorf("home of an unmoved link = %s", got)
	}
}

// hostRequests records the paths each host (without its port) was asked
// for, in tests that serve several hosts from one loopback server.
type hostRequests struct {
	sync.Mutex
	paths map[string][]string
}

// addLocked records r and returns its host; the caller holds the lock.
func (h *hostRequests) addLocked(r *http.Request) string {
	host := r.Host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	if h.paths == nil {
		h.paths = map[string][]string{}
	}
	h.paths[host] = append(h.paths[host], r.URL.Path)
	return host
}

// serveTest serves h on loopback for the test's life and returns the
// resolver that sends every *.test name to it.
func serveTest(t *testing.T, h http.Handler) *resolve.Resolver {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	res, err := resolve.New([]string{"*.test=" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func normURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := urlnorm.Normalize(s, urlnorm.CrawlDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// learnFile hands robots.txt f of origin o to the crawler as a 2xx file
// that never expires (learnFromRobots).
func learnFile(c *Crawler, o *url.URL, f *robots.File) {
	c.learnFromRobots(o, politeness.Rules{Origin: politeness.Origin(o),
		Entry: politeness.RobotsEntry{Result: politeness.RobotsOK, Status: 200}, File: f, Group: f.Group(c.agent)})
}
