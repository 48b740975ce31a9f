package warc

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the Reader: it must return records or
// an error, never panic, hang or allocate beyond its bounds.
func FuzzReader(f *testing.F) {
	f.Add([]byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 2\r\n\r\nok\r\n\r\n"))
	f.Add([]byte("WARC/1.0\r\nX: a\r\n b\r\nContent-Length: 0\r\nWARC-Block-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n\r\n\r\n\r\n"))
	f.Add([]byte("WARC/1.1\r\nContent-Type: application/http;msgtype=response\r\nWARC-Payload-Digest: sha1:AAAA\r\nContent-Length: 30\r\n\r\nHTTP/1.1 200 OK\r\n\r\n0\r\n\r\n"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := ReaderOptions{VerifyDigests: true, MaxBlockBytes: 1 << 20, MaxContentLength: 1 << 30}
		r, err := NewReader(bytes.NewReader(data), opts)
		if err != nil {
			return
		}
		for range 1000 {
			rec, err := r.ReadRecord()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrDigest) {
					continue // Next moves past it
				}
				return
			}
			if int64(len(rec.Block)) > opts.MaxBlockBytes {
				t.Fatalf("block of %d bytes over the cap", len(rec.Block))
			}
		}
	})
}
