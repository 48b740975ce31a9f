package hostmap

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

// learnRule sets the learned rule "ORIGIN>TARGET[,TARGET...]" in m: a
// Mirror-site rule when it has two targets or more, else a Host rule.
func learnRule(t *testing.T, m *Map, rule string) error {
	t.Helper()
	from, to, ok := strings.Cut(rule, ">")
	o, err := url.Parse(from)
	if !ok || err != nil || o.Host == "" {
		t.Fatalf("bad rule %q", rule)
	}
	var targets []hostSpec
	for _, s := range strings.Split(to, ",") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			t.Fatalf("bad target %q in %q", s, rule)
		}
		targets = append(targets, hostSpec{scheme: u.Scheme, host: u.Hostname(), port: u.Port()})
	}
	r := &hostRule{to: targets[0], source: SourceHost}
	if len(targets) > 1 {
		r.mirrors, r.source = targets, SourceMirror
	}
	_, err = m.setLearned(o.Scheme, o.Host, r)
	return err
}

// endOf returns where raw ends up (itself when it stays) and the source
// of the move; a loop fails the test.
func endOf(t *testing.T, m *Map, raw string) (string, string) {
	t.Helper()
	u, err := urlnorm.Normalize(raw, urlnorm.CrawlDefaults())
	if err != nil {
		t.Fatal(err)
	}
	got, source, loop := m.Resolve(u, ProbeNone)
	if loop {
		t.Fatalf("%s: rewrite loop", raw)
	}
	if got == nil {
		return u.String(), ""
	}
	return got.String(), source
}

// pathsFor returns, for each of mirrors, a path that rule "ORIGIN>M1,M2..."
// gives to that mirror.
func pathsFor(t *testing.T, rule string, mirrors ...string) map[string]string {
	t.Helper()
	m := newMap(urlnorm.CrawlDefaults(), 10)
	if err := learnRule(t, m, rule); err != nil {
		t.Fatal(err)
	}
	from, _, _ := strings.Cut(rule, ">")
	out := map[string]string{}
	for i := 0; i < 1000 && len(out) < len(mirrors); i++ {
		p := fmt.Sprintf("/p%d.html", i)
		u, _ := endOf(t, m, from+p)
		h := normURL(t, u).Host
		if _, ok := out[h]; !ok {
			out[h] = p
		}
	}
	for _, h := range mirrors {
		if out[h] == "" {
			t.Fatalf("no path found for mirror %s", h)
		}
	}
	return out
}

// TestMirrorRepick: where a URL on a mirror goes, with the rules that
// come before the re-pick and those that keep it off.
func TestMirrorRepick(t *testing.T) {
	const base = "http://o.test>http://m1.test,http://m2.test,http://m3.test"
	p := pathsFor(t, base, "m1.test", "m2.test", "m3.test")
	tests := []struct {
		name    string
		ops     []string
		learned []string // after base
		noBase  bool
		in      string
		want    string // "" stays
		source  string
	}{
		{name: "the origin's URL goes to its path's mirror", in: "http://o.test" + p["m2.test"],
			want: "http://m2.test" + p["m2.test"], source: SourceMirror},
		{name: "a mirror's URL is re-picked onto the same mirror", in: "http://m1.test" + p["m2.test"] + "?q=1",
			want: "http://m2.test" + p["m2.test"] + "?q=1", source: SourceMirror},
		{name: "from each mirror", in: "http://m3.test" + p["m1.test"],
			want: "http://m1.test" + p["m1.test"], source: SourceMirror},
		{name: "a mirror's URL on its own path stays", in: "http://m2.test" + p["m2.test"]},
		{name: "a mirror under another scheme is another origin", in: "https://m1.test" + p["m2.test"]},
		{name: "a mirror on another port is another origin", in: "http://m1.test:8080" + p["m2.test"]},
		{name: "a default port is the mirror", in: "http://m1.test:80" + p["m2.test"],
			want: "http://m2.test" + p["m2.test"], source: SourceMirror},
		{name: "other hosts untouched", in: "http://x.test" + p["m2.test"]},
		{name: "an operator pin keeps a mirror", ops: []string{"m1.test=m1.test"}, in: "http://m1.test" + p["m2.test"]},
		{name: "an operator alias of a mirror, then the re-pick", ops: []string{"www.m1.test=m1.test"},
			in: "http://www.m1.test" + p["m3.test"], want: "http://m3.test" + p["m3.test"], source: SourceOperator},
		{name: "the division before a mirror's own rule", learned: []string{"http://m1.test>http://z.test"},
			in: "http://m1.test" + p["m3.test"], want: "http://m3.test" + p["m3.test"], source: SourceMirror},
		{name: "a mirror's own rule moves the paths left on it", learned: []string{"http://m1.test>http://z.test"},
			in: "http://m1.test" + p["m1.test"], want: "http://z.test" + p["m1.test"], source: SourceHost},
		{name: "the origin's URL follows the mirror's rule", learned: []string{"http://m1.test>http://z.test"},
			in: "http://o.test" + p["m1.test"], want: "http://z.test" + p["m1.test"], source: SourceMirror},
		{name: "a mirror named by two origins is re-picked by none", learned: []string{"http://q.test>http://m1.test,http://m9.test"},
			in: "http://m1.test" + p["m2.test"]},
		{name: "its siblings still are", learned: []string{"http://q.test>http://m1.test,http://m9.test"},
			in: "http://m2.test" + p["m3.test"], want: "http://m3.test" + p["m3.test"], source: SourceMirror},
		{name: "a single mirror's URLs stay", noBase: true, learned: []string{"http://o.test>http://m1.test"},
			in: "http://m1.test/x"},
		{name: "a Host target's URLs stay", noBase: true, learned: []string{"http://www.o.test>http://o.test"},
			in: "http://o.test/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := testHostMap(t, tc.ops, nil)
			rules := tc.learned
			if !tc.noBase {
				rules = append([]string{base}, rules...)
			}
			for _, r := range rules {
				if err := learnRule(t, m, r); err != nil {
					t.Fatalf("%s: %v", r, err)
				}
			}
			got, source := endOf(t, m, tc.in)
			want := tc.want
			if want == "" {
				want = normURL(t, tc.in).String()
			}
			if got != want || source != tc.source {
				t.Errorf("%s → %s (%q), want %s (%q)", tc.in, got, source, want, tc.source)
			}
		})
	}
}

// TestMirrorRepickConverges: for many paths, the origin's URL and the
// URL on every mirror end on one URL, on a mirror, that stays where it
// is; the mirrors share the paths; the order of the Mirror-site lines
// changes nothing.
func TestMirrorRepickConverges(t *testing.T) {
	names := []string{"http://o.test", "http://m1.test", "http://m2.test", "https://m3.test:8443"}
	ends := func(rule string) map[string]string {
		t.Helper()
		m := newMap(urlnorm.CrawlDefaults(), 10)
		if err := learnRule(t, m, rule); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for i := range 300 {
			p := fmt.Sprintf("/d%d/page-%d.html?x=%d", i%5, i, i%3)
			end, _ := endOf(t, m, names[0]+p)
			for _, n := range names[1:] {
				if got, _ := endOf(t, m, n+p); got != end {
					t.Errorf("%s%s ends on %s, the origin's URL on %s", n, p, got, end)
				}
			}
			if again, source := endOf(t, m, end); again != end || source != "" {
				t.Errorf("%s moves on to %s", end, again)
			}
			out[p] = end
		}
		return out
	}
	first := ends("http://o.test>http://m1.test,http://m2.test,https://m3.test:8443")
	load := map[string]int{}
	for _, e := range first {
		load[normURL(t, e).Host]++
	}
	if len(load) != 3 {
		t.Errorf("load %v, want the three mirrors", load)
	}
	if again := ends("http://o.test>https://m3.test:8443,http://m2.test,http://m1.test"); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Error("reordered Mirror-site lines move URLs")
	}
}

// TestMirrorOwnRulesNoLoop: mirrors that have robots.txt rules of their
// own, learned before or after the origin's, never make a loop: every URL
// ends on a URL that stays, and the names of a path that should converge
// do (hostmap.go).
func TestMirrorOwnRulesNoLoop(t *testing.T) {
	const origin = "http://o.test>http://m1.test,http://m2.test"
	tests := []struct {
		name     string
		mirrors  []string // the mirrors' own rules
		converge []string // names of a path that end on one URL
		// convergeLater, when set, is converge when the mirrors' rules
		// are learned first.
		convergeLater []string
	}{
		{"mirrors name the origin as Host", []string{"http://m1.test>http://o.test", "http://m2.test>http://o.test"},
			[]string{"o", "m1", "m2"}, nil},
		{"mirrors copy the origin's Mirror-site lines", []string{"http://m1.test>http://m2.test", "http://m2.test>http://m1.test"},
			[]string{"o", "m1", "m2"}, nil},
		{"a mirror names a sibling as Host", []string{"http://m1.test>http://m2.test"}, []string{"o", "m1", "m2"}, nil},
		{"a mirror with mirrors of its own", []string{"http://m1.test>http://x.test,http://y.test"}, []string{"o", "m1", "m2"}, nil},
		// Learned first, the mirror's rules make m1 lead back to the
		// origin (through x): m1 is left out of the origin's mirrors.
		{"a mirror's own mirrors name the origin", []string{"http://m1.test>http://x.test,http://y.test", "http://x.test>http://o.test"},
			[]string{"o", "m1", "m2"}, []string{"o", "m2"}},
		{"a mirror's Host leads back through another site", []string{"http://m1.test>http://w.test", "http://w.test>http://o.test"},
			[]string{"o", "m1", "m2"}, nil},
		{"two origins share a mirror", []string{"http://q.test>http://m1.test,http://m3.test"}, []string{"o", "m2"}, nil},
		{"a mirror declares the origin its mirror", []string{"http://m2.test>http://o.test,http://m1.test"}, []string{"o", "m1", "m2"}, nil},
	}
	all := []string{"o", "m1", "m2", "m3", "q", "w", "x", "y"}
	for _, tc := range tests {
		for _, order := range []string{"origin first", "mirrors first", "resumed"} {
			t.Run(tc.name+"/"+order, func(t *testing.T) {
				rules := append([]string{origin}, tc.mirrors...)
				if order != "origin first" {
					rules = append(append([]string(nil), tc.mirrors...), origin)
				}
				m := newMap(urlnorm.CrawlDefaults(), 20)
				for _, r := range rules {
					if err := learnRule(t, m, r); err != nil && !errors.Is(err, errHostLoop) {
						t.Fatalf("%s: %v", r, err)
					}
				}
				if order == "resumed" {
					// A resume loads what was kept, in the store's order:
					// the same rules, no loop, the same ends.
					m2 := newMap(urlnorm.CrawlDefaults(), 20)
					for _, a := range []string{"m1.test", "m2.test", "o.test", "q.test", "w.test", "x.test"} {
						if r, ok := m.findLearnedLocked("http", a); ok {
							if _, err := m2.restoreLearned("http", a, &r); err != nil {
								t.Fatalf("reloading %s: %v", a, err)
							}
						}
					}
					for i := range 40 {
						for _, n := range all {
							u := fmt.Sprintf("http://%s.test/r%d", n, i)
							if a, b := fmtEnd(t, m, u), fmtEnd(t, m2, u); a != b {
								t.Errorf("%s ends on %s, after reloading on %s", u, a, b)
							}
						}
					}
				}
				converge := tc.converge
				if order != "origin first" && tc.convergeLater != nil {
					converge = tc.convergeLater
				}
				for i := range 100 {
					p := fmt.Sprintf("/r%d", i)
					end := ""
					for _, n := range all {
						got, _ := endOf(t, m, "http://"+n+".test"+p)
						if again, _ := endOf(t, m, got); again != got {
							t.Errorf("%s.test%s ends on %s, which moves on to %s", n, p, got, again)
						}
						if !slices.Contains(converge, n) {
							continue
						}
						if end == "" {
							end = got
						} else if got != end {
							t.Errorf("%s.test%s ends on %s, %s.test%s on %s", n, p, got, converge[0], p, end)
						}
					}
				}
			})
		}
	}
}

func fmtEnd(t *testing.T, m *Map, raw string) string {
	t.Helper()
	e, _ := endOf(t, m, raw)
	return e
}

// FuzzMirrorRulesNoLoop learns and drops rules read from the fuzzer's
// bytes among six hosts (Host rules, Mirror-site rules of two or three
// mirrors, in any order) and checks that no URL's rewrite loops and every
// URL ends, after one or more resolves (a chain is cut after
// maxRewriteChain rules), on one that stays: the loop check holds for
// any order of learning and dropping.
func FuzzMirrorRulesNoLoop(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 0, 0})
	f.Add([]byte{0, 1, 2, 1, 0, 0, 2, 1, 0})
	f.Add([]byte{1, 0, 0, 0, 1, 2, 2, 1, 0, 3, 4, 5, 3, 0})
	f.Add([]byte{2, 0, 1, 2, 1, 1, 0, 2, 3, 0, 0, 1, 2})
	hosts := []string{"o", "m1", "m2", "x", "y", "w"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 60 {
			return
		}
		m := newMap(urlnorm.CrawlDefaults(), 100)
		for len(data) >= 2 {
			if data[0]%4 == 3 { // drop the rule of a host
				h := hosts[int(data[1])%len(hosts)] + ".test"
				if _, err := m.setLearned("http", h, nil); err != nil {
					t.Fatal(err)
				}
				data = data[2:]
				continue
			}
			n := 1 + int(data[0]%4) // targets
			if len(data) < 1+1+n {
				break
			}
			from := hosts[int(data[1])%len(hosts)]
			var ts []string
			for _, b := range data[2 : 2+n] {
				ts = append(ts, "http://"+hosts[int(b)%len(hosts)]+".test")
			}
			data = data[2+n:]
			err := learnRule(t, m, "http://"+from+".test>"+strings.Join(ts, ","))
			if err != nil && !errors.Is(err, errHostLoop) {
				t.Fatal(err)
			}
		}
		for i := range 24 {
			for _, h := range hosts {
				raw := fmt.Sprintf("http://%s.test/f%d", h, i)
				u := normURL(t, raw)
				// A chain longer than maxRewriteChain is cut and goes on
				// when the URL is leased: follow it until it stays, and
				// never back to a URL already passed.
				passed := []string{u.String()}
				for {
					got, _, loop := m.Resolve(u, ProbeNone)
					if loop {
						t.Fatalf("%s loops (after %v)", raw, passed)
					}
					if got == nil {
						break
					}
					if slices.Contains(passed, got.String()) {
						t.Fatalf("%s comes back to %s (after %v)", raw, got, passed)
					}
					if len(passed) > 2*len(hosts) {
						t.Fatalf("%s never stays: %v", raw, passed)
					}
					passed = append(passed, got.String())
					u = got
				}
			}
		}
	})
}
