package robots

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ipPattern is the value of an Ip-allow or Ip-disallow line (REGP §3.2.4):
// `*`, a dotted quad whose numbers may each be `*` (`222.69.212.*`), an
// IPv4 or IPv6 address, or (an extension) a CIDR prefix.
type ipPattern struct {
	any    bool
	quad   bool
	val    [4]byte
	mask   [4]bool // true: octet must equal val
	prefix netip.Prefix
}

func parseIPPattern(s string) (ipPattern, error) {
	s = strings.TrimSpace(s)
	if s == "*" {
		return ipPattern{any: true}, nil
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return ipPattern{}, fmt.Errorf("robots: bad IP prefix %q", s)
		}
		return ipPattern{prefix: p.Masked()}, nil
	}
	if strings.Contains(s, "*") {
		parts := strings.Split(s, ".")
		if len(parts) != 4 {
			return ipPattern{}, fmt.Errorf("robots: bad IP pattern %q", s)
		}
		p := ipPattern{quad: true}
		for i, part := range parts {
			if part == "*" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil || n < 0 || n > 255 || len(part) > 3 {
				return ipPattern{}, fmt.Errorf("robots: bad IP pattern %q", s)
			}
			p.val[i], p.mask[i] = byte(n), true
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ipPattern{}, fmt.Errorf("robots: bad IP address %q", s)
	}
	a = a.Unmap()
	return ipPattern{prefix: netip.PrefixFrom(a, a.BitLen())}, nil
}

func (p ipPattern) match(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case p.any:
		return true
	case p.quad:
		if !a.Is4() {
			return false
		}
		b := a.As4()
		for i := range b {
			if p.mask[i] && b[i] != p.val[i] {
				return false
			}
		}
		return true
	default:
		return p.prefix.IsValid() && p.prefix.Contains(a)
	}
}

// ipRule is one Ip-allow / Ip-disallow line.
type ipRule struct {
	allow bool
	any   bool // value was `*`
	pat   ipPattern
	line  int
}

// ipAllowed applies an IP token group (REGP §3.2.4): the last matching line
// wins; when the first line is Ip-allow with a value other than `*` an
// `Ip-disallow: *` is implied before it, otherwise an `Ip-allow: *`.
func ipAllowed(rules []ipRule, a netip.Addr) bool {
	if len(rules) == 0 {
		return true
	}
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].pat.match(a) {
			return rules[i].allow
		}
	}
	return !(rules[0].allow && !rules[0].any)
}
