// Package warc writes and reads WARC 1.1 files (ISO 28500:2017, the IIPC
// "WARC 1.1" specification): the archive format of everything `courtesy
// crawl` fetches, beside a CDXJ index per file (package warc/cdxj).
//
// # Writing
//
// A Writer owns a directory of rotating files. Every record is its own gzip
// member (record-at-a-time compression, as WARC 1.1 recommends), so a
// reader can seek to any record and a crash loses at most the record being
// written:
//
//	w, err := warc.NewWriter(warc.Options{Dir: "warcs", Prefix: "courtesy"})
//	...
//	res, err := w.WriteExchange(ctx, &warc.Exchange{
//		URL:            "http://example.com/",
//		IP:             "127.0.0.1",
//		Date:           fetchStart,
//		Request:        rawRequestBytes,   // request line + header (+ body)
//		ResponseHeader: rawResponseHeader, // status line + header + CRLF CRLF
//		Body:           body,              // entity body, transfer-encoding removed
//		Truncated:      warc.TruncatedLength, // or "" when complete
//		Metadata:       []warc.Field{{Name: "hopsFromSeed", Value: "L"}},
//	})
//	// res.PayloadDigest ("sha1:BASE32") goes to the crawl log and dedup;
//	// res.Response.File/Offset say where the response record landed.
//	...
//	err = w.Flush() // flush buffers and fsync: acknowledged records survive SIGKILL
//	err = w.Close() // writes the sorted CDXJ index, renames *.open to final
//
// WriteExchange writes response (or revisit when Exchange.Revisit is set),
// request and metadata records, in Heritrix's order, into the same file,
// linked with WARC-Concurrent-To, each carrying WARC-Warcinfo-ID of the
// file's warcinfo record. WriteRecord writes any single Record (warcinfo, resource, ...);
// the writer fills WARC-Record-ID, WARC-Date, Content-Length,
// WARC-Warcinfo-ID and WARC-Block-Digest when they are missing. A Writer is
// safe for concurrent use.
//
// Files are named after Heritrix:
//
//	{Prefix}-{yyyyMMddHHmmssSSS}-{serial:05d}-{pid}~{hostname}~{port}.warc.gz
//
// and are written as NAME.open, renamed to NAME when full (Options.MaxFileBytes,
// default 1 GB) or when the writer closes; NAME.cdxj is written beside NAME
// at that moment (IndexFile rebuilds it for any finished file). After a
// crash, Recover(ctx, dir) cuts every *.open file after its last complete
// gzip member (record), rebuilds its index and renames it.
// The OWler paper asks for one WARC stream per topic: Streams keeps one Writer per
// topic, with the topic in the file prefix.
//
// # Digests
//
// Digest(b) is "sha1:" + base32 of the SHA-1 of b, the form Heritrix and
// warcio use for WARC-Block-Digest and WARC-Payload-Digest. The payload
// digest is over the entity body with transfer-encoding removed and
// content-encoding kept; PayloadDigest(header, body) dechunks the body when
// the header says "Transfer-Encoding: chunked". Package dedup uses the same
// form. HTTPHeader turns a status line and an http.Header (net/http drops
// Transfer-Encoding from it) into the header bytes an Exchange wants.
//
// # Reading
//
// Reader iterates the records of a .warc or .warc.gz stream (gzip detected
// from the magic bytes; one member per record or one member for the whole
// file), in the shape of archive/tar:
//
//	r, err := warc.NewReader(f, warc.ReaderOptions{VerifyDigests: true})
//	for {
//		h, err := r.Next() // *warc.Header of the next record; io.EOF at the end
//		...
//		io.Copy(dst, r)    // the record's content block
//	}
//
// r.ReadRecord() returns the next record with its block in memory (capped by
// ReaderOptions.MaxBlockBytes). Header lines, header count and Content-Length
// are bounded; a truncated file gives an error wrapping ErrTruncated, a
// digest mismatch one wrapping ErrDigest.
package warc
