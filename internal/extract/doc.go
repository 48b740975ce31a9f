// Package extract finds the outlinks and the metadata of an HTML page: the
// links a crawler follows, the meta robots directives it must honour, the
// canonical link, the language, the title and the visible text (for
// near-duplicate detection). It also turns an HTTP redirect into a link,
// because a crawler that does not follow redirects treats the Location as
// one more outlink of the response.
//
// Extraction is a pure function of the bytes: no I/O, no state, safe for
// concurrent use.
//
//	page, err := extract.HTML(pageURL, body, resp.Header.Get("Content-Type"),
//		extract.Options{Agent: "courtesy"})
//	if err != nil { ... }          // only a bad base URL or bad Options
//	if page.Robots.NoFollow { ... } // meta robots for "robots" and the agent
//	for _, l := range page.Links {
//		// l.URL is absolute http(s), fragment dropped; l.Hop is 'L', 'E',
//		// 'R' or 'X' as in a Heritrix crawl log; l.NoFollow is rel=nofollow.
//	}
//
//	l, err := extract.Redirect(pageURL, resp.Header.Get("Location")) // Hop 'R'
//
// What is read:
//
//   - a href, area href (anchor text kept, bounded; area uses alt): hop L
//   - link href with its rel: stylesheets, icons and preloads are embeds
//     (hop E), everything else (canonical, alternate, next, …) hop L
//   - frame src, iframe src: hop E (Heritrix treats frames as embeds)
//   - img src: hop E, only with Options.Images
//   - every other page requisite, only with Options.Requisites: img and
//     source srcset, script src, media src and poster, embed src, object
//     data, input type=image src, background attributes, url() and
//     @import in style attributes and <style>: hop E
//   - a stylesheet's @import and url() references (CSS): hop E
//   - form action of GET forms: hop L, only with Options.Forms
//   - meta http-equiv=refresh in its messy forms ("5; url=x", "0;URL='x'",
//     "url=x", "5, x"): hop R
//   - absolute URLs in inline scripts (Options.ScriptURLs) and in visible
//     text (Options.TextURLs) by pattern: hop X (speculative) and L
//   - the first <base href> sets the base for everything after it; a
//     relative base is resolved against the page URL
//   - the content of <noscript> and <noframes>, which browsers with scripts
//     or frames do not parse but crawlers should, is scanned as HTML too
//
// Hostile input is expected: the tokenizer tolerates unclosed tags,
// unquoted attributes and garbage bytes; the body is decoded to UTF-8 from
// the Content-Type charset, a BOM or a <meta charset> (the HTML prescan),
// else UTF-8 when the whole body is valid UTF-8, else windows-1252; every size and count is bounded by Options
// (bytes read, links kept, URL length, anchor text, visible text), and what
// was dropped is counted in Page.Problems rather than reported as an error.
// Links are deduplicated within a page by (URL, hop): the first occurrence
// wins.
//
// Cost (a crawl spends a sixth of its CPU here): each page gets
// one urlnorm.Resolver, whose fast path resolves the common references
// (paths, "?query", http(s) URLs) without re-parsing the base or building
// and re-reading the absolute text; tag names and attributes are read
// from the tokenizer's raw token (Raw) rather than through TagName and
// TagAttr, which copy each of them; the buffers of the text and duplicate
// detection are pooled between pages (nothing in a Page points into
// them). Each shortcut falls back to the general way for anything
// unusual, and has a differential test and a fuzz target against it
// (FuzzFastResolve, FuzzTagName, FuzzRawAttrs, FuzzTextBuf; the output of
// a testweb corpus is pinned in testdata/golden/testweb-corpus.golden).
//
// Resolution uses urlnorm.Resolve: RFC 3986 §5.2 with the WHATWG
// leniencies browsers apply (tab and newline removed, '\' as '/', stray
// bytes percent-encoded), then RFC 3986 §6 normalization and fragment
// removal; only http and https URLs become links. The crawler's heuristics
// (the Viuva Negra report §3.4 rules 8-9, session ids) are its own urlnorm.Options call.
// Meta robots semantics are package robots' (MetaApplies, ParseDirectives,
// Directives.Merge).
package extract
