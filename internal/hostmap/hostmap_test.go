package hostmap

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

func TestParseHostSpec(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want hostSpec
		err  bool
	}{
		{"bare host", "example.com", hostSpec{host: "example.com"}, false},
		{"upper case and spaces", "  WWW.Example.COM ", hostSpec{host: "www.example.com"}, false},
		{"port", "example.com:8080", hostSpec{host: "example.com", port: "8080"}, false},
		{"leading zeros in port", "example.com:08080", hostSpec{host: "example.com", port: "8080"}, false},
		{"https scheme (Yandex)", "https://example.com", hostSpec{scheme: "https", host: "example.com"}, false},
		{"scheme, port, slash", "HTTP://example.com:81/", hostSpec{scheme: "http", host: "example.com", port: "81"}, false},
		{"trailing slash", "example.com/", hostSpec{host: "example.com"}, false},
		{"idn", "café.test", hostSpec{host: "xn--caf-dma.test"}, false},
		{"ipv6", "[::1]:8080", hostSpec{host: "::1", port: "8080"}, false},
		{"empty", "", hostSpec{}, true},
		{"path", "example.com/a", hostSpec{}, true},
		{"query", "example.com?x", hostSpec{}, true},
		{"userinfo", "user@example.com", hostSpec{}, true},
		{"ftp", "ftp://example.com", hostSpec{}, true},
		{"port zero", "example.com:0", hostSpec{}, true},
		{"port too big", "example.com:70000", hostSpec{}, true},
		{"empty port", "example.com:", hostSpec{}, true},
		{"space inside", "exa mple.com", hostSpec{}, true},
		{"only scheme", "https://", hostSpec{}, true},
		{"too long", strings.Repeat("a", 400) + ".test", hostSpec{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHostSpec(tc.in, urlnorm.CrawlDefaults())
			if (err != nil) != tc.err {
				t.Fatalf("parseHostSpec(%q) error %v, want error %v", tc.in, err, tc.err)
			}
			if err == nil && got != tc.want {
				t.Errorf("parseHostSpec(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseDuplicateHosts(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		err     string // substring; "" means valid
	}{
		{"none", nil, ""},
		{"aliases", []string{"www.a.test=a.test", "mirror.a.test=https://a.test", "a.test:8080=a.test"}, ""},
		{"pin", []string{"a.test=a.test"}, ""},
		{"chain", []string{"x.test=y.test", "y.test=z.test"}, ""},
		{"no equals", []string{"www.a.test"}, "ALIAS=CANONICAL"},
		{"scheme in alias", []string{"https://www.a.test=a.test"}, "no scheme"},
		{"default port in alias", []string{"www.a.test:443=a.test"}, "default port"},
		{"bad canonical", []string{"www.a.test=a.test/path"}, "canonical"},
		{"alias twice", []string{"www.a.test=a.test", "WWW.A.TEST=b.test"}, "twice"},
		{"loop a b a", []string{"a.test=b.test", "b.test=a.test"}, "loop"},
		{"loop of three", []string{"a.test=b.test", "b.test=c.test", "c.test=a.test"}, "loop"},
		{"too many", make([]string, maxDuplicateHosts+1), "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDuplicateHosts(tc.entries)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// testHostMap builds a host map from operator entries and robots rules
// "scheme://authority>target-url" with source robots-host.
func testHostMap(t *testing.T, ops []string, learned []string) *Map {
	t.Helper()
	rules, err := ParseDuplicateHosts(ops)
	if err != nil {
		t.Fatal(err)
	}
	m := newMap(urlnorm.CrawlDefaults(), 100)
	for _, r := range rules {
		m.AddOperator(r)
	}
	for _, l := range learned {
		from, to, _ := strings.Cut(l, ">")
		o, _ := url.Parse(from)
		tu, _ := url.Parse(to)
		if _, err := m.setLearned(o.Scheme, o.Host, &hostRule{to: hostSpec{scheme: tu.Scheme, host: tu.Hostname(), port: tu.Port()}, source: SourceHost}); err != nil {
			t.Fatalf("setLearned(%s): %v", l, err)
		}
	}
	return m
}

func TestHostMapResolve(t *testing.T) {
	tests := []struct {
		name    string
		ops     []string
		learned []string
		in      string
		want    string // "" means not moved
		source  string
	}{
		{"no rules", nil, nil, "http://www.a.test/x", "", ""},
		{"operator alias keeps path, query, scheme", []string{"www.a.test=a.test"}, nil,
			"https://www.a.test/p/q?x=1", "https://a.test/p/q?x=1", SourceOperator},
		{"operator alias keeps the port", []string{"www.a.test=a.test"}, nil,
			"http://www.a.test:8080/", "http://a.test:8080/", SourceOperator},
		{"operator alias with port matches that port only", []string{"www.a.test:8080=a.test"}, nil,
			"http://www.a.test/", "", ""},
		{"operator alias with port", []string{"www.a.test:8080=a.test"}, nil,
			"http://www.a.test:8080/", "http://a.test:8080/", SourceOperator},
		{"operator canonical with scheme drops the port", []string{"www.a.test=https://a.test"}, nil,
			"http://www.a.test:8080/x", "https://a.test/x", SourceOperator},
		{"operator canonical with default port", []string{"www.a.test=https://a.test:443"}, nil,
			"http://www.a.test/x", "https://a.test/x", SourceOperator},
		{"other host untouched", []string{"www.a.test=a.test"}, nil, "http://b.test/", "", ""},
		{"subdomain of alias untouched", []string{"a.test=b.test"}, nil, "http://x.a.test/", "", ""},
		{"robots Host moves its origin", nil, []string{"http://www.a.test>http://a.test"},
			"http://www.a.test/x", "http://a.test/x", SourceHost},
		{"robots rule is per scheme", nil, []string{"http://www.a.test>http://a.test"},
			"https://www.a.test/x", "", ""},
		{"robots rule is per port", nil, []string{"http://www.a.test>http://a.test"},
			"http://www.a.test:8080/x", "", ""},
		{"robots Host to https", nil, []string{"http://www.a.test>https://a.test"},
			"http://www.a.test/x", "https://a.test/x", SourceHost},
		{"chain operator then robots", []string{"old.a.test=www.a.test"}, []string{"http://www.a.test>http://a.test"},
			"http://old.a.test/x", "http://a.test/x", SourceOperator},
		{"operator pin beats robots", []string{"www.a.test=www.a.test"}, []string{"http://www.a.test>http://a.test"},
			"http://www.a.test/x", "", ""},
		{"operator rule with port beats robots", []string{"www.a.test:8080=b.test"}, []string{"http://www.a.test:8080>http://a.test"},
			"http://www.a.test:8080/x", "http://b.test:8080/x", SourceOperator},
		{"ipv6 alias", []string{"[::1]=a.test"}, nil, "http://[::1]:8080/x", "http://a.test:8080/x", SourceOperator},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := testHostMap(t, tc.ops, tc.learned)
			u, err := urlnorm.Normalize(tc.in, urlnorm.CrawlDefaults())
			if err != nil {
				t.Fatal(err)
			}
			got, source, loop := m.Resolve(u, ProbeNone)
			if loop {
				t.Fatalf("loop reported")
			}
			gotS := ""
			if got != nil {
				gotS = got.String()
			}
			if gotS != tc.want || source != tc.source {
				t.Errorf("resolve(%s) = %q (%s), want %q (%s)", tc.in, gotS, source, tc.want, tc.source)
			}
		})
	}
}

// TestHostMapNoLoops: robots.txt files that name each other (a says b, b
// says a) never make a rewrite loop: the rule closing the loop is
// refused, and the map stays bounded.
func TestHostMapNoLoops(t *testing.T) {
	tests := []struct {
		name    string
		ops     []string
		learned []string // applied in order; the last one must be refused
	}{
		{"a b a", nil, []string{"http://a.test>http://b.test", "http://b.test>http://a.test"}},
		{"a b c a", nil, []string{"http://a.test>http://b.test", "http://b.test>http://c.test", "http://c.test>http://a.test"}},
		{"operator a→b, robots b→a", []string{"a.test=b.test"}, []string{"http://b.test>http://a.test"}},
		{"across schemes", nil, []string{"http://a.test>https://a.test", "https://a.test>http://a.test"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := testHostMap(t, tc.ops, tc.learned[:len(tc.learned)-1])
			last := tc.learned[len(tc.learned)-1]
			from, to, _ := strings.Cut(last, ">")
			o, _ := url.Parse(from)
			tu, _ := url.Parse(to)
			before := m.n.Load()
			_, err := m.setLearned(o.Scheme, o.Host, &hostRule{to: hostSpec{scheme: tu.Scheme, host: tu.Hostname()}, source: SourceHost})
			if !errors.Is(err, errHostLoop) {
				t.Fatalf("setLearned(%s) = %v, want errHostLoop", last, err)
			}
			if m.n.Load() != before {
				t.Errorf("refused rule left in the map: %d rules, had %d", m.n.Load(), before)
			}
			// Every origin still resolves without a loop.
			for _, l := range tc.learned {
				from, _, _ := strings.Cut(l, ">")
				u, _ := url.Parse(from + "/x")
				if _, _, loop := m.Resolve(u, ProbeNone); loop {
					t.Errorf("%s loops", from)
				}
			}
		})
	}
}

func TestHostMapBound(t *testing.T) {
	m := newMap(urlnorm.CrawlDefaults(), 3)
	for i := range 5 {
		_, err := m.setLearned("http", fmt.Sprintf("www.s%d.test", i), &hostRule{to: hostSpec{scheme: "http", host: fmt.Sprintf("s%d.test", i)}, source: SourceHost})
		if want := i >= 3; errors.Is(err, errHostMapFull) != want {
			t.Errorf("rule %d: error %v, want full %v", i, err, want)
		}
	}
	// Replacing and removing a rule is always possible.
	if changed, err := m.setLearned("http", "www.s0.test", &hostRule{to: hostSpec{scheme: "http", host: "other.test"}, source: SourceHost}); err != nil || !changed {
		t.Errorf("replace: changed %v err %v", changed, err)
	}
	if changed, err := m.setLearned("http", "www.s1.test", nil); err != nil || !changed {
		t.Errorf("remove: changed %v err %v", changed, err)
	}
	if _, err := m.setLearned("http", "www.s4.test", &hostRule{to: hostSpec{scheme: "http", host: "s4.test"}, source: SourceHost}); err != nil {
		t.Errorf("after a removal a rule fits again: %v", err)
	}
	if n := m.learned.Load(); n != 3 {
		t.Errorf("%d rules learned, want 3", n)
	}
}

func normURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := urlnorm.Normalize(s, urlnorm.CrawlDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func FuzzParseHostSpec(f *testing.F) {
	for _, s := range []string{"example.com", "https://example.com:443/", "[::1]:80", "café.test", "a.test=b.test", "http://", "x:99999", "a@b", ""} {
		f.Add(s)
	}
	norm := urlnorm.CrawlDefaults()
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := parseHostSpec(s, norm)
		if err != nil {
			return
		}
		if spec.host == "" {
			t.Fatalf("%q: empty host accepted", s)
		}
		// What it accepts makes a URL that normalizes to the same host.
		u, err := urlnorm.Normalize("http://"+joinHost(spec.host, spec.port)+"/", norm)
		if err != nil {
			t.Fatalf("%q → %+v: %v", s, spec, err)
		}
		if u.Hostname() != spec.host {
			t.Fatalf("%q → host %q, renormalized %q", s, spec.host, u.Hostname())
		}
		// And parsing the duplicate-hosts form never panics.
		_, _ = ParseDuplicateHosts([]string{s + "=" + s, "x." + s + "=" + s})
	})
}

// TestHostRuleProbe: a learned rule due for a re-check leaves one URL of
// its origin per probeInterval on the origin (to go through the gate and
// refresh robots.txt); the others are moved; a re-confirmed rule is not
// due any more.
func TestHostRuleProbe(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	now := t0
	m := newMap(urlnorm.CrawlDefaults(), 10)
	m.now = func() time.Time { return now }
	rule := func(due time.Time) *hostRule {
		return &hostRule{to: hostSpec{scheme: "http", host: "a.test"}, source: SourceHost, due: due}
	}
	if _, err := m.setLearned("http", "www.a.test", rule(t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	u := normURL(t, "http://www.a.test/x")
	moved := func(mode ProbeMode) bool {
		got, _, _ := m.Resolve(u, mode)
		return got != nil
	}
	steps := []struct {
		name  string
		at    time.Duration
		mode  ProbeMode
		moved bool
	}{
		{"not due", 30 * time.Minute, ProbeClaim, true},
		{"due: a link stays", time.Hour, ProbePeek, false},
		{"due: another link stays", time.Hour, ProbePeek, false},
		{"due: a lease stays and is the probe", time.Hour + time.Second, ProbeClaim, false},
		{"probe sent: the next lease is moved", time.Hour + 2*time.Second, ProbeClaim, true},
		{"probe sent: links are moved", time.Hour + 2*time.Second, ProbePeek, true},
		{"after the gate: moved", time.Hour + 3*time.Second, ProbeNone, true},
		{"next probe after the interval", time.Hour + time.Second + probeInterval, ProbeClaim, false},
		{"and then moved again", time.Hour + time.Second + probeInterval, ProbeClaim, true},
	}
	for _, st := range steps {
		now = t0.Add(st.at)
		if got := moved(st.mode); got != st.moved {
			t.Errorf("%s: moved %v, want %v", st.name, got, st.moved)
		}
	}
	if !m.due(u) {
		t.Error("rule not reported due")
	}
	// Re-confirmed by a fresh robots.txt: same targets, new expiry.
	if changed, err := m.setLearned("http", "www.a.test", rule(now.Add(24*time.Hour))); err != nil || changed {
		t.Errorf("re-confirm: changed %v err %v", changed, err)
	}
	now = now.Add(10 * probeInterval)
	if m.due(u) || !moved(ProbeClaim) {
		t.Error("re-confirmed rule still due")
	}
	// An operator rule is never due.
	m2 := testHostMap(t, []string{"www.b.test=b.test"}, nil)
	m2.now = func() time.Time { return t0.Add(1000 * time.Hour) }
	if got, _, _ := m2.Resolve(normURL(t, "http://www.b.test/"), ProbeClaim); got == nil {
		t.Error("operator rule probed")
	}
}

// TestMirrorLoopLeftOut: a mirror whose own rule leads back to the
// declaring origin is left out; the other mirrors still share the load.
func TestMirrorLoopLeftOut(t *testing.T) {
	m := newMap(urlnorm.CrawlDefaults(), 10)
	if _, err := m.setLearned("http", "b.test", &hostRule{to: hostSpec{scheme: "http", host: "a.test"}, source: SourceHost}); err != nil {
		t.Fatal(err)
	}
	r := &hostRule{to: hostSpec{scheme: "http", host: "b.test"}, source: SourceMirror,
		mirrors: []hostSpec{{scheme: "http", host: "b.test"}, {scheme: "http", host: "c.test"}, {scheme: "http", host: "d.test"}}}
	if _, err := m.setLearned("http", "a.test", r); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		u := normURL(t, fmt.Sprintf("http://a.test/p%d", i))
		got, _, loop := m.Resolve(u, ProbeNone)
		if loop || got == nil || got.Host == "b.test" {
			t.Fatalf("%s → %v (loop %v), want c.test or d.test", u, got, loop)
		}
	}
	// Only looping mirrors: refused.
	if _, err := m.setLearned("http", "x.test", &hostRule{to: hostSpec{scheme: "http", host: "y.test"}, source: SourceHost}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.setLearned("http", "y.test", &hostRule{to: hostSpec{scheme: "http", host: "x.test"}, source: SourceMirror}); !errors.Is(err, errHostLoop) {
		t.Errorf("y→x after x→y: %v, want errHostLoop", err)
	}
}

func TestDecodeStoredRule(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		n    int
	}{
		{"one target (earlier versions)", "robots-host http://a.test", true, 1},
		{"mirrors", "mirror-site http://m1.test https://m2.test:8443", true, 2},
		{"operator source refused", "duplicate-hosts http://a.test", false, 0},
		{"no target", "robots-host", false, 0},
		{"bad scheme", "mirror-site ftp://m.test", false, 0},
		{"no host", "mirror-site http://", false, 0},
		{"empty host with a colon (fuzz)", "mirror-site http://:", false, 0},
		{"path", "robots-host http://a.test/x", false, 0},
		{"query", "robots-host http://a.test?x", false, 0},
		{"userinfo", "robots-host http://u@a.test", false, 0},
		{"too many", "mirror-site" + strings.Repeat(" http://m.test", MaxMirrors+1), false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := decodeStoredRule(tc.in)
			if ok != tc.ok || (ok && len(r.targets()) != tc.n) {
				t.Fatalf("decodeStoredRule(%q) = %+v, %v; want ok %v with %d targets", tc.in, r, ok, tc.ok, tc.n)
			}
			if ok && encodeStoredRule(&r) != tc.in {
				t.Errorf("re-encoded as %q", encodeStoredRule(&r))
			}
		})
	}
}

// TestRefreshedBounded: the origins noted as refreshed stay within
// maxRefreshed, the newest kept.
func TestRefreshedBounded(t *testing.T) {
	m := newMap(urlnorm.CrawlDefaults(), 10)
	for i := range maxRefreshed + 50 {
		m.noteRefreshed(fmt.Sprintf("http://h%d.test", i))
	}
	if n := len(m.refreshed.origins); n != maxRefreshed {
		t.Errorf("%d origins noted, want %d", n, maxRefreshed)
	}
	last := fmt.Sprintf("http://h%d.test", maxRefreshed+49)
	if !m.takeRefreshed(last) || m.takeRefreshed(last) {
		t.Error("the newest origin: want taken once")
	}
}

// FuzzDecodeStoredRule: a stored rule value, whatever its bytes, decodes
// without panicking, and what decodes re-encodes to a value that decodes
// to the same rule.
func FuzzDecodeStoredRule(f *testing.F) {
	for _, s := range []string{"robots-host http://a.test", "mirror-site http://m1.test https://m2.test:8443", "mirror-site", "robots-host http://[::1]:80", "x y z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := decodeStoredRule(s)
		if !ok {
			return
		}
		if len(r.targets()) == 0 || len(r.targets()) > MaxMirrors {
			t.Fatalf("%q: %d targets", s, len(r.targets()))
		}
		enc := encodeStoredRule(&r)
		r2, ok := decodeStoredRule(enc)
		if !ok || !r.sameTargets(&r2) {
			t.Fatalf("%q → %q does not decode to the same rule: %+v vs %+v", s, enc, r, r2)
		}
	})
}

// TestSameHomeRule: a duplicate host found by the crawler moves to the
// canonical origin like an operator's entry: every scheme and port of
// the alias host (an alias with a port, that port only), path and query
// kept, reported as same-home.
func TestSameHomeRule(t *testing.T) {
	tests := []struct {
		alias, canonical, in, want string
	}{
		{"http://www.a.test/", "http://a.test/", "http://www.a.test/p?q=1", "http://a.test/p?q=1"},
		{"http://www.a.test/", "https://a.test/", "https://www.a.test:8443/p", "https://a.test/p"},
		{"http://www.a.test:8080/", "http://a.test:8081/", "http://www.a.test:8080/p", "http://a.test:8081/p"},
		{"http://www.a.test:8080/", "http://a.test/", "http://www.a.test/p", ""},
		{"http://www.a.test/", "http://a.test/", "http://b.test/p", ""},
	}
	for _, tc := range tests {
		alias, _ := url.Parse(tc.alias)
		canon, _ := url.Parse(tc.canonical)
		r, err := SameHomeRule(alias, canon)
		if err != nil {
			t.Fatalf("SameHomeRule(%s, %s): %v", tc.alias, tc.canonical, err)
		}
		m := New(urlnorm.CrawlDefaults(), 0, nil)
		m.AddOperator(r)
		in, _ := url.Parse(tc.in)
		got, source, _ := m.Resolve(in, ProbeNone)
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s=%s: %s moved to %s, want unmoved", tc.alias, tc.canonical, tc.in, got)
		case tc.want != "" && (got == nil || got.String() != tc.want || source != SourceSameHome):
			t.Errorf("%s=%s: %s moved to %v (%s), want %s (same-home)", tc.alias, tc.canonical, tc.in, got, source, tc.want)
		}
	}
	if _, err := SameHomeRule(&url.URL{Host: "a b"}, &url.URL{Scheme: "http", Host: "a.test"}); err == nil {
		t.Error("a bad alias host accepted")
	}
}
