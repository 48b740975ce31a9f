package crawl

// The crawler on real documents: Debian's HTML documentation packages
// served by a real nginx, with wget --mirror as the peer that says what
// is reachable.

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// realDocs are the documentation trees of the test: virtual host → the
// directory Debian's package installs (scripts/install-test-deps).
// Python's and PostgreSQL's are the trees the near-duplicate fingerprint
// is validated on; Django's holds release notes that repeat each other
// (a security release's notes, once per branch) and pages named
// default.html; CMake's has file names with spaces; libffi's is a
// Texinfo manual, whose index node Index.html sits beside index.html.
// JSON-GLib's reference is gi-docgen's (274 pages: a page per type,
// method, property and signal). libpqxx's reference is Doxygen's, whose
// class lists hang from a menu that only JavaScript draws, so one of its
// pages is six links down.
var realDocs = map[string]string{
	"python.docs.test":     "/usr/share/doc/python3.11-doc/html",
	"postgresql.docs.test": "/usr/share/doc/postgresql-doc-15/html",
	"django.docs.test":     "/usr/share/doc/python-django-doc/html",
	"cmake.docs.test":      "/usr/share/doc/cmake-data/html",
	"libffi.docs.test":     "/usr/share/doc/libffi8/html",
	"jsonglib.docs.test":   "/usr/share/doc/json-glib-1.0",
	"libpqxx.docs.test":    "/usr/share/doc/libpqxx-doc/html/Reference",
}

// TestCrawlRealDocs crawls the trees with the crawler's defaults (but a
// short delay) and checks that it fetched every HTML page wget --mirror
// fetched, that no site was stopped by a trap limit, and that nothing
// failed. It fails, not skips, without nginx, wget or the packages: run
// scripts/install-test-deps.
func TestCrawlRealDocs(t *testing.T) {
	for _, cmd := range []string{"nginx", "wget"} {
		if _, err := exec.LookPath(cmd); err != nil {
			if _, err := os.Stat("/usr/sbin/" + cmd); err != nil {
				t.Fatalf("%s not found: run scripts/install-test-deps", cmd)
			}
		}
	}
	for host, dir := range realDocs {
		if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
			t.Fatalf("%s: %v (run scripts/install-test-deps)", host, err)
		}
	}
	addr := startNginx(t, realDocs)

	// The peer: wget --mirror, one tree after the other, obeying
	// robots.txt as the crawler does.
	want := map[string]map[string]bool{}
	mirror := t.TempDir()
	for host := range realDocs {
		want[host] = files(t, wgetMirror(t, addr, mirror, host), ".html")
		if len(want[host]) < 15 { // libffi's manual has 20 pages
			t.Fatalf("wget fetched %d HTML pages of %s", len(want[host]), host)
		}
	}

	dir := t.TempDir()
	sum := crawlDocs(t, addr, dir, maps.Keys(realDocs), Config{})
	if !sum.Finished || sum.Failed != 0 || len(sum.Stopped) != 0 || len(sum.Retired) != 0 {
		t.Errorf("summary: finished %v, failed %d, stopped sites %+v, retired %v; want finished, none failed, stopped or retired",
			sum.Finished, sum.Failed, sum.Stopped, sum.Retired)
	}
	compareFetched(t, want, fetchedPaths(t, filepath.Join(dir, "crawl.log")), "HTML pages")
}

// TestCrawlRealDocsRequisites crawls three trees with page requisites and
// checks that the crawler fetched every file wget --mirror
// --page-requisites fetched: pages, stylesheets, scripts, images, fonts.
// CMake's links each page's source with rel=nofollow, which wget follows:
// so does the crawler here, with FollowRelNofollow.
func TestCrawlRealDocsRequisites(t *testing.T) {
	sites := map[string]string{}
	for _, host := range []string{"python.docs.test", "django.docs.test", "cmake.docs.test"} {
		sites[host] = realDocs[host]
		if _, err := os.Stat(filepath.Join(sites[host], "index.html")); err != nil {
			t.Fatalf("%s: %v (run scripts/install-test-deps)", host, err)
		}
	}
	addr := startNginx(t, sites)
	want := map[string]map[string]bool{}
	mirror := t.TempDir()
	nonHTML := 0
	for host := range sites {
		want[host] = files(t, wgetMirror(t, addr, mirror, host, "--page-requisites"), "")
		for p := range want[host] {
			if !strings.HasSuffix(p, ".html") {
				nonHTML++
			}
		}
	}
	if nonHTML < 20 {
		t.Fatalf("wget fetched %d files other than HTML: the trees' requisites are not there", nonHTML)
	}
	dir := t.TempDir()
	sum := crawlDocs(t, addr, dir, maps.Keys(sites), Config{PageRequisites: true, FollowRelNofollow: true})
	if !sum.Finished || sum.Failed != 0 || len(sum.Stopped) != 0 || len(sum.Retired) != 0 {
		t.Errorf("summary: finished %v, failed %d, stopped sites %+v, retired %v", sum.Finished, sum.Failed, sum.Stopped, sum.Retired)
	}
	compareFetched(t, want, fetchedPaths(t, filepath.Join(dir, "crawl.log")), "files")
}

// wgetMirror mirrors host with wget --mirror and args into a directory
// under mirror, and returns it. wget obeys robots.txt as the crawler does
// and reaches the .test hosts through nginx as its "proxy": nginx picks
// the virtual host of an absolute-form request by the URL's host.
func wgetMirror(t *testing.T, addr, mirror, host string, args ...string) string {
	t.Helper()
	dst := filepath.Join(mirror, host)
	args = append([]string{"-q", "--mirror", "--no-parent", "-e", "robots=on", "--no-host-directories",
		"-e", "use_proxy=on", "-e", "http_proxy=http://" + addr, "--directory-prefix", dst}, args...)
	cmd := exec.Command("wget", append(args, "http://"+host+"/")...)
	if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 8 { // 8: the trees' broken links
		t.Fatalf("wget %s: %v\n%s", host, err, out)
	}
	return dst
}

// crawlDocs crawls the hosts' home pages, served by nginx at addr, with
// cfg and the test's short delay, into dir.
func crawlDocs(t *testing.T, addr, dir string, hosts iter.Seq[string], cfg Config) *Summary {
	t.Helper()
	res, err := resolve.New([]string{"*.docs.test=" + addr})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []string
	for host := range hosts {
		seeds = append(seeds, "http://"+host+"/")
	}
	cfg.DataDir, cfg.Delay, cfg.MaxDuration, cfg.Workers = dir, 2*time.Millisecond, 10*time.Minute, 16
	c, err := New(cfg, Options{Logger: testLogger(t), Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sum, err := c.Run(ctx, seeds)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// fetchedPaths reads crawl.log: the paths answered 200, by host, named as
// wget saves them (a directory as its index.html, a query kept).
func fetchedPaths(t *testing.T, log string) map[string]map[string]bool {
	t.Helper()
	got := map[string]map[string]bool{}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[1] != "200" {
			continue
		}
		u, err := url.Parse(fields[3])
		if err != nil {
			t.Fatal(err)
		}
		p := u.Path
		if strings.HasSuffix(p, "/") {
			p += "index.html"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery // wget's file name
		}
		if got[u.Host] == nil {
			got[u.Host] = map[string]bool{}
		}
		got[u.Host][p] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// compareFetched fails for every path of want that got lacks.
func compareFetched(t *testing.T, want, got map[string]map[string]bool, what string) {
	t.Helper()
	for host, paths := range want {
		missing := 0
		for p := range paths {
			if !got[host][p] {
				if missing < 5 {
					t.Errorf("%s%s: fetched by wget --mirror, not by the crawler", host, p)
				}
				missing++
			}
		}
		t.Logf("%s: %d %s from wget, %d missing from the crawl", host, len(paths), what, missing)
	}
}

// files returns the paths (from "/") of the files under dir whose names
// end in suffix ("": all).
func files(t *testing.T, dir, suffix string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, suffix) {
			rel, _ := filepath.Rel(dir, p)
			out["/"+filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// startNginx serves each host's directory with Debian's nginx on a free
// loopback port, and returns its address; the server stops with the test.
func startNginx(t *testing.T, sites map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	var conf strings.Builder
	fmt.Fprintf(&conf, "daemon off;\nworker_processes 1;\npid %s/nginx.pid;\nerror_log %s/error.log;\nevents { worker_connections 256; }\n", dir, dir)
	// port_in_redirect off: the Location of a directory's redirect names
	// no port, as from nginx on port 80. With the test's port in it, the
	// pages behind such redirects are another site (another port) to
	// both crawlers, and fewer pages are compared; the crawl stays right
	// (TestLeakedPortOutOfScope).
	fmt.Fprintf(&conf, "http {\n  access_log off;\n  port_in_redirect off;\n  include /etc/nginx/mime.types;\n")
	for _, tmp := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&conf, "  %s_temp_path %s/%s;\n", tmp, dir, tmp)
	}
	for host, root := range sites {
		fmt.Fprintf(&conf, "  server { listen %s; server_name %s; root %s; }\n", addr, host, root)
	}
	conf.WriteString("}\n")
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := "nginx"
	if _, err := exec.LookPath(bin); err != nil {
		bin = "/usr/sbin/nginx"
	}
	cmd := exec.Command(bin, "-c", path, "-e", filepath.Join(dir, "error.log"))
	// Its own process group, so that its worker goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not start on %s: %v\n%s", addr, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
