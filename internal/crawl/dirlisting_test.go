package crawl

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/traps"
)

// TestDirListingDepth: a file tree eight directories deep, served as
// directory listings (each "Index of /d1/d2/" page links its parent, its
// sort orders and its one subdirectory and file). With a depth limit of 5
// (the numbered URLs' default; the tree's names have no digits alone) the
// crawler still fetches the bottom file, since a listing's entries keep its
// depth; the same tree with pages that are not listings is cut at depth 5.
func TestDirListingDepth(t *testing.T) {
	const levels = 8
	for _, c := range []struct {
		title      string
		wantBottom bool
	}{
		{"Index of %s", true},
		{"Directory listing for %s", true},
		{"Chapter %s", false},
	} {
		t.Run(strings.Fields(c.title)[0], func(t *testing.T) {
			w := &recordingWeb{pages: map[string]string{"files.test /robots.txt": "User-agent: *\nAllow: /\n"}}
			dir := "/"
			for i := 1; i <= levels; i++ {
				sub := fmt.Sprintf("%sd%d/", dir, i)
				w.pages["files.test "+dir] = fmt.Sprintf(`<html><head><title>`+c.title+`</title></head><body><h1>Index of %s</h1>
<a href="?C=N;O=D">Name</a> <a href="?C=M;O=A">Last modified</a>
<a href="../">Parent Directory</a> <a href="d%d/">d%d/</a> <a href="file%d.txt">file%d.txt</a></body></html>`, dir, dir, i, i, i, i)
				w.pages[fmt.Sprintf("files.test %sfile%d.txt", dir, i)] = "file"
				dir = sub
			}
			w.pages["files.test "+dir] = "<html><head><title>bottom</title></head><body>the end</body></html>"
			res := serveRecording(t, w)
			runCrawl(t, Config{DataDir: t.TempDir(), Delay: -1, Workers: 2, MaxDuration: time.Minute, Traps: traps.Limits{MaxDepth: 5}}, res, "http://files.test/")
			reqs := w.requests()
			bottom := "files.test " + dir
			if got := slices.Contains(reqs, bottom); got != c.wantBottom {
				t.Errorf("bottom directory %s fetched: %v, want %v; requests %q", dir, got, c.wantBottom, reqs)
			}
			if !slices.Contains(reqs, "files.test /d1/d2/d3/d4/file5.txt") {
				t.Errorf("a file within the depth limit was not fetched: %q", reqs)
			}
		})
	}
}

func TestBelow(t *testing.T) {
	dir := mustURL(t, "http://a.test/pub/docs/")
	for _, c := range []struct {
		u    string
		want bool
	}{
		{"http://a.test/pub/docs/x.html", true},
		{"http://a.test/pub/docs/sub/", true},
		{"http://a.test/pub/docs/", false},            // itself
		{"http://a.test/pub/docs/?C=N;O=D", false},    // a sort order of itself
		{"http://a.test/pub/", false},                 // the parent
		{"http://a.test/pub/docsmore/x", false},       // a sibling sharing a prefix
		{"http://b.test/pub/docs/x.html", false},      // another host
		{"https://a.test/pub/docs/x.html", false},     // another scheme
		{"http://a.test:8080/pub/docs/x.html", false}, // another port
	} {
		if got := below(mustURL(t, c.u), dir); got != c.want {
			t.Errorf("below(%s, %s) = %v, want %v", c.u, dir, got, c.want)
		}
	}
	if below(mustURL(t, "http://a.test/pub/docs/x"), mustURL(t, "http://a.test/pub/docs")) {
		t.Error("a page that is no directory has no entries")
	}
	for title, want := range map[string]bool{
		"Index of /pub/":              true,
		"Directory listing for /a/b/": true,
		"Index of the manual":         false,
		"index of /pub/":              false,
		"Python 3.11 documentation":   false,
		"":                            false,
	} {
		if got := dirListing(title); got != want {
			t.Errorf("dirListing(%q) = %v", title, got)
		}
	}
}

// TestDepthDefaults: with the default limits a chain of named pages is
// followed to depth 8, while a chain of numbered ones (an archive by
// month) is cut past depth 5.
func TestDepthDefaults(t *testing.T) {
	const levels = 8
	w := &recordingWeb{pages: map[string]string{
		"docs.test /robots.txt": "User-agent: *\nAllow: /\n",
		"docs.test /":           `<html><body><a href="/guide/intro.html">guide</a> <a href="/archive/1/">archive</a></body></html>`,
	}}
	names := []string{"intro", "install", "usage", "config", "api", "errors", "faq", "glossary"}
	for i := range levels {
		next := ""
		if i+1 < levels {
			next = fmt.Sprintf(`<a href="/guide/%s.html">next</a> <a href="/archive/%d/">next month</a>`, names[i+1], i+2)
		}
		w.pages["docs.test /guide/"+names[i]+".html"] = "<html><body>" + names[i] + " " + next + "</body></html>"
		w.pages[fmt.Sprintf("docs.test /archive/%d/", i+1)] = fmt.Sprintf("<html><body>month %d %s</body></html>", i+1, next)
	}
	res := serveRecording(t, w)
	runCrawl(t, Config{DataDir: t.TempDir(), Delay: -1, Workers: 2, MaxDuration: time.Minute}, res, "http://docs.test/")
	reqs := w.requests()
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/guide/glossary.html", true}, // depth 8, named
		{"/archive/5/", true},          // depth 5, numbered
		{"/archive/6/", false},         // depth 6, numbered: cut
	} {
		if got := slices.Contains(reqs, "docs.test "+c.path); got != c.want {
			t.Errorf("%s fetched: %v, want %v; requests %q", c.path, got, c.want, reqs)
		}
	}
}
