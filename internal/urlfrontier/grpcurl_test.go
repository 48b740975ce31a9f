package urlfrontier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGrpcurl drives the service from grpcurl (fullstorydev/grpcurl,
// which scripts/install-test-deps builds into tools/bin), a client that
// knows nothing of the API but what server reflection tells it: the
// listing, a message's description, PutURLs, GetStats, GetURLs,
// GetURLStatus (NOT_FOUND for an unknown URL) and the health check.
func TestGrpcurl(t *testing.T) {
	bin := filepath.Join(repoRoot(t), "tools", "bin", "grpcurl")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("grpcurl missing (%v): run scripts/install-test-deps", err)
	}
	addr := serveLoopback(t).Addr().String()
	call := func(data string, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		full := []string{"-plaintext"}
		if data != "" {
			full = append(full, "-d", data)
		}
		full = append(append(full, addr), args...)
		out, err := exec.CommandContext(ctx, bin, full...).CombinedOutput()
		return string(out), err
	}
	must := func(data string, args ...string) string {
		t.Helper()
		out, err := call(data, args...)
		if err != nil {
			t.Fatalf("grpcurl %v: %v\n%s", args, err, out)
		}
		return out
	}
	list := must("", "list")
	for _, svc := range []string{"urlfrontier.URLFrontier", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !strings.Contains(list, svc+"\n") {
			t.Errorf("list has no %s:\n%s", svc, list)
		}
	}
	if d := must("", "describe", "urlfrontier.URLItem"); !strings.Contains(d, "DiscoveredURLItem discovered = 1;") || !strings.Contains(d, "KnownURLItem known = 2;") {
		t.Errorf("describe urlfrontier.URLItem:\n%s", d)
	}
	put := must(`{"discovered": {"info": {"url": "http://a.test/1", "crawlID": "c"}}}
{"discovered": {"info": {"url": "http://a.test/2", "crawlID": "c"}}}`, "urlfrontier.URLFrontier/PutURLs")
	if strings.Count(put, `"ID": "http://a.test/`) != 2 {
		t.Errorf("PutURLs acks:\n%s", put)
	}
	if st := must(`{"crawlID": "c"}`, "urlfrontier.URLFrontier/GetStats"); !strings.Contains(st, `"numberOfQueues": "1"`) || !strings.Contains(st, `"size": "2"`) {
		t.Errorf("GetStats:\n%s", st)
	}
	got := must(`{"maxUrlsPerQueue": 5, "maxQueues": 1, "delayRequestable": 30, "crawlID": "c"}`, "urlfrontier.URLFrontier/GetURLs")
	if !strings.Contains(got, `"url": "http://a.test/1"`) || !strings.Contains(got, `"url": "http://a.test/2"`) || !strings.Contains(got, `"key": "a.test"`) {
		t.Errorf("GetURLs:\n%s", got)
	}
	out, err := call(`{"url": "http://a.test/none", "crawlID": "c"}`, "urlfrontier.URLFrontier/GetURLStatus")
	if err == nil || !strings.Contains(out, "Code: NotFound") {
		t.Errorf("GetURLStatus of an unknown URL: %v\n%s", err, out)
	}
	if h := must("", "grpc.health.v1.Health/Check"); !strings.Contains(h, `"status": "SERVING"`) {
		t.Errorf("health:\n%s", h)
	}
}
