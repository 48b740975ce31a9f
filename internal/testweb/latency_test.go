package testweb

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

func TestParseLatency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		lo, hi time.Duration
		bad    bool
	}{
		{name: "range", in: "100ms-300ms", lo: 100 * time.Millisecond, hi: 300 * time.Millisecond},
		{name: "spaces", in: " 1s - 2s ", lo: time.Second, hi: 2 * time.Second},
		{name: "fixed", in: "250ms", lo: 250 * time.Millisecond, hi: 250 * time.Millisecond},
		{name: "zero", in: "0s-0s"},
		{name: "max", in: "0s-1m", hi: time.Minute},
		{name: "reversed", in: "300ms-100ms", bad: true},
		{name: "over max", in: "1s-2m", bad: true},
		{name: "negative", in: "-1s", bad: true},
		{name: "empty", in: "", bad: true},
		{name: "no unit", in: "100-300", bad: true},
		{name: "three parts", in: "1s-2s-3s", bad: true},
		{name: "too long", in: "1s-" + string(bytes.Repeat([]byte("9"), 100)) + "s", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, err := ParseLatency(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("ParseLatency(%q) = %v, %v; want an error", tc.in, lo, hi)
				}
				return
			}
			if err != nil || lo != tc.lo || hi != tc.hi {
				t.Fatalf("ParseLatency(%q) = %v, %v, %v; want %v, %v", tc.in, lo, hi, err, tc.lo, tc.hi)
			}
		})
	}
}

func FuzzParseLatency(f *testing.F) {
	for _, s := range []string{"100ms-300ms", "1s", "0s-0s", "300ms-100ms", "-", "1h-2h", " 5ms - 6ms "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, err := ParseLatency(s)
		if err != nil {
			return
		}
		if lo < 0 || lo > hi || hi > MaxLatency {
			t.Fatalf("ParseLatency(%q) = %v, %v: out of range", s, lo, hi)
		}
		// Whatever parses makes a valid web.
		if err := (Config{LatencyMin: lo, LatencyMax: hi}).Validate(); err != nil {
			t.Fatalf("ParseLatency(%q) = %v, %v, which Validate rejects: %v", s, lo, hi, err)
		}
	})
}

func TestLatencyValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{
		{LatencyMin: 2 * time.Second, LatencyMax: time.Second},
		{LatencyMin: -time.Second},
		{LatencyMax: 2 * MaxLatency},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(latency %v-%v) succeeded; want an error", c.LatencyMin, c.LatencyMax)
		}
	}
}

// TestLatencyDeterministic checks that the wait of each URL is in the
// range, the same for the same seed and URL (another Web, host in another
// case, with a port), different across URLs and seeds.
func TestLatencyDeterministic(t *testing.T) {
	t.Parallel()
	lo, hi := 100*time.Millisecond, 300*time.Millisecond
	cfg := Config{Plain: true, Sites: 50, PagesPerSite: 20, LatencyMin: lo, LatencyMax: hi}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cfg)
	cfg.Seed = 7
	other, _ := New(cfg)
	distinct := map[time.Duration]bool{}
	sameAsOtherSeed := 0
	n := 0
	for _, s := range a.Sites() {
		for p := 0; p < 20; p++ {
			target := fmt.Sprintf("/page-%d.html", p)
			d := a.Latency(s.Host, target)
			if d < lo || d > hi {
				t.Fatalf("Latency(%s, %s) = %v, outside [%v, %v]", s.Host, target, d, lo, hi)
			}
			if d2 := b.Latency(s.Host, target); d2 != d {
				t.Fatalf("Latency(%s, %s) = %v on one web, %v on another built from the same Config", s.Host, target, d, d2)
			}
			upper := bytes.ToUpper([]byte(s.Host))
			if d2 := a.Latency(string(upper)+":80", target); d2 != d {
				t.Fatalf("Latency(%s:80 upper case) = %v, want %v as for %s", upper, d2, d, s.Host)
			}
			if other.Latency(s.Host, target) == d {
				sameAsOtherSeed++
			}
			distinct[d] = true
			n++
		}
	}
	if len(distinct) < n*9/10 {
		t.Errorf("%d distinct waits for %d URLs; want them spread over the range", len(distinct), n)
	}
	if sameAsOtherSeed > n/10 {
		t.Errorf("%d of %d URLs wait the same with seed 7 as with seed 0; want the seed to matter", sameAsOtherSeed, n)
	}
	fixed, _ := New(Config{LatencyMin: hi, LatencyMax: hi})
	if d := fixed.Latency("site-0001.test", "/"); d != hi {
		t.Errorf("fixed latency: Latency = %v, want %v", d, hi)
	}
	none, _ := New(Config{})
	if d := none.Latency("site-0001.test", "/"); d != 0 {
		t.Errorf("no latency configured: Latency = %v, want 0", d)
	}
}

// TestLatencyServed checks, on the fake clock of a synctest bubble, that
// the handler answers each request exactly Latency after it arrives, with
// the same bytes as a web without latency; that robots.txt waits too, the
// listener's own /health does not, and a cancelled request stops waiting.
func TestLatencyServed(t *testing.T) {
	t.Parallel()
	lo, hi := 100*time.Millisecond, 300*time.Millisecond
	slow, err := New(Config{Plain: true, Sites: 5, PagesPerSite: 5, LatencyMin: lo, LatencyMax: hi})
	if err != nil {
		t.Fatal(err)
	}
	fast, _ := New(Config{Plain: true, Sites: 5, PagesPerSite: 5})
	tests := []struct {
		name, host, target string
		wait               bool
	}{
		{name: "home", host: "site-0000.test", target: "/", wait: true},
		{name: "page", host: "site-0003.test", target: "/page-2.html", wait: true},
		{name: "robots", host: "site-0001.test", target: "/robots.txt", wait: true},
		{name: "not found", host: "site-0001.test", target: "/nothing-here", wait: true},
		{name: "health", host: "127.0.0.1:8081", target: "/health", wait: false},
		{name: "unknown host", host: "elsewhere.example", target: "/", wait: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				get := func(w *Web) (*httptest.ResponseRecorder, time.Duration) {
					r := httptest.NewRequest(http.MethodGet, "http://"+tc.host+tc.target, nil)
					rec := httptest.NewRecorder()
					start := time.Now()
					w.Handler().ServeHTTP(rec, r)
					return rec, time.Since(start)
				}
				want := time.Duration(0)
				if tc.wait {
					want = slow.Latency(tc.host, tc.target)
					if want < lo || want > hi {
						t.Fatalf("Latency = %v, outside [%v, %v]", want, lo, hi)
					}
				}
				got, took := get(slow)
				if took != want {
					t.Errorf("response took %v on the fake clock, want %v", took, want)
				}
				ref, took := get(fast)
				if took != 0 {
					t.Errorf("without latency the response took %v, want 0", took)
				}
				if got.Code != ref.Code || !bytes.Equal(got.Body.Bytes(), ref.Body.Bytes()) {
					t.Errorf("with latency: %d and %d bytes, without: %d and %d bytes; want the same response",
						got.Code, got.Body.Len(), ref.Code, ref.Body.Len())
				}
			})
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://site-0000.test/", nil)
			rec := httptest.NewRecorder()
			done := make(chan time.Duration)
			start := time.Now()
			go func() {
				slow.Handler().ServeHTTP(rec, r)
				done <- time.Since(start)
			}()
			time.Sleep(lo / 2) // fake clock: exactly half the minimum
			cancel()
			if took := <-done; took != lo/2 {
				t.Errorf("cancelled request returned after %v, want %v", took, lo/2)
			}
			if rec.Body.Len() != 0 {
				t.Errorf("cancelled request wrote %d body bytes, want none", rec.Body.Len())
			}
		})
	})
}
