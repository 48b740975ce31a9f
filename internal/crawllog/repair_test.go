package crawllog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readLog returns the entries of the log at path and its malformed lines.
func readLog(t *testing.T, path string) (entries []Entry, bad int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScanner(bytes.NewReader(data))
	for {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			return entries, bad
		}
		if errors.Is(err, ErrBadLine) {
			bad++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
}

func TestCutTornTail(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"whole lines", "a\nb\n", "a\nb\n"},
		{"torn", "a\nb\n2026-11-2", "a\nb\n"},
		{"only a fragment", "2026-11-2", ""},
		{"long fragment", "a\n" + strings.Repeat("x", 200<<10), "a\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			n, err := cutTornTail(f)
			f.Close()
			got, _ := os.ReadFile(path)
			if err != nil || string(got) != tc.want || n != int64(len(tc.in)-len(tc.want)) {
				t.Errorf("cut %d bytes, err %v, left %q; want %q", n, err, got, tc.want)
			}
		})
	}
}

// A repair keeps the first line of each acknowledged URL and the trap cuts
// of acknowledged pages, drops the rest, and adds the lines given for
// acknowledged URLs without one.
func TestRepair(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.log")
	line := func(e Entry) string {
		s, err := e.Format(logTime)
		if err != nil {
			t.Fatal(err)
		}
		return s + "\n"
	}
	log := line(Entry{Status: 200, URL: "http://a.test/1"}) +
		line(Entry{Status: StatusBlockedByQuota, URL: "http://a.test/cut", Via: "http://a.test/1", Annotations: []string{AnnotationTrapMaxURLs}}) +
		line(Entry{Status: 200, URL: "http://a.test/2"}) + // not acknowledged
		line(Entry{Status: StatusBlockedByQuota, URL: "http://a.test/cut", Via: "http://a.test/2", Annotations: []string{AnnotationTrapMaxURLs}}) +
		"garbage line\n" +
		line(Entry{Status: 500, URL: "http://a.test/1"}) + // a second line
		"2026-11-2"
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{"http://a.test/1": true, "http://a.test/3": true}
	r, err := OpenRepair(path, func(u string) bool { return acked[u] })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Has("http://a.test/1") || r.Has("http://a.test/2") || r.Has("http://a.test/3") || r.Has("http://a.test/cut") {
		t.Error("Has wrong")
	}
	for u := range acked {
		if !r.Has(u) {
			if err := r.Add(Entry{Status: StatusUnattempted, Size: -1, URL: u}); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := r.Commit()
	if err != nil {
		t.Fatal(err)
	}
	want := RepairStats{Kept: 2, Unacked: 2, Duplicates: 1, Malformed: 1, TornBytes: 9, Added: 1}
	if st != want {
		t.Errorf("stats %v\nwant %v", st, want)
	}
	es, bad := readLog(t, path)
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprint(e.Status, " ", e.URL, " ", e.Owner(), " ", e.Annotations))
	}
	wantLines := []string{
		"200 http://a.test/1 http://a.test/1 []",
		"-5003 http://a.test/cut http://a.test/1 [trap:max-urls]",
		"0 http://a.test/3 http://a.test/3 [log:rebuilt]",
	}
	if bad != 0 || strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("repaired log (%d bad):\n%s\nwant\n%s", bad, strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("repaired log mode %v, %v", fi.Mode(), err)
	}
	if m, _ := filepath.Glob(path + ".repair-*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	// A missing log is an empty one.
	r, err = OpenRepair(filepath.Join(t.TempDir(), "none.log"), func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	r.Add(Entry{Status: 200, URL: "http://b.test/"})
	if st, err := r.Commit(); err != nil || st.Added != 1 {
		t.Errorf("repair of a missing log: %v %v", st, err)
	}
}

// robots.txt fetch lines need no acknowledgement: a repair keeps them
// whether or not the URL that needed them was acknowledged, keeps each
// fetch of the same robots.txt (a second fetch is no duplicate), drops a
// line repeated word for word, and does not take them for the line of a
// frontier URL with the same URL.
func TestRepairKeepsRobotsLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.log")
	line := func(e Entry) string {
		s, err := e.Format(logTime)
		if err != nil {
			t.Fatal(err)
		}
		return s + "\n"
	}
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	robots := func(via string, at time.Time, status int) Entry {
		return Entry{Status: status, Size: 20, URL: "http://a.test/robots.txt", Path: "P", Via: via, MIME: "text/plain",
			FetchStart: at, FetchDuration: 3 * time.Millisecond, Annotations: []string{AnnotationRobotsPrerequisite}}
	}
	log := line(robots("http://a.test/", t0, 503)) + // via never acknowledged
		line(robots("http://a.test/", t0.Add(time.Minute), 200)) + // fetched again: one line per URL, the first
		line(Entry{Status: 200, URL: "http://a.test/"}) +
		line(robots("http://a.test/", t0.Add(time.Minute), 200)) + // the same fetch twice: dropped
		line(Entry{Status: 200, URL: "http://a.test/robots.txt", Path: "L", Via: "http://a.test/"}) // a page linking to it
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{"http://a.test/": true, "http://a.test/robots.txt": true, "http://a.test/x": true}
	r, err := OpenRepair(path, func(u string) bool { return acked[u] })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Has("http://a.test/robots.txt") || !r.Has("http://a.test/") || r.Has("http://a.test/x") {
		t.Error("Has wrong")
	}
	r.Add(Entry{Status: StatusUnattempted, Size: -1, URL: "http://a.test/x"})
	st, err := r.Commit()
	if err != nil {
		t.Fatal(err)
	}
	want := RepairStats{Kept: 3, Prerequisites: 1, Duplicates: 2, Added: 1}
	if st != want {
		t.Errorf("stats %v\nwant %v", st, want)
	}
	es, _ := readLog(t, path)
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprint(e.Status, " ", e.URL, " ", e.Path, " ", e.Prerequisite()))
	}
	wantLines := []string{
		"503 http://a.test/robots.txt P true",
		"200 http://a.test/  false",
		"200 http://a.test/robots.txt L false",
		"0 http://a.test/x  false",
	}
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("repaired log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	if pre := r.Prerequisites(); len(pre) != 1 || pre[0] != PrerequisiteKey("http://a.test/robots.txt") {
		t.Errorf("Prerequisites() = %v, want the key of http://a.test/robots.txt", pre)
	}
	// Without the annotation the same line is a URL's: dropped when the
	// URL was not acknowledged.
	e := robots("http://a.test/", t0, 200)
	e.Annotations = nil
	if err := os.WriteFile(path, []byte(line(e)), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err = OpenRepair(path, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if st, err := r.Commit(); err != nil || st.Unacked != 1 || st.Kept != 0 {
		t.Errorf("unannotated line: %v %v", st, err)
	}
}

// The child process of TestKilledAtRandom: it plays a crawler from URL
// START to URL N: logs each URL's line (and a trap cut for every fifth),
// and in batches flushes the log then records the batch as acknowledged
// (in ACKED, one number per line, fsynced), or, in the rounds where
// ACKFIRST is set, acknowledges first and flushes after, as a careless
// crawler would. It runs until it is killed or done.
func TestKilledAtRandomChild(t *testing.T) {
	dir := os.Getenv("CRAWLLOG_KILL_CHILD")
	if dir == "" {
		return // not the child: nothing to do (the parent test runs it)
	}
	start, _ := strconv.Atoi(os.Getenv("CRAWLLOG_START"))
	n, _ := strconv.Atoi(os.Getenv("CRAWLLOG_N"))
	ackFirst := os.Getenv("CRAWLLOG_ACKFIRST") == "1"
	w, err := Create(filepath.Join(dir, "crawl.log"), Options{BufferBytes: 700})
	if err != nil {
		t.Fatal(err)
	}
	acks, err := os.OpenFile(filepath.Join(dir, "acked"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ack := func(batch []int) {
		var b []byte
		for _, i := range batch {
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, '\n')
		}
		acks.Write(b)
		acks.Sync()
	}
	var batch []int
	var robots []*Entry // robots.txt fetches of the batch, logged after the first flush
	for i := start; i < n; i++ {
		u := fmt.Sprintf("http://k.test/%d", i)
		if i%16 == 0 {
			// Every 16th URL needs its host's robots.txt first: the
			// crawler logs that line once its WARC record is on disk,
			// with the acknowledgements that follow.
			robots = append(robots, &Entry{Status: 200, Size: 20, URL: robotsURL(i), Path: "P", Via: u,
				FetchStart: time.Now(), Annotations: []string{AnnotationRobotsPrerequisite}})
		}
		w.Log(&Entry{Status: 200, Size: int64(i), URL: u, Thread: i % 7})
		if i%5 == 0 {
			w.Log(&Entry{Status: StatusChaff, Size: -1, URL: u + "/a/a/a", Via: u, Annotations: []string{AnnotationTrapRepeatPath}})
		}
		batch = append(batch, i)
		if len(batch) == 8 || i == n-1 {
			logRobots := func() {
				for _, e := range robots {
					w.Log(e)
				}
				if len(robots) > 0 {
					w.Flush()
				}
			}
			if ackFirst {
				ack(batch)
				w.Flush()
				logRobots()
			} else {
				w.Flush()
				logRobots()
				ack(batch)
			}
			batch, robots = batch[:0], robots[:0]
		}
	}
	w.Close()
	os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
}

// A crawl killed with SIGKILL at random points, repaired and resumed each
// time, ends with exactly one line per URL, and no torn or malformed line.
// When the crawler flushes its log before it acknowledges (as Courtesy's
// does), every trap cut keeps its one line too; when it acknowledges first,
// the cuts of a batch killed in between are lost (the frontier cannot
// rebuild them) but never doubled. The seed is printed; CRAWLLOG_SEED
// replays it.
func TestKilledAtRandom(t *testing.T) {
	if os.Getenv("CRAWLLOG_KILL_CHILD") != "" {
		return
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CRAWLLOG_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (CRAWLLOG_SEED=%d replays it)", seed, seed)
	t.Run("flush then ack", func(t *testing.T) { killedAtRandom(t, seed, false) })
	t.Run("sometimes ack then flush", func(t *testing.T) { killedAtRandom(t, seed+1, true) })
}

func killedAtRandom(t *testing.T, seed uint64, careless bool) {
	rng := rand.New(rand.NewPCG(seed, 42))
	dir := t.TempDir()
	const n = 3000
	logPath := filepath.Join(dir, "crawl.log")
	kills, rebuilt := 0, 0
	for round := 0; round < 40; round++ {
		// Resume: the acknowledged URLs are done; repair the log.
		acked := readAcked(t, dir)
		r, err := OpenRepair(logPath, func(u string) bool {
			i, ok := urlIndex(u)
			return ok && acked[i]
		})
		if err != nil {
			t.Fatal(err)
		}
		next := 0
		for next < n && acked[next] {
			next++
		}
		for i := range next {
			if u := fmt.Sprintf("http://k.test/%d", i); !r.Has(u) {
				// The line a crash lost: rebuilt from what the
				// frontier knows.
				if err := r.Add(Entry{Status: 200, Size: int64(i), URL: u}); err != nil {
					t.Fatal(err)
				}
			}
		}
		st, err := r.Commit()
		if err != nil {
			t.Fatal(err)
		}
		rebuilt += st.Added
		if st.Malformed > 0 || st.TornBytes > 0 {
			t.Errorf("round %d: %v", round, st)
		}
		if next == n {
			break
		}
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			t.Fatal("child done but not every URL acknowledged")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledAtRandomChild$")
		ackFirst := "0"
		if careless && rng.IntN(3) == 0 {
			ackFirst = "1"
		}
		cmd.Env = append(os.Environ(), "CRAWLLOG_KILL_CHILD="+dir, "CRAWLLOG_START="+strconv.Itoa(next),
			"CRAWLLOG_N="+strconv.Itoa(n), "CRAWLLOG_ACKFIRST="+ackFirst)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random delay, or let the last rounds finish.
		delay := time.Duration(rng.IntN(40_000)) * time.Microsecond
		if round >= 30 {
			delay = time.Minute
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(delay):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		}
	}
	t.Logf("%d kills, %d lines rebuilt", kills, rebuilt)
	es, bad := readLog(t, logPath)
	if bad != 0 {
		t.Errorf("%d malformed lines", bad)
	}
	count := map[string]int{}
	robots := map[string]int{}  // robots.txt lines per URL
	fetches := map[string]int{} // lines per robots.txt fetch
	for _, e := range es {
		if e.Prerequisite() {
			robots[e.URL]++
			fetches[e.URL+" "+e.FetchStart.String()]++
			continue
		}
		count[e.URL+" "+e.Owner()]++
	}
	for f, c := range fetches {
		if c != 1 {
			t.Errorf("robots.txt fetch %s: %d lines", f, c)
		}
	}
	refetched := 0
	for i := range n {
		u := fmt.Sprintf("http://k.test/%d", i)
		if c := count[u+" "+u]; c != 1 {
			t.Errorf("%s: %d lines", u, c)
		}
		if i%5 == 0 {
			if c := count[u+"/a/a/a "+u]; c > 1 || (c == 0 && !careless) {
				t.Errorf("%s/a/a/a: %d cut lines", u, c)
			}
		}
		if i%16 == 0 {
			// At least the fetch before the acknowledgement of the URL
			// that needed it; more if a kill made the URL start again.
			c := robots[robotsURL(i)]
			if c == 0 && !careless {
				t.Errorf("%s: no robots.txt line", robotsURL(i))
			}
			refetched += max(0, c-1)
		}
	}
	pages := len(es)
	for _, c := range robots {
		pages -= c
	}
	if want := n + n/5; pages > want || (!careless && pages != want) {
		t.Errorf("%d lines of URLs, want %d", pages, want)
	}
	t.Logf("%d robots.txt lines, %d of them of a fetch again after a kill", len(fetches), refetched)
	if kills == 0 {
		t.Error("the child was never killed: the test tested nothing")
	}
}

func readAcked(t *testing.T, dir string) map[int]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "acked"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	acked := map[int]bool{}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if i == len(lines)-1 {
			break // empty, or a number whose newline was never written
		}
		if v, err := strconv.Atoi(l); err == nil {
			acked[v] = true
		}
	}
	return acked
}

// robotsURL is the robots.txt the child fetches before URL i (i%16 == 0).
func robotsURL(i int) string { return fmt.Sprintf("http://r%d.k.test/robots.txt", i) }

func urlIndex(u string) (int, bool) {
	rest, ok := strings.CutPrefix(u, "http://k.test/")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil
}
