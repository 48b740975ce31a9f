package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/warc"
	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

// robotsCapture is one robots.txt response record of a crawl's WARC files
// with its request and metadata records.
type robotsCapture struct {
	id, uri string
	status  int
	header  http.Header
	wire    string // the header block as stored
	body    []byte // as stored: content-coded when the header says so
	request string
	meta    map[string]string
}

// robotsCaptures reads every WARC file in dir (digests verified) and
// returns its robots.txt captures by target URI, and the number of
// response records of other URLs.
func robotsCaptures(t *testing.T, dir string) (map[string][]*robotsCapture, int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC file in %s", dir)
	}
	byID := map[string]*robotsCapture{}
	out := map[string][]*robotsCapture{}
	requests, metas := map[string]string{}, map[string]map[string]string{}
	others := 0
	for _, p := range files {
		readWARC(t, p, func(rec *warc.Record) {
			uri := rec.Header.TargetURI()
			switch rec.Header.Type() {
			case warc.TypeResponse:
				if !strings.HasSuffix(uri, "/robots.txt") {
					others++
					return
				}
				resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rec.Block)), nil)
				if err != nil {
					t.Fatalf("%s: %v", uri, err)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("%s: %v", uri, err)
				}
				wire, _, _ := bytes.Cut(rec.Block, []byte("\r\n\r\n"))
				c := &robotsCapture{id: rec.Header.Get(warc.HeaderRecordID), uri: uri, status: resp.StatusCode, header: resp.Header, wire: string(wire), body: body}
				byID[c.id] = c
				out[uri] = append(out[uri], c)
			case warc.TypeRequest:
				requests[rec.Header.Get(warc.HeaderConcurrentTo)] = string(rec.Block)
			case warc.TypeMetadata:
				m := map[string]string{}
				for _, ln := range strings.Split(string(rec.Block), "\r\n") {
					if k, v, ok := strings.Cut(ln, ": "); ok {
						m[k] = v
					}
				}
				metas[rec.Header.Get(warc.HeaderConcurrentTo)] = m
			}
		})
	}
	for id, c := range byID {
		c.request, c.meta = requests[id], metas[id]
	}
	return out, others
}

// robotsLines returns the robots.txt fetch lines of the crawl.log in dir.
func robotsLines(t *testing.T, dir string) []crawllog.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []crawllog.Entry
	sc := crawllog.NewScanner(f)
	for {
		e, err := sc.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Prerequisite() {
			out = append(out, e)
		}
	}
}

// TestCrawlArchivesRobots crawls a generic site and the hazard sites whose
// robots.txt answers 404, 500 and a redirect, and checks that every
// robots.txt request the server saw is in the WARC files once, as a
// response record (status and body as served) with its request and
// metadata records, in the CDXJ index, readable by warcio.js, and in
// crawl.log as a prerequisite line that survives the next start's repair.
func TestCrawlArchivesRobots(t *testing.T) {
	web, mem, r := startWeb(t, testweb.Config{Seed: 5, Sites: 1, PagesPerSite: 4, NoExternal: true})
	hosts := []string{"site-0000.test", "robots-404.test", "robots-500.test", "robots-redirect.test"}
	sites := map[string]*testweb.Site{}
	var seeds []string
	for _, s := range web.Sites() {
		sites[s.Host] = s
		if slices.Contains(hosts, s.Host) {
			seeds = append(seeds, s.SeedPages...)
		}
	}
	if len(seeds) < len(hosts) {
		t.Fatalf("seeds %v for hosts %v", seeds, hosts)
	}
	dir := t.TempDir()
	cfg := Config{
		DataDir: dir, Delay: 20 * time.Millisecond, MaxDuration: 60 * time.Second, Workers: 4,
		// The 500 retires its host at once: one robots.txt fetch.
		MaxHostFailures: 1,
		Politeness:      politeness.Config{Robots: politeness.RobotsConfig{RetryBase: 100 * time.Millisecond, RetryMax: time.Second}},
	}
	sum := runCrawl(t, cfg, r, seeds...)
	if !sum.Finished {
		t.Fatalf("crawl did not finish: %+v", sum)
	}

	// What the server answered to each robots.txt request.
	served := map[string][]testweb.Entry{}
	for _, e := range mem.Entries() {
		if e.Target == "/robots.txt" {
			u := "http://" + testweb.NormalizeHost(e.Host) + "/robots.txt"
			served[u] = append(served[u], e)
		}
	}
	want := map[string]int{
		"http://site-0000.test/robots.txt":       200,
		"http://robots-404.test/robots.txt":      404,
		"http://robots-500.test/robots.txt":      500,
		"http://robots-redirect.test/robots.txt": 301,
		"http://robots-target.test/robots.txt":   200, // the redirect's hop
	}
	caps, pages := robotsCaptures(t, filepath.Join(dir, "warc"))
	if pages == 0 {
		t.Error("no page in the WARC files")
	}
	if len(caps) != len(served) || len(caps) != len(want) {
		t.Errorf("robots.txt captures of %d URLs, server saw %d, want %d: %v", len(caps), len(served), len(want), keys(caps))
	}
	for u, status := range want {
		cs, es := caps[u], served[u]
		if len(cs) != 1 || len(es) != 1 {
			t.Errorf("%s: %d response records, %d requests served; want one of each", u, len(cs), len(es))
			continue
		}
		c, e := cs[0], es[0]
		if c.status != status || e.Status != status {
			t.Errorf("%s: archived %d, served %d, want %d", u, c.status, e.Status, status)
		}
		if int64(len(c.body)) != e.Bytes {
			t.Errorf("%s: %d body bytes archived, %d served", u, len(c.body), e.Bytes)
		}
		host := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/robots.txt")
		if status == 200 && c.header.Get("Content-Encoding") == "" && !bytes.Equal(c.body, sites[host].Robots) {
			t.Errorf("%s: archived body differs from the site's robots.txt", u)
		}
		if status == 301 && c.header.Get("Location") != "http://robots-target.test/robots.txt" {
			t.Errorf("%s: Location %q", u, c.header.Get("Location"))
		}
		if !strings.HasPrefix(c.request, "GET /robots.txt HTTP/1.1\r\nHost: "+host+"\r\n") || !strings.Contains(c.request, "\r\nUser-Agent: ") {
			t.Errorf("%s: request record %q", u, c.request)
		}
		if c.meta == nil || c.meta["hopsFromSeed"] != "P" || !slices.Contains(seeds, c.meta["via"]) {
			t.Errorf("%s: metadata %v, want hopsFromSeed P via a seed", u, c.meta)
		}
	}

	// The CDXJ index lists them like any response.
	idx, _ := filepath.Glob(filepath.Join(dir, "warc", "*.cdxj"))
	indexed := map[string]int{}
	for _, p := range idx {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		es, err := cdxj.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if strings.HasSuffix(e.URL, "/robots.txt") {
				indexed[e.URL] = e.Status
			}
		}
	}
	for u, status := range want {
		if indexed[u] != status {
			t.Errorf("CDXJ: %s indexed with status %d, want %d", u, indexed[u], status)
		}
	}

	// warcio.js reads the same records, digests included.
	wio := warcioRobots(t, filepath.Join(dir, "warc"))
	for u, status := range want {
		if !slices.Equal(wio[u], []int{status}) {
			t.Errorf("warcio: %s statuses %v, want [%d]", u, wio[u], status)
		}
	}

	// crawl.log: one prerequisite line per fetch, via the seed that
	// needed it; the pages keep their one line each.
	checkRobotsLines(t, dir, want, seeds)
	checkLogAgainstFrontier(t, dir, true)

	// The next start repairs the log against the frontier: the robots.txt
	// lines are kept (they are no frontier URLs), none is added, and no
	// robots.txt is fetched again (the cache in the data directory).
	before := len(mem.Entries())
	runCrawl(t, cfg, r)
	checkRobotsLines(t, dir, want, seeds)
	checkLogAgainstFrontier(t, dir, true)
	for _, e := range mem.Entries()[before:] {
		if e.Target == "/robots.txt" {
			t.Errorf("robots.txt of %s fetched again on resume", e.Host)
		}
	}
	if caps2, _ := robotsCaptures(t, filepath.Join(dir, "warc")); len(caps2) != len(caps) {
		t.Errorf("%d robots.txt URLs archived after the resume, %d before", len(caps2), len(caps))
	}
}

func checkRobotsLines(t *testing.T, dir string, want map[string]int, seeds []string) {
	t.Helper()
	got := map[string][]int{}
	for _, e := range robotsLines(t, dir) {
		got[e.URL] = append(got[e.URL], e.Status)
		if e.Path != "P" || !slices.Contains(seeds, e.Via) || e.FetchStart.IsZero() || e.Digest == "" {
			t.Errorf("robots.txt line %+v: want path P, a seed as referrer, fetch time and digest", e)
		}
	}
	for u, status := range want {
		if !slices.Equal(got[u], []int{status}) {
			t.Errorf("crawl.log: %s robots.txt lines with statuses %v, want [%d]", u, got[u], status)
		}
	}
	if len(got) != len(want) {
		t.Errorf("crawl.log: robots.txt lines for %v, want %d URLs", keys(got), len(want))
	}
}

// warcioRobots reads the WARC files in dir with warcio.js (tools/warcio,
// installed by scripts/install-test-deps) and returns the statuses of the
// robots.txt response records by URL; a digest warcio recomputes
// differently, or any warcio error, fails the test.
func warcioRobots(t *testing.T, dir string) map[string][]int {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): run scripts/install-test-deps", err)
	}
	tools, err := filepath.Abs(filepath.Join("..", "..", "tools", "warcio"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tools, "node_modules", "warcio", "package.json")); err != nil {
		t.Fatalf("npm package warcio missing in tools/warcio (%v): run scripts/install-test-deps", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	out := map[string][]int{}
	for _, p := range files {
		cmd := exec.Command(node, filepath.Join(tools, "read.mjs"), p)
		cmd.Dir = tools
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("warcio on %s: %v\n%s", p, err, stderr.String())
		}
		for _, ln := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var r struct {
				Type            string  `json:"type"`
				URI             *string `json:"uri"`
				Status          *int    `json:"status"`
				BlockDigestOK   *bool   `json:"blockDigestOK"`
				PayloadDigestOK *bool   `json:"payloadDigestOK"`
			}
			if err := json.Unmarshal(ln, &r); err != nil {
				t.Fatalf("warcio output %q: %v", ln, err)
			}
			if (r.BlockDigestOK != nil && !*r.BlockDigestOK) || (r.PayloadDigestOK != nil && !*r.PayloadDigestOK) {
				t.Errorf("%s: %s record %v: digest differs from warcio's", p, r.Type, r.URI)
			}
			if r.Type == "response" && r.URI != nil && strings.HasSuffix(*r.URI, "/robots.txt") && r.Status != nil {
				out[*r.URI] = append(out[*r.URI], *r.Status)
			}
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRobotsArchiveGzip: a robots.txt served gzip-coded is archived as
// transferred (Content-Encoding kept, payload digest over the coded bytes)
// while the gate parses the decoded rules, as before the archive; with
// warc-robots off nothing is archived.
func TestRobotsArchiveGzip(t *testing.T) {
	rules := "User-agent: *\nDisallow: /private/\n"
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write([]byte(rules))
	zw.Close()
	var gotAE []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			w.Write([]byte("<html>page</html>"))
			return
		}
		gotAE = append(gotAE, r.Header.Get("Accept-Encoding"))
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(rules))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header()["x-served-by"] = []string{"hand"} // not in net/http's canonical case
		w.Write(zbuf.Bytes())
	}))
	defer srv.Close()
	for _, archive := range []bool{true, false} {
		t.Run(fmt.Sprint("archive=", archive), func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{DataDir: dir, Delay: -1, MaxDuration: 30 * time.Second, Workers: 2, WARCRobots: &archive}
			c, err := New(cfg, Options{Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			sum, err := c.Run(ctx, []string{srv.URL + "/", srv.URL + "/private/a.html"})
			if err != nil {
				t.Fatal(err)
			}
			if sum.RobotsDenied != 1 {
				t.Errorf("%d URLs refused by robots.txt, want 1: the gate did not read the gzip-coded rules", sum.RobotsDenied)
			}
			caps, _ := robotsCaptures(t, filepath.Join(dir, "warc"))
			lines := robotsLines(t, dir)
			u := srv.URL + "/robots.txt"
			if !archive {
				if len(caps) != 0 || len(lines) != 0 {
					t.Errorf("warc-robots off: %d robots.txt captures, %d lines", len(caps), len(lines))
				}
				return
			}
			if len(caps[u]) != 1 || len(lines) != 1 {
				t.Fatalf("%d captures of %s, %d lines; want 1 and 1", len(caps[u]), u, len(lines))
			}
			cp := caps[u][0]
			if cp.header.Get("Content-Encoding") != "gzip" || !bytes.Equal(cp.body, zbuf.Bytes()) {
				t.Errorf("archived %q (Content-Encoding %q), want the gzip bytes as served", cp.body, cp.header.Get("Content-Encoding"))
			}
			if !strings.Contains(cp.wire, "\r\nx-served-by: hand") {
				t.Errorf("archived header %q is not the one sent (x-served-by in its case)", cp.wire)
			}
			if !strings.Contains(cp.request, "\r\nAccept-Encoding: gzip\r\n") {
				t.Errorf("request record %q lacks the Accept-Encoding sent", cp.request)
			}
			if lines[0].Size != int64(zbuf.Len()) || lines[0].MIME != "text/plain" || lines[0].Status != 200 {
				t.Errorf("crawl.log line %+v", lines[0])
			}
			if pu, _ := url.Parse(srv.URL); cp.meta["ip"] != strings.Split(pu.Host, ":")[0] {
				t.Errorf("metadata ip %q, server %s", cp.meta["ip"], pu.Host)
			}
		})
	}
	if len(gotAE) != 2 || gotAE[0] != "gzip" || gotAE[1] != "gzip" {
		t.Errorf("Accept-Encoding of the robots.txt requests %q, want gzip both times (as net/http asks)", gotAE)
	}
}

// TestRobotsRefetchOneLine: a robots.txt that answers 503, then 200 on the
// gate's retry, is archived twice (both answers are in the WARC files) but
// has one crawl.log line, the first fetch's, so that crawl.log keeps one
// line per URL; the site is crawled once its robots.txt is had. A resumed
// crawl that fetches it again adds no line either.
func TestRobotsRefetchOneLine(t *testing.T) {
	var robotsHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		if robotsHits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><a href="/a">a</a></body></html>`)
	})
	res := serveHandler(t, mux)
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: time.Minute,
		Politeness: politeness.Config{Robots: politeness.RobotsConfig{RetryBase: 100 * time.Millisecond, RetryMax: time.Second}}}
	sum := runCrawl(t, cfg, res, "http://again.test/")
	if !sum.Finished || sum.Pages < 2 {
		t.Fatalf("crawl (robots.txt asked %d times): %+v", robotsHits.Load(), sum)
	}
	caps, _ := robotsCaptures(t, filepath.Join(dir, "warc"))
	var statuses []int
	for _, c := range caps["http://again.test/robots.txt"] {
		statuses = append(statuses, c.status)
	}
	sort.Ints(statuses)
	if !slices.Equal(statuses, []int{200, 503}) {
		t.Errorf("robots.txt records with statuses %v, want 200 and 503", statuses)
	}
	lines := func() []string {
		raw, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ln := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if f := strings.Fields(ln); len(f) > 3 && f[3] == "http://again.test/robots.txt" {
				out = append(out, f[1])
			}
		}
		return out
	}
	if got := lines(); !slices.Equal(got, []string{"503"}) {
		t.Errorf("crawl.log robots.txt lines with statuses %v, want one, the first fetch's (503)", got)
	}
	// A new run on the same data with a new seed of that host: robots.txt
	// is had from the store or fetched again; either way no second line.
	robotsHits.Store(0)
	runCrawl(t, cfg, res, "http://again.test/b")
	if got := lines(); len(got) != 1 {
		t.Errorf("after a second run, crawl.log robots.txt lines %v, want one", got)
	}
}
