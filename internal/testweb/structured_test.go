package testweb

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStructuredSites(t *testing.T) {
	t.Parallel()
	w, err := New(Config{Structured: true, Sites: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := w.Handler()
	get := func(url string) (int, string) {
		req := httptest.NewRequest("GET", url, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(b)
	}
	pages := StructuredPages()
	if len(pages) < 20 {
		t.Fatalf("only %d structured pages", len(pages))
	}
	syntaxes := map[string]int{}
	for _, p := range pages {
		syntaxes[p.Syntax]++
		code, body := get(p.URL)
		if code != 200 || body != string(p.Body) {
			t.Errorf("%s: status %d, body differs: %v", p.URL, code, body != string(p.Body))
		}
		host := strings.TrimPrefix(p.URL, "http://")
		host, path, _ := strings.Cut(host, "/")
		_, home := get("http://" + host + "/")
		if !strings.Contains(home, `href="/`+path+`"`) {
			t.Errorf("home of %s does not link %s", host, path)
		}
		if s := w.Site(host); s == nil || !s.HasKind(KindStructured) {
			t.Errorf("%s: not a structured site", host)
		}
	}
	for _, s := range []string{"jsonld", "microdata", "rdfa", "mixed"} {
		if syntaxes[s] == 0 {
			t.Errorf("no %s page", s)
		}
	}
	if code, _ := get("http://structured-jsonld.test/nope.html"); code != 404 {
		t.Errorf("unknown page: status %d, want 404", code)
	}
	plain, _ := New(Config{Sites: 1})
	if plain.Site("structured-jsonld.test") != nil {
		t.Error("structured sites served without Config.Structured")
	}
}
