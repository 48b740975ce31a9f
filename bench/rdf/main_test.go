package main

import (
	"strings"
	"testing"
)

func TestCorpusAndTable(t *testing.T) {
	pages, err := corpus(t.TempDir(), 5000)
	if err != nil {
		t.Fatal(err)
	}
	for _, syn := range []string{"rdfa", "microdata", "jsonld"} {
		ps := pages[syn]
		if len(ps) < 4 || len(ps)%2 != 0 {
			t.Fatalf("%s: %d pages, want pairs of plain and padded", syn, len(ps))
		}
		if len(ps[1].body) < len(ps[0].body)+5000 {
			t.Errorf("%s: padded copy not padded", syn)
		}
	}
	out := table([]Row{{Syntax: "rdfa", Pages: 2, Bytes: 10, CourtesyMBs: 50, NPMMBs: 5, Ratio: 10}})
	if !strings.Contains(out, "10.0x") {
		t.Errorf("table: %s", out)
	}
}
