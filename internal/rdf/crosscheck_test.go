package rdf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// npmSkip lists structured pages the npm extractors are not compared on,
// with the reason: they test Courtesy's bounds, which the npm extractors
// do not have.
var npmSkip = map[string]string{
	"http://structured-hostile.test/huge-jsonld.html": "a JSON-LD script over the 1 MiB bound: Courtesy skips it by design",
	"http://structured-hostile.test/deep.html":        "nesting past the depth bound: Courtesy cuts it by design",
}

// npmDiffer lists the page/syntax pairs where Courtesy and the npm
// extractor knowingly differ: the reason (docs/structured-data.md repeats
// it) and the canonical lines only Courtesy, and only npm, produce. The
// rest of the two graphs must be equal.
var npmDiffer = map[string]struct {
	reason            string
	onlyOurs, onlyNPM []string
}{
	"http://structured-hostile.test/invalid-iris.html rdfa": {
		reason: "an @about that is not a valid IRI: Courtesy drops the triples; rdfa-streaming-parser puts them on a fresh blank node",
		onlyNPM: []string{
			`_:c14n0 <http://schema.org/name> "quoted" .`,
			`_:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Thing> .`,
		},
	},
	"http://structured-hostile.test/prefix-tricks.html rdfa": {
		reason: "a safe CURIE with an unmapped prefix ([nope:x]): RDFa Core says to ignore it, as Courtesy does; " +
			"rdfa-streaming-parser takes nope:x as an IRI",
		onlyOurs: []string{`<http://structured-hostile.test/prefix-tricks.html> <http://xmlns.com/foaf/0.1/nick> "unknown safe CURIE: subject from parent" .`},
		onlyNPM:  []string{`<nope:x> <http://xmlns.com/foaf/0.1/nick> "unknown safe CURIE: subject from parent" .`},
	},
}

// lineDiff returns the lines only in a and only in b.
func lineDiff(a, b string) (onlyA, onlyB []string) {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			if l != "" {
				m[l] = true
			}
		}
		return m
	}
	ma, mb := in(a), in(b)
	for l := range ma {
		if !mb[l] {
			onlyA = append(onlyA, l)
		}
	}
	for l := range mb {
		if !ma[l] {
			onlyB = append(onlyB, l)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB
}

type npmTerm struct {
	T    string `json:"t"`
	V    string `json:"v"`
	DT   string `json:"dt"`
	Lang string `json:"lang"`
}

type npmResult struct {
	Quads [][3]npmTerm `json:"quads"`
	Error string       `json:"error"`
}

type npmEntry struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Syntax string `json:"syntax"`
	File   string `json:"file"`
}

var syntaxNames = map[string]Syntax{"rdfa": RDFa, "microdata": Microdata, "jsonld": JSONLD}

// repoRoot is the repository root, from this package's directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// npmEntries writes the structured pages to dir and returns one manifest
// entry per page and syntax it carries.
func npmEntries(t testing.TB, dir string, pages []testweb.StructuredPage) []npmEntry {
	t.Helper()
	var entries []npmEntry
	for i, p := range pages {
		file := filepath.Join(dir, fmt.Sprintf("page%d.html", i))
		if err := os.WriteFile(file, p.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		syntaxes := []string{p.Syntax}
		if p.Syntax == "mixed" {
			syntaxes = []string{"rdfa", "microdata", "jsonld"}
		}
		for _, s := range syntaxes {
			entries = append(entries, npmEntry{ID: p.URL + " " + s, URL: p.URL, Syntax: s, File: file})
		}
	}
	return entries
}

// runNPM runs tools/rdfcheck/extract.mjs with args, returning stdout.
func runNPM(t testing.TB, args ...string) []byte {
	t.Helper()
	root := repoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): run scripts/install-test-deps (needs node and npm)", err)
	}
	dir := filepath.Join(root, "tools", "rdfcheck")
	for _, pkg := range []string{"jsonld", "rdfa-streaming-parser", "microdata-rdf-streaming-parser"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("npm package %s missing in tools/rdfcheck (%v): run scripts/install-test-deps", pkg, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "extract.mjs")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CONTEXT="+filepath.Join(root, "internal", "rdf", "contexts", "schemaorg.jsonld"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rdfcheck: %v\n%s", err, stderr.String())
	}
	return out
}

// npmQuads turns the npm extractors' terms into quads in graph g. Triples
// with IRIs Courtesy would reject (spaces, <>, quotes...) are left out:
// Courtesy drops them by design, and canonical N-Quads cannot hold them.
func npmQuads(id string, res npmResult) []Quad {
	var out []Quad
	conv := func(x npmTerm) (Term, bool) {
		switch x.T {
		case "iri":
			return NewIRI(x.V), validIRI(x.V)
		case "blank":
			return NewBlank("n" + x.V), true
		case "literal":
			dt := x.DT
			return NewLiteral(x.V, dt, x.Lang), dt == "" || validIRI(dt)
		}
		return Term{}, false
	}
	for _, q := range res.Quads {
		s, ok1 := conv(q[0])
		p, ok2 := conv(q[1])
		o, ok3 := conv(q[2])
		if ok1 && ok2 && ok3 && p.Kind == IRI && (o.Lang == "" || validLang(o.Lang)) {
			out = append(out, Quad{S: s, P: p, O: o})
		}
	}
	return out
}

// TestCrossCheckNPM extracts every page of testweb's structured sites
// with Courtesy and with the independent npm extractors, syntax by
// syntax, and requires the same graph.
func TestCrossCheckNPM(t *testing.T) {
	pages := testweb.StructuredPages()
	entries := npmEntries(t, t.TempDir(), pages)
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	b, _ := json.Marshal(entries)
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var results map[string]npmResult
	if err := json.Unmarshal(runNPM(t, manifest), &results); err != nil {
		t.Fatalf("rdfcheck output: %v", err)
	}
	bodies := map[string][]byte{}
	for _, p := range pages {
		bodies[p.URL] = p.Body
	}
	compared := 0
	for _, e := range entries {
		t.Run(strings.TrimPrefix(e.ID, "http://"), func(t *testing.T) {
			if reason, ok := npmSkip[e.URL]; ok {
				t.Logf("not compared: %s", reason)
				return
			}
			res, ok := results[e.ID]
			if !ok || res.Error != "" {
				t.Fatalf("npm extractor: missing result or error %q", res.Error)
			}
			ours, _, err := Extract(context.Background(), e.URL, bodies[e.URL], Options{Syntaxes: syntaxNames[e.Syntax]})
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonical(ours)
			if err != nil {
				t.Fatal(err)
			}
			want, err := canonical(npmQuads(e.ID, res))
			if err != nil {
				t.Fatal(err)
			}
			onlyOurs, onlyNPM := lineDiff(got, want)
			d := npmDiffer[e.ID]
			if !slices.Equal(onlyOurs, d.onlyOurs) || !slices.Equal(onlyNPM, d.onlyNPM) {
				t.Errorf("Courtesy and the npm extractor differ (known difference: %q)\nonly Courtesy:\n%s\nonly npm:\n%s\nCourtesy:\n%s\nnpm:\n%s",
					d.reason, strings.Join(onlyOurs, "\n"), strings.Join(onlyNPM, "\n"), got, want)
			}
			if got == "" {
				t.Errorf("no quads at all")
			}
			compared++
		})
	}
	t.Logf("%d page/syntax pairs compared with the npm extractors", compared)
}
