package rdf

import (
	"context"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

// BenchmarkExtract measures extraction per syntax over testweb's
// structured pages of that syntax (hostile ones left out); bench/rdf
// compares the same with the npm extractors.
func BenchmarkExtract(b *testing.B) {
	for _, name := range []string{"rdfa", "microdata", "jsonld"} {
		var pages []testweb.StructuredPage
		size := 0
		for _, p := range testweb.StructuredPages() {
			if p.Syntax == name && !p.Hostile {
				pages = append(pages, p)
				size += len(p.Body)
			}
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					if _, _, err := Extract(context.Background(), p.URL, p.Body, Options{Syntaxes: syntaxNames[name]}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
