package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

func TestIndexOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := rdf.NewQuadFileWriter(rdf.QuadFileOptions{Dir: filepath.Join(dir, "rdf")})
	if err != nil {
		t.Fatal(err)
	}
	g := rdf.NewIRI("http://a.test/")
	if err := w.WriteQuads([]rdf.Quad{{S: g, P: rdf.NewIRI("http://schema.org/name"), O: rdf.NewLiteral("A", "", ""), G: g}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "", "index", "--data", dir, "--once")
	if code != 0 || !strings.Contains(out, "index: 1 files, 1 quads (1 new)") {
		t.Fatalf("code %d, out %q, err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "index", "text")); err != nil {
		t.Fatalf("no text index: %v", err)
	}
	code, out, _ = run(t, "", "index", "--data", dir, "--once")
	if code != 0 || !strings.Contains(out, "index: 0 files, 0 quads") {
		t.Fatalf("second run: code %d, out %q", code, out)
	}
}

func TestIndexSearchUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"index"}, {"index", "--data", "x", "extra"}, {"index", "--data", "x", "--poll", "0s"},
		{"search"}, {"search", "--data", "x", "--poll", "-1s"},
	} {
		if code, _, _ := run(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
