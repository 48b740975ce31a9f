package crawl

import (
	"net/url"
	"strconv"
	"testing"
)

func TestDigestFilter(t *testing.T) {
	f := newDigestFilter()
	const n = 100_000
	for i := range n {
		f.Add("sha1:" + strconv.Itoa(i))
	}
	for i := range n {
		if !f.MayContain("sha1:" + strconv.Itoa(i)) {
			t.Fatalf("added digest %d reported absent", i)
		}
	}
	fp := 0
	for i := n; i < 2*n; i++ {
		if f.MayContain("sha1:" + strconv.Itoa(i)) {
			fp++
		}
	}
	// 100,000 keys in 2^25 bits with 7 probes: about 1e-6 expected.
	if fp > 10 {
		t.Errorf("%d false positives in %d absent digests", fp, n)
	}
}

func TestHostOf(t *testing.T) {
	for _, raw := range []string{
		"http://a.test/", "http://a.test", "https://a.test:8443/x?y#z", "http://user:pw@a.test:81/p",
		"http://[::1]:8080/", "http://[2001:db8::1]/x", "http://a.test?q", "http://a.test#f",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostOf(raw); got != u.Hostname() {
			t.Errorf("hostOf(%q) = %q, want %q", raw, got, u.Hostname())
		}
	}
	if got := hostOf("not a url"); got != "" {
		t.Errorf("hostOf(not a url) = %q", got)
	}
}
