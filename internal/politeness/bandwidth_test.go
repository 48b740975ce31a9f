package politeness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// testClasses: under 10 kB/s slow (×4), from 1 MB/s fast (×0.25); in
// between "normal" (×1).
var testClasses = []politeness.BandwidthClass{
	{Name: "fast", MinBytesPerSecond: 1_000_000, Factor: 0.25},
	{Name: "slow", MinBytesPerSecond: 0, Factor: 4},
	{Name: "normal", MinBytesPerSecond: 10_000, Factor: 1},
}

// fetchN makes n fetches of host, each of bytes in took, waiting out the
// delay between them on the manual clock.
func fetchN(t *testing.T, f *fixture, host string, n int, o politeness.Outcome) {
	t.Helper()
	for range n {
		p := tryGranted(t, f.g, "http://"+host+"/")
		f.clock.Advance(o.Duration)
		if err := p.Done(o); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(10 * time.Minute) // past any delay, within MaxAge
	}
}

func TestGateBandwidth(t *testing.T) {
	cases := []struct {
		name      string
		cfg       politeness.BandwidthConfig
		robots    string
		setMan    bool
		outcomes  []politeness.Outcome
		wantClass string
		want      time.Duration
	}{
		{name: "fast host", outcomes: repeat(3, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}),
			wantClass: "fast", want: 250 * time.Millisecond},
		{name: "slow host", outcomes: repeat(3, politeness.Outcome{Status: 200, Bytes: 10_000, Duration: 2 * time.Second}),
			wantClass: "slow", want: 4 * time.Second},
		{name: "normal host", outcomes: repeat(3, politeness.Outcome{Status: 200, Bytes: 100_000, Duration: time.Second}),
			wantClass: "normal", want: time.Second},
		{name: "too few samples", outcomes: repeat(2, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}),
			want: time.Second},
		{name: "min-samples 1", cfg: politeness.BandwidthConfig{MinSamples: 1}, outcomes: repeat(1, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}),
			wantClass: "fast", want: 250 * time.Millisecond},
		{name: "small bodies give no sample", outcomes: repeat(5, politeness.Outcome{Status: 200, Bytes: 100, Duration: time.Microsecond}),
			want: time.Second},
		{name: "errors give no sample", outcomes: repeat(5, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second, Err: errors.New("cut")}),
			want: time.Second},
		{name: "non-2xx give no sample", outcomes: repeat(5, politeness.Outcome{Status: 404, Bytes: 2_000_000, Duration: time.Second}),
			want: time.Second},
		{name: "floor", cfg: politeness.BandwidthConfig{Classes: []politeness.BandwidthClass{{Name: "x", Factor: 0.01}}},
			outcomes: repeat(3, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}), wantClass: "x", want: 100 * time.Millisecond},
		{name: "robots not shortened", robots: "User-agent: *\nCrawl-delay: 3\n",
			outcomes: repeat(3, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}), wantClass: "fast", want: 3 * time.Second},
		{name: "manual not scaled", setMan: true,
			outcomes: repeat(3, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}), want: 1500 * time.Millisecond},
		{name: "smoothed mean", cfg: politeness.BandwidthConfig{Smoothing: 0.5, MinSamples: 2},
			// 1.5 MB/s (fast alone) then 0.5 kB/s: mean 750 kB/s, normal.
			outcomes:  []politeness.Outcome{{Status: 200, Bytes: 1_500_000, Duration: time.Second}, {Status: 200, Bytes: 10_000, Duration: 20 * time.Second}},
			wantClass: "normal", want: time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Classes == nil {
				cfg.Classes = testClasses
			}
			f := newFixture(t, politeness.Config{Bandwidth: cfg}, tc.robots)
			ctx := context.Background()
			if tc.setMan {
				if err := f.g.SetDelay(ctx, "h.example", 1500*time.Millisecond, false); err != nil {
					t.Fatal(err)
				}
			}
			for _, o := range tc.outcomes {
				fetchN(t, f, "h.example", 1, o)
			}
			p := tryGranted(t, f.g, "http://h.example/")
			_ = p.Done(politeness.Outcome{Status: 200}) // no Bytes: no sample
			d := tryRefused(t, f.g, "http://h.example/")
			if d.Delays.Effective != tc.want || d.Delays.Bandwidth.Class != tc.wantClass {
				t.Fatalf("effective %v class %q, want %v %q; delays %+v", d.Delays.Effective, d.Delays.Bandwidth.Class, tc.want, tc.wantClass, d.Delays)
			}
			if tc.wantClass != "" && d.Delays.Bandwidth.BytesPerSecond <= 0 {
				t.Fatalf("bandwidth %+v lacks the rate", d.Delays.Bandwidth)
			}
		})
	}
}

func repeat(n int, o politeness.Outcome) []politeness.Outcome {
	out := make([]politeness.Outcome, n)
	for i := range out {
		out[i] = o
	}
	return out
}

func TestGateBandwidthAndPopularityCombine(t *testing.T) {
	cfg := politeness.Config{
		DefaultDelay: 2 * time.Second,
		Bandwidth:    politeness.BandwidthConfig{Classes: testClasses, MinSamples: 1},
		Popularity: politeness.PopularityConfig{List: writeList(t, t.TempDir(), "h.example\n"),
			Tiers: []politeness.PopularityTier{{Top: 1, Factor: 0.5}}},
	}
	f := newFixture(t, cfg, "")
	fetchN(t, f, "h.example", 1, politeness.Outcome{Status: 200, Bytes: 10_000, Duration: 10 * time.Second}) // 1 kB/s: slow ×4
	p := tryGranted(t, f.g, "http://h.example/")
	_ = p.Done(politeness.Outcome{Status: 200})
	d := tryRefused(t, f.g, "http://h.example/")
	// 2s × 0.5 × 4 = 4s.
	if d.Delays.Effective != 4*time.Second || d.Delays.Default != 2*time.Second {
		t.Fatalf("delays %+v, want 4s from a 2s default", d.Delays)
	}
}

func TestGateBandwidthExpiresAndBounds(t *testing.T) {
	cfg := politeness.Config{Bandwidth: politeness.BandwidthConfig{Classes: testClasses, MinSamples: 1, MaxAge: 2 * time.Hour, MaxHosts: 3}}
	f := newFixture(t, cfg, "")
	ctx := context.Background()
	fast := politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second}
	fetchN(t, f, "h.example", 1, fast)
	st, _ := f.g.Status(ctx, "h.example", "")
	if st.Delays.Bandwidth.Class != "fast" {
		t.Fatalf("class %+v, want fast", st.Delays.Bandwidth)
	}
	f.clock.Advance(2 * time.Hour)
	st, _ = f.g.Status(ctx, "h.example", "")
	if st.Delays.Bandwidth.Class != "" || st.Delays.Configured != time.Second {
		t.Fatalf("after max-age: %+v, want no class", st.Delays)
	}
	for _, h := range []string{"a.example", "b.example", "c.example", "d.example", "e.example"} {
		seedRobots(t, f.robots, "http://"+h, "", f.clock.Now())
		fetchN(t, f, h, 1, fast)
	}
	if n := f.g.BandwidthHosts(); n > 3 {
		t.Fatalf("BandwidthHosts = %d, want at most max-hosts 3", n)
	}
}

func TestGateBandwidthReload(t *testing.T) {
	f := newFixture(t, politeness.Config{Bandwidth: politeness.BandwidthConfig{Classes: testClasses, MinSamples: 1}}, "")
	fetchN(t, f, "h.example", 1, politeness.Outcome{Status: 200, Bytes: 2_000_000, Duration: time.Second})
	ctx := context.Background()
	if err := f.g.SetConfigBandwidth(politeness.BandwidthConfig{MinSamples: 1, Classes: []politeness.BandwidthClass{{Name: "fast", MinBytesPerSecond: 1_000_000, Factor: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.g.Status(ctx, "h.example", "")
	if st.Delays.Configured != 500*time.Millisecond {
		t.Fatalf("after reload: %+v, want 500ms (rate kept, new factor)", st.Delays)
	}
	if err := f.g.SetConfigBandwidth(politeness.BandwidthConfig{}); err != nil {
		t.Fatal(err)
	}
	st, _ = f.g.Status(ctx, "h.example", "")
	if st.Delays.Configured != time.Second || st.Delays.Bandwidth != (politeness.BandwidthInfo{}) {
		t.Fatalf("off: %+v, want 1s and no bandwidth info", st.Delays)
	}
	if err := f.g.SetConfigBandwidth(politeness.BandwidthConfig{Classes: []politeness.BandwidthClass{{Factor: -1}}}); err == nil {
		t.Fatal("a negative factor was accepted")
	}
}

func TestBandwidthConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		c    politeness.BandwidthConfig
		want string
	}{
		{name: "factor", c: politeness.BandwidthConfig{Classes: []politeness.BandwidthClass{{Factor: 0}}}, want: "factor"},
		{name: "negative rate", c: politeness.BandwidthConfig{Classes: []politeness.BandwidthClass{{MinBytesPerSecond: -1, Factor: 1}}}, want: "negative"},
		{name: "duplicate rate", c: politeness.BandwidthConfig{Classes: []politeness.BandwidthClass{{Factor: 1}, {Factor: 2}}}, want: "twice"},
		{name: "smoothing", c: politeness.BandwidthConfig{Smoothing: 1.5}, want: "smoothing"},
		{name: "max-hosts", c: politeness.BandwidthConfig{MaxHosts: -1}, want: "max-hosts"},
		{name: "min-bytes", c: politeness.BandwidthConfig{MinBytes: -1}, want: "min-bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := politeness.Config{Bandwidth: tc.c}.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}
