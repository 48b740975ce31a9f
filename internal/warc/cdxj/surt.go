package cdxj

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// MaxURLBytes bounds the URLs SURT accepts.
const MaxURLBytes = 64 << 10

// sessionParam matches query parameters that carry session ids, dropped as
// the Internet Archive's canonicalizer does (and the Viuva Negra report §4 "session ids").
var sessionParam = regexp.MustCompile(`(?i)^(jsessionid|phpsessid|sid|aspsessionid[a-z]{8}|cfid|cftoken)$`)

// wwwPrefix matches the "www." / "www2." label dropped from keys.
var wwwPrefix = regexp.MustCompile(`^www\d*\.`)

// SURT returns the Sort-friendly URI Reordering Transform of rawURL as CDXJ
// keys use it (the rules of the Internet Archive's and pywb's default
// canonicalizer):
//
//   - scheme, user info and fragment are dropped, the default port too
//     (80 for http, 443 for https); another port is kept as ":PORT";
//   - the host is lower-cased, loses a trailing dot and a leading "www."
//     ("www2." ...), and its labels are reversed and joined with ","
//     (IP addresses are not reversed), followed by ")";
//   - path and query are lower-cased, an empty path becomes "/", query
//     parameters are sorted and session-id parameters dropped.
//
// Example: "http://www.Example.com:80/A/b?z=1&a=2#top" → "com,example)/a/b?a=2&z=1".
// URLs without a host (e.g. "dns:example.com") give "scheme:rest" lower-cased.
func SURT(rawURL string) (string, error) {
	if len(rawURL) > MaxURLBytes {
		return "", fmt.Errorf("cdxj: url longer than %d bytes", MaxURLBytes)
	}
	if strings.ContainsAny(rawURL, " \t\r\n") {
		rawURL = strings.NewReplacer(" ", "%20", "\t", "%09", "\r", "%0D", "\n", "%0A").Replace(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("cdxj: surt: %w", err)
	}
	if u.Host == "" {
		if u.Scheme == "" {
			return "", errors.New("cdxj: surt: url has no scheme or host")
		}
		// dns:, whois: and the like keep their text.
		return strings.ToLower(strings.TrimSuffix(rawURL, "#"+u.Fragment)), nil
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	var b strings.Builder
	if ip := net.ParseIP(host); ip != nil {
		b.WriteString(host)
	} else {
		if strings.HasPrefix(host, "www") {
			// Only then can the pattern match: most hosts skip the
			// regexp, which costs more than the rest of the key.
			host = wwwPrefix.ReplaceAllString(host, "")
		}
		labels := strings.Split(host, ".")
		slices.Reverse(labels)
		b.WriteString(strings.Join(labels, ","))
	}
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteString(")")
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(strings.ToLower(path))
	if q := canonicalQuery(strings.ToLower(u.RawQuery)); q != "" {
		b.WriteString("?" + q)
	}
	return b.String(), nil
}

// canonicalQuery sorts the parameters of a raw query and drops session ids,
// without re-encoding them.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	out := parts[:0]
	for _, p := range parts {
		if p == "" {
			continue
		}
		name, _, _ := strings.Cut(p, "=")
		if sessionParam.MatchString(name) {
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return strings.Join(out, "&")
}
