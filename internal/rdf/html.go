package rdf

import (
	"strings"

	"golang.org/x/net/html"
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
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&b, c); err != nil {
			break
		}
	}
	return b.String()
}
