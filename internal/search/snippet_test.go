package search

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/index"
)

func TestSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é filler ", 60)
	for _, tc := range []struct {
		name  string
		pg    index.Page
		words []string
		want  string
	}{
		{"mark", index.Page{Text: "Acme sells anvils & <rockets>."}, []string{"ANVILS"}, "Acme sells <mark>anvils</mark> &amp; &lt;rockets&gt;."},
		{"two words", index.Page{Text: "red apple, green apple"}, []string{"apple", "red"}, "<mark>red</mark> <mark>apple</mark>, green <mark>apple</mark>"},
		{"from literals", index.Page{Text: "nothing here", Literals: []index.Literal{{V: "Ada <b>Lovelace</b>"}}}, []string{"lovelace"}, "Ada &lt;b&gt;<mark>Lovelace</mark>&lt;/b&gt;"},
		{"no match", index.Page{Desc: "A shop", Text: "of <tools>"}, []string{"zzz"}, "A shop of &lt;tools&gt;"},
		{"window", index.Page{Text: long + "target" + long}, []string{"target"}, "<mark>target</mark>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := snippet(&tc.pg, tc.words)
			if tc.name == "window" {
				if !strings.Contains(got, tc.want) || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || len(got) > snippetBytes+40 {
					t.Fatalf("got %q", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFilterChoicesCache(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv.now = func() time.Time { return now }
	labels := func() []string {
		t.Helper()
		types, _, err := srv.filterChoices(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range types {
			out = append(out, f.Label)
		}
		slices.Sort(out)
		return out
	}
	if got := labels(); !slices.Contains(got, "schema:Person") || slices.Contains(got, "schema:Event") {
		t.Fatalf("types %v", got)
	}
	if err := srv.ix.Text().Index("http://events.test/", map[string]any{index.FieldType: []string{"http://schema.org/Event"}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(filtersTTL - time.Second)
	if got := labels(); slices.Contains(got, "schema:Event") {
		t.Fatalf("recomputed within the TTL: %v", got)
	}
	now = now.Add(time.Second)
	if got := labels(); !slices.Contains(got, "schema:Event") {
		t.Fatalf("not recomputed after the TTL: %v", got)
	}
}
