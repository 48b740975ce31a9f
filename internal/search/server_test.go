package search

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func get(t *testing.T, u string, accept string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func urls(r *Results) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.URL)
	}
	slices.Sort(out)
	return out
}

func TestSearch(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	for _, tc := range []struct {
		name string
		q    Query
		want []string
	}{
		{"product by name", Query{Text: "rocket skates"}, []string{"http://shop.test/", "http://shop.test/rocket-skates"}},
		{"literal only", Query{Text: "mathematician"}, []string{"http://people.test/ada"}},
		{"page text only", Query{Text: "compiler"}, []string{"http://people.test/grace"}},
		{"word and type", Query{Text: "anvil", Type: "schema:Product"}, []string{"http://shop.test/anvil"}},
		{"people", Query{Type: "schema:Person"}, []string{"http://people.test/ada", "http://people.test/grace"}},
		{"https type IRI", Query{Type: "https://schema.org/Person"}, []string{"http://people.test/ada", "http://people.test/grace"}},
		{"type narrows", Query{Text: "ada", Type: "schema:Person"}, []string{"http://people.test/ada"}},
		{"vocab", Query{Vocab: "schema"}, []string{"http://people.test/ada", "http://people.test/grace", "http://shop.test/anvil", "http://shop.test/rocket-skates"}},
		{"vocab IRI", Query{Text: "acme", Vocab: "http://schema.org/"}, []string{"http://shop.test/anvil", "http://shop.test/rocket-skates"}},
		{"unknown vocab", Query{Vocab: "foaf"}, nil},
		{"nothing", Query{Text: "zyzzyva"}, nil},
		{"punctuation only", Query{Text: "+-&|!(){}[]^\"~*?:\\/"}, []string{"http://people.test/ada", "http://people.test/grace", "http://shop.test/", "http://shop.test/anvil", "http://shop.test/rocket-skates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := srv.Search(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := urls(res); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	res, err := srv.Search(context.Background(), Query{Text: "anvil", Type: "schema:Product"})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hits[0]
	if h.Title != "Acme Anvil – Acme shop" || !strings.Contains(h.Snippet, "<mark>") || len(h.Matching) != 1 ||
		h.Matching[0].O != "Acme Anvil" || h.Matching[0].P != "https://schema.org/name" || !slices.Contains(h.Types, "schema:Product") {
		t.Fatalf("hit %+v", h)
	}
}

func TestSearchPaging(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	var seen []string
	from := 0
	for range 10 {
		res, err := srv.Search(context.Background(), Query{Vocab: "schema", Size: 1, From: from})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, urls(res)...)
		if res.Next == 0 {
			break
		}
		from = res.Next
	}
	slices.Sort(seen)
	if len(slices.Compact(seen)) != 4 {
		t.Fatalf("pages gave %v", seen)
	}
}

func TestAPI(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t)
	ada := url.QueryEscape("<http://people.test/ada#me>")
	for _, tc := range []struct {
		name, path, accept string
		code               int
		ct                 string
		has                []string
		lines              int // N-Quads lines, -1 to skip
	}{
		{"search json", "/api/search?q=rocket&type=schema:Product", "", 200, "application/json", []string{`"url": "http://shop.test/rocket-skates"`, `"total": 1`}, -1},
		{"triples by s", "/api/triples?s=" + ada, "", 200, "application/n-quads", []string{`<http://people.test/ada#me> <http://schema.org/name> "Ada Lovelace" <http://people.test/ada> .`}, 4},
		{"triples by bare IRI", "/api/triples?s=http://people.test/ada%23me&p=schema:name", "", 200, "application/n-quads", []string{`"Ada Lovelace"`}, 1},
		{"triples by o literal", "/api/triples?o=" + url.QueryEscape(`"Grace Hopper"`), "", 200, "application/n-quads", []string{"<http://people.test/grace#me>"}, 1},
		{"triples by p o", "/api/triples?p=rdf:type&o=" + url.QueryEscape("<https://schema.org/Person>"), "", 200, "application/n-quads", []string{"grace#me"}, 1},
		{"triples json-ld", "/api/triples?s=" + ada, "application/ld+json", 200, "application/ld+json", []string{`"@graph"`, `"@id": "http://people.test/ada"`, `"@value": "Mathematician"`}, -1},
		{"triples json q", "/api/triples?s=" + ada, "application/n-quads;q=0.5, application/json", 200, "application/ld+json", []string{`"@graph"`}, -1},
		{"triples nquads preferred", "/api/triples?s=" + ada, "application/ld+json;q=0.1, application/n-quads", 200, "application/n-quads", nil, 4},
		{"unknown term", "/api/triples?s=http://nowhere.test/", "", 200, "application/n-quads", nil, 0},
		{"types", "/api/types", "", 200, "application/json", []string{`"label": "schema:Product"`}, -1},
		{"predicates", "/api/predicates", "", 200, "application/json", []string{`"label": "rdf:type"`}, -1},
		{"bad term", "/api/triples?s=" + url.QueryEscape("<rel>"), "", 400, "application/json", []string{"not absolute"}, -1},
		{"relative bare", "/api/triples?s=foo", "", 400, "application/json", []string{"not an absolute IRI"}, -1},
		{"literal subject", "/api/triples?s=" + url.QueryEscape(`"x"`), "", 400, "application/json", []string{"subject cannot be a literal"}, -1},
		{"blank predicate", "/api/triples?p=_:x", "", 400, "application/json", []string{"predicate is an IRI"}, -1},
		{"bad limit", "/api/triples?limit=abc", "", 400, "application/json", []string{"not a number"}, -1},
		{"huge limit", "/api/triples?limit=100000", "", 400, "application/json", []string{"out of 1..1000"}, -1},
		{"bad cursor", "/api/triples?cursor=zzz", "", 400, "application/json", []string{"bad cursor"}, -1},
		{"bad from", "/api/search?from=-1", "", 400, "application/json", []string{"from -1"}, -1},
		{"bad size", "/api/search?size=1000", "", 400, "application/json", []string{"size 1000"}, -1},
		{"long query", "/api/search?q=" + strings.Repeat("a", 2000), "", 400, "application/json", []string{"query over"}, -1},
		{"unknown path", "/api/nothing", "", 404, "", nil, -1},
		{"subject page", "/subject?s=" + ada, "", 200, "text/html; charset=utf-8", []string{"Mathematician", "/subject?s=%3Chttp%3A%2F%2Fpeople.test%2Fgrace%23me%3E"}, -1},
		{"subject page incoming", "/subject?s=" + url.QueryEscape("<http://people.test/grace#me>"), "", 200, "text/html; charset=utf-8", []string{"Triples pointing to it", "people.test/ada#me"}, -1},
		{"subject missing", "/subject", "", 400, "", []string{"s is required"}, -1},
		{"subject literal", "/subject?s=" + url.QueryEscape(`"x"`), "", 400, "", []string{"literal has no page"}, -1},
		{"subject unknown", "/subject?s=http://nowhere.test/", "", 404, "text/html; charset=utf-8", []string{"None."}, -1},
		{"home", "/?q=anvil", "", 200, "text/html; charset=utf-8", []string{"Acme Anvil", "<mark>", `<option value="schema:Person"`}, -1},
		{"home bad", "/?from=x", "", 400, "text/html; charset=utf-8", []string{"not a number"}, -1},
		{"css", "/static/style.css", "", 200, "text/css; charset=utf-8", []string{"font"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := get(t, hs.URL+tc.path, tc.accept)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %s", code, tc.code, body)
			}
			if tc.ct != "" && hdr.Get("Content-Type") != tc.ct {
				t.Errorf("Content-Type %q, want %q", hdr.Get("Content-Type"), tc.ct)
			}
			for _, s := range tc.has {
				if !strings.Contains(body, s) {
					t.Errorf("body lacks %q:\n%s", s, body)
				}
			}
			if tc.lines >= 0 {
				if n := strings.Count(body, "\n"); n != tc.lines {
					t.Errorf("%d lines, want %d:\n%s", n, tc.lines, body)
				}
			}
			if strings.HasPrefix(tc.ct, "application/json") || tc.ct == "application/ld+json" {
				var v any
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Errorf("invalid JSON: %v", err)
				}
			}
		})
	}
}

func TestTriplesPaging(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t)
	next := hs.URL + "/api/triples?limit=3"
	var lines []string
	for i := 0; next != "" && i < 20; i++ {
		code, hdr, body := get(t, next, "")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		lines = append(lines, strings.Split(strings.TrimSpace(body), "\n")...)
		next = ""
		if l := hdr.Get("Link"); l != "" {
			u := strings.TrimSuffix(strings.TrimPrefix(l, "<"), `>; rel="next"`)
			next = hs.URL + u
		}
	}
	slices.Sort(lines)
	if len(slices.Compact(lines)) != 20 {
		t.Fatalf("paged through %d distinct quads, want 20", len(lines))
	}
}

func TestWantsJSONLD(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]bool{
		"": false, "*/*": false, "application/ld+json": true, "application/json": true,
		"application/n-quads": false, "text/html, application/ld+json;q=0.9": true,
		"application/ld+json;q=0.2, application/n-quads;q=0.8": false, ";;;": false,
	} {
		if got := wantsJSONLD(accept); got != want {
			t.Errorf("wantsJSONLD(%q) = %v", accept, got)
		}
	}
}
