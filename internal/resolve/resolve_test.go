package resolve

import (
	"context"
	"net"
	"testing"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	r, err := New([]string{
		"exact.test=127.0.0.2:81",
		"only.test:8080=127.0.0.3:82",
		"*.wild.test=127.0.0.4:83",
		"*=127.0.0.9:99",
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in, want string
	}{
		{"exact", "exact.test:80", "127.0.0.2:81"},
		{"exact case-insensitive", "EXACT.Test:443", "127.0.0.2:81"},
		{"port restricted match", "only.test:8080", "127.0.0.3:82"},
		{"port restricted miss falls through", "only.test:80", "127.0.0.9:99"},
		{"wildcard subdomain", "a.b.wild.test:80", "127.0.0.4:83"},
		{"wildcard excludes apex", "wild.test:80", "127.0.0.9:99"},
		{"catch-all", "anything.example:80", "127.0.0.9:99"},
		{"trailing dot", "exact.test.:80", "127.0.0.2:81"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := r.Lookup(tc.in)
			if !ok || got != tc.want {
				t.Errorf("Lookup(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
			}
		})
	}
}

func TestLookupNoMatch(t *testing.T) {
	t.Parallel()
	r, err := New([]string{"a.test=127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Lookup("b.test:80"); ok {
		t.Errorf("Lookup matched %q", got)
	}
	var nilR *Resolver
	if _, ok := nilR.Lookup("a.test:80"); ok {
		t.Error("nil resolver matched")
	}
}

func TestParseRuleErrors(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"", "a.test", "=127.0.0.1:1", "a.test=127.0.0.1", "a.test=", "a*b.test=127.0.0.1:1", "*.*.test=127.0.0.1:1"} {
		if _, err := ParseRule(spec); err == nil {
			t.Errorf("ParseRule(%q) succeeded, want error", spec)
		}
	}
}

func TestDial(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
	}()
	r, err := New([]string{"*.test=" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Dial(nil)(context.Background(), "tcp", "site.test:80")
	if err != nil {
		t.Fatalf("dial through rule: %v", err)
	}
	c.Close()
}
