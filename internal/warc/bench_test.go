package warc

import (
	stdgzip "compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// benchBlock is a 20 KB HTML-like response block.
func benchBlock() []byte {
	var b strings.Builder
	b.WriteString(respHead)
	for i := 0; b.Len() < 20<<10; i++ {
		fmt.Fprintf(&b, "<p class=\"item\">Item %d: <a href=\"/page/%d\">a link to page %d</a> with some text</p>\n", i, i*7, i*7)
	}
	return []byte(b.String())
}

// BenchmarkGzipMember compares the two gzip packages on one record-sized
// member at the default level: the reason this package uses klauspost.
func BenchmarkGzipMember(b *testing.B) {
	block := benchBlock()
	b.Run("klauspost", func(b *testing.B) {
		zw, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
		b.SetBytes(int64(len(block)))
		for b.Loop() {
			zw.Reset(io.Discard)
			zw.Write(block)
			zw.Close()
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		zw, _ := stdgzip.NewWriterLevel(io.Discard, stdgzip.DefaultCompression)
		b.SetBytes(int64(len(block)))
		for b.Loop() {
			zw.Reset(io.Discard)
			zw.Write(block)
			zw.Close()
		}
	})
}

func BenchmarkWriteExchange(b *testing.B) {
	w, err := NewWriter(Options{Dir: b.TempDir(), Now: fixedClock})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	block := benchBlock()
	ex := &Exchange{URL: "http://example.com/", IP: "127.0.0.1", Request: []byte(reqBytes),
		ResponseHeader: []byte(respHead), Body: block[len(respHead):], Metadata: []Field{{"hopsFromSeed", "L"}}}
	b.SetBytes(int64(len(block)))
	for b.Loop() {
		if _, err := w.WriteExchange(context.Background(), ex); err != nil {
			b.Fatal(err)
		}
	}
}
