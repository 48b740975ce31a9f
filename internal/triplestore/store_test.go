package triplestore

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

var (
	schemaName  = rdf.NewIRI("https://schema.org/name")
	schemaKnows = rdf.NewIRI("https://schema.org/knows")
	typ         = rdf.NewIRI(rdf.RDFType)
	person      = rdf.NewIRI("https://schema.org/Person")
	product     = rdf.NewIRI("https://schema.org/Product")
)

func openTest(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.TempDir(), Options{CacheBytes: 16 << 20, MemTableBytes: 4 << 20, TermCache: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func iri(s string) rdf.Term { return rdf.NewIRI("http://example.com/" + s) }

func testQuads() []rdf.Quad {
	g1, g2 := iri("page1"), iri("page2")
	return []rdf.Quad{
		{S: iri("alice"), P: typ, O: person, G: g1},
		{S: iri("alice"), P: schemaName, O: rdf.NewLiteral("Alice", "", "en"), G: g1},
		{S: iri("alice"), P: schemaKnows, O: iri("bob"), G: g1},
		{S: iri("bob"), P: typ, O: person, G: g2},
		{S: iri("bob"), P: schemaName, O: rdf.NewLiteral("Bob", "", ""), G: g2},
		{S: rdf.NewBlank("p1"), P: typ, O: product, G: g2},
		{S: rdf.NewBlank("p1"), P: schemaName, O: rdf.NewLiteral("Bob", "", ""), G: g2},
		{S: iri("alice"), P: typ, O: person}, // default graph
	}
}

func load(t *testing.T, st *Store, qs []rdf.Quad) int {
	t.Helper()
	b := st.NewBatch()
	n := 0
	for _, q := range qs {
		added, err := b.Add(q)
		if err != nil {
			t.Fatal(err)
		}
		if added {
			n++
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return n
}

func matchAll(t *testing.T, st *Store, p Pattern, limit int) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 100 {
		page, err := st.Match(p, cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range page.Quads {
			out = append(out, q.String())
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	slices.Sort(out)
	return out
}

func TestMatchPatterns(t *testing.T) {
	t.Parallel()
	st := openTest(t)
	qs := testQuads()
	if n := load(t, st, append(qs, qs[0], qs[1])); n != len(qs) {
		t.Fatalf("added %d, want %d (duplicates in a batch ignored)", n, len(qs))
	}
	if n := load(t, st, qs); n != 0 {
		t.Fatalf("re-adding stored quads added %d", n)
	}
	want := func(pred func(q rdf.Quad) bool) []string {
		var out []string
		for _, q := range qs {
			if pred(q) {
				out = append(out, q.String())
			}
		}
		slices.Sort(out)
		return out
	}
	alice, bob := iri("alice"), iri("bob")
	lit := rdf.NewLiteral("Bob", "", "")
	for _, tc := range []struct {
		name string
		p    Pattern
		f    func(q rdf.Quad) bool
	}{
		{"all", Pattern{}, func(rdf.Quad) bool { return true }},
		{"s", Pattern{S: alice}, func(q rdf.Quad) bool { return q.S == alice }},
		{"p", Pattern{P: typ}, func(q rdf.Quad) bool { return q.P == typ }},
		{"o", Pattern{O: lit}, func(q rdf.Quad) bool { return q.O == lit }},
		{"sp", Pattern{S: alice, P: typ}, func(q rdf.Quad) bool { return q.S == alice && q.P == typ }},
		{"po", Pattern{P: typ, O: person}, func(q rdf.Quad) bool { return q.P == typ && q.O == person }},
		{"so", Pattern{S: alice, O: bob}, func(q rdf.Quad) bool { return q.S == alice && q.O == bob }},
		{"spo", Pattern{S: bob, P: schemaName, O: lit}, func(q rdf.Quad) bool { return q.S == bob && q.P == schemaName && q.O == lit }},
		{"g", Pattern{G: iri("page2")}, func(q rdf.Quad) bool { return q.G == iri("page2") }},
		{"pg", Pattern{P: typ, G: iri("page1")}, func(q rdf.Quad) bool { return q.P == typ && q.G == iri("page1") }},
		{"blank s", Pattern{S: rdf.NewBlank("p1")}, func(q rdf.Quad) bool { return q.S == rdf.NewBlank("p1") }},
		{"unknown", Pattern{S: iri("nobody")}, func(rdf.Quad) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := want(tc.f)
			for _, limit := range []int{1, 2, 100} {
				got := matchAll(t, st, tc.p, limit)
				if !slices.Equal(got, w) {
					t.Fatalf("limit %d:\n got %q\nwant %q", limit, got, w)
				}
			}
		})
	}
}

func TestCountsAndReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	load(t, st, testQuads())
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Terms interned before the reopen keep their ids.
	load(t, st, []rdf.Quad{{S: iri("carol"), P: typ, O: person, G: iri("page3")}})
	got := map[string]int64{}
	types, err := st.CountsByType(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range types {
		got["type "+c.Term.Value] = c.N
	}
	preds, err := st.CountsByPredicate(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range preds {
		got["pred "+c.Term.Value] = c.N
	}
	want := map[string]int64{
		"type https://schema.org/Person": 4, "type https://schema.org/Product": 1,
		"pred " + rdf.RDFType: 5, "pred https://schema.org/name": 3, "pred https://schema.org/knows": 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	quads, terms, err := st.Stats()
	if err != nil || quads != 9 || terms < 10 {
		t.Fatalf("Stats = %d quads, %d terms, %v", quads, terms, err)
	}
	if got := matchAll(t, st, Pattern{S: iri("carol")}, 10); len(got) != 1 {
		t.Fatalf("carol: %v", got)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	st := openTest(t)
	load(t, st, testQuads())
	b := st.NewBatch()
	for _, q := range []rdf.Quad{
		{S: rdf.NewLiteral("x", "", ""), P: typ, O: person},
		{S: iri("a"), P: rdf.NewBlank("p"), O: person},
		{S: iri("a"), P: typ},
		{S: iri("a"), P: typ, O: person, G: rdf.NewLiteral("g", "", "")},
	} {
		if _, err := b.Add(q); err == nil {
			t.Errorf("Add(%v) accepted", q)
		}
	}
	if err := b.Set([]byte("t/x"), nil); err == nil {
		t.Error("Set in the store's namespace accepted")
	}
	if err := b.Delete([]byte("t/S")); err == nil {
		t.Error("Delete in the store's namespace accepted")
	}
	for _, limit := range []int{-1, MaxPageSize + 1} {
		if _, err := st.Match(Pattern{}, "", limit); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
	page, err := st.Match(Pattern{P: typ}, "", 1)
	if err != nil || page.Next == "" {
		t.Fatalf("Match: %v %v", page, err)
	}
	for _, c := range []string{"!!!", "dC9T", page.Next} {
		if _, err := st.Match(Pattern{S: iri("alice")}, c, 1); !errors.Is(err, ErrCursor) {
			t.Errorf("cursor %q for another pattern: %v", c, err)
		}
	}
}

func TestCache(t *testing.T) {
	t.Parallel()
	c := newCache[int, int](4)
	for i := range 10 {
		c.put(i, i*i)
	}
	if _, ok := c.get(0); ok {
		t.Error("old entry kept past the bound")
	}
	if v, ok := c.get(9); !ok || v != 81 {
		t.Errorf("get(9) = %d, %v", v, ok)
	}
	if n := len(c.mu.cur) + len(c.mu.old); n > 4 {
		t.Errorf("%d entries, bound 4", n)
	}
}
