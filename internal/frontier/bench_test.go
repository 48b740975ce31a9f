package frontier

import (
	"context"
	"fmt"
	"testing"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// BenchmarkPutDiscovered measures inserts with the seen-test, in batches of
// 1,000 as the crawler sends a page's outlinks; one URL in five is a repeat.
func BenchmarkPutDiscovered(b *testing.B) {
	db, err := kv.Open(b.TempDir(), kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	f, err := Open(db, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	items := make([]Item, 0, 1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i
		if i%5 == 0 {
			j = i / 2
		}
		items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("http://www.site%d.example/a/%d.html", j%1000, j)}})
		if len(items) == cap(items) {
			if _, err := f.Put(ctx, items); err != nil {
				b.Fatal(err)
			}
			items = items[:0]
		}
	}
}
