package rdf

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceDir holds the W3C RDFa test suite's HTML5 cases, beside the
// repository.
const conformanceDir = "../../../shared/conformance/rdfa"

type rdfaCase struct {
	Num             string `json:"num"`
	Base            string `json:"base"`
	Description     string `json:"description"`
	Classification  string `json:"classification"`
	ExpectedResults bool   `json:"expected_results"`
	Quads           int    `json:"quads"`
}

// rdfaExceptions lists the cases this processor does not pass, with the
// reason; docs/structured-data.md repeats them. A listed case that starts
// passing fails the test, so the list stays true.
var rdfaExceptions = map[string]string{}

// TestRDFaConformance runs every case of the W3C RDFa 1.1 test suite
// (HTML5 host language): the canonical form of our graph must equal the
// expected one; for the negative cases the graph must be empty.
func TestRDFaConformance(t *testing.T) {
	cases := loadCases[rdfaCase](t, conformanceDir, 100)
	passed := 0
	for _, c := range cases {
		t.Run(c.Num, func(t *testing.T) {
			got := extractCanonical(t, filepath.Join(conformanceDir, "cases", c.Num+".html"), c.Base, RDFa)
			want := ""
			if c.ExpectedResults {
				b, err := os.ReadFile(filepath.Join(conformanceDir, "cases", c.Num+".nq"))
				if err != nil {
					t.Fatal(err)
				}
				want = strings.TrimSpace(string(b))
			}
			ok := got == want
			reason, excepted := rdfaExceptions[c.Num]
			switch {
			case ok && excepted:
				t.Errorf("case %s passes but is listed as an exception (%s): remove it", c.Num, reason)
			case !ok && !excepted:
				t.Errorf("case %s (%s, %s):\ngot:\n%s\nwant:\n%s", c.Num, c.Classification, c.Description, got, want)
			case ok:
				passed++
			}
		})
	}
	t.Logf("RDFa conformance: %d of %d cases pass, %d listed exceptions", passed, len(cases), len(rdfaExceptions))
}

// loadCases reads a conformance suite's cases.json in dir, and fails the
// test when it holds fewer than min cases.
func loadCases[T any](t *testing.T, dir string, min int) []T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatalf("conformance cases: %v", err)
	}
	var cases []T
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	if len(cases) < min {
		t.Fatalf("only %d conformance cases", len(cases))
	}
	return cases
}

// extractCanonical extracts syntax from the page in file at base and
// returns the graph's canonical N-Quads.
func extractCanonical(t *testing.T, file, base string, syntax Syntax) string {
	t.Helper()
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	quads, _, err := Extract(context.Background(), base, page, Options{Syntaxes: syntax})
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	got, err := canonical(quads)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
