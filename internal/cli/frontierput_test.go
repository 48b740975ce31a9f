package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// brokenFrontier acks the first acks items of a PutURLs stream, then
// ends it: with an error when fail is set, else as if all went well.
type brokenFrontier struct {
	pb.UnimplementedURLFrontierServer
	acks int
	fail bool
}

func (b *brokenFrontier) PutURLs(st pb.URLFrontier_PutURLsServer) error {
	for n := 0; ; n++ {
		it, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n >= b.acks {
			if b.fail {
				return status.Error(codes.Internal, "boom")
			}
			return nil
		}
		if err := st.Send(&pb.AckMessage{ID: it.GetID(), Status: pb.AckMessage_OK}); err != nil {
			return err
		}
	}
}

// TestFrontierPutFailures: `courtesy frontier put` exits non-zero, without
// hanging, when the file cannot be read, when the service breaks the
// stream, and when it ends the stream before acking every item (upstream's
// client PutURLsTest, and the case it leaves out).
func TestFrontierPutFailures(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf(`{"discovered":{"info":{"url":"http://example.com/%d"}},"ID":"%d"}`, i, i))
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		srv  *brokenFrontier
		file string
		code int
	}{
		{"every item acked", &brokenFrontier{acks: 50}, in, 0},
		{"stream broken after 5 acks", &brokenFrontier{acks: 5, fail: true}, in, 1},
		{"stream ended after 5 acks", &brokenFrontier{acks: 5}, in, 1},
		{"file missing", &brokenFrontier{acks: 50}, filepath.Join(dir, "does-not-exist.jsonl"), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			g := grpc.NewServer()
			pb.RegisterURLFrontierServer(g, tc.srv)
			go g.Serve(ln)
			defer g.Stop()
			if _, code := frontierCmd(t, ln.Addr().String(), "put", "-f", tc.file); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
		})
	}
}
