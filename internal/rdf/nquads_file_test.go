package rdf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func pageQuads(page, n int) []Quad {
	g := NewIRI(fmt.Sprintf("http://example.com/p%d", page))
	qs := make([]Quad, n)
	for i := range qs {
		qs[i] = Quad{S: NewBlank(fmt.Sprintf("b%d", i)), P: NewIRI("https://schema.org/name"),
			O: NewLiteral(fmt.Sprintf("name %d of page %d", i, page), "", ""), G: g}
	}
	return qs
}

func TestQuadFileWriterRotatesBySize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewQuadFileWriter(QuadFileOptions{Dir: dir, MaxFileBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var want []Quad
	for p := range 20 {
		qs := pageQuads(p, 5)
		want = append(want, qs...)
		if err := w.WriteQuads(qs); err != nil {
			t.Fatal(err)
		}
		// The file being written is never listed.
		names, err := QuadFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if strings.HasSuffix(n, OpenSuffix) {
				t.Fatalf("open file listed: %s", n)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteQuads(pageQuads(0, 1)); err == nil {
		t.Fatal("write after Close succeeded")
	}
	names, err := QuadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 3 {
		t.Fatalf("%d files, want rotation into several: %v", len(names), names)
	}
	var got []Quad
	for _, n := range names {
		// Every page lies whole in one file.
		pages := map[string]int{}
		if _, err := ReadQuadFile(context.Background(), filepath.Join(dir, n), 0, QuadReaderOptions{},
			func(q Quad, _ int64) error { got = append(got, q); pages[q.G.Value]++; return nil }, nil); err != nil {
			t.Fatal(err)
		}
		for g, c := range pages {
			if c != 5 {
				t.Errorf("%s holds %d quads of %s, want 5", n, c, g)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("read %d quads, wrote %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("quad %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestQuadFileWriterRotatesByAge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, err := NewQuadFileWriter(QuadFileOptions{Dir: dir, MaxFileAge: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteQuads(pageQuads(1, 2)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if names, _ := QuadFiles(dir); len(names) != 0 {
		t.Fatalf("young file finished: %v", names)
	}
	now = now.Add(time.Minute)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	names, _ := QuadFiles(dir)
	if len(names) != 1 || !strings.HasPrefix(names[0], "courtesy-20260102030405000-00001-") {
		t.Fatalf("files %v, want one named after its start", names)
	}
}

func TestReadQuadFileSkipAndBadLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.nq")
	body := "<http://a/s> <http://a/p> \"1\" .\nbad\n<http://a/s> <http://a/p> \"2\" .\n<http://a/s> <http://a/p> \"3\" .\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var vals []string
	var bads int
	n, err := ReadQuadFile(context.Background(), path, 2, QuadReaderOptions{},
		func(q Quad, _ int64) error { vals = append(vals, q.O.Value); return nil },
		func(error) error { bads++; return nil })
	if err != nil || n != 4 || strings.Join(vals, ",") != "2,3" || bads != 0 {
		t.Fatalf("n=%d err=%v vals=%v bads=%d", n, err, vals, bads)
	}
	n, err = ReadQuadFile(context.Background(), path, 0, QuadReaderOptions{},
		func(q Quad, _ int64) error { return nil }, func(error) error { bads++; return nil })
	if err != nil || n != 4 || bads != 1 {
		t.Fatalf("n=%d err=%v bads=%d", n, err, bads)
	}
	stop := errors.New("stop")
	n, err = ReadQuadFile(context.Background(), path, 0, QuadReaderOptions{},
		func(q Quad, _ int64) error { return stop }, nil)
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("n=%d err=%v, want stop at 1", n, err)
	}
}

func TestRecoverQuadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewQuadFileWriter(QuadFileOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteQuads(pageQuads(1, 3)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := QuadFiles(dir)
	full, err := os.ReadFile(filepath.Join(dir, names[0]))
	if err != nil {
		t.Fatal(err)
	}
	// A crash: an .open file cut in its gzip trailer, and an empty one.
	if err := os.Remove(filepath.Join(dir, names[0])); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"+QuadFileExt+OpenSuffix), full[:len(full)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b"+QuadFileExt+OpenSuffix), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RecoverQuadFiles(dir); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "a"+QuadFileExt {
		t.Fatalf("after recovery: %v", ents)
	}
	n, err := ReadQuadFile(context.Background(), filepath.Join(dir, "a"+QuadFileExt), 0, QuadReaderOptions{},
		func(Quad, int64) error { return nil }, nil)
	if err != nil || n != 3 {
		t.Fatalf("recovered %d quads, err %v; want 3", n, err)
	}
}

func TestQuadFileOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, o := range []QuadFileOptions{{}, {Dir: "x", MaxFileBytes: -1}, {Dir: "x", MaxFileAge: -1}, {Dir: "x", Prefix: "a/b"}} {
		if _, err := NewQuadFileWriter(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestQuadFileWriterSyncPoint checks Sync's promise: the open file cut
// back to the size Sync returned recovers to exactly the quads written
// before the Sync, whatever was written after it.
func TestQuadFileWriterSyncPoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewQuadFileWriter(QuadFileOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if name, size, err := w.Sync(); err != nil || name != "" || size != 0 {
		t.Fatalf("Sync with no file: %q %d %v", name, size, err)
	}
	for p := range 3 {
		if err := w.WriteQuads(pageQuads(p, 5)); err != nil {
			t.Fatal(err)
		}
	}
	name, size, err := w.Sync()
	if err != nil || name == "" || size <= 0 {
		t.Fatalf("Sync: %q %d %v", name, size, err)
	}
	// Pages written after the sync point, some of them reaching the disk.
	for p := 3; p < 200; p++ {
		if err := w.WriteQuads(pageQuads(p, 5)); err != nil {
			t.Fatal(err)
		}
	}
	open := filepath.Join(dir, name+OpenSuffix)
	if err := os.Truncate(open, size); err != nil {
		t.Fatal(err)
	}
	if err := RecoverQuadFiles(dir); err != nil {
		t.Fatal(err)
	}
	var got []string
	if _, err := ReadQuadFile(context.Background(), filepath.Join(dir, name), 0, QuadReaderOptions{},
		func(q Quad, _ int64) error { got = append(got, q.String()); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	var want []string
	for p := range 3 {
		for _, q := range pageQuads(p, 5) {
			want = append(want, q.String())
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("recovered %d quads, want the %d written before Sync:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}
