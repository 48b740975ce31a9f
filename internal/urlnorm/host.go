package urlnorm

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// idnaProfile converts host names as the WHATWG URL standard's "domain to
// ASCII" does: UTS #46 mapping (case folding, full-width dots, ...),
// non-transitional IDNA 2008, Bidi and joiner rules, but not STD3 rules,
// so the underscores found in real host names pass. Label and name
// lengths are checked by checkDNSName.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
)

// maxRawHost bounds a host name before IDNA conversion: 253 bytes of
// ASCII result, with room for UTF-8 and code points the mapping removes.
const maxRawHost = 1024

// normalizeHost returns the canonical form of a host as written in a URL
// authority: lower-case ASCII (punycode for international names), no
// trailing dot, IPv4 as dotted quad, IPv6 bracketed in RFC 5952 form.
func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty host")
	}
	if h[0] == '[' {
		return normalizeIPv6(h)
	}
	// Browsers decode percent-encoded host bytes before anything else.
	h = lenientUnescape(h)
	if len(h) > maxRawHost {
		// Checked before IDNA, whose cost grows with the input.
		return "", fmt.Errorf("host of %d bytes, longer than %d", len(h), maxRawHost)
	}
	ascii := true
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c >= 0x80 {
			ascii = false
			continue
		}
		if !hostByte(c) && !('A' <= c && c <= 'Z') {
			return "", fmt.Errorf("invalid character %q in host", c)
		}
	}
	if ascii {
		h = strings.ToLower(h)
	}
	if !ascii || strings.Contains(h, "xn--") {
		if !utf8.ValidString(h) {
			return "", errors.New("host is not valid UTF-8")
		}
		a, err := idnaProfile.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("host %q: %v", clip(h), err)
		}
		a = strings.ToLower(a)
		if a != h {
			// The conversion must be stable, or normalizing the output
			// again would fail or differ; the idna package does not
			// promise that for every input it accepts.
			if again, err := idnaProfile.ToASCII(a); err != nil || again != a {
				return "", fmt.Errorf("host %q: no stable ASCII form", clip(h))
			}
		}
		h = a
		for i := 0; i < len(h); i++ {
			if !hostByte(h[i]) {
				return "", fmt.Errorf("invalid character %q in host", h[i])
			}
		}
	}
	h = strings.TrimSuffix(h, ".")
	if endsInNumber(h) {
		return parseIPv4(h)
	}
	if err := checkDNSName(h); err != nil {
		return "", err
	}
	return h, nil
}

// hostByte reports whether c may appear in a normalized host name: letters
// and digits, '-', '.', and '_' (not in RFC 952 names, but in real ones).
func hostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'
}

// checkDNSName enforces RFC 1035 §2.3.4 sizes: labels of 1 to 63 bytes,
// at most 253 bytes in all.
func checkDNSName(h string) error {
	if h == "" {
		return errors.New("empty host")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name of %d bytes, longer than 253", len(h))
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" {
			return fmt.Errorf("host %q has an empty label", h)
		}
		if len(label) > 63 {
			return fmt.Errorf("host %q has a label longer than 63 bytes", clip(h))
		}
	}
	return nil
}

func normalizeIPv6(h string) (string, error) {
	inner := h[1 : len(h)-1]
	if strings.IndexByte(inner, '%') >= 0 {
		// RFC 6874 zone ids mean nothing outside the local machine.
		return "", errors.New("IPv6 zone identifiers are not crawlable")
	}
	a, err := netip.ParseAddr(inner)
	if err != nil || !a.Is6() {
		return "", fmt.Errorf("invalid IPv6 address %q", clip(h))
	}
	return "[" + a.String() + "]", nil
}

// endsInNumber is the WHATWG "ends in a number" test: a host whose last
// label is decimal digits or 0x-hex is an IPv4 address or invalid, never a
// domain name.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last) {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if _, ok := unhex(last[i]); !ok {
				return false
			}
		}
		return true
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseIPv4 is the WHATWG IPv4 parser: 1 to 4 parts, each decimal, 0x-hex
// or 0-prefixed octal, the last filling the remaining bytes. So
// "127.1", "0x7f.0.0.1" and "2130706433" all become "127.0.0.1", as a
// browser (and a C resolver) would connect to; writing them one way stops
// a host from hiding behind spellings.
func parseIPv4(h string) (string, error) {
	labels := strings.Split(h, ".")
	if len(labels) > 4 {
		return "", fmt.Errorf("invalid IPv4 address %q", clip(h))
	}
	nums := make([]uint64, len(labels))
	for i, l := range labels {
		n, err := ipv4Number(l)
		if err != nil {
			return "", fmt.Errorf("invalid IPv4 address %q", clip(h))
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", fmt.Errorf("invalid IPv4 address %q: part %d above 255", clip(h), i+1)
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", fmt.Errorf("invalid IPv4 address %q: last part too large", clip(h))
	}
	v |= last
	a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	return a.String(), nil
}

func ipv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty part")
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	// Leading zeros are not significant however many there are
	// (WHATWG URL: "0000000000000000000000000000000000000000177.0.0.1"
	// is 127.0.0.1); the length limit is for the digits that count.
	if s = strings.TrimLeft(s, "0"); s == "" {
		return 0, nil
	}
	if len(s) > 12 {
		return 0, errors.New("part too long")
	}
	return strconv.ParseUint(s, base, 64)
}

// removeWWW drops a leading "www." when the rest is still at or below a
// registrable domain.
func removeWWW(host string) string {
	// A loop, so that "www.www.example.org" is stable after one pass;
	// bounded because each round shortens host.
	for {
		rest, ok := strings.CutPrefix(host, "www.")
		if !ok {
			return host
		}
		if _, err := publicsuffix.EffectiveTLDPlusOne(rest); err != nil {
			return host
		}
		host = rest
	}
}

// addWWW prefixes "www." to a host that is exactly a registrable domain
// ("second-level domain" in the Viuva Negra report §3.4 rule 8).
func addWWW(host string) string {
	if host == "" || host[0] == '[' || !endsInLetter(host) {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil || d != host {
		return host
	}
	return "www." + host
}

func endsInLetter(h string) bool {
	c := h[len(h)-1]
	return 'a' <= c && c <= 'z'
}
