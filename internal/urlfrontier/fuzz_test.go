package urlfrontier

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// FuzzReadItem feeds arbitrary wire bytes to the PutURLs item validation:
// whatever a client sends, it is either a valid frontier item (with a key
// of at most 255 bytes and a host) or skipped, and never a panic.
func FuzzReadItem(f *testing.F) {
	seeds := []*pb.URLItem{
		discovered("a", info("http://a.test/1")),
		known(&pb.URLInfo{Url: "http://User@Example.COM:8080/x?y#z", Metadata: map[string]*pb.StringList{"k": {Values: []string{"v"}}}}, 12345),
		discovered("", &pb.URLInfo{Url: "http://[::1/x"}),
		discovered("", &pb.URLInfo{Url: "mailto:x@y", Key: "k", CrawlID: " c "}),
		{ID: "neither"},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	srv := &Server{log: discardLogger()}
	f.Fuzz(func(t *testing.T, b []byte) {
		var in pb.URLItem
		if proto.Unmarshal(b, &in) != nil {
			return
		}
		it := srv.readItem(&in)
		if it.skip {
			return
		}
		if it.item.Info.Key == "" || len(it.item.Info.Key) > MaxKeyLength || it.item.Info.URL == "" || it.item.Info.CrawlID == "" {
			t.Errorf("accepted invalid item %+v from %v", it.item, &in)
		}
		if it.item.Known != (in.GetKnown() != nil) {
			t.Errorf("known = %v for %v", it.item.Known, &in)
		}
	})
}
