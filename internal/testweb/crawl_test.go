package testweb

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// get serves one GET of rawURL in-process and returns the response.
func get(t *testing.T, h http.Handler, rawURL string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", rawURL, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	hrefRE = regexp.MustCompile(`(?i)<a\s+href=(?:"([^"]*)"|([^\s>"]+))`)
	baseRE = regexp.MustCompile(`<base href="([^"]*)">`)
)

// links returns the absolute URLs (fragment dropped) the page at pageURL
// links to, resolved against its <base href> if any.
func links(t *testing.T, pageURL, html string) []string {
	t.Helper()
	base, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	if m := baseRE.FindStringSubmatch(html); m != nil {
		ref, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
		if err != nil {
			t.Fatalf("%s: bad base %q", pageURL, m[1])
		}
		base = base.ResolveReference(ref)
	}
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(html, -1) {
		h := m[1] + m[2]
		h = strings.ReplaceAll(h, "&amp;", "&")
		ref, err := url.Parse(h)
		if err != nil {
			t.Fatalf("%s: bad href %q", pageURL, h)
		}
		u := base.ResolveReference(ref)
		u.Fragment = ""
		u.Host = strings.ToLower(strings.TrimSuffix(u.Host, ":80"))
		out = append(out, u.String())
	}
	return out
}

// crawlResult is what a test crawl saw.
type crawlResult struct {
	status map[string]int  // URL -> status of every URL fetched
	linked map[string]bool // every URL some fetched page links to
}

// crawl fetches seeds and follows links breadth-first (and Location
// headers), never fetching trap URLs, unknown hosts or more than max URLs.
func crawl(t *testing.T, w *Web, seeds []string, max int) crawlResult {
	t.Helper()
	h := w.Handler()
	res := crawlResult{status: map[string]int{}, linked: map[string]bool{}}
	queue := append([]string(nil), seeds...)
	queued := map[string]bool{}
	for _, s := range seeds {
		queued[s] = true
	}
	for len(queue) > 0 {
		if len(res.status) >= max {
			t.Fatalf("crawl: more than %d URLs", max)
		}
		u := queue[0]
		queue = queue[1:]
		pu, _ := url.Parse(u)
		r := w.Lookup(pu.Host, pu.RequestURI())
		if r.Class == ClassTrap || r.Class == ClassUnknownHost || r.Site.special == specEndless || r.Site.special == specSlow {
			continue
		}
		resp := get(t, h, u)
		b := body(t, resp)
		res.status[u] = resp.StatusCode
		var out []string
		if loc := resp.Header.Get("Location"); loc != "" {
			ref, _ := url.Parse(loc)
			out = append(out, pu.ResolveReference(ref).String())
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && resp.StatusCode == 200 {
			out = append(out, links(t, u, b)...)
		}
		for _, l := range out {
			res.linked[l] = true
			if !queued[l] {
				queued[l] = true
				queue = append(queue, l)
			}
		}
	}
	return res
}
