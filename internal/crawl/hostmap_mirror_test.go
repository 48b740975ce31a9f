package crawl

import (
	"context"
	"errors"
	"fmt"
	"github.com/courtesy-crawler/courtesy/internal/hostmap"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/robots"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// The tests of this file go through a crawler with mirror links: a URL on
// a mirror of a Mirror-site rule is re-picked, so every name of a path
// converges on one mirror (package hostmap).

// TestMirrorRepickLifecycle goes through a crawler: a mirror URL found
// before the rule stays; with the rule it is re-picked (also right after
// a resume, when the origin's own URLs wait for the probe); a seed on a
// mirror is re-picked; when robots.txt drops the rule, mirror URLs stay
// where they are.
func TestMirrorRepickLifecycle(t *testing.T) {
	const rule = "http://o.test>http://m1.test,http://m2.test"
	p := pathsFor(t, rule, "m1.test", "m2.test")
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}}
	c := openTestCrawler(t, cfg)
	onM1 := normURL(t, "http://m1.test"+p["m2.test"])
	if _, from := c.moveHost(onM1); from != "" {
		t.Error("mirror URL moved before any rule")
	}
	o := normURL(t, "http://o.test/")
	learn := func(c *Crawler, body string) {
		f := robots.Parse([]byte(body))
		learnFile(c, o, f)
	}
	learn(c, "Robot-version: 3.0\nUser-agent: *\nDisallow: /private/\nMirror-site: m1.test\nMirror-site: m2.test\n")
	wantM2 := "http://m2.test" + p["m2.test"]
	if got, from := c.moveHost(onM1); from != "m1.test" || got.String() != wantM2 {
		t.Errorf("after the rule, %s → %v (from %q), want %s", onM1, got, from, wantM2)
	}
	before := c.hostRewrites()
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if before < 1 {
		t.Errorf("re-pick not counted: %d", before)
	}

	c = openTestCrawler(t, cfg)
	// The stored rule is due: a link to the origin waits for the probe,
	// a link to a mirror does not.
	if _, from := c.moveHost(normURL(t, "http://o.test"+p["m2.test"])); from != "" {
		t.Error("after reopening, the origin's URL moved before its probe")
	}
	if got, from := c.moveHost(onM1); from != "m1.test" || got.String() != wantM2 {
		t.Errorf("after reopening, %s → %v (from %q), want %s", onM1, got, from, wantM2)
	}
	if err := c.seed(t.Context(), []string{onM1.String()}); err != nil {
		t.Fatal(err)
	}
	// The seed on a mirror is queued on its path's mirror, not on m1.
	if st, err := c.ownFr.Lookup(t.Context(), c.cfg.CrawlID, wantM2); err != nil || st.Key != "m2.test" {
		t.Errorf("seed %s: %s queued %+v, %v; want under m2.test", onM1, wantM2, st, err)
	}
	if _, err := c.ownFr.Lookup(t.Context(), c.cfg.CrawlID, onM1.String()); !errors.Is(err, frontier.ErrNotFound) {
		t.Errorf("seed %s queued on the mirror it was given on (%v)", onM1, err)
	}
	learn(c, "User-agent: *\nDisallow: /private/\n")
	for _, raw := range []string{onM1.String(), "http://m2.test" + p["m1.test"]} {
		if got, from := c.moveHost(normURL(t, raw)); from != "" {
			t.Errorf("after the rule was dropped, %s moved to %s", raw, got)
		}
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
}

// TestOutlinksOnMirror: the links of a page fetched from a mirror
// (relative ones resolve on the mirror) are queued on the mirror of their
// path, each path once, with the home page of the mirror set.
func TestOutlinksOnMirror(t *testing.T) {
	c := openTestCrawler(t, Config{DataDir: t.TempDir(), Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}})
	defer c.close()
	o := normURL(t, "http://o.test/")
	f := robots.Parse([]byte("Robot-version: 3.0\nUser-agent: *\nMirror-site: m1.test\nMirror-site: m2.test\n"))
	learnFile(c, o, f)
	src := normURL(t, "http://m1.test/a/index.html")
	l := frontier.Lease{URLInfo: frontier.URLInfo{URL: src.String(), Key: "m1.test", Metadata: map[string][]string{mdPath: {""}}}}
	var links []extract.Link
	paths := map[string]bool{}
	for i := range 20 {
		pth := fmt.Sprintf("/a/p%d.html", i)
		paths[pth] = true
		for _, h := range []string{"m1.test", "m2.test", "o.test"} {
			u := normURL(t, "http://"+h+pth)
			links = append(links, extract.Link{URL: u, Abs: u.String(), Hop: extract.HopLink})
		}
	}
	home, _, _ := c.hmap.Resolve(o, hostmap.ProbeNone)
	items := c.outlinks(l, src, links, false)
	got := map[string]string{} // path → URL queued
	for _, it := range items {
		u := normURL(t, it.Info.URL)
		if u.Path == "/" {
			if it.Info.URL != home.String() {
				t.Errorf("home %s queued, want %s", it.Info.URL, home)
			}
			continue
		}
		if prev, ok := got[u.Path]; ok && prev != it.Info.URL {
			t.Errorf("%s queued as %s and %s", u.Path, prev, it.Info.URL)
		}
		got[u.Path] = it.Info.URL
		want, _, _ := c.hmap.Resolve(normURL(t, "http://o.test"+u.Path), hostmap.ProbeNone)
		if want == nil || it.Info.URL != want.String() {
			t.Errorf("%s queued, want %v", it.Info.URL, want)
		}
		if it.Info.Key != c.queueKey(u) {
			t.Errorf("%s under key %q", it.Info.URL, it.Info.Key)
		}
		if from := md1(it.Info.Metadata, mdMoved); from != "" && from == u.Host {
			t.Errorf("%s says moved from its own host", it.Info.URL)
		}
	}
	if len(got) != len(paths) {
		t.Errorf("%d paths queued, want %d", len(got), len(paths))
	}
}

// TestCrawlMirrorLinks crawls a mirrored site on loopback:
// o.test's robots.txt names m1.test and m2.test as its mirrors, and the
// mirrors serve its pages with relative links (which resolve on the
// mirror that served them) and absolute links to each other and to
// o.test. No path is fetched on two of the names, o.test serves only its
// robots.txt, and the re-picks are counted and logged. A second run over
// the same state seeds URLs on m1.test: they are re-picked at once, by
// the rule stored by the first run.
func TestCrawlMirrorLinks(t *testing.T) {
	const pages = 16
	page := func(i int) string { return fmt.Sprintf("/s%d/p%d.html", i%3, i) }
	body := func(i int) string {
		var b strings.Builder
		// Relative links: on a mirror they name the mirror.
		for _, j := range []int{i + 1, i + 2, i * 2} {
			if j < pages {
				fmt.Fprintf(&b, `<a href="..%s">p%d</a> `, page(j), j)
			}
		}
		// Absolute links to each name of the site.
		for k, h := range []string{"o.test", "m1.test", "m2.test"} {
			fmt.Fprintf(&b, `<a href="http://%s%s">p%d on %s</a> `, h, page((i+3+k)%pages), (i+3+k)%pages, h)
		}
		return b.String()
	}
	var reqs hostRequests
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Lock()
		host := reqs.addLocked(r)
		reqs.Unlock()
		switch {
		case r.URL.Path == "/robots.txt" && host == "o.test":
			fmt.Fprint(w, "Robot-version: 3.0\nUser-agent: *\nDisallow: /private/\nMirror-site: m1.test\nMirror-site: m2.test\n")
			return
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			fmt.Fprintf(w, `<html><body><p>home on %s</p><a href="s0/p0.html">p0</a> <a href="s1/p1.html">p1</a></body></html>`, host)
			return
		}
		for i := range pages {
			if r.URL.Path == page(i) {
				fmt.Fprintf(w, "<html><body><p>page %d on %s, its own text %d</p>%s</body></html>", i, host, i*7919, body(i))
				return
			}
		}
		if strings.HasPrefix(r.URL.Path, "/z/") {
			fmt.Fprintf(w, "<html><body><p>%s on %s</p></body></html>", r.URL.Path, host)
			return
		}
		http.NotFound(w, r)
	})
	res := serveTest(t, h)
	dir := t.TempDir()
	run := func(seeds ...string) *Summary {
		t.Helper()
		c, err := New(Config{DataDir: dir, Delay: 10 * time.Millisecond, Workers: 4, MaxDuration: 60 * time.Second,
			Scope: Scope{Mode: ScopeDomains, Domains: []string{".test"}}}, Options{Logger: testLogger(t), Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		sum, err := c.Run(ctx, seeds)
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Finished {
			t.Fatalf("crawl of %v did not finish", seeds)
		}
		return sum
	}
	// onOne checks that no path was asked of two names and returns the
	// name each path was fetched on.
	onOne := func() map[string]string {
		t.Helper()
		reqs.Lock()
		defer reqs.Unlock()
		on := map[string]string{}
		for _, host := range []string{"o.test", "m1.test", "m2.test"} {
			for _, p := range reqs.paths[host] {
				if p == "/robots.txt" {
					continue
				}
				if prev, ok := on[p]; ok && prev != host {
					t.Errorf("%s fetched on %s and %s", p, prev, host)
				}
				on[p] = host
			}
		}
		if got := strings.Join(reqs.paths["o.test"], " "); got != "/robots.txt" {
			t.Errorf("o.test got %q, want only /robots.txt", got)
		}
		return on
	}

	sum := run("http://o.test/")
	on := onOne()
	t.Logf("first run: %v", on)
	load := map[string]int{}
	for i := range pages {
		h, ok := on[page(i)]
		if !ok {
			t.Errorf("%s not fetched", page(i))
		}
		load[h]++
	}
	if load["m1.test"] == 0 || load["m2.test"] == 0 {
		t.Errorf("pages per mirror %v, want both used", load)
	}
	log, err := os.ReadFile(sum.CrawlLog)
	if err != nil {
		t.Fatal(err)
	}
	// Links on a mirror's page re-picked onto the other one: counted
	// and logged as moves from the mirror.
	if !strings.Contains(string(log), annotationMovedFrom+"m1.test") && !strings.Contains(string(log), annotationMovedFrom+"m2.test") {
		t.Errorf("no move from a mirror in crawl.log:\n%s", log)
	}
	if sum.HostRewrites < pages {
		t.Errorf("%d host rewrites counted, want at least %d", sum.HostRewrites, pages)
	}

	// A resume: seeds on m1.test go where the stored rule sends them.
	var seeds []string
	for i := range 6 {
		seeds = append(seeds, fmt.Sprintf("http://m1.test/z/%d.html", i))
	}
	run(seeds...)
	on = onOne()
	m := hostmap.New(urlnorm.CrawlDefaults(), 10, nil)
	if err := learnRule(t, m, "http://o.test>http://m1.test,http://m2.test"); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		want := endOf(t, m, s)
		u := normURL(t, want)
		if on[u.Path] != u.Host {
			t.Errorf("seed %s fetched on %q, want %s", s, on[u.Path], u.Host)
		}
	}
}

// learnRule gives m the rule "ORIGIN>TARGET[,TARGET...]" as robots.txt
// directives: one target is a Host line, several are Mirror-site lines.
func learnRule(t *testing.T, m *hostmap.Map, rule string) error {
	t.Helper()
	from, to, ok := strings.Cut(rule, ">")
	o, err := url.Parse(from)
	if !ok || err != nil || o.Host == "" {
		t.Fatalf("bad rule %q", rule)
	}
	targets := strings.Split(to, ",")
	d := hostmap.Directives{Mirrors: targets}
	if len(targets) == 1 {
		d = hostmap.Directives{Host: targets[0]}
	}
	_, err = m.Learn(o, d, nil)
	return err
}

// endOf returns where raw ends up by m's rules (itself when it stays).
func endOf(t *testing.T, m *hostmap.Map, raw string) string {
	t.Helper()
	u := normURL(t, raw)
	got, _, loop := m.Resolve(u, hostmap.ProbeNone)
	if loop {
		t.Fatalf("%s loops", raw)
	}
	if got == nil {
		return u.String()
	}
	return got.String()
}

// pathsFor returns, for each mirror of rule, a path of the origin that
// the rule sends there.
func pathsFor(t *testing.T, rule string, mirrors ...string) map[string]string {
	t.Helper()
	m := hostmap.New(urlnorm.CrawlDefaults(), 10, nil)
	if err := learnRule(t, m, rule); err != nil {
		t.Fatal(err)
	}
	from, _, _ := strings.Cut(rule, ">")
	out := map[string]string{}
	for i := 0; i < 1000 && len(out) < len(mirrors); i++ {
		p := fmt.Sprintf("/p%d.html", i)
		h := normURL(t, endOf(t, m, from+p)).Host
		if _, ok := out[h]; !ok {
			out[h] = p
		}
	}
	for _, h := range mirrors {
		if out[h] == "" {
			t.Fatalf("no path found for mirror %s", h)
		}
	}
	return out
}
