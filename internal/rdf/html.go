package rdf

import (
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// textContent returns the concatenated text of n's descendants, as the
// DOM's textContent does.
func textContent(n *html.Node) string {
	if c := n.FirstChild; c != nil && c.NextSibling == nil && c.Type == html.TextNode {
		return c.Data // the common case, without copying
	}
	var b strings.Builder
	appendText(&b, n, 0)
	return b.String()
}

func appendText(b *strings.Builder, n *html.Node, depth int) {
	if depth > maxTextDepth {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			appendText(b, c, depth+1)
		}
	}
}

// maxTextDepth bounds the recursion of text gathering; the parser's tree
// can be as deep as the input has tags.
const maxTextDepth = 512

// innerHTML serialises n's children, for rdf:XMLLiteral and rdf:HTML
// values.
func innerHTML(n *html.Node) string {
	if deeperThan(n, maxTextDepth) {
		// html.Render recurses once per level: keep the text only.
		return textContent(n)
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&b, c); err != nil {
			break
		}
	}
	return b.String()
}

// documentElement returns the html element of a parsed document.
func documentElement(doc *html.Node) *html.Node {
	for c := doc.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// htmlBase returns the document's base URL: the first <base href> in
// the document resolved against the document URL, else the document URL.
func htmlBase(doc *html.Node, docURL string) string {
	var found string
	var walk func(n *html.Node, d int) bool
	walk = func(n *html.Node, d int) bool {
		if d > 8 {
			return false // base belongs in head: no need to look deep
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if c.DataAtom == atom.Base {
				if h, ok := attr(c, "href"); ok {
					found = baseFrom(docURL, h)
					return true
				}
			}
			if walk(c, d+1) {
				return true
			}
		}
		return false
	}
	if !walk(doc, 0) {
		return docURL
	}
	return found
}

// baseFrom is the base IRI a <base href> gives a document: href resolved
// against the document URL, without fragment (RFC 3986 §5.1). An href
// that does not resolve to a URL (http://[bad/, say) leaves the document
// URL as the base, as HTML's frozen base URL falls back to it.
func baseFrom(docURL, href string) string {
	found := resolveIRI(docURL, strings.TrimSpace(href))
	if !hasScheme(found) {
		return docURL
	}
	if u, err := url.Parse(found); err != nil || !validPort(u.Port()) {
		return docURL
	}
	if i := strings.IndexByte(found, '#'); i >= 0 {
		found = found[:i]
	}
	return found
}

// validPort reports whether p is empty or a port number (0-65535).
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return p == "" || err == nil && n >= 0 && n <= 65535
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

// deeperThan reports whether n's subtree nests more than limit levels,
// without recursion.
func deeperThan(n *html.Node, limit int) bool {
	depth := 0
	for c := n.FirstChild; c != nil; {
		if c.FirstChild != nil {
			c = c.FirstChild
			if depth++; depth > limit {
				return true
			}
			continue
		}
		for c.NextSibling == nil {
			c = c.Parent
			depth--
			if c == n || c == nil {
				return false
			}
		}
		c = c.NextSibling
	}
	return false
}
