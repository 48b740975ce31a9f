package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

func TestPageRDFFields(t *testing.T) {
	tests := []struct {
		name string
		p    *pageRDF
		want string
	}{
		{"not extracted", nil, ""},
		{"nothing found", &pageRDF{}, "rdf-quads=0 rdf-quads-rdfa=0 rdf-quads-microdata=0 rdf-quads-jsonld=0"},
		{"counts", &pageRDF{quads: make([]rdf.Quad, 5), stats: rdf.Stats{RDFa: 1, JSONLD: 4, JSONLDScripts: 3, JSONLDMalformed: 1, Invalid: 2}},
			"rdf-quads=5 rdf-quads-rdfa=1 rdf-quads-microdata=0 rdf-quads-jsonld=4 rdf-jsonld-scripts=3 rdf-jsonld-malformed=1 rdf-invalid=2"},
		{"error", &pageRDF{err: errors.New("rdf: page too large\r\nX: y")},
			"rdf-quads=0 rdf-quads-rdfa=0 rdf-quads-microdata=0 rdf-quads-jsonld=0 rdf-error=rdf: page too large  X: y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, f := range tc.p.fields() {
				parts = append(parts, f.Name+"="+f.Value)
			}
			if got := strings.Join(parts, " "); got != tc.want {
				t.Errorf("fields %q, want %q", got, tc.want)
			}
		})
	}
}

// testQuads are n quads of one page.
func testQuads(page string, n int) [][]rdf.Quad {
	g := rdf.NewIRI(page)
	qs := make([]rdf.Quad, n)
	for i := range qs {
		qs[i] = rdf.Quad{S: g, P: rdf.NewIRI("http://schema.org/name"), O: rdf.NewLiteral(fmt.Sprintf("%s %d", page, i), "", ""), G: g}
	}
	return [][]rdf.Quad{qs}
}

// TestStructuredCutToMark simulates a crash after committed and
// uncommitted groups: the restart keeps exactly the committed pages'
// quads, and an open file started after the last mark is dropped.
func TestStructuredCutToMark(t *testing.T) {
	for _, rotate := range []bool{false, true} {
		t.Run(fmt.Sprintf("rotate=%v", rotate), func(t *testing.T) {
			dir := t.TempDir()
			db, err := kv.Open(filepath.Join(dir, "state"), kv.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			c := &Crawler{cfg: Config{DataDir: dir, StructuredData: true}, db: db, log: slog.New(slog.DiscardHandler), now: time.Now}
			if err := c.openStructured(); err != nil {
				t.Fatal(err)
			}
			s := c.sd
			var want []string
			for p := range 4 { // committed: written, synced, marked
				page := fmt.Sprintf("http://a.test/%d", p)
				if err := s.writeAndMark(testQuads(page, 50)); err != nil {
					t.Fatal(err)
				}
				for _, q := range testQuads(page, 50)[0] {
					want = append(want, q.String())
				}
			}
			if rotate {
				// The committed file is finished; the crash hits a file
				// with no committed page.
				if err := s.w.Rotate(); err != nil {
					t.Fatal(err)
				}
			}
			for p := 4; p < 300; p++ { // written, never marked: the crash
				for _, q := range testQuads(fmt.Sprintf("http://a.test/%d", p), 50) {
					if err := s.w.WriteQuads(q); err != nil {
						t.Fatal(err)
					}
				}
			}
			close(s.stop)
			s.wg.Wait()
			// Restart.
			c2 := &Crawler{cfg: c.cfg, db: db, log: c.log, now: time.Now}
			if err := c2.openStructured(); err != nil {
				t.Fatal(err)
			}
			if err := c2.closeStructured(); err != nil {
				t.Fatal(err)
			}
			got := readQuads(t, filepath.Join(dir, rdfDirName))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("after the restart %d quads, want the %d committed", len(got), len(want))
			}
		})
	}
}

func readQuads(t *testing.T, dir string) []string {
	t.Helper()
	if open, _ := filepath.Glob(filepath.Join(dir, "*"+rdf.OpenSuffix)); len(open) > 0 {
		t.Errorf("quad files left open: %v", open)
	}
	names, err := rdf.QuadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, n := range names {
		if _, err := rdf.ReadQuadFile(context.Background(), filepath.Join(dir, n), 0, rdf.QuadReaderOptions{},
			func(q rdf.Quad, _ int64) error { lines = append(lines, q.String()); return nil },
			func(err error) error { return err }); err != nil {
			t.Fatal(err)
		}
	}
	return lines
}

// TestStructuredResumeAfterSIGKILL kills a real `courtesy crawl
// --structured-data` at random moments and resumes it: in the end every
// page fetched has its quads in the files (none lost), and a page's quads
// appear more than once only as whole copies, never more often than the
// page was fetched (a page fetched again after a kill).
func TestStructuredResumeAfterSIGKILL(t *testing.T) {
	web, mem, r := startWeb(t, testweb.Config{Seed: 3, Sites: 2, PagesPerSite: 20, Plain: true, NoExternal: true, Structured: true})
	addr := r.Rules()[0].Addr
	bin := buildCourtesy(t)
	dir := t.TempDir()
	args := []string{"crawl", "--data", dir, "--structured-data", "--delay", "250ms", "--workers", "8", "--log-format", "text",
		"--resolve", "*.test=" + addr, "--max-duration", "60s"}
	args = append(args, seedsOf(web)...)
	seed := *resumeSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("kill times drawn with seed %d (-resume-seed %d repeats them)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range 3 {
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wait := time.Duration(400+rng.IntN(1200)) * time.Millisecond
		time.Sleep(wait)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		t.Logf("run %d killed after %v; %d requests so far", i+1, wait, len(mem.Entries()))
	}
	before := len(mem.Entries())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "finished") {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	if len(mem.Entries()) == before {
		t.Fatalf("the crawl was over before the last kill: the test proves nothing")
	}

	fetches := map[string]int{}
	for _, e := range mem.Entries() {
		if e.Status == 200 {
			fetches["http://"+e.Host+e.Target]++
		}
	}
	count := map[string]int{}
	for _, l := range readQuads(t, filepath.Join(dir, rdfDirName)) {
		count[l]++
	}
	// Every page in the WARC files: its quads (rdf.Extract over the
	// archived body) are in the files k times, 1 <= k <= its fetches.
	pages, again := 0, 0
	seen := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	for _, p := range files {
		readWARC(t, p, func(rec *warc.Record) {
			u := rec.Header.Get("WARC-Target-URI")
			if rec.Header.Type() != warc.TypeResponse || !strings.HasPrefix(u, "http://structured-") {
				return
			}
			_, body, ok := strings.Cut(string(rec.Block), "\r\n\r\n")
			if !ok {
				t.Fatalf("%s: no HTTP header end", u)
			}
			quads, _, err := rdf.Extract(context.Background(), u, []byte(body), rdf.Options{})
			if err != nil || len(quads) == 0 {
				return
			}
			pages++
			seen[u] = true
			mult := map[string]int{} // a page may state a quad twice
			for _, q := range quads {
				mult[q.String()]++
			}
			k := count[quads[0].String()] / mult[quads[0].String()]
			for q, m := range mult {
				if count[q] != k*m {
					t.Errorf("%s: quad %s appears %d times, want %d × %d: not whole copies", u, q, count[q], k, m)
					return
				}
			}
			if k < 1 || k > fetches[u] {
				t.Errorf("%s: its quads appear %d times, fetched %d times", u, k, fetches[u])
			}
			if k > 1 {
				again++
			}
		})
	}
	for _, p := range testweb.StructuredPages() {
		if !seen[p.URL] {
			t.Errorf("%s: not archived with its quads", p.URL)
		}
	}
	t.Logf("%d pages with quads, %d of them twice (fetched again after a kill)", pages, again)
}

func TestParseMark(t *testing.T) {
	tests := []struct {
		in   string
		name string
		size int64
	}{
		{"a.nq.gz\x00123", "a.nq.gz", 123},
		{"\x000", "", 0},
		{"a.nq.gz", "", 0},
		{"a.nq.gz\x00-1", "", 0},
		{"a.nq.gz\x00x", "", 0},
		{"../a\x005", "", 0},
		{"a\x00b\x005", "", 0},
	}
	for _, tc := range tests {
		if n, sz := parseMark([]byte(tc.in)); n != tc.name || sz != tc.size {
			t.Errorf("parseMark(%q) = %q, %d; want %q, %d", tc.in, n, sz, tc.name, tc.size)
		}
	}
}

// FuzzParseMark checks that any stored value parses without a panic to
// a name without a path, and that a parsed mark round-trips.
func FuzzParseMark(f *testing.F) {
	f.Add([]byte("courtesy-20261125031700000-00001-42.nq.gz\x0012345"))
	f.Add([]byte("\x00"))
	f.Add([]byte("x\x00-9"))
	f.Fuzz(func(t *testing.T, v []byte) {
		n, sz := parseMark(v)
		if sz < 0 || strings.ContainsAny(n, "/\\\x00") {
			t.Fatalf("parseMark(%q) = %q, %d", v, n, sz)
		}
		if n != "" {
			if n2, sz2 := parseMark(formatMark(n, sz)); n2 != n || sz2 != sz {
				t.Fatalf("round trip of %q, %d: %q, %d", n, sz, n2, sz2)
			}
		}
	})
}
