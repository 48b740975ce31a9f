package crawl

import (
	"context"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// buildCourtesy builds the courtesy command into a temporary directory.
func buildCourtesy(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(t.TempDir(), "courtesy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/courtesy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// resumeSeed fixes the kill times of TestResumeAfterSIGKILL; 0 draws a
// new seed (printed by the test).
var resumeSeed = flag.Uint64("resume-seed", 0, "seed of TestResumeAfterSIGKILL's kill times (0: new, printed)")

// TestResumeAfterSIGKILL kills a real `courtesy crawl` process with SIGKILL
// at random moments, runs the same command again each time, and checks that
// the crawl completes, no URL is lost, no completed URL is fetched again
// (only URLs in flight at a kill may be), every WARC file reads cleanly,
// and crawl.log holds exactly one whole line per acknowledged URL.
func TestResumeAfterSIGKILL(t *testing.T) {
	web, mem, r := startWeb(t, testweb.Config{Seed: 3, Sites: 8, PagesPerSite: 80, Plain: true, NoExternal: true})
	addr := r.Rules()[0].Addr
	bin := buildCourtesy(t)
	dir := t.TempDir()
	const workers = 8
	args := []string{"crawl", "--data", dir, "--delay", "150ms", "--workers", "8", "--log-format", "text",
		"--resolve", "*.test=" + addr, "--max-duration", "60s"}
	args = append(args, seedsOf(web)...)
	seed := *resumeSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("kill times drawn with seed %d (go test -run TestResumeAfterSIGKILL -resume-seed %d repeats them)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	var kills []time.Time
	for i := range 3 {
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wait := time.Duration(700+rng.IntN(2000)) * time.Millisecond
		time.Sleep(wait)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		kills = append(kills, time.Now())
		cmd.Wait()
		// Killed: the log may hold lines of URLs not yet acknowledged
		// (the next start drops them), but every acknowledged URL has its
		// line and no line is torn.
		checkLogAgainstFrontier(t, dir, false)
		t.Logf("run %d killed after %v; %d requests so far", i+1, wait, len(mem.Entries()))
	}
	before := len(mem.Entries())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "finished") {
		t.Fatalf("final run did not finish the crawl:\n%s", out)
	}
	if len(mem.Entries()) == before {
		t.Fatalf("the crawl was over before the last kill: the test proves nothing")
	}

	// Every page of every site was fetched (nothing lost), and a page was
	// fetched twice only if its first fetch was in flight at a kill.
	fetches := map[string][]testweb.Entry{}
	for _, e := range mem.Entries() {
		if strings.HasSuffix(e.Target, "/robots.txt") {
			continue
		}
		k := e.Host + e.Target
		fetches[k] = append(fetches[k], e)
	}
	want := 0
	for _, s := range web.Sites() {
		want += s.Pages
	}
	pages := 0
	for k, es := range fetches {
		if es[0].Status == 200 && !strings.Contains(k, "sitemap") {
			pages++
		}
		for _, later := range es[1:] {
			_ = later
			first := es[0]
			inFlight := false
			for _, kt := range kills {
				// The first fetch started before the kill and its
				// acknowledgement (after WARC fsync and frontier commit)
				// cannot have been more than a few seconds later.
				// The server may see a request the killed process had
				// already sent a moment after the kill: 100 ms of slack.
				if first.Start.Before(kt.Add(100*time.Millisecond)) && kt.Sub(first.Start) < 5*time.Second {
					inFlight = true
				}
			}
			if !inFlight {
				t.Errorf("%s fetched %d times, first at %v, not in flight at any kill %v", k, len(es), first.Start, kills)
			}
		}
	}
	if pages < want {
		t.Errorf("%d distinct pages fetched, want all %d", pages, want)
	}
	dups := 0
	for _, es := range fetches {
		dups += len(es) - 1
	}
	if dups > len(kills)*workers {
		t.Errorf("%d repeated fetches, more than %d kills × %d workers", dups, len(kills), workers)
	}
	t.Logf("%d requests, %d distinct pages of %d, %d repeated fetches", len(mem.Entries()), pages, want, dups)

	// Every WARC file (none left open) reads cleanly with verified digests,
	// and holds a response for every page.
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*"))
	responses := map[string]bool{}
	for _, p := range files {
		if strings.HasSuffix(p, ".open") {
			t.Errorf("WARC file left open: %s", p)
		}
		if !strings.HasSuffix(p, ".warc.gz") {
			continue
		}
		readWARC(t, p, func(rec *warc.Record) {
			if rec.Header.Get("WARC-Type") == "response" || rec.Header.Get("WARC-Type") == "revisit" {
				responses[rec.Header.Get("WARC-Target-URI")] = true
			}
		})
	}
	for k, es := range fetches {
		if es[0].Status == 200 && !responses["http://"+k] {
			t.Errorf("%s fetched but not in any WARC file", k)
		}
	}
	// A robots.txt line is logged only once its record is on disk: every
	// one that survived the kills has its record. (A kill may take a
	// robots.txt's record and line with it while the robots cache keeps
	// the file, so that no line comes later: nothing acknowledges them.)
	nRobots := 0
	for _, e := range robotsLines(t, dir) {
		nRobots++
		if !responses[e.URL] {
			t.Errorf("crawl.log has a robots.txt line for %s, the WARC files no record", e.URL)
		}
	}
	if nRobots == 0 {
		t.Error("no robots.txt line in crawl.log")
	}
	checkLogAgainstFrontier(t, dir, true)
}

// checkLogAgainstFrontier checks that the crawl.log of the crawl in dir
// holds whole lines only, exactly one per URL the frontier acknowledged,
// each trap cut once per linking page and each robots.txt fetch once;
// exact also wants no line for a URL it did not acknowledge (after a
// repair; a killed run may leave some).
func checkLogAgainstFrontier(t *testing.T, dir string, exact bool) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("crawl.log ends in a torn line: %q", raw[max(0, len(raw)-80):])
	}
	lines := map[string]int{}
	cuts := map[string]int{}
	robots := map[string]int{}
	for i, ln := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		e, err := crawllog.Parse(ln)
		if err != nil {
			t.Errorf("crawl.log line %d torn or malformed: %v: %q", i+1, err, ln)
			continue
		}
		if e.Prerequisite() {
			// A robots.txt fetch: no frontier URL, logged once per fetch.
			robots[e.URL+" at "+e.FetchStart.String()]++
			continue
		}
		if o := e.Owner(); o != e.URL {
			cuts[e.URL+" via "+o]++
			continue
		}
		lines[e.URL]++
	}
	db, err := kv.Open(filepath.Join(dir, "state"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fr, err := frontier.Open(db, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	completed := map[string]bool{}
	if err := fr.ListURLs(context.Background(), frontier.ListParams{}, func(e frontier.URLEntry) error {
		if e.Completed {
			completed[e.URL] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(completed) == 0 && exact {
		t.Fatal("the frontier acknowledged no URL: the test proves nothing")
	}
	for u := range completed {
		if n := lines[u]; n != 1 {
			t.Errorf("acknowledged %s has %d crawl.log lines, want 1", u, n)
		}
	}
	for u, n := range lines {
		if exact && !completed[u] {
			t.Errorf("crawl.log has %d lines for %s, which the frontier did not acknowledge", n, u)
		}
	}
	for k, n := range cuts {
		if n != 1 {
			t.Errorf("trap cut %s logged %d times", k, n)
		}
	}
	for k, n := range robots {
		if n != 1 {
			t.Errorf("robots.txt fetch %s logged %d times", k, n)
		}
	}
	t.Logf("crawl.log: %d lines for %d acknowledged URLs, %d trap cuts, %d robots.txt fetches", len(lines), len(completed), len(cuts), len(robots))
}
