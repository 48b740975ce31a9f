package rdf_test

import (
	"context"
	"fmt"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
)

func ExampleExtract() {
	page := []byte(`<div itemscope itemtype="https://schema.org/Product" itemid="#lamp">
		<span itemprop="name">Brass lamp</span></div>
		<script type="application/ld+json">{"@context": "https://schema.org", "@id": "#lamp", "sku": "L-1"}</script>`)
	quads, stats, err := rdf.Extract(context.Background(), "http://shop.example/lamp", page, rdf.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range quads {
		fmt.Println(q)
	}
	fmt.Println(stats.Microdata, "from microdata,", stats.JSONLD, "from JSON-LD")
	// Output:
	// <http://shop.example/lamp#lamp> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://schema.org/Product> <http://shop.example/lamp> .
	// <http://shop.example/lamp#lamp> <https://schema.org/name> "Brass lamp" <http://shop.example/lamp> .
	// <http://shop.example/lamp#lamp> <http://schema.org/sku> "L-1" <http://shop.example/lamp> .
	// 2 from microdata, 1 from JSON-LD
}
