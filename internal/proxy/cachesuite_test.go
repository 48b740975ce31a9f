package proxy

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/fakeclock"
	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// The shared-cache conformance suite: the behaviours the public HTTP cache
// test suite (github.com/http-tests/cache-tests) requires of a shared
// cache, written as our own table (cachesuite_cases_test.go) and run
// through a real proxy in front of a scripted origin. Case names are the
// cache-tests ids where a case follows one, so a result can be compared
// with other caches'; cases of our own have names without such an id.
//
// Time is a fake clock shared by the origin (its Date, Expires,
// Last-Modified) and the proxy: a case's pause is a clock advance, not a
// sleep.

// csKind is where a step's response must come from.
type csKind int

const (
	csSetup      csKind = iota // not checked: a step that prepares the cache
	csHit                      // from the cache, the origin not asked
	csFromOrigin               // from the origin, not as a validation of a stored response
	csValidated                // the cache validated its stored response (the origin answered 304 to our conditional request)
	csRefused                  // answered by the proxy alone (504 only-if-cached, 502 upstream error), from no stored response
)

func (k csKind) String() string {
	return [...]string{"setup", "hit", "origin", "validated", "refused"}[k]
}

// csStep is one request of a case and what the origin answers to it.
type csStep struct {
	method string   // "" is GET
	path   string   // appended to the case's path
	other  bool     // sent to the second origin (another host)
	req    []string // request field pairs, added in order
	// status (0: 200), resp (field pairs, added in order) and body are
	// the origin's answer. A value "@N" is the HTTP date N seconds from
	// now, "~/p" the absolute URL of the case's path + "/p" on this
	// origin, "%/p" on the other; Date is "@0" unless given ("-": none).
	status int
	resp   []string
	body   string
	// notModified: the origin answers a conditional request 304, with
	// resp.
	notModified bool
	// disconnect: the origin hangs up without answering.
	disconnect bool
	// interim: the origin sends a 103 Early Hints first.
	interim bool
	advance time.Duration // the clock moves on after the step

	want       csKind
	asked      int      // requests the origin must see for csFromOrigin; 0 means 1
	wantStatus int      // 0: not checked
	wantHeader []string // field pairs the client must see; "@N" as above, ">N" a number above N
	wantAbsent []string // fields the client must not see
	// wantOrigin are field pairs the origin must have seen in the step's
	// request.
	wantOrigin []string
}

// Step builders, so that a case reads as a list of requests.

func get(resp ...string) csStep { return csStep{resp: resp} }

func (s csStep) with(kv ...string) csStep     { s.req = append(s.req, kv...); return s }
func (s csStep) after(d time.Duration) csStep { s.advance = d; return s }
func (s csStep) expect(k csKind) csStep       { s.want = k; return s }
func (s csStep) code(status int) csStep       { s.status = status; return s }
func (s csStep) at(path string) csStep        { s.path = path; return s }
func (s csStep) seeing(kv ...string) csStep   { s.wantHeader = append(s.wantHeader, kv...); return s }
func (s csStep) hiding(names ...string) csStep {
	s.wantAbsent = append(s.wantAbsent, names...)
	return s
}
func (s csStep) originSees(kv ...string) csStep { s.wantOrigin = append(s.wantOrigin, kv...); return s }
func (s csStep) answering(code int) csStep      { s.wantStatus = code; return s }
func (s csStep) hangsUp() csStep                { s.disconnect = true; return s }
func (s csStep) withBody(b string) csStep       { s.body = b; return s }
func (s csStep) onOther() csStep                { s.other = true; return s }
func (s csStep) earlyHints() csStep             { s.interim = true; return s }
func hit() csStep                               { return csStep{want: csHit} }
func fromOrigin(resp ...string) csStep          { return csStep{resp: resp, want: csFromOrigin} }
func revalidated(resp ...string) csStep {
	return csStep{resp: resp, want: csValidated, notModified: true}
}
func send(method string, resp ...string) csStep { return csStep{method: method, resp: resp} }
func refused(code int) csStep                   { return csStep{want: csRefused, wantStatus: code} }
func sec(n int) time.Duration                   { return time.Duration(n) * time.Second }
func cc(v string) []string                      { return []string{"Cache-Control", v} }
func fields(groups ...[]string) (out []string) {
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// csCase is one conformance case.
type csCase struct {
	name string
	// thesis runs the case with the thesis override on (the proxy's
	// default); cases run under strict RFC 9111 (override off) otherwise.
	thesis bool
	steps  []csStep
}

// csServer is the scripted origin: it answers every request with the
// current step and records what it received.
type csServer struct {
	clock *fakeclock.Clock
	mu    struct {
		sync.Mutex
		step  *csStep
		base  string // path of the current case
		hosts [2]string
		seen  []*http.Request
	}
}

func (o *csServer) value(v string) string {
	switch {
	case strings.HasPrefix(v, "@"):
		n, _ := strconv.Atoi(v[1:])
		return o.clock.Now().Add(sec(n)).UTC().Format(http.TimeFormat)
	case strings.HasPrefix(v, "~/"):
		return o.mu.hosts[0] + o.mu.base + v[1:]
	case strings.HasPrefix(v, "%/"):
		return o.mu.hosts[1] + o.mu.base + v[1:]
	}
	return v
}

func (o *csServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	o.mu.Lock()
	s := o.mu.step
	c := r.Clone(r.Context())
	c.Header = r.Header.Clone()
	o.mu.seen = append(o.mu.seen, c)
	n := len(o.mu.seen)
	h := w.Header()
	h["Date"] = []string{o.value("@0")}
	for i := 0; s != nil && i+1 < len(s.resp); i += 2 {
		k, v := http.CanonicalHeaderKey(s.resp[i]), s.resp[i+1]
		if k == "Date" {
			delete(h, k)
			if v == "-" {
				h["Date"] = nil // net/http adds none either
				continue
			}
		}
		h[k] = append(h[k], o.value(v))
	}
	o.mu.Unlock()
	if s == nil {
		http.Error(w, "no step", http.StatusTeapot)
		return
	}
	if s.disconnect {
		panic(http.ErrAbortHandler)
	}
	if s.interim {
		w.WriteHeader(http.StatusEarlyHints)
	}
	if s.notModified && (r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	status := s.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	body := s.body
	if body == "" && status != http.StatusNoContent && status != http.StatusNotModified {
		body = "body of " + r.URL.Path + " " + strconv.Itoa(n)
	}
	io.WriteString(w, body)
}

func (o *csServer) requests() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.mu.seen)
}

func (o *csServer) last() *http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mu.seen[len(o.mu.seen)-1]
}

// csRunner runs cases through one proxy.
type csRunner struct {
	e      *env
	origin *csServer
	hosts  [2]string
	client *http.Client
}

func newCSRunner(t *testing.T, pol httpcache.Policy) *csRunner {
	clk := newFakeClock()
	o := &csServer{clock: clk}
	o1 := newOriginAt(t, "127.0.0.1", "", o.ServeHTTP)
	o2 := newOriginAt(t, "127.0.0.2", "", o.ServeHTTP)
	o.mu.hosts = [2]string{o1.URL, o2.URL}
	var key atomic.Int64
	e := newEnv(t, envOpts{
		cfg: Config{Mode: ModeReject},
		// A politeness key of its own for every request: a case's 503
		// must not put the next request into the gate's backoff (429).
		pol: politeness.Config{KeyFunc: func(context.Context, *url.URL) (string, error) {
			return "cs" + strconv.FormatInt(key.Add(1), 10), nil
		}},
		cache:     true,
		cacheOpts: httpcache.Options{Policy: pol},
		now:       clk.Now,
	})
	pu, _ := url.Parse(e.front.URL)
	c := &http.Client{
		// No Accept-Encoding of Go's own: a case sends exactly its fields.
		Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableCompression: true},
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	t.Cleanup(c.CloseIdleConnections)
	return &csRunner{e: e, origin: o, hosts: o.mu.hosts, client: c}
}

// run runs one case's steps in order, failing at the first step that
// does not behave.
func (cr *csRunner) run(t *testing.T, c csCase) {
	t.Helper()
	base := "/cs/" + c.name
	for i, s := range c.steps {
		cr.origin.mu.Lock()
		cr.origin.mu.step, cr.origin.mu.base = &s, base
		cr.origin.mu.Unlock()
		host := cr.hosts[0]
		if s.other {
			host = cr.hosts[1]
		}
		method := s.method
		if method == "" {
			method = http.MethodGet
		}
		var body io.Reader
		if method != http.MethodGet && method != http.MethodHead {
			body = strings.NewReader("abc")
		}
		req, err := http.NewRequest(method, host+base+s.path, body)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j+1 < len(s.req); j += 2 {
			req.Header.Add(s.req[j], cr.origin.value(s.req[j+1]))
		}
		before := cr.origin.requests()
		resp, err := cr.client.Do(req)
		if err != nil {
			t.Fatalf("step %d: %s: %v", i, method, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		asked := cr.origin.requests() - before
		xc := resp.Header.Get(HeaderCache)
		where := "step " + strconv.Itoa(i) + " (" + s.want.String() + "): X-Cache " + xc + ", origin asked " + strconv.Itoa(asked) + " times, status " + strconv.Itoa(resp.StatusCode)
		switch s.want {
		case csHit:
			if xc != "HIT" || asked != 0 {
				t.Fatalf("%s; want a hit", where)
			}
		case csFromOrigin:
			if xc != "MISS" || asked != max(s.asked, 1) {
				t.Fatalf("%s; want the origin's response", where)
			}
		case csValidated:
			r := cr.origin.last()
			if xc != "REVALIDATED" || asked != 1 || (r.Header.Get("If-None-Match") == "" && r.Header.Get("If-Modified-Since") == "") {
				t.Fatalf("%s; want a validation", where)
			}
		case csRefused:
			if xc == "HIT" || xc == "REVALIDATED" {
				t.Fatalf("%s; want the proxy's own answer", where)
			}
		}
		if s.wantStatus != 0 && resp.StatusCode != s.wantStatus {
			t.Fatalf("%s; want status %d", where, s.wantStatus)
		}
		if s.want == csFromOrigin && s.wantStatus == 0 && s.status != 0 && resp.StatusCode != s.status {
			t.Fatalf("%s; want the origin's status %d", where, s.status)
		}
		for j := 0; j+1 < len(s.wantHeader); j += 2 {
			k, want := s.wantHeader[j], s.wantHeader[j+1]
			got := strings.Join(resp.Header.Values(k), ", ")
			if n, ok := strings.CutPrefix(want, ">"); ok {
				lim, _ := strconv.Atoi(n)
				if v, err := strconv.Atoi(got); err != nil || v <= lim {
					t.Fatalf("%s; %s: %q, want above %d", where, k, got, lim)
				}
				continue
			}
			if want = cr.origin.value(want); got != want {
				t.Fatalf("%s; %s: %q, want %q", where, k, got, want)
			}
		}
		for _, k := range s.wantAbsent {
			if v, ok := resp.Header[http.CanonicalHeaderKey(k)]; ok {
				t.Fatalf("%s; %s: %q, want none", where, k, v)
			}
		}
		if len(s.wantOrigin) > 0 {
			if asked == 0 {
				t.Fatalf("%s; want the origin asked", where)
			}
			r := cr.origin.last()
			for j := 0; j+1 < len(s.wantOrigin); j += 2 {
				if got := r.Header.Get(s.wantOrigin[j]); got != cr.origin.value(s.wantOrigin[j+1]) {
					t.Fatalf("%s; the origin saw %s: %q, want %q", where, s.wantOrigin[j], got, s.wantOrigin[j+1])
				}
			}
		}
		cr.origin.clock.Advance(s.advance)
	}
}

// TestCacheSuite runs the conformance table (cachesuite_cases_test.go)
// through the proxy: strict RFC 9111 (the override off) for most cases,
// the proxy's default (the thesis override on) for those marked thesis.
func TestCacheSuite(t *testing.T) {
	strict := newCSRunner(t, httpcache.Policy{DisableOverride: true})
	thesis := newCSRunner(t, httpcache.Policy{})
	seen := map[string]bool{}
	for _, c := range cacheSuite {
		if seen[c.name] {
			t.Fatalf("case %s twice", c.name)
		}
		seen[c.name] = true
		r := strict
		if c.thesis {
			r = thesis
		}
		t.Run(c.name, func(t *testing.T) { r.run(t, c) })
	}
	if len(seen) < 150 {
		t.Errorf("%d cases, want the whole table", len(seen))
	}
}
