// Package sitemap parses sitemaps (sitemaps.org protocol 0.9): XML
// <urlset> files, <sitemapindex> files, text sitemaps (one URL a line),
// each possibly gzip-compressed, with the REGP extensions (§3):
// <type> (data: fetch the page but do not follow its links; list: follow
// them; other: no advice) and <srcloc> (the original location of the page
// whose crawler copy is <loc>; REGP §4.2: the crawler fetches loc and
// records that it stands for srcloc).
//
//	sm, err := sitemap.Parse(resp.Body, sitemapURL, sitemap.Options{})
//	if err != nil { ... }    // not a sitemap, bad base, or reading failed
//	for _, e := range sm.URLs {
//		// e.Loc (absolute http(s)), e.LastMod (zero if unset),
//		// e.ChangeFreq, e.Priority (-1 if unset), e.Type, e.SrcLoc,
//		// e.OtherHost (loc on another host than the sitemap: the
//		// sitemaps.org rule says ignore it, the crawler decides).
//	}
//	for _, s := range sm.Sitemaps { ... } // an index: child sitemap URLs
//
// Parsing streams: the XML decoder is read token by token and never builds
// a tree, so memory stays proportional to the entries kept. The format is
// sniffed from the bytes (gzip magic 1f 8b, then '<' for XML, anything else
// is text), not from the file name or Content-Type. Every limit of the
// protocol is enforced and configurable: 50,000 entries and 50 MiB of
// uncompressed data per file (which is also the decompression-bomb guard),
// 2,048-byte URLs. Broken input (bad XML, bad dates, out-of-range
// priorities, corrupt gzip) is tolerated: what was read is returned, and
// the trouble is counted in Sitemap.Problems; Truncated says parsing stopped
// before the end.
package sitemap
