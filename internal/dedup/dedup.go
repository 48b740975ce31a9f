// Package dedup finds duplicate content: exact duplicates by payload digest
// (the WARC-Payload-Digest form, so a duplicate becomes a revisit record)
// and near-duplicates by a 64-bit simhash of the page text with a per-site
// index that answers "is there a page within Hamming distance 3?" in a few
// table lookups (Manku, Jain and Das Sarma, "Detecting near-duplicates for
// web crawling", WWW 2007). The Viúva Negra report §4 lists duplicates among a crawler's
// hazards and §6 stops a site after 10 duplicates; package traps applies
// that limit, this package detects them.
//
// With IndexOptions.DB the index is persistent (store.go): each site's
// hashes are written to the crawl's kv store as they are added and loaded
// the first time the site is used after a restart, so a resumed crawl
// still recognises its near-duplicates.
//
// Text extraction is not done here: callers pass the text package extract
// produced.
package dedup

import "github.com/courtesy-crawler/courtesy/internal/warc"

// Digest returns "sha1:BASE32" of payload, identical to warc.Digest and so
// to the WARC-Payload-Digest of a response with that payload.
func Digest(payload []byte) string { return warc.Digest(payload) }
