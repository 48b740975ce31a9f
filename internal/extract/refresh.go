package extract

import "bytes"

// refreshURL extracts the URL of a meta refresh content attribute, following
// the HTML "shared declarative refresh steps" and the forms seen in the wild:
//
//	5; url=http://x/   0;URL='x'   5, URL = "x"   url=x   5; x   5;url=x'
//
// It reports false when the content has no URL (a plain reload).
func refreshURL(content []byte) ([]byte, bool) {
	c := bytes.TrimLeft(content, " \t\n\f\r")
	// The delay: digits and dots; absent is tolerated (browsers are not
	// this lenient, but crawlers see "url=x" alone often enough).
	i := 0
	for i < len(c) && (c[i] >= '0' && c[i] <= '9' || c[i] == '.') {
		i++
	}
	c = bytes.TrimLeft(c[i:], " \t\n\f\r")
	if len(c) > 0 && (c[0] == ';' || c[0] == ',') {
		c = bytes.TrimLeft(c[1:], " \t\n\f\r")
	}
	if len(c) >= 3 && bytes.EqualFold(c[:3], []byte("url")) {
		rest := bytes.TrimLeft(c[3:], " \t\n\f\r")
		if len(rest) > 0 && rest[0] == '=' {
			c = bytes.TrimLeft(rest[1:], " \t\n\f\r")
		}
	}
	if len(c) > 0 && (c[0] == '\'' || c[0] == '"') {
		q := c[0]
		c = c[1:]
		if j := bytes.IndexByte(c, q); j >= 0 {
			c = c[:j]
		}
	}
	c = bytes.TrimRight(c, " \t\n\f\r")
	// An unbalanced trailing quote ("url=x'") is a typo, not part of the URL.
	c = bytes.TrimRight(c, "'\"")
	return c, len(c) > 0
}
