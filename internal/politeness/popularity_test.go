package politeness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/urlnorm"
)

var testTiers = []politeness.PopularityTier{{Top: 2, Factor: 0.25}, {Top: 4, Factor: 0.5}}

func TestParsePopularityFiles(t *testing.T) {
	type want struct {
		key    string
		rank   int
		factor float64
	}
	cases := []struct {
		name    string
		file    string
		entries int
		want    []want
		absent  []string
	}{
		{name: "tranco rank,domain", file: "testdata/popularity-tranco.csv", entries: 5,
			// www.example.co.uk (2) and api.example.co.uk (4) count for
			// example.co.uk, with the better rank.
			want:   []want{{"google.com", 1, 0.25}, {"www.google.com", 1, 0.25}, {"example.co.uk", 2, 0.25}, {"x.example.co.uk", 2, 0.25}, {"facebook.com", 3, 0.5}},
			absent: []string{"tiny.example", "other.org", "co.uk"}},
		{name: "majestic header", file: "testdata/popularity-majestic.csv", entries: 3,
			want:   []want{{"google.com", 1, 0.25}, {"facebook.com", 2, 0.25}, {"news.bbc.co.uk", 3, 0.5}},
			absent: []string{"com"}},
		{name: "plain domains ranked by order", file: "testdata/popularity-plain.txt", entries: 3,
			want: []want{{"google.com", 1, 0.25}, {"facebook.com", 2, 0.25}, {"en.wikipedia.org", 3, 0.5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := politeness.LoadPopularity(politeness.PopularityConfig{List: tc.file, Tiers: testTiers})
			if err != nil {
				t.Fatal(err)
			}
			if p.Entries() != tc.entries {
				t.Errorf("Entries = %d, want %d", p.Entries(), tc.entries)
			}
			for _, w := range tc.want {
				info, ok := p.Lookup(w.key)
				if !ok || info.Rank != w.rank || info.Factor != w.factor {
					t.Errorf("Lookup(%s) = %+v, %v; want rank %d factor %v", w.key, info, ok, w.rank, w.factor)
				}
			}
			for _, k := range tc.absent {
				if info, ok := p.Lookup(k); ok {
					t.Errorf("Lookup(%s) = %+v, want no tier", k, info)
				}
			}
		})
	}
}

func TestParsePopularityErrors(t *testing.T) {
	cases := []struct {
		name  string
		input string
		cfg   politeness.PopularityConfig
		want  string // substring of the error
	}{
		{name: "bad rank", input: "1,a.com\nx2,b.com\n", want: "list.csv:2: bad rank"},
		{name: "zero rank", input: "0,a.com\n", want: "list.csv:1: bad rank"},
		{name: "missing domain", input: "1,a.com\n2\n", want: "list.csv:2: 1 field(s), want at least 2"},
		{name: "empty domain", input: "1,a.com\n2,\n", want: "list.csv:2: empty domain"},
		{name: "bad character", input: "1,a.com\n# note\n\n2,b c.com\n", want: "list.csv:4: bad domain"},
		{name: "empty label", input: "a..com\n", want: "list.csv:1: bad domain"},
		{name: "csv in plain list", input: "a.com\n2,b.com\n", want: "list.csv:2: a CSV line"},
		{name: "header without domain", input: "rank,name\n1,a.com\n", want: "list.csv:1: header"},
		{name: "too many entries", input: "a.com\nb.com\nc.com\n", cfg: politeness.PopularityConfig{MaxEntries: 2}, want: "list.csv:3: more than 2 entries"},
		{name: "long line", input: "a.com\n" + strings.Repeat("b", 5000) + ".com\n", want: "list.csv:2: line longer than 4096 bytes"},
		{name: "no tiers", input: "a.com\n", cfg: politeness.PopularityConfig{Tiers: []politeness.PopularityTier{}}, want: "tiers is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Tiers == nil {
				cfg.Tiers = testTiers
			}
			_, err := politeness.ParsePopularity(strings.NewReader(tc.input), "list.csv", cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "politeness: ") {
				t.Fatalf("err %q lacks the package prefix", err)
			}
		})
	}
}

func TestParsePopularityDetails(t *testing.T) {
	in := "\ufeff1,Straße.example\r\n2,\"quoted.example\"\r\n3,192.0.2.7\r\n"
	p, err := politeness.ParsePopularity(strings.NewReader(in), "l", politeness.PopularityConfig{Tiers: []politeness.PopularityTier{{Top: 10, Factor: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"xn--strae-oqa.example", "quoted.example", "192.0.2.7"} {
		if _, ok := p.Lookup(k); !ok {
			t.Errorf("Lookup(%s): not found", k)
		}
	}
	if p.Len() != 3 {
		t.Errorf("Len = %d, want 3", p.Len())
	}
}

func TestPopularityConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		c    politeness.PopularityConfig
		want string
	}{
		{name: "factor zero", c: politeness.PopularityConfig{List: "x", Tiers: []politeness.PopularityTier{{Top: 1, Factor: 0}}}, want: "factor"},
		{name: "factor too large", c: politeness.PopularityConfig{List: "x", Tiers: []politeness.PopularityTier{{Top: 1, Factor: 101}}}, want: "factor"},
		{name: "top zero", c: politeness.PopularityConfig{List: "x", Tiers: []politeness.PopularityTier{{Top: 0, Factor: 1}}}, want: "top 0"},
		{name: "top twice", c: politeness.PopularityConfig{List: "x", Tiers: []politeness.PopularityTier{{Top: 5, Factor: 1}, {Top: 5, Factor: 2}}}, want: "given twice"},
		{name: "tiers without list", c: politeness.PopularityConfig{Tiers: []politeness.PopularityTier{{Top: 5, Factor: 1}}}, want: "list is empty"},
		{name: "max-entries", c: politeness.PopularityConfig{MaxEntries: -1}, want: "max-entries"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := politeness.Config{Popularity: tc.c}.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	if err := (politeness.Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
}

func TestLoadPopularityMissingFile(t *testing.T) {
	_, err := politeness.New(politeness.Config{Popularity: politeness.PopularityConfig{List: filepath.Join(t.TempDir(), "none.csv"), Tiers: testTiers}}, politeness.Backend{})
	if err == nil || !strings.Contains(err.Error(), "popularity list") {
		t.Fatalf("New with a missing list: %v", err)
	}
}

// writeList writes a popularity list into a temporary directory.
func writeList(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "top.csv")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGatePopularity(t *testing.T) {
	list := "1,h.example\n2,slow.example\n3,mid.example\n"
	tiers := []politeness.PopularityTier{{Top: 1, Factor: 0.25}, {Top: 2, Factor: 3}, {Top: 3, Factor: 0.01}}
	cases := []struct {
		name     string
		cfg      politeness.Config
		host     string
		robots   string
		manual   time.Duration
		override bool
		setMan   bool
		want     time.Duration
		wantRank int
	}{
		{name: "top tier quarter of default", host: "h.example", want: 250 * time.Millisecond, wantRank: 1},
		{name: "subdomain counts for its domain", host: "www.h.example", want: 250 * time.Millisecond, wantRank: 1},
		{name: "factor above 1 slows", host: "slow.example", want: 3 * time.Second, wantRank: 2},
		{name: "floor", host: "mid.example", want: 100 * time.Millisecond, wantRank: 3},
		{name: "custom floor", cfg: politeness.Config{Popularity: politeness.PopularityConfig{Floor: 40 * time.Millisecond}}, host: "mid.example", want: 40 * time.Millisecond, wantRank: 3},
		{name: "default under the floor stays", cfg: politeness.Config{DefaultDelay: 50 * time.Millisecond}, host: "h.example", want: 50 * time.Millisecond, wantRank: 1},
		{name: "not listed", host: "other.example", want: time.Second},
		{name: "robots crawl-delay not shortened", host: "h.example", robots: "User-agent: *\nCrawl-delay: 2\n", want: 2 * time.Second, wantRank: 1},
		{name: "robots request-rate not shortened", host: "h.example", robots: "User-agent: *\nRequest-rate: 1/4s\n", want: 4 * time.Second, wantRank: 1},
		{name: "manual delay not scaled", host: "h.example", setMan: true, manual: 800 * time.Millisecond, want: 800 * time.Millisecond},
		{name: "manual override not scaled", host: "h.example", setMan: true, manual: 700 * time.Millisecond, override: true, want: 700 * time.Millisecond},
		{name: "file delay not scaled", cfg: politeness.Config{Delays: []politeness.DelayRule{{Key: "h.example", Delay: 2 * time.Second}}}, host: "h.example", want: 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Popularity.List = writeList(t, t.TempDir(), list)
			cfg.Popularity.Tiers = tiers
			c := newClock()
			rs := politeness.NewMemoryRobotsStore()
			origin := "http://" + tc.host
			seedRobots(t, rs, origin, tc.robots, c.Now())
			g := newGate(t, cfg, politeness.Backend{Robots: rs, Now: c.Now})
			ctx := context.Background()
			if tc.setMan {
				if err := g.SetDelay(ctx, tc.host, tc.manual, tc.override); err != nil {
					t.Fatal(err)
				}
			}
			p := tryGranted(t, g, origin+"/a")
			if err := p.Done(politeness.Outcome{Status: 200}); err != nil {
				t.Fatal(err)
			}
			d := tryRefused(t, g, origin+"/b")
			if d.Delays.Effective != tc.want || d.RetryAfter != tc.want {
				t.Fatalf("effective %v (retry %v), want %v; delays %+v", d.Delays.Effective, d.RetryAfter, tc.want, d.Delays)
			}
			if d.Delays.Popularity.Rank != tc.wantRank {
				t.Fatalf("popularity %+v, want rank %d", d.Delays.Popularity, tc.wantRank)
			}
			if tc.wantRank > 0 && (d.Delays.Default != g.Config().DefaultDelay || d.Delays.Popularity.Domain == "") {
				t.Fatalf("breakdown %+v lacks the unscaled default or the domain", d.Delays)
			}
			st, err := g.Status(ctx, tc.host, origin)
			if err != nil {
				t.Fatal(err)
			}
			if st.Delays.Effective != tc.want {
				t.Fatalf("Status effective %v, want %v", st.Delays.Effective, tc.want)
			}
			c.Advance(tc.want)
			tryGranted(t, g, origin+"/b")
		})
	}
}

func TestGatePopularityCap(t *testing.T) {
	cfg := politeness.Config{DefaultDelay: 20 * time.Hour, Popularity: politeness.PopularityConfig{
		List: writeList(t, t.TempDir(), "h.example\n"), Tiers: []politeness.PopularityTier{{Top: 1, Factor: 100}}}}
	f := newFixture(t, cfg, "")
	st, err := f.g.Status(context.Background(), "h.example", "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Delays.Configured != 24*time.Hour {
		t.Fatalf("configured %v, want the 24h cap", st.Delays.Configured)
	}
}

func TestGatePopularityDomainKeys(t *testing.T) {
	dir := t.TempDir()
	cfg := politeness.Config{KeyMode: urlnorm.ByDomain, Popularity: politeness.PopularityConfig{
		List: writeList(t, dir, "www.h.example\n"), Tiers: []politeness.PopularityTier{{Top: 1, Factor: 0.5}}}}
	f := newFixture(t, cfg, "")
	p := tryGranted(t, f.g, "http://h.example/")
	_ = p.Done(politeness.Outcome{Status: 200})
	if d := tryRefused(t, f.g, "http://h.example/"); d.Delays.Effective != 500*time.Millisecond || d.Key != "h.example" {
		t.Fatalf("decision %+v, want 500ms on key h.example", d)
	}
}

func TestGatePopularityReload(t *testing.T) {
	dir := t.TempDir()
	tiers := []politeness.PopularityTier{{Top: 1, Factor: 0.5}}
	list := writeList(t, dir, "h.example\n")
	f := newFixture(t, politeness.Config{Popularity: politeness.PopularityConfig{List: list, Tiers: tiers}}, "")
	ctx := context.Background()
	effective := func() time.Duration {
		t.Helper()
		st, err := f.g.Status(ctx, "h.example", "http://h.example")
		if err != nil {
			t.Fatal(err)
		}
		return st.Delays.Configured
	}
	if got := effective(); got != 500*time.Millisecond {
		t.Fatalf("before reload: %v, want 500ms", got)
	}
	// A changed factor applies at once.
	if err := f.g.SetConfigPopularity(politeness.PopularityConfig{List: list, Tiers: []politeness.PopularityTier{{Top: 1, Factor: 0.3}}}); err != nil {
		t.Fatal(err)
	}
	if got := effective(); got != 300*time.Millisecond {
		t.Fatalf("after factor change: %v, want 300ms", got)
	}
	// A changed file is read again even with the same configuration.
	if err := os.WriteFile(list, []byte("other.example\nh.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.g.SetConfigPopularity(politeness.PopularityConfig{List: list, Tiers: []politeness.PopularityTier{{Top: 1, Factor: 0.3}}}); err != nil {
		t.Fatal(err)
	}
	if got := effective(); got != time.Second {
		t.Fatalf("after the file changed (h.example now rank 2): %v, want 1s", got)
	}
	// A broken list keeps the previous one.
	bad := writeList(t, t.TempDir(), "1,ok.example\nbad\n")
	if err := f.g.SetConfigPopularity(politeness.PopularityConfig{List: bad, Tiers: tiers}); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("broken list: err %v, want a line-2 error", err)
	}
	if f.g.Popularity().Source() != list {
		t.Fatalf("popularity source %q after a failed reload, want %q", f.g.Popularity().Source(), list)
	}
	// Off.
	if err := f.g.SetConfigPopularity(politeness.PopularityConfig{}); err != nil {
		t.Fatal(err)
	}
	if got := effective(); got != time.Second || f.g.Popularity() != nil {
		t.Fatalf("off: %v, want 1s", got)
	}
}

func TestListDelaysScaled(t *testing.T) {
	dir := t.TempDir()
	ds := politeness.NewMemoryDelayStore()
	ctx := context.Background()
	// A key with a recorded robots delay and no manual one.
	if err := ds.PutDelay(ctx, politeness.DelayEntry{Key: "h.example", Robots: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	g := newGate(t, politeness.Config{Popularity: politeness.PopularityConfig{List: writeList(t, dir, "h.example\n"),
		Tiers: []politeness.PopularityTier{{Top: 1, Factor: 0.5}}}}, politeness.Backend{Delays: ds})
	list, err := g.ListDelays(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != "h.example" || list[0].Current != 500*time.Millisecond ||
		list[0].Popularity == nil || list[0].Popularity.Rank != 1 || list[0].Bandwidth != nil {
		t.Fatalf("ListDelays = %+v, want h.example current 500ms", list)
	}
}

func FuzzParsePopularity(f *testing.F) {
	for _, file := range []string{"testdata/popularity-tranco.csv", "testdata/popularity-majestic.csv", "testdata/popularity-plain.txt"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("rank,domain\n1,a.com\n")
	f.Add("\ufeff# c\n\n1,\"x.org\"\r\n")
	f.Add("a..b\n")
	f.Add("1,Straße.de\n")
	cfg := politeness.PopularityConfig{Tiers: []politeness.PopularityTier{{Top: 3, Factor: 0.5}, {Top: 100, Factor: 2}}, MaxEntries: 1000}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := politeness.ParsePopularity(strings.NewReader(in), "fuzz", cfg)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "politeness: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		if p.Len() > p.Entries() || p.Entries() > cfg.MaxEntries {
			t.Fatalf("Len %d, Entries %d", p.Len(), p.Entries())
		}
		for _, k := range []string{"a.com", "x.org", "", "1.2.3.4"} {
			if info, ok := p.Lookup(k); ok && (info.Rank < 1 || info.Rank > 100 || info.Factor <= 0) {
				t.Fatalf("Lookup(%s) = %+v", k, info)
			}
		}
	})
}
