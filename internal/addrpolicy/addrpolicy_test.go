package addrpolicy

import (
	"errors"
	"net/netip"
	"testing"
)

func TestAllowed(t *testing.T) {
	cases := []struct {
		addr            string
		class           string
		all, nll, pubon bool // allowed by All, NoLinkLocal, PublicOnly
	}{
		{"93.184.215.14", "public", true, true, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "public", true, true, true},
		{"127.0.0.1", "loopback", true, true, false},
		{"127.8.9.10", "loopback", true, true, false},
		{"::1", "loopback", true, true, false},
		{"::ffff:127.0.0.1", "loopback", true, true, false},
		{"10.1.2.3", "private", true, true, false},
		{"172.16.0.1", "private", true, true, false},
		{"172.32.0.1", "public", true, true, true},
		{"192.168.1.1", "private", true, true, false},
		{"fd00::1", "private", true, true, false},
		{"100.64.0.1", "reserved", true, true, false},
		{"100.128.0.1", "public", true, true, true},
		{"169.254.169.254", "link-local", true, false, false},
		{"::ffff:169.254.169.254", "link-local", true, false, false},
		{"fe80::1", "link-local", true, false, false},
		{"0.0.0.0", "unspecified", true, false, false},
		{"::", "unspecified", true, false, false},
		{"0.1.2.3", "reserved", true, false, false},
		{"224.0.0.1", "multicast", true, false, false},
		{"ff02::1", "multicast", true, false, false},
		{"240.0.0.1", "reserved", true, false, false},
		{"255.255.255.255", "reserved", true, false, false},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if got := Class(a); got != c.class {
			t.Errorf("Class(%s) = %s, want %s", c.addr, got, c.class)
		}
		for p, want := range map[Policy]bool{All: c.all, NoLinkLocal: c.nll, PublicOnly: c.pubon} {
			if got := p.Allowed(a); got != want {
				t.Errorf("%s.Allowed(%s) = %v, want %v", p, c.addr, got, want)
			}
			err := p.Check(a)
			if (err == nil) != want || err != nil && !errors.Is(err, ErrRefused) {
				t.Errorf("%s.Check(%s) = %v", p, c.addr, err)
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, p := range []Policy{All, NoLinkLocal, PublicOnly} {
		got, err := Parse(p.String())
		if err != nil || got != p {
			t.Errorf("Parse(%q) = %v, %v", p.String(), got, err)
		}
	}
	for _, bad := range []string{"", "none", "Allow", "public"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestControl(t *testing.T) {
	ctl := NoLinkLocal.Control()
	if err := ctl("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("loopback refused: %v", err)
	}
	if err := ctl("tcp", "169.254.169.254:80", nil); !errors.Is(err, ErrRefused) {
		t.Errorf("metadata address: %v", err)
	}
	if err := ctl("tcp", "[fe80::1%eth0]:80", nil); !errors.Is(err, ErrRefused) {
		t.Errorf("zoned link-local: %v", err)
	}
	if err := ctl("tcp", "not an address", nil); !errors.Is(err, ErrRefused) {
		t.Errorf("garbage: %v", err)
	}
}
