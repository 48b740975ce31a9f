// Package index is the structured-data indexer: it follows what a crawl
// writes (the N-Quads files DATA/rdf/*.nq.gz and the WARC files
// DATA/warc/*.warc.gz) and fills two stores under DATA/index:
//
//   - store/: a triple store (package triplestore) holding every quad, and
//     beside it, under keys of its own, a page record per page (title,
//     text, types, literal values) and the indexer's progress per file;
//   - text/: a full-text index (Bleve) with one document per page: its
//     title and visible text from the WARC response, and the literal
//     values, rdf:type classes and vocabularies of its quads.
//
// It can run beside the crawl, or on another machine that reads the same
// files: it only reads them, and only what a writer has finished. Quad
// files are read once renamed from .open (QuadFileWriter renames a file
// once it is whole); WARC files are read while still .open, record by
// record, stopping at a torn last record and coming back to it. What was
// indexed is remembered per file (statements or byte offset), committed
// with the data it covers, so a restart goes on where it stopped.
//
//	ix, err := index.Open(index.Options{DataDir: "data"})
//	defer ix.Close()
//	err = ix.Run(ctx) // catch up, then poll for new data until ctx ends
//
// A page's quads and its WARC response arrive in either order; each
// updates the page record, and the page's text document is rewritten from
// it. Blank nodes are made unique per page (the graph) by prefixing their
// label with a hash of the graph name.
package index
